"""The spoken term detection report: every SWS 2013 figure of one system, as text or a dict.

References
----------
.. [1] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..core.operating_point import OperatingPoint
from .alignment import AlignedTrials, align, resolve_operating_point
from .cross_entropy import AffineRecalibration, affine_recalibration, cnxe
from .measures import TWVResult, atwv, mtwv
from .model import SWS2013, STDTask

__all__ = ["STDReport", "term_detection_report"]


def _count(n: int, singular: str, plural: str) -> str:
    return f"{n:,} {singular if n == 1 else plural}"


def _twv_dict(r: TWVResult | None):
    if r is None:
        return None
    return {
        "twv": r.twv,
        "threshold": r.threshold,
        "p_miss": r.p_miss,
        "p_fa": r.p_fa,
        "c_norm": r.c_norm,
        "n_hits": r.n_hits,
        "n_misses": r.n_misses,
        "n_false_alarms": r.n_false_alarms,
    }


@dataclass(frozen=True, eq=False)
class STDReport:
    """Every figure of :func:`term_detection_report`; ``str(report)`` prints it, ``to_dict()``
    gives plain Python values.

    Attributes
    ----------
    name : str
    operating_point : OperatingPoint
    tolerance, t_audio, n_tps : float
        Alignment tolerance (s), audio duration T_audio (s), trials per second.
    trials : AlignedTrials
        The aligned trial set (per-detection arrays, alignment, exclusions).
    atwv : TWVResult or None
        TWV of the system's decisions (or of ``decision_threshold``); None without either.
    mtwv : TWVResult
        Maximum TWV and its threshold.
    cnxe, min_cnxe : float or None
        C_nxe and C_nxe^min at the effective prior of the operating point (bits per bit); None
        when undefined (see ``notes``).
    recalibration : AffineRecalibration or None
        gamma, delta and llr_min behind C_nxe^min.
    notes : tuple of str
        What was excluded, assumed or could not be computed, and why.
    decision_threshold : float or None
        The threshold that replaced the system's decisions for ATWV, if any.
    """

    name: str
    operating_point: OperatingPoint
    tolerance: float
    t_audio: float
    n_tps: float
    trials: AlignedTrials
    atwv: TWVResult | None
    mtwv: TWVResult
    cnxe: float | None
    min_cnxe: float | None
    recalibration: AffineRecalibration | None
    notes: tuple = field(default=())
    decision_threshold: float | None = None

    @property
    def calibration_loss(self) -> float | None:
        """``C_nxe - C_nxe^min`` (plan sec. 4.2.5), bits per bit, or None."""
        if self.cnxe is None or self.min_cnxe is None:
            return None
        return self.cnxe - self.min_cnxe

    def per_query(self) -> list:
        """One dict per evaluated query at the actual decisions (or at the MTWV threshold when
        there are none): occurrences, hits, misses, false alarms, P_miss, P_fa and the query's
        own TWV ``1 - P_miss(q) - beta P_fa(q)``.

        Returns
        -------
        list of dict
            One dict per evaluated query, in the task's query order.
        """
        t = self.trials
        if self.decision_threshold is not None:
            accept = t.score >= self.decision_threshold
        elif t.decision is not None:
            accept = t.decision
        else:
            accept = t.score >= self.mtwv.threshold
        c = t.counts(accept)
        b = self.operating_point.beta
        return [
            {
                "query": q,
                "n_act": int(c.n_act[i]),
                "n_hits": int(c.n_hits[i]),
                "n_misses": int(c.n_misses[i]),
                "n_false_alarms": int(c.n_false_alarms[i]),
                "p_miss": float(c.p_miss[i]),
                "p_fa": float(c.p_fa[i]),
                "twv": float(1.0 - c.p_miss[i] - b * c.p_fa[i]),
            }
            for i, q in enumerate(t.queries)
        ]

    def to_dict(self, per_query: bool = False) -> dict:
        """Plain-Python dictionary of every number (for JSON or programs).

        Parameters
        ----------
        per_query : bool, default False
            Add the per-query table (:meth:`per_query`) under ``"queries"``.

        Returns
        -------
        dict
            Every number of the report as plain Python values.
        """
        op = self.operating_point
        t = self.trials
        out = {
            "name": self.name,
            "operating_point": {
                "name": op.name,
                "p_target": op.p_target,
                "c_miss": op.c_miss,
                "c_fa": op.c_fa,
                "beta": op.beta,
                "effective_prior": op.effective_prior,
            },
            "tolerance": self.tolerance,
            "t_audio": self.t_audio,
            "n_tps": self.n_tps,
            "n_queries": t.n_queries,
            "n_occurrences": t.n_true,
            "n_detections": t.n_detections,
            "n_aligned": t.n_aligned,
            "excluded_queries": list(t.excluded_queries),
            "excluded_detections": int(t.excluded_detections.sum()),
            "atwv": _twv_dict(self.atwv),
            "mtwv": _twv_dict(self.mtwv),
            "cnxe": self.cnxe,
            "min_cnxe": self.min_cnxe,
            "calibration_loss": self.calibration_loss,
            "recalibration": None
            if self.recalibration is None
            else {
                "gamma": self.recalibration.gamma,
                "delta": self.recalibration.delta,
                "llr_min": self.recalibration.llr_min,
            },
            "notes": list(self.notes),
        }
        if per_query:
            out["queries"] = self.per_query()
        return out

    def to_text(self, per_query: bool = False) -> str:
        """The report as text (lines of at most 100 columns).

        Parameters
        ----------
        per_query : bool, default False
            Add a table of the queries.

        Returns
        -------
        str
            The report.
        """
        t = self.trials
        op = self.operating_point
        lines = [
            "Spoken term detection" + (f": {self.name}" if self.name else ""),
            f"  operating point   {op.name + ': ' if op.name else ''}P_target={op.p_target:g}, "
            f"C_miss={op.c_miss:g}, C_fa={op.c_fa:g}",
            f"                    beta={op.beta:.4f}, effective prior "
            f"P_tar={op.effective_prior:.6g}",
            f"  trials            {_count(t.n_queries, 'query', 'queries')} x "
            f"{t.n_trials:,.6g} (n_tps {self.n_tps:g}/s x T_audio {self.t_audio:,.2f} s); "
            f"{_count(t.n_true, 'occurrence', 'occurrences')}",
            f"  detections        {t.n_detections:,}, {t.n_aligned:,} aligned (mid point "
            f"within {self.tolerance:g} s of an occurrence)",
        ]
        if t.excluded_queries:
            n_q = _count(len(t.excluded_queries), "query", "queries")
            n_d = _count(int(t.excluded_detections.sum()), "detection", "detections")
            lines.append(f"  excluded          {n_q} with no reference occurrence ({n_d}):")
            names = [str(q) for q in t.excluded_queries]
            row = "                   "
            for k, q in enumerate(names):
                more = f" ... ({len(names) - k} more)"
                if len(row) + len(q) + 2 + len(more) > 100 and k < len(names) - 1:
                    row += more
                    break
                row += f" {q}" + ("," if k < len(names) - 1 else "")
            lines.append(row)
        lines.append(
            f"  {'':<16}{'TWV':>8}  {'threshold':>10}  {'hits':>7}  {'misses':>7}  "
            f"{'false al.':>9}  {'P_miss':>7}  {'P_fa':>9}"
        )
        for label, r in (("ATWV", self.atwv), ("MTWV", self.mtwv)):
            if r is None:
                lines.append(f"  {label:<16}{'-':>8}  (the detections carry no decisions)")
                continue
            thr = "mixed" if math.isnan(r.threshold) else f"{r.threshold:.5g}"
            lines.append(
                f"  {label:<16}{r.twv:8.4f}  {thr:>10}  {r.n_hits:7,d}  "
                f"{r.n_misses:7,d}  {r.n_false_alarms:9,d}  {r.p_miss:7.4f}  "
                f"{r.p_fa:9.3e}"
            )
        if self.cnxe is not None:
            lines.append(
                f"  {'C_nxe':<16}{self.cnxe:8.4f}  bits/bit at P_tar {op.effective_prior:.6g}"
            )
        rec = self.recalibration
        if self.min_cnxe is not None and rec is not None:
            lines.append(
                f"  {'C_nxe^min':<16}{self.min_cnxe:8.4f}  after llr -> {rec.gamma:.5g} "
                f"llr {'+' if not rec.delta < 0 else '-'} {abs(rec.delta):.5g}; "
                f"calibration loss {self.calibration_loss:.4f}"
            )
        lines += [f"  note: {n}" for n in self.notes]
        if per_query:
            lines.append(
                f"  {'query':<24}{'N_act':>7}{'hits':>7}{'misses':>8}{'FA':>7}"
                f"{'P_miss':>9}{'P_fa':>11}{'TWV':>9}"
            )
            for row in self.per_query():
                lines.append(
                    f"  {str(row['query']):<24}{row['n_act']:7d}{row['n_hits']:7d}"
                    f"{row['n_misses']:8d}{row['n_false_alarms']:7d}"
                    f"{row['p_miss']:9.4f}{row['p_fa']:11.3e}{row['twv']:9.4f}"
                )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def term_detection_report(
    task: STDTask,
    *,
    tolerance: float = 0.5,
    operating_point=SWS2013,
    decision_threshold: float | None = None,
    name: str = "",
    prefer: str = "score",
    cnxe_queries: str = "evaluated",
) -> STDReport:
    """Score one spoken term detection system: alignment, ATWV, MTWV, C_nxe and C_nxe^min.

    Parameters
    ----------
    task : STDTask
        Detections, reference, T_audio, term list and n_tps (see :func:`focal.std.read_task`).
    tolerance : float
        Alignment tolerance in seconds (plan sec. 2.1).
    operating_point : OperatingPoint, tuple (P_target, C_miss, C_fa), float or str
        Default: the SWS 2013 point (P_target = 0.00015, C_miss = 100, C_fa = 1; beta = 66.66,
        effective prior 0.0148). A float is a target prior (unit costs), a str a name of
        ``OperatingPoint.NAMES`` (``"sws2012"`` depends on the trials, plan eqs. 17-18).
    decision_threshold : float, optional
        Decide YES iff ``score >= decision_threshold`` for ATWV instead of the system's own
        decisions (e.g. :func:`focal.bayes_threshold` for LLR scores).
    name : str
        Label printed in the report (default: the task's name).
    prefer : {"score", "decision"}
        Which of two detections competing for one occurrence is aligned: the higher score
        (default) or the YES decision (see :mod:`focal.std.alignment`, rule 4; it can change
        ATWV when decisions are not monotone in score).
    cnxe_queries : {"evaluated", "all"}
        The queries of C_nxe and C_nxe^min: those with occurrences (default, as TWV) or every
        query of the task, keeping the trials of queries without occurrences (plan eq. 41; see
        :func:`focal.std.cxe`).

    Returns
    -------
    STDReport
        Every measure as an attribute, ``to_dict()`` for programs, ``str()`` for people.

    Examples
    --------
    Query ``a`` occurs at 1 s and is detected there; query ``b`` occurs at 20 s but is detected,
    with a YES, at 9 s: one hit, one miss and one false alarm in 60 trials per query.

    >>> from focal import std
    >>> det = std.Detections(query=["a", "a", "b"], file=["f", "f", "f"], tbeg=[1.0, 5.0, 9.0],
    ...                      dur=[0.5, 0.5, 0.5], score=[3.0, -1.0, 2.0], decision=[1, 0, 1])
    >>> ref = std.Reference(query=["a", "b"], file=["f", "f"], tbeg=[1.0, 20.0], dur=[0.5, 0.5])
    >>> report = std.term_detection_report(std.STDTask(det, ref, t_audio=60.0))
    >>> report.atwv.n_hits, report.atwv.n_misses, report.atwv.n_false_alarms
    (1, 1, 1)
    >>> round(report.atwv.twv, 4)       # 1 - (0 + 0 + 1 + beta / 59) / 2, beta = 66.66
    -0.0649
    >>> report.mtwv.twv, report.mtwv.threshold     # accept only the hit
    (0.5, 3.0)
    """
    trials = align(task, tolerance, prefer)
    op = resolve_operating_point(operating_point, trials)
    notes = list(task.notes)
    if trials.excluded_queries:
        but = " but C_nxe (eq. 41)" if cnxe_queries == "all" else ""
        notes.append(
            f"{_count(len(trials.excluded_queries), 'query has', 'queries have')} no "
            f"reference occurrence: excluded from every measure{but} (plan footnote 1)"
        )
    have_decisions = trials.decision is not None or decision_threshold is not None
    act = atwv(trials, op, threshold=decision_threshold) if have_decisions else None
    if act is not None and math.isnan(act.threshold):
        notes.append(
            "the YES decisions do not follow one score threshold (query-dependent "
            "thresholds?), so ATWV can exceed MTWV"
        )
    best = mtwv(trials, op)
    cnxe_value = min_value = recal = None
    if trials.n_detections == 0 and (cnxe_queries != "all" or trials.excluded_score.size == 0):
        notes.append("no detections of evaluated queries: C_nxe is undefined (llr_min, eq. 42)")
    elif not np.isfinite(trials.score).all():
        cnxe_value = cnxe(trials, op, cnxe_queries)
        notes.append("scores contain +/-inf: C_nxe^min (affine recalibration) is undefined")
    else:
        recal = affine_recalibration(trials, op, cnxe_queries)
        cnxe_value, min_value = recal.cnxe, recal.min_cnxe
    return STDReport(
        name=name or task.name,
        operating_point=op,
        tolerance=trials.tolerance,
        t_audio=task.t_audio,
        n_tps=task.n_tps,
        trials=trials,
        atwv=act,
        mtwv=best,
        cnxe=cnxe_value,
        min_cnxe=min_value,
        recalibration=recal,
        notes=tuple(notes),
        decision_threshold=None if decision_threshold is None else float(decision_threshold),
    )

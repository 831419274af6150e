"""Calibration analysis of a set of binary LLRs: every headline number from one sort and one PAV.

Reports what a speaker- or forensic-LR engineer reads first: Cllr, minCllr and the calibration
loss Cllr - minCllr (thesis sec. 7.7.4), the ROCCH-EER (7.3.7), and actual / minimum normalized
DCF at chosen operating points (SWS plan eqs. 8-10, thesis eq. 7.21).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..core.operating_point import OperatingPoint, as_operating_points
from ..core.rocch import Threshold
from ..core.validation import check_probability
from .binary import cllr, dcf, eer, min_cllr, min_dcf, prbep
from .binary import conventional_eer as _conventional_eer  # a parameter has its name
from .binary_scores import _check_pair, as_binary_scores
from .sre import CPrimary, c_primary_of, resolve_points

__all__ = [
    "OperatingPointResult",
    "CalibrationReport",
    "calibration_report",
    "parse_operating_point",
]


@dataclass(frozen=True)
class OperatingPointResult:
    """Actual and minimum normalized DCF at one operating point (P_target, C_miss, C_fa).

    ``min_dcf_threshold`` is the score threshold where the minimum is attained (accept iff
    score >= ``min_dcf_threshold.value``; ``low`` / ``high`` span equally optimal ones), see
    :meth:`focal.core.RocHull.min_dcf_threshold`.

    Attributes
    ----------
    p_target : float
        Target prior P_target of the application.
    c_miss, c_fa : float
        Costs of a miss and of a false alarm.
    effective_prior : float
        The effective target prior of ``(p_target, c_miss, c_fa)``.
    act_dcf, min_dcf : float
        Actual (Bayes decisions on the LLRs) and minimum normalized DCF, dimensionless.
    min_dcf_threshold : focal.core.Threshold or None
        The score threshold of the minimum.
    """

    p_target: float
    c_miss: float
    c_fa: float
    effective_prior: float
    act_dcf: float
    min_dcf: float
    min_dcf_threshold: Threshold | None = None

    @property
    def calibration_loss(self) -> float:
        """``act_dcf - min_dcf``: the point calibration loss (thesis 7.3.3), normalized cost."""
        return self.act_dcf - self.min_dcf


@dataclass(frozen=True)
class CalibrationReport:
    """Calibration analysis of one set of LLRs (see :func:`calibration_report`).

    Attributes
    ----------
    n_targets, n_nontargets : int
        Trial counts.
    cllr, min_cllr : float
        Cross-entropy of the LLRs and of their PAV recalibration, divided by the prior entropy
        at ``p_target`` (1 = uninformative): bits for the classical ``p_target = 0.5``.
    eer : float
        ROCCH-EER, a fraction.
    prbep : float
        Precision-recall break-even point: precision = recall where the hull has as many
        misses as false alarms, a fraction (:func:`focal.metrics.prbep`, thesis 7.3.8).
    prbep_errors : float
        The number of misses (= false alarms) there, an absolute error count, usually not an
        integer (the thesis' way of quoting PRBEP).
    p_target : float
        Prior at which Cllr and minCllr are evaluated (0.5: classical Cllr).
    operating_points : tuple of OperatingPointResult
        In the order given.
    name : str
    eer_threshold : focal.core.Threshold or None
        Score threshold at the EER (:attr:`focal.core.RocHull.eer_threshold`), on the scale
        of the scores analysed.
    intervals : tuple of BootstrapInterval
        Bootstrap confidence intervals of Cllr, minCllr, EER and each actual / minimum DCF, when
        asked for (``confidence=`` of :func:`calibration_report`).
    eer_conventional : float or None
        The conventional (empirical-ROC) EER, when asked for
        (:func:`focal.metrics.conventional_eer`), beside the ROCCH-EER ``eer``.
    c_primary : focal.metrics.sre.CPrimary or None
        NIST SRE C_primary and minimum C_primary, when asked for.
    """

    n_targets: int
    n_nontargets: int
    p_target: float
    cllr: float
    min_cllr: float
    eer: float
    prbep: float
    prbep_errors: float
    operating_points: tuple = ()
    name: str = ""
    eer_threshold: Threshold | None = None
    intervals: tuple = ()
    eer_conventional: float | None = None
    c_primary: CPrimary | None = None

    @property
    def calibration_loss(self) -> float:
        """``cllr - min_cllr`` in bits: what a better monotone calibration would gain (7.7.4)."""
        return self.cllr - self.min_cllr

    def to_dict(self) -> dict:
        """Plain-Python dictionary of every number (for JSON or programs).

        Returns
        -------
        dict
            The fields as plain Python values (JSON-ready).
        """
        return {
            "name": self.name,
            "n_targets": self.n_targets,
            "n_nontargets": self.n_nontargets,
            "p_target": self.p_target,
            "cllr": self.cllr,
            "min_cllr": self.min_cllr,
            "calibration_loss": self.calibration_loss,
            "eer": self.eer,
            **(
                {} if self.eer_conventional is None else {"eer_conventional": self.eer_conventional}
            ),
            **_threshold_items("eer_threshold", self.eer_threshold),
            "prbep": self.prbep,
            "prbep_errors": self.prbep_errors,
            "operating_points": [
                {
                    "p_target": op.p_target,
                    "c_miss": op.c_miss,
                    "c_fa": op.c_fa,
                    "effective_prior": op.effective_prior,
                    "act_dcf": op.act_dcf,
                    "min_dcf": op.min_dcf,
                    "calibration_loss": op.calibration_loss,
                    **_threshold_items("min_dcf_threshold", op.min_dcf_threshold),
                }
                for op in self.operating_points
            ],
            **({"intervals": [iv.to_dict() for iv in self.intervals]} if self.intervals else {}),
            **({} if self.c_primary is None else {"c_primary": self.c_primary.to_dict()}),
        }

    def __str__(self) -> str:
        at_half = self.p_target == 0.5
        unit = " bits" if at_half else ""
        loss = self.calibration_loss
        share = (
            f"  ({100 * loss / self.cllr:.1f} % of Cllr)"
            if np.isfinite(self.cllr) and self.cllr > 0
            else ""
        )
        lines = [
            "Calibration analysis" + (f": {self.name}" if self.name else ""),
            f"  {self.n_targets:,} target and {self.n_nontargets:,} non-target trials",
            f"  Cllr              {self.cllr:9.4f}{unit}",
            f"  minCllr (PAV)     {self.min_cllr:9.4f}{unit}",
            f"  calibration loss  {loss:9.4f}{unit}{share}",
            f"  EER (ROCCH)       {100 * self.eer:9.3f} %",
            *(
                []
                if self.eer_conventional is None
                else [
                    f"  EER (conventional){100 * self.eer_conventional:9.3f} %  (empirical ROC, "
                    "linear interpolation)"
                ]
            ),
            f"  PRBEP             {100 * self.prbep:9.3f} %  (precision = recall; "
            f"{self.prbep_errors:.1f} misses = false alarms)",
        ]
        if not at_half:
            lines.append(
                f"  (Cllr at p_target={self.p_target:g}: cross-entropy / prior entropy, "
                "1 = uninformative)"
            )
        if self.operating_points:
            lines.append("  normalized DCF")
            lines.append("    P_target    C_miss    C_fa  eff. prior  actDCF   minDCF     loss")
            for op in self.operating_points:
                lines.append(
                    f"    {op.p_target:<10.4g}{op.c_miss:>8.4g}{op.c_fa:>8.4g}"
                    f"  {op.effective_prior:<10.4g}{op.act_dcf:>8.4f} "
                    f"{op.min_dcf:>8.4f} {op.calibration_loss:>8.4f}"
                )
        thresholds = [("EER", self.eer_threshold)] + [
            (f"minDCF {op.p_target:g}:{op.c_miss:g}:{op.c_fa:g}", op.min_dcf_threshold)
            for op in self.operating_points
        ]
        if any(thr is not None for _, thr in thresholds):
            lines.append("  score thresholds (accept iff score >= t; [low, high] when not unique)")
            lines.extend(
                f"    {label:<24}{_format_threshold(thr)}"
                for label, thr in thresholds
                if thr is not None
            )
        if self.c_primary is not None:
            cp = self.c_primary
            points = ", ".join(f"{p:g}:{m:g}:{f:g}" for p, m, f in cp.operating_points)
            lines.append(
                f"  C_primary{f' ({cp.name.upper()})' if cp.name else ''}  "
                f"actual {cp.actual:.4f}  minimum {cp.minimum:.4f}  (mean over {points})"
            )
        if self.intervals:
            first = self.intervals[0]
            lines.append(
                f"  {100 * first.confidence:g} % confidence intervals ({first.resampling} "
                f"bootstrap, {first.n_bootstrap} replicates)"
            )
            lines.extend(
                f"    {iv.measure:<24}{iv.estimate:>10.4f}  [{iv.low:.4f}, {iv.high:.4f}]"
                for iv in self.intervals
            )
        return "\n".join(lines)


def _threshold_items(key: str, thr) -> dict:
    """``{key: value, key + "_interval": [low, high]}`` of a Threshold, nothing for None."""
    if thr is None:
        return {}
    return {key: thr.value, f"{key}_interval": [thr.low, thr.high]}


def _format_threshold(thr) -> str:
    text = f"{thr.value:>12.6g}"
    if thr.low != thr.high:
        text += f"  in [{thr.low:.6g}, {thr.high:.6g}]"
    return text


def parse_operating_point(text: str, where: str = "operating point"):
    """``"P_TARGET:C_MISS:C_FA"`` (or a bare ``"P_TARGET"``, unit costs) as three validated floats,
    the way users write an operating point on a command line (e.g. ``0.01:1:10``).
    """
    fields = str(text).strip().split(":")
    if len(fields) not in (1, 3):
        raise ValueError(f"{where} must be P_TARGET or P_TARGET:C_MISS:C_FA, got {text!r}")
    try:
        values = [float(f) for f in fields]
    except ValueError:
        raise ValueError(f"{where} must be numbers P_TARGET:C_MISS:C_FA, got {text!r}") from None
    return check_operating_point(values[0] if len(values) == 1 else values, where)


def check_operating_point(op, where: str):
    """``op`` (a prior, ``(P_target, C_miss, C_fa)`` or an OperatingPoint) as three validated
    floats (:meth:`focal.core.operating_point.OperatingPoint.coerce`).

    Errors are ``ValueError`` naming ``where`` (the argument, e.g. ``"operating_points[2]"``).
    """
    return OperatingPoint.coerce(op, where).as_tuple()


def calibration_report(
    tar,
    non=None,
    operating_points=((0.01, 1.0, 1.0),),
    p_target=0.5,
    name: str = "",
    *,
    conventional_eer: bool = False,
    c_primary=None,
    confidence=None,
    n_bootstrap=1000,
    tar_clusters=None,
    non_clusters=None,
    random_state=None,
    n_jobs=None,
    progress=False,
) -> CalibrationReport:
    """Analyse the calibration of natural-log LLRs ``(tar, non)``, sorting and pooling once.

    Cllr, minCllr (Cllr after PAV) and the calibration loss Cllr - minCllr (thesis sec. 7.7.4),
    the ROCCH-EER (7.3.7) and PRBEP (7.3.8), and at each operating point the actual normalized
    DCF of Bayes decisions on the LLRs and the minimum over all thresholds (SWS plan eqs. 8-10,
    thesis eqs. 7.11-7.13, 7.21): the measures of :mod:`focal.metrics.binary`, all from one sort
    per class and one PAV.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        Natural-log LLRs of target and non-target trials (+/-inf allowed, NaN not). With
        ``(scores, labels)``, call ``calibration_report(*from_labels(scores, labels))``. Or,
        with ``non`` omitted (the other arguments by keyword), one object standing for both
        (:mod:`focal.metrics.binary_scores`), e.g. a :class:`focal.metrics.BinaryScores` whose
        curves a caller also draws, or the :func:`focal.dask.summarize` of a set held by a
        cluster (with its sums at ``p_target`` and at the Bayes thresholds of the points).
    operating_points : sequence, default ((0.01, 1, 1),)
        Each a target prior ``P_target`` (unit costs) or a tuple ``(P_target, C_miss, C_fa)``.
        For a single point with costs write ``[(P_target, C_miss, C_fa)]``.
    p_target : float, default 0.5
        Prior of Cllr / minCllr: 0.5 gives the classical Cllr in bits (thesis eq. 7.41); other
        values the normalized cross-entropy C_nxe of SWS plan eq. 40.
    name : str
        Label printed in the report's title.
    conventional_eer : bool, default False
        Also report the conventional EER of the empirical ROC
        (:func:`focal.metrics.conventional_eer`) beside the ROCCH-EER.
    c_primary : str or sequence, optional
        Also report NIST SRE's C_primary at these operating points: ``"sre16"``, ``"sre21"``,
        ... or two or more ``(P_target, C_miss, C_fa)`` (:func:`focal.metrics.sre.c_primary`).
    confidence : float, optional
        With a coverage such as 0.95, add bootstrap confidence intervals of Cllr, minCllr, EER
        and every actual / minimum DCF (:func:`focal.metrics.bootstrap_ci`, all from the same
        replicates); needs the ``(tar, non)`` arrays (the trials in the order of the clusters).
    n_bootstrap : int, default 1000
        Replicates of the bootstrap.
    tar_clusters, non_clusters : array_like, optional
        Cluster labels (speaker / model / test, or a (model, test) pair for two-way
        resampling), as in :func:`focal.metrics.bootstrap_ci`.
    random_state : int, RandomState or None
        Seed of the bootstrap.
    n_jobs : int, optional
        Workers of the bootstrap.
    progress : bool or callable, default False
        Progress bar (or callback) of the bootstrap.

    Returns
    -------
    CalibrationReport
        Every number as an attribute, ``to_dict()`` for programs, ``str()`` for people.

    Examples
    --------
    An uninformative system (every LLR 0): Cllr = minCllr = 1 bit, no calibration loss, EER 50 %,
    and at P_target = 0.01 it rejects everything (actual DCF = 1 = the default's cost). Its EER
    is reached only by randomizing between accepting all (threshold 0) and rejecting all (inf).

    >>> from focal.metrics import calibration_report, from_labels
    >>> print(calibration_report(*from_labels([0.0, 0.0, 0.0, 0.0], [1, 0, 1, 0]), name="flat"))
    Calibration analysis: flat
      2 target and 2 non-target trials
      Cllr                 1.0000 bits
      minCllr (PAV)        1.0000 bits
      calibration loss     0.0000 bits  (0.0 % of Cllr)
      EER (ROCCH)          50.000 %
      PRBEP                50.000 %  (precision = recall; 1.0 misses = false alarms)
      normalized DCF
        P_target    C_miss    C_fa  eff. prior  actDCF   minDCF     loss
        0.01             1       1  0.01        1.0000   1.0000   0.0000
      score thresholds (accept iff score >= t; [low, high] when not unique)
        EER                                0  in [0, inf]
        minDCF 0.01:1:1                  inf
    """
    arrays = not _check_pair(tar, non)
    p = check_probability(p_target)
    points = as_operating_points(operating_points)
    cp_name, cp_points = resolve_points(c_primary) if c_primary is not None else ("", [])
    if confidence is not None and not arrays:
        raise ValueError(
            "confidence intervals need the (tar, non) arrays (the trials, in the order of "
            "their clusters), not a summary or sorted scores"
        )
    scores = as_binary_scores(tar, non)
    report = _report(scores, points, p, name)
    extra: dict[str, Any] = {}
    if conventional_eer:
        extra["eer_conventional"] = _conventional_eer(scores)
    if c_primary is not None:
        extra["c_primary"] = c_primary_of(scores, cp_points, cp_name)
    report = replace(report, **extra)
    if confidence is None:
        return report
    from .bootstrap import bootstrap_ci

    measures = [("cllr", p), ("min_cllr", p), "eer"] + [
        (kind, *op) for op in points for kind in ("dcf", "min_dcf")
    ]
    intervals = bootstrap_ci(
        measures,
        tar,
        non,
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        tar_clusters=tar_clusters,
        non_clusters=non_clusters,
        random_state=random_state,
        n_jobs=n_jobs,
        progress=progress,
    )
    return replace(report, intervals=tuple(intervals))


def _report(scores, points, p, name) -> CalibrationReport:
    hull = scores.hull
    results = [
        OperatingPointResult(
            p_target=pt,
            c_miss=cm,
            c_fa=cf,
            effective_prior=OperatingPoint(pt, cm, cf).effective_prior,
            act_dcf=dcf(scores, p_target=pt, c_miss=cm, c_fa=cf),
            min_dcf=min_dcf(scores, p_target=pt, c_miss=cm, c_fa=cf),
            min_dcf_threshold=hull.min_dcf_threshold(pt, cm, cf),
        )
        for pt, cm, cf in points
    ]
    break_even = prbep(scores)
    return CalibrationReport(
        n_targets=scores.n_targets,
        n_nontargets=scores.n_nontargets,
        p_target=p,
        cllr=cllr(scores, p_target=p),
        min_cllr=min_cllr(scores, p_target=p),
        eer=eer(scores),
        eer_threshold=hull.eer_threshold,
        prbep=break_even,
        prbep_errors=float(hull.crossing_misses(1, 1)),
        operating_points=tuple(results),
        name=str(name),
    )

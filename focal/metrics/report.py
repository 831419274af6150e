"""Calibration analysis of a set of binary LLRs: every headline number from one sort and one PAV.

Reports what a speaker- or forensic-LR engineer reads first: Cllr, minCllr and the calibration
loss Cllr - minCllr (thesis sec. 7.7.4), the ROCCH-EER (7.3.7), and actual / minimum normalized
DCF at chosen operating points (SWS plan eqs. 8-10, thesis eq. 7.21).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scipy.special import expit

from ..core.priors import effective_log_odds
from ..core.validation import check_positive, check_probability
from .binary import BinaryScores

__all__ = ["OperatingPointResult", "CalibrationReport", "calibration_report",
           "calibration_report_of", "summary_table"]


@dataclass(frozen=True)
class OperatingPointResult:
    """Actual and minimum normalized DCF at one operating point (P_target, C_miss, C_fa)."""

    p_target: float
    c_miss: float
    c_fa: float
    effective_prior: float
    act_dcf: float
    min_dcf: float

    @property
    def calibration_loss(self) -> float:
        """``act_dcf - min_dcf``: the point calibration loss (thesis sec. 7.3.3), normalized cost."""
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
        Precision-recall break-even point, an absolute error count (thesis 7.3.8).
    p_target : float
        Prior at which Cllr and minCllr are evaluated (0.5: classical Cllr).
    operating_points : tuple of OperatingPointResult
        In the order given.
    name : str
    """

    n_targets: int
    n_nontargets: int
    p_target: float
    cllr: float
    min_cllr: float
    eer: float
    prbep: float
    operating_points: tuple = ()
    name: str = ""

    @property
    def calibration_loss(self) -> float:
        """``cllr - min_cllr`` in bits: what a better monotone calibration would gain (7.7.4)."""
        return self.cllr - self.min_cllr

    def to_dict(self) -> dict:
        """Plain-Python dictionary of every number (for JSON or programs)."""
        return {
            "name": self.name,
            "n_targets": self.n_targets,
            "n_nontargets": self.n_nontargets,
            "p_target": self.p_target,
            "cllr": self.cllr,
            "min_cllr": self.min_cllr,
            "calibration_loss": self.calibration_loss,
            "eer": self.eer,
            "prbep": self.prbep,
            "operating_points": [
                {
                    "p_target": op.p_target,
                    "c_miss": op.c_miss,
                    "c_fa": op.c_fa,
                    "effective_prior": op.effective_prior,
                    "act_dcf": op.act_dcf,
                    "min_dcf": op.min_dcf,
                    "calibration_loss": op.calibration_loss,
                }
                for op in self.operating_points
            ],
        }

    def __str__(self) -> str:
        at_half = self.p_target == 0.5
        unit = " bits" if at_half else ""
        loss = self.calibration_loss
        share = (f"  ({100 * loss / self.cllr:.1f} % of Cllr)"
                 if np.isfinite(self.cllr) and self.cllr > 0 else "")
        lines = [
            "Calibration analysis" + (f": {self.name}" if self.name else ""),
            f"  {self.n_targets:,} target and {self.n_nontargets:,} non-target trials",
            f"  Cllr              {self.cllr:9.4f}{unit}",
            f"  minCllr (PAV)     {self.min_cllr:9.4f}{unit}",
            f"  calibration loss  {loss:9.4f}{unit}{share}",
            f"  EER (ROCCH)       {100 * self.eer:9.3f} %",
            f"  PRBEP             {self.prbep:9.1f} errors (misses = false alarms)",
        ]
        if not at_half:
            lines.append(f"  (Cllr at p_target={self.p_target:g}: cross-entropy / prior entropy, "
                         "1 = uninformative)")
        if self.operating_points:
            lines.append("  normalized DCF")
            lines.append("    P_target    C_miss    C_fa  eff. prior  actDCF   minDCF     loss")
            for op in self.operating_points:
                lines.append(f"    {op.p_target:<10.4g}{op.c_miss:>8.4g}{op.c_fa:>8.4g}"
                             f"  {op.effective_prior:<10.4g}{op.act_dcf:>8.4f} "
                             f"{op.min_dcf:>8.4f} {op.calibration_loss:>8.4f}")
        return "\n".join(lines)


def check_operating_point(op, where: str):
    """``op`` (a prior, or ``(P_target, C_miss, C_fa)``) as three validated floats.

    Errors are ``ValueError`` naming ``where`` (the argument, e.g. ``"operating_points[2]"``).
    """
    if np.ndim(op) == 0:
        pt, cm, cf = op, 1.0, 1.0
    else:
        values = tuple(np.ravel(op).tolist()) if isinstance(op, np.ndarray) else tuple(op)
        if len(values) != 3:
            raise ValueError(f"{where} must be a target prior or a tuple (P_target, C_miss, "
                             f"C_fa), got {op!r}")
        pt, cm, cf = values
    return (check_probability(pt, f"{where} P_target"), check_positive(cm, f"{where} C_miss"),
            check_positive(cf, f"{where} C_fa"))


def calibration_report(tar, non, operating_points=((0.01, 1.0, 1.0),), p_target=0.5,
                       name: str = "") -> CalibrationReport:
    """Analyse the calibration of natural-log LLRs ``(tar, non)``, sorting and pooling once.

    Cllr, minCllr (Cllr after PAV) and the calibration loss Cllr - minCllr (thesis sec. 7.7.4),
    the ROCCH-EER (7.3.7) and PRBEP (7.3.8), and at each operating point the actual normalized
    DCF of Bayes decisions on the LLRs and the minimum over all thresholds (SWS plan eqs. 8-10,
    thesis eqs. 7.11-7.13, 7.21). One sort per class and one PAV serve every number.

    Parameters
    ----------
    tar, non : array_like
        Natural-log LLRs of target and non-target trials (+/-inf allowed, NaN not). With
        ``(scores, labels)``, call ``calibration_report(*from_labels(scores, labels))``.
    operating_points : sequence, default ((0.01, 1, 1),)
        Each a target prior ``P_target`` (unit costs) or a tuple ``(P_target, C_miss, C_fa)``.
        For a single point with costs write ``[(P_target, C_miss, C_fa)]``.
    p_target : float, default 0.5
        Prior of Cllr / minCllr: 0.5 gives the classical Cllr in bits (thesis eq. 7.41); other
        values the normalized cross-entropy C_nxe of SWS plan eq. 40.
    name : str
        Label printed in the report's title.

    Returns
    -------
    CalibrationReport
        Every number as an attribute, ``to_dict()`` for programs, ``str()`` for people.

    Examples
    --------
    An uninformative system (every LLR 0): Cllr = minCllr = 1 bit, no calibration loss, EER 50 %,
    and at P_target = 0.01 it rejects everything (actual DCF = 1 = the default's cost).

    >>> from focal.metrics import calibration_report, from_labels
    >>> print(calibration_report(*from_labels([0.0, 0.0, 0.0, 0.0], [1, 0, 1, 0]), name="flat"))
    Calibration analysis: flat
      2 target and 2 non-target trials
      Cllr                 1.0000 bits
      minCllr (PAV)        1.0000 bits
      calibration loss     0.0000 bits  (0.0 % of Cllr)
      EER (ROCCH)          50.000 %
      PRBEP                   1.0 errors (misses = false alarms)
      normalized DCF
        P_target    C_miss    C_fa  eff. prior  actDCF   minDCF     loss
        0.01             1       1  0.01        1.0000   1.0000   0.0000
    """
    p = check_probability(p_target)
    points = _operating_points(operating_points)
    return _report(BinaryScores(tar, non), points, p, name)


def calibration_report_of(scores: BinaryScores, operating_points=((0.01, 1.0, 1.0),),
                          p_target=0.5, name: str = "") -> CalibrationReport:
    """:func:`calibration_report` of scores already sorted in a :class:`BinaryScores`, so that a
    caller drawing curves of the same scores (``scores.bayes_error_rates``) sorts and runs PAV
    only once."""
    p = check_probability(p_target)
    return _report(scores, _operating_points(operating_points), p, name)


def _operating_points(operating_points):
    if np.isscalar(operating_points) or (isinstance(operating_points, np.ndarray)
                                         and operating_points.ndim == 0):  # one bare prior
        operating_points = (operating_points,)
    return [check_operating_point(op, f"operating_points[{i}]")
            for i, op in enumerate(operating_points)]


def _report(scores: BinaryScores, points, p, name) -> CalibrationReport:
    results = [
        OperatingPointResult(
            p_target=pt, c_miss=cm, c_fa=cf,
            effective_prior=float(expit(effective_log_odds(pt, cm, cf))),
            act_dcf=scores.dcf(pt, cm, cf),
            min_dcf=scores.min_dcf(pt, cm, cf),
        )
        for pt, cm, cf in points
    ]
    hull = scores.hull
    return CalibrationReport(
        n_targets=scores.n_targets,
        n_nontargets=scores.n_nontargets,
        p_target=p,
        cllr=scores.cllr(p),
        min_cllr=hull.min_cllr(p),
        eer=hull.eer,
        prbep=hull.prbep,
        operating_points=tuple(results),
        name=str(name),
    )


def summary_table(reports, p_target) -> str:
    """One line per report: Cllr, minCllr, EER and the DCFs of its first operating point
    (names shortened to their last path component)."""
    def short(name):
        return str(name).replace("\\", "/").rsplit("/", 1)[-1]

    width = max(len(short(r.name)) for r in reports) + 2
    lines = [f"Summary (eval set; DCF at P_target = {p_target:g})",
             f"  {'system':<{width}}{'Cllr':>8}{'minCllr':>9}{'EER %':>8}{'actDCF':>8}"
             f"{'minDCF':>8}"]
    for r in reports:
        op = r.operating_points[0]
        lines.append(f"  {short(r.name):<{width}}{r.cllr:8.4f}{r.min_cllr:9.4f}"
                     f"{100 * r.eer:8.2f}{op.act_dcf:8.4f}{op.min_dcf:8.4f}")
    return "\n".join(lines)

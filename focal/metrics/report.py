"""Calibration analysis of a set of binary LLRs: every headline number from one sort and one PAV.

Reports what a speaker- or forensic-LR engineer reads first: Cllr, minCllr and the calibration
loss Cllr - minCllr (thesis sec. 7.7.4), the ROCCH-EER (7.3.7), and actual / minimum normalized
DCF at chosen operating points (SWS plan eqs. 8-10, thesis eq. 7.21).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scipy.special import expit

from ..core.pav import pav_from_sorted, sort_trials
from ..core.priors import detection_cost, effective_log_odds
from ..core.rocch import ROCCH
from ..core.scoring import cross_entropy_nats, normalized_cross_entropy
from ..core.validation import check_positive, check_probability

__all__ = ["OperatingPointResult", "CalibrationReport", "calibration_report"]


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
    cllr, min_cllr : float
        Bits, normalized by the prior entropy at ``p_target`` (1 = uninformative).
    eer : float
        ROCCH-EER, a fraction.
    prbep : float
        Precision-recall break-even point, an absolute error count (thesis 7.3.8).
    p_target : float
        Prior at which Cllr and minCllr are evaluated (0.5: classical Cllr).
    operating_points : list of OperatingPointResult
    """

    n_targets: int
    n_nontargets: int
    p_target: float
    cllr: float
    min_cllr: float
    eer: float
    prbep: float
    operating_points: list = field(default_factory=list)
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
        title = f"Calibration analysis{': ' + self.name if self.name else ''}"
        prior = "" if self.p_target == 0.5 else f" (at p_target={self.p_target:g})"
        rows = [
            ("Cllr", f"{self.cllr:9.4f} bits{prior}"),
            ("minCllr", f"{self.min_cllr:9.4f} bits"),
            ("calibration loss", f"{self.calibration_loss:9.4f} bits"),
            ("EER (ROCCH)", f"{100 * self.eer:9.3f} %"),
            ("PRBEP", f"{self.prbep:9.1f} errors"),
        ]
        lines = [title, f"  trials            {self.n_targets:,} target, {self.n_nontargets:,} non-target"]
        lines += [f"  {label:<17}{value}" for label, value in rows]
        if self.operating_points:
            lines.append("  operating point                          actDCF   minDCF   loss")
            for op in self.operating_points:
                point = f"P_tar={op.p_target:g} C_miss={op.c_miss:g} C_fa={op.c_fa:g}"
                lines.append(f"    {point:<37}{op.act_dcf:7.4f}  {op.min_dcf:7.4f}  "
                             f"{op.calibration_loss:6.4f}")
        return "\n".join(lines)


def calibration_report(tar, non, operating_points=((0.01, 1.0, 1.0),), p_target=0.5,
                       name: str = "") -> CalibrationReport:
    """Analyse the calibration of natural-log LLRs ``(tar, non)``, sorting and pooling once.

    Parameters
    ----------
    tar, non : array_like
        LLRs of target and non-target trials (+/-inf allowed, NaN not).
    operating_points : sequence
        Each an effective prior ``p`` or a tuple ``(P_target, C_miss, C_fa)``, at which actual and
        minimum normalized DCF are reported.
    p_target : float
        Prior of Cllr / minCllr (default 0.5, the classical Cllr of thesis eq. 7.41).
    name : str
        Label printed in the report.
    """
    p = check_probability(p_target)
    points = []
    for op in operating_points:
        pt, cm, cf = (op, 1.0, 1.0) if np.ndim(op) == 0 else tuple(op)
        points.append((check_probability(pt), check_positive(cm, "c_miss"), check_positive(cf, "c_fa")))
    trials = sort_trials(tar, non)
    hull = ROCCH(pav_from_sorted(trials))
    results = []
    for pt, cm, cf in points:
        plo = effective_log_odds(pt, cm, cf)
        p_miss, p_fa = trials.error_rates(np.array([-plo]))
        results.append(OperatingPointResult(
            p_target=pt, c_miss=cm, c_fa=cf, effective_prior=float(expit(plo)),
            act_dcf=float(detection_cost(p_miss[0], p_fa[0], pt, cm, cf)),
            min_dcf=hull.min_dcf(pt, cm, cf),
        ))
    return CalibrationReport(
        n_targets=trials.n_tar,
        n_nontargets=trials.n_non,
        p_target=p,
        cllr=normalized_cross_entropy(cross_entropy_nats(trials.tar, trials.non, p), p),
        min_cllr=hull.min_cllr(p),
        eer=hull.eer,
        prbep=hull.prbep,
        operating_points=results,
        name=name,
    )

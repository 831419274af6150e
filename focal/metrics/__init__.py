"""Evaluation measures: pure functions, arrays in, numbers or curves out.

Binary measures take ``(tar, non)`` score arrays (BOSARIS convention); use
:func:`from_labels` to call them with ``(scores, labels)``.
"""

from .binary import (
    BayesErrorRates,
    DETCurve,
    bayes_error_rates,
    cllr,
    cross_entropy,
    dcf,
    det_curve,
    eer,
    from_labels,
    min_cllr,
    min_dcf,
    pav_llr,
    rocch,
)
from .report import CalibrationReport, OperatingPointResult, calibration_report

__all__ = [
    "BayesErrorRates", "DETCurve", "bayes_error_rates", "cllr", "cross_entropy", "dcf",
    "det_curve", "eer", "from_labels", "min_cllr", "min_dcf", "pav_llr", "rocch",
    "CalibrationReport", "OperatingPointResult", "calibration_report",
]

"""Evaluation measures: pure functions, arrays in, numbers or curves out.

Binary measures take ``(tar, non)`` score arrays (BOSARIS convention); use
:func:`from_labels` to call them with ``(scores, labels)``.

References
----------
.. [1] L. J. Rodríguez-Fuentes, N. Brümmer, M. Penagarikano, A. Varona, M. Diez and
   G. Bordel, "The Albayzin 2012 Language Recognition Evaluation Plan", evaluation plan,
   GTTS, UPV/EHU, 2012 ("Albayzin plan").
"""

from .bayes import BayesRisk, bayes_decisions, bayes_risk, bayes_risk_analysis, default_bayes_risk
from .binary import (
    BayesErrorRates,
    BinaryScores,
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
from .bootstrap import BootstrapInterval, bootstrap_ci, bootstrap_ci_multiclass
from .combined import (
    CombinedApplication,
    combine_applications,
    min_truncated_cllr,
    truncated_cllr,
)
from .costs import detection_cost_matrix, lre_cost_matrix, misclassification_cost_matrix
from .lre import CavgSweep, SubsetAnalysis, cavg, cavg_sweep, subset_analysis
from .multiclass import (
    AlbayzinMeasures,
    DetectionAnalysis,
    PairwiseAnalysis,
    affine_calibration,
    albayzin_measures,
    albayzin_prior,
    detection_analysis,
    detection_llrs,
    multiclass_cllr,
    multiclass_cross_entropy,
    pairwise_analysis,
)
from .multiclass_report import MulticlassReport, multiclass_report
from .multiclass_rules import (
    BrierAnalysis,
    brier_analysis,
    e_lre,
    e_lre_default,
    eta_risk,
    eta_risk_analysis,
    multiclass_brier,
)
from .report import (
    CalibrationReport,
    OperatingPointResult,
    calibration_report,
    calibration_report_of,
)
from .sre import SRE_OPERATING_POINTS, CPrimary, c_primary
from .summary import SummarizedScores

__all__ = [
    "BayesErrorRates", "BinaryScores", "DETCurve", "bayes_error_rates", "cllr", "cross_entropy", "dcf",
    "det_curve", "eer", "from_labels", "min_cllr", "min_dcf", "pav_llr", "rocch",
    "CalibrationReport", "OperatingPointResult", "calibration_report", "calibration_report_of",
    "multiclass_cross_entropy", "multiclass_cllr", "albayzin_prior", "albayzin_measures",
    "AlbayzinMeasures", "affine_calibration", "detection_llrs", "detection_analysis",
    "DetectionAnalysis", "pairwise_analysis", "PairwiseAnalysis", "cavg", "cavg_sweep",
    "CavgSweep", "subset_analysis", "SubsetAnalysis",
    "BayesRisk", "bayes_decisions", "bayes_risk", "bayes_risk_analysis", "default_bayes_risk",
    "detection_cost_matrix", "lre_cost_matrix", "misclassification_cost_matrix",
    "BrierAnalysis", "brier_analysis", "e_lre", "e_lre_default", "eta_risk", "multiclass_brier",
    "eta_risk_analysis",
    "CombinedApplication", "combine_applications", "truncated_cllr", "min_truncated_cllr",
    "BootstrapInterval", "bootstrap_ci", "bootstrap_ci_multiclass",
    "SRE_OPERATING_POINTS", "CPrimary", "c_primary",
    "MulticlassReport", "multiclass_report",
    "SummarizedScores",
]

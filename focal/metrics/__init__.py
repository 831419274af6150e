"""Evaluation measures: pure functions, arrays in, numbers or curves out.

Binary measures take ``(tar, non)`` score arrays (BOSARIS convention); use
:func:`from_labels` to call them with ``(scores, labels)``. In place of the pair each also
takes a :class:`BinaryScores` (sorted once), a :class:`SummarizedScores` (block summaries and
sums of a set held elsewhere, e.g. :func:`focal.dask.summarize`) or a :func:`rocch` result.

References
----------
- "thesis": :cite:p:`brummer2010thesis`
- "the 2006 paper": :cite:p:`brummer2006calibration`
- "Albayzin plan": :cite:p:`albayzin2012plan`
- "SWS plan": :cite:p:`sws2013measures`
- "the keynote": :cite:p:`brummer2012keynote`
"""

from .._lazy import attach

# each name loads with its module on first use (``focal.metrics.cllr`` imports .binary only)
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        ".binary_scores": (
            "BinaryScores",
            "SummarizedScores",
            "as_binary_scores",
        ),
        ".binary": (
            "BayesErrorRates",
            "DETCurve",
            "bayes_error_rates",
            "cllr",
            "conventional_eer",
            "cross_entropy",
            "dcf",
            "det_curve",
            "eer",
            "from_labels",
            "min_cllr",
            "min_dcf",
            "pav_llr",
            "prbep",
            "rocch",
            "rocch_auc",
        ),
        "._intervals": ("BootstrapInterval",),
        ".bootstrap": (
            "bootstrap_ci",
            "bootstrap_ci_multiclass",
        ),
        ".sre": (
            "SRE_OPERATING_POINTS",
            "CPrimary",
            "c_primary",
        ),
        ".lre": (
            "CavgSweep",
            "cavg",
            "cavg_sweep",
        ),
        ".lre_subsets": (
            "SubsetAnalysis",
            "subset_analysis",
        ),
        ".multiclass": (
            "AlbayzinMeasures",
            "affine_calibration",
            "albayzin_measures",
            "albayzin_prior",
            "multiclass_cllr",
            "multiclass_cross_entropy",
        ),
        ".multiclass_detection": (
            "DetectionAnalysis",
            "PairwiseAnalysis",
            "detection_analysis",
            "detection_llrs",
            "pairwise_analysis",
        ),
        ".decisions": ("bayes_decisions",),
        ".bayes": (
            "BayesRisk",
            "bayes_risk",
            "bayes_risk_analysis",
            "default_bayes_risk",
        ),
        ".costs": (
            "detection_cost_matrix",
            "lre_cost_matrix",
            "misclassification_cost_matrix",
        ),
        ".combined": (
            "CombinedApplication",
            "combine_applications",
            "min_truncated_cllr",
            "truncated_cllr",
        ),
        ".brier": (
            "BrierAnalysis",
            "brier_analysis",
            "multiclass_brier",
        ),
        ".c_eta": (
            "eta_risk",
            "eta_risk_analysis",
        ),
        ".multiclass_rules": (
            "e_lre",
            "e_lre_default",
        ),
        ".multiclass_report": (
            "MulticlassReport",
            "multiclass_report",
        ),
        ".report": (
            "CalibrationReport",
            "OperatingPointResult",
            "calibration_report",
        ),
        ".forensic": (
            "ELUBBounds",
            "ForensicSummary",
            "elub_bounds",
            "forensic_summary",
        ),
        ".partitions": (
            "EqualizedMeasures",
            "Partition",
            "PartitionReport",
            "partition_report",
        ),
        "focal.core.multiclass": (
            "MulticlassTrials",
            "as_multiclass_trials",
        ),
    },
)

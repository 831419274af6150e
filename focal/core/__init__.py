"""Core math of focal: priors, the logarithmic scoring rule, PAV and the ROC convex hull.

Pure functions and small result objects on NumPy arrays. Nothing here imports an estimator, a
plot or a file reader (see ARCHITECTURE.md). The names below load on first use, so that the
NumPy-only modules (:mod:`focal.core.maps`, what a saved model applies) import without SciPy.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        ".operating_point": ("OperatingPoint",),
        ".pav": ("PAVResult", "pav", "pav_from_sorted"),
        ".sorted_trials": ("SortedTrials", "sort_trials"),
        ".priors": (
            "bayes_threshold",
            "beta",
            "effective_log_odds",
            "effective_prior",
            "logit",
            "prior_entropy",
            "sigmoid",
            "detection_cost",
        ),
        ".rocch": ("RocHull", "MinBayesErrors", "Threshold"),
        ".scoring": (
            "cross_entropy_nats",
            "nontarget_cost",
            "normalized_cross_entropy",
            "target_cost",
        ),
    },
)

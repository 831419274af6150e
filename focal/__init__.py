"""focal: discriminative fusion and calibration of recognizer scores, and the measures that
judge them, in the tradition of Niko Brümmer's FoCal and BOSARIS toolkits.

Log-likelihood-ratios are natural logs; Cllr-family measures are in bits.

``import focal`` imports nothing (not even NumPy): the estimators (and with them scikit-learn),
the measures, the file readers, the term-detection tools and the figures load the first time
they are used (``focal.LogisticFusion``, ``from focal import LogisticFusion``, ``focal.metrics``
all work as usual). See ARCHITECTURE.md for the layers.
"""

from ._lazy import attach
from ._version import __version__

__getattr__, __dir__, _names = attach(
    __name__,
    {
        ".core.priors": (
            "bayes_threshold",
            "beta",
            "effective_log_odds",
            "effective_prior",
            "logit",
            "prior_entropy",
            "sigmoid",
        ),
        ".estimators": (
            "PAVCalibrator",
            "ROCCH",
            "KDECalibrator",
            "GaussianBackend",
            "MulticlassFusion",
            "stack_systems",
            "LogisticFusion",
            "LinearCalibrator",
            "PerfectSeparationWarning",
            "cllr_scorer",
            "min_cllr_scorer",
            "dcf_scorer",
            "min_dcf_scorer",
            "eer_scorer",
            "QualityFusion",
            "CalibratedClassifier",
            "ScoreNormalizer",
            "cmce_scorer",
            "multiclass_cllr_scorer",
            "cavg_scorer",
        ),
        ".models.persistence": ("save", "load"),
        ".core.operating_point": ("OperatingPoint",),
    },
    submodules=(
        "core",
        "metrics",
        "estimators",
        "std",
        "io",
        "models",
        "runtime",
        "workflows",
        "plots",
        "dask",
    ),
)

__all__ = ["__version__", "metrics", "std", *_names]

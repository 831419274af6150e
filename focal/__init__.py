"""focal: discriminative fusion and calibration of recognizer scores, and the measures that
judge them, in the tradition of Niko Brümmer's FoCal and BOSARIS toolkits.

Log-likelihood-ratios are natural logs; Cllr-family measures are in bits.
"""

from . import metrics, std
from ._version import __version__
from .core.priors import (
    bayes_threshold,
    beta,
    effective_log_odds,
    effective_prior,
    logit,
    prior_entropy,
    sigmoid,
)

__all__ = [
    "__version__",
    "metrics",
    "PAVCalibrator",
    "ROCCH",
    "std",
    "GaussianBackend",
    "MulticlassFusion",
    "stack_systems",
    "bayes_threshold",
    "beta",
    "effective_log_odds",
    "effective_prior",
    "logit",
    "prior_entropy",
    "sigmoid",
    "LogisticFusion",
    "LinearCalibrator",
    "PerfectSeparationWarning",
    "cllr_scorer",
    "min_cllr_scorer",
    "dcf_scorer",
    "min_dcf_scorer",
    "eer_scorer",
    "save",
    "load",
    "QualityFusion",
    "CalibratedClassifier",
    "ScoreNormalizer",
    "cmce_scorer",
    "multiclass_cllr_scorer",
    "cavg_scorer",
    "OperatingPoint",
]

# Estimators (and with them scikit-learn) load on first use, so that ``import focal`` stays
# light for the metrics and the command line: ``focal.LogisticFusion`` and
# ``from focal import LogisticFusion`` work as usual.
_LAZY = {
    name: "focal.estimators"
    for name in ("PAVCalibrator", "ROCCH", "LogisticFusion", "LinearCalibrator",
                 "PerfectSeparationWarning", "cllr_scorer", "min_cllr_scorer", "dcf_scorer",
                 "min_dcf_scorer", "eer_scorer", "MulticlassFusion", "GaussianBackend",
                 "stack_systems")
}
_LAZY.update(save="focal.persistence", load="focal.persistence")
_LAZY["QualityFusion"] = "focal.estimators"
_LAZY.update({name: "focal.estimators" for name in (
    "CalibratedClassifier", "ScoreNormalizer", "cmce_scorer", "multiclass_cllr_scorer",
    "cavg_scorer")})
_LAZY["OperatingPoint"] = "focal.core.operating_point"


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'focal' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

"""focal: discriminative fusion and calibration of recognizer scores, and the measures that
judge them, in the tradition of Niko Brümmer's FoCal and BOSARIS toolkits.

Log-likelihood-ratios are natural logs; Cllr-family measures are in bits.
"""

from . import metrics, std
from ._version import __version__
from .estimators import GaussianBackend, MulticlassFusion, PAVCalibrator, ROCCH, stack_systems
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
]

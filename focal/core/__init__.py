"""Core math of focal: priors, the logarithmic scoring rule, PAV and ROCCH.

Pure functions and small result objects on NumPy arrays. Nothing here imports an estimator, a
plot or a file reader (see DESIGN.md, "Layers").
"""

from .operating_point import OperatingPoint
from .pav import PAVResult, SortedTrials, pav, pav_from_sorted, sort_trials
from .priors import (
    bayes_threshold,
    beta,
    detection_cost,
    effective_log_odds,
    effective_prior,
    logit,
    prior_entropy,
    sigmoid,
)
from .rocch import ROCCH, MinBayesErrors, Threshold
from .scoring import cross_entropy_nats, nontarget_cost, normalized_cross_entropy, target_cost

__all__ = [
    "PAVResult", "SortedTrials", "pav", "pav_from_sorted", "sort_trials",
    "bayes_threshold", "beta", "effective_log_odds", "effective_prior", "logit",
    "prior_entropy", "sigmoid", "detection_cost",
    "ROCCH", "MinBayesErrors", "Threshold",
    "cross_entropy_nats", "nontarget_cost", "normalized_cross_entropy", "target_cost",
    "OperatingPoint",
]

"""Priors and the operating point of a binary detection application.

An application (P_target, C_miss, C_fa) is equivalent, for evaluation, to a single *effective
target prior* with unit costs (thesis eqs. 7.12-7.13; SWS plan eqs. 22-24). Log-odds use natural
logarithms; entropies are in bits.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from scipy.special import logit as _logit

from .validation import check_positive, check_probability

__all__ = [
    "logit",
    "sigmoid",
    "effective_prior",
    "effective_log_odds",
    "beta",
    "prior_entropy",
    "bayes_threshold",
    "detection_cost",
]


def logit(p):
    """Log-odds ``log(p / (1 - p))`` in nats (thesis footnote 8); works on arrays.

    Parameters
    ----------
    p : float or array_like
        Probabilities in [0, 1] (0 and 1 give -inf and +inf).

    Returns
    -------
    float or ndarray
        The log-odds in nats.

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").

    Examples
    --------
    >>> from focal import logit
    >>> float(logit(0.5))
    0.0
    """
    return _logit(p)


def sigmoid(x):
    """Inverse logit ``1 / (1 + exp(-x))`` (thesis footnote 8); overflow-free on arrays.

    Parameters
    ----------
    x : float or array_like
        Log-odds in nats.

    Returns
    -------
    float or ndarray
        The probabilities, in [0, 1].

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    """
    return expit(x)


def effective_log_odds(p_target, c_miss=1.0, c_fa=1.0) -> float:
    """Log-odds of the effective prior: ``logit(P_target) + log(C_miss / C_fa)`` (thesis eq. 7.13).

    Computed in the log domain, so it stays exact for priors far in the tails.

    Parameters
    ----------
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).

    Returns
    -------
    float
        The effective prior log-odds in nats.

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    """
    p = check_probability(p_target, "p_target")
    cm = check_positive(c_miss, "c_miss")
    cf = check_positive(c_fa, "c_fa")
    return float(_logit(p) + (np.log(cm) - np.log(cf)))


def effective_prior(p_target, c_miss=1.0, c_fa=1.0) -> float:
    """Effective target prior of the application (P_target, C_miss, C_fa).

    ``P_tar = C_miss P_target / (C_miss P_target + C_fa (1 - P_target))`` (SWS plan eq. 23,
    thesis eq. 7.13). The application (P_tar, 1, 1) makes the same Bayes decisions and ranks
    systems in the same order as the original one. Dimensionless probability in (0, 1).

    Parameters
    ----------
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).

    Returns
    -------
    float
        The effective target prior P_tar.

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    .. [2] :cite:t:`sws2013measures` ("SWS plan").

    Examples
    --------
    >>> from focal import effective_prior
    >>> round(effective_prior(0.01, c_miss=10.0), 4)
    0.0917
    """
    return float(expit(effective_log_odds(p_target, c_miss, c_fa)))


def beta(p_target, c_miss=1.0, c_fa=1.0) -> float:
    """Weight of false alarms relative to misses: ``C_fa (1 - P_target) / (C_miss P_target)``.

    SWS plan eq. 7 (TWV) and eq. 11 (NIST normalized cost). Equals ``(1 - P_tar) / P_tar`` for the
    effective prior (eq. 22). Dimensionless.

    Parameters
    ----------
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).

    Returns
    -------
    float
        beta, > 0.

    References
    ----------
    .. [1] :cite:t:`sws2013measures` ("SWS plan").
    """
    return float(np.exp(-effective_log_odds(p_target, c_miss, c_fa)))


def prior_entropy(p_target) -> float:
    """Binary entropy of the prior in bits: the cross-entropy of the all-zero-LLR system.

    ``H(p) = (p log(1/p) + (1 - p) log(1/(1 - p))) / log 2`` (SWS plan eq. 39). Computed with the
    same logarithmic-cost expression as :func:`focal.core.scoring.cross_entropy_nats`, so an
    uninformative system normalizes to exactly 1.

    Parameters
    ----------
    p_target : float
        Target prior in (0, 1).

    Returns
    -------
    float
        The entropy in bits, in (0, 1].

    References
    ----------
    .. [1] :cite:t:`sws2013measures` ("SWS plan").
    """
    p = check_probability(p_target, "p_target")
    plo = _logit(p)
    return float((p * np.logaddexp(0.0, -plo) + (1.0 - p) * np.logaddexp(0.0, plo)) / np.log(2.0))


def bayes_threshold(p_target, c_miss=1.0, c_fa=1.0) -> float:
    """Bayes decision threshold on natural-log LLRs: accept iff ``llr >= -logit(P_tar)``.

    Thesis sec. 7.3.1 (threshold ``-h`` for prior log-odds ``h``) and SWS plan eqs. 30-31.

    Parameters
    ----------
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).

    Returns
    -------
    float
        The threshold in nats.

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    .. [2] :cite:t:`sws2013measures` ("SWS plan").
    """
    return -effective_log_odds(p_target, c_miss, c_fa)


def detection_cost(p_miss, p_fa, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True):
    """Detection cost ``P_target C_miss P_miss + (1 - P_target) C_fa P_fa`` (SWS plan eq. 8).

    With ``normalize`` divided by the default cost ``min(P_target C_miss, (1 - P_target) C_fa)``
    (eqs. 9-10), so 1 is the cost of the best decision made without looking at the scores.
    Works on arrays of rates; parameters must already be validated. Normalized cost is
    dimensionless; otherwise it is in the units of the costs.

    Parameters
    ----------
    p_miss, p_fa : float or array_like
        Miss and false-alarm rates (fractions).
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).
    normalize : bool, default True
        Divide by the default cost.

    Returns
    -------
    float or ndarray
        The cost, of the shape of the rates.

    References
    ----------
    .. [1] :cite:t:`sws2013measures` ("SWS plan").
    """
    a = p_target * c_miss
    b = (1.0 - p_target) * c_fa
    cost = a * np.asarray(p_miss, dtype=float) + b * np.asarray(p_fa, dtype=float)
    return cost / min(a, b) if normalize else cost

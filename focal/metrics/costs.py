"""Cost matrices ``C[decision, class]`` of the standard applications (thesis ch. 2-3, 8.1-8.2).

Used by :mod:`focal.metrics.bayes` (Bayes decisions and risk of any cost function) and by
:mod:`focal.metrics.combined`. Costs are finite and non-negative, in any unit; columns follow
the classes (binary: non-target, target).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
.. [3] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

from itertools import product

import numpy as np

from ..core.validation import check_probability

__all__ = ["detection_cost_matrix", "lre_cost_matrix", "misclassification_cost_matrix"]


def detection_cost_matrix(c_miss=1.0, c_fa=1.0, c_refer=None) -> np.ndarray:
    """Cost matrix ``C[d, i]`` of binary detection over the classes (non-target, target).

    Rows are the decisions (reject, accept) and, with ``c_refer``, a third decision *refer*
    (abstain) that costs ``c_refer`` whatever the truth. Without it this is the application of
    NIST's DCF (SWS plan eq. 8; thesis eq. 7.11).

    Parameters
    ----------
    c_miss : float, default 1.0
        Cost of rejecting a target.
    c_fa : float, default 1.0
        Cost of accepting a non-target.
    c_refer : float, optional
        Cost of the third decision, refer (None: no such decision).

    Returns
    -------
    ndarray of shape (2, 2) or (3, 2)
        ``C[d, i]``: decisions reject, accept (and refer) by classes non-target, target.

    References
    ----------
    .. [1] :cite:t:`sws2013measures` ("SWS plan").
    .. [2] :cite:t:`brummer2010thesis` ("thesis").

    Examples
    --------
    >>> from focal.metrics import detection_cost_matrix
    >>> detection_cost_matrix(10.0, 1.0, c_refer=0.5)
    array([[ 0. , 10. ],
           [ 1. ,  0. ],
           [ 0.5,  0.5]])
    """
    rows = [[0.0, c_miss], [c_fa, 0.0]]
    if c_refer is not None:
        rows.append([c_refer, c_refer])
    return as_cost_matrix(rows, 2)


def lre_cost_matrix(n_classes: int, p_target=0.5):
    """Compound accept/reject decisions of NIST LRE's CAVG and their costs (thesis eqs. 8.6-8.10).

    Decision ``a`` is a subset of the classes (``a_k`` = accept target k). Averaging the N
    detection applications of CAVG (target prior ``p_target``, the non-targets sharing the
    rest, unit costs) over the flat prior gives the single cost function::

        C(a | i) = p_target (1 - a_i) + (1 - p_target) / (N - 1) sum_{k != i} a_k

    (eq. 8.10 at ``p_target = 1/2``, ``N`` times the per-class cost of eq. 8.7; with ``p_target``
    the swept criterion of thesis eq. 8.28). The unnormalized risk ``bayes_risk(llh, labels,
    None, C, normalize=False)`` is then CAVG (thesis eqs. 8.3-8.5): CAVG is not normalized.
    (The normalized risk, the default of :func:`bayes_risk`, is CAVG divided by the risk of
    the best decision without scores, ``min(p_target, 1 - p_target)``, that every fixed
    decision costs at the flat prior: twice CAVG at ``p_target = 1/2``.)

    The decisions that accept come first: with the tie rule of :func:`bayes_decisions` (the
    first of equally costly decisions), a target whose posterior is exactly at the threshold is
    accepted, as the unit step of thesis eq. 8.8 and :func:`focal.metrics.cavg` accept it.

    Parameters
    ----------
    n_classes : int
        N, from 2 to 16.
    p_target : float
        Target prior of each detection application (1/2 in NIST LREs).

    Returns
    -------
    subsets : ndarray of bool, shape (2**N, N)
        Row d is decision d: ``subsets[d, k]`` accepts target k (accept-all first).
    cost : ndarray, shape (2**N, N)
        ``cost[d, i]``: cost of decision d when the true class is i.

    Notes
    -----
    :func:`bayes_decisions` compares all ``2**N`` decisions per trial; the cost is separable
    over targets, so :func:`focal.metrics.e_lre` computes the same risk in O(n N) and is the
    one to use for large N.
    """
    N = int(n_classes)
    if N < 2 or N > 16:
        raise ValueError(f"n_classes must be between 2 and 16 (2**N decisions), got {n_classes}")
    p = check_probability(p_target)
    subsets = np.array(list(product((True, False), repeat=N)), dtype=bool)  # accepting first
    a = subsets.astype(float)
    cost = p * (1.0 - a) + (1.0 - p) / (N - 1) * (a.sum(axis=1, keepdims=True) - a)
    return subsets, cost


def misclassification_cost_matrix(eta) -> np.ndarray:
    """The weighted misclassification cost ``C_eta`` (thesis eq. 8.12; Albayzin eq. 17).

    ``C[j, i] = 0`` if ``j = i`` else ``1 / ((N - 1) eta_i)``: missing class i costs
    ``1/((N-1) eta_i)`` whatever was recognized instead. ``eta`` lies in the interior of the
    simplex (``0 < eta_i < 1``, sums to 1); ``eta_i = 1/N`` is the zero-one cost times
    ``N/(N-1)``. Its Bayes decision is ``argmax_j P(j | l, pi) / eta_j`` (Albayzin eq. 19), and
    the average of the induced scoring rule over ``eta`` uniform on the simplex is the
    logarithmic rule (thesis eq. 8.13, Albayzin eq. 21).

    Parameters
    ----------
    eta : array_like of shape (N,)
        Class weights strictly inside the probability simplex.

    Returns
    -------
    ndarray of shape (N, N)
        ``C[j, i]``: cost of recognizing class j when the truth is class i.

    References
    ----------
    .. [1] :cite:t:`brummer2010thesis` ("thesis").
    .. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
    """
    e = np.asarray(eta, dtype=float)
    if e.ndim != 1 or e.size < 2:
        raise ValueError(
            f"eta must be a 1-D probability vector of >= 2 classes, got shape {e.shape}"
        )
    if not (np.isfinite(e).all() and (e > 0).all() and (e < 1).all()):
        raise ValueError(
            f"eta must lie strictly inside the simplex (0 < eta_i < 1), got {e.tolist()}"
        )
    if abs(e.sum() - 1.0) > 1e-9:
        raise ValueError(f"eta must sum to 1, sums to {e.sum()!r}")
    N = e.size
    C = np.broadcast_to(1.0 / ((N - 1) * e), (N, N)).copy()
    np.fill_diagonal(C, 0.0)
    return C


def as_cost_matrix(cost, n_classes: int, name: str = "cost") -> np.ndarray:
    """A validated ``(n_decisions, n_classes)`` float64 cost matrix: finite, non-negative."""
    C = np.asarray(cost)
    if C.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a matrix of real numbers, got dtype {C.dtype}")
    C = np.array(C, dtype=np.float64)
    if C.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix C[decision, class], got shape {C.shape}")
    if C.shape[1] != n_classes or C.shape[0] < 1:
        raise ValueError(
            f"{name} must be a 2-D matrix C[decision, class] with {n_classes} columns (one per "
            f"class) and at least one row, got shape {C.shape}"
        )
    if not np.isfinite(C).all() or (C < 0).any():
        raise ValueError(f"{name} must contain finite, non-negative costs")
    return C

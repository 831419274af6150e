"""Gaussian class models of score vectors: the Gaussian back-end of language recognition.

A recognizer's raw score vectors ``x`` (d-dimensional, e.g. 149 in Brümmer & van Leeuwen
sec. 5) are modelled per class by a Gaussian ``N(x; mu_i, Sigma_i)``, whose log-density is the
class log-likelihood (natural log). With one covariance shared by all classes (``"shared"``,
linear back-end) the log-likelihoods are, up to a per-trial constant that Bayes' rule ignores
(Albayzin plan eq. 1),

    l_i(x) = mu_i^T Sigma^-1 x - mu_i^T Sigma^-1 mu_i / 2,

computed in this linear form (no large quadratic terms that cancel). With one covariance per
class (``"per_class"``, quadratic back-end) they are the full log-densities
``-||L_i^-1 (x - mu_i)||^2 / 2 - log|L_i| - d log(2 pi) / 2`` (``Sigma_i = L_i L_i^T``).

Estimates are maximum likelihood with optional trial weights: class means, and the pooled
within-class (shared) or per-class covariance. The data are centred by their weighted mean
first, so offsets of any size do not cost precision. An optional scale-free ridge adds
``reg`` times the average variance of the data (``trace`` of their total covariance / d) to
every covariance diagonal.

References
----------
.. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
.. [2] :cite:t:`brummer2006calibration`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cholesky

from .maps import COVARIANCE_TYPES

__all__ = [
    "GaussianClasses",
    "fit_gaussian_classes",
]


@dataclass(frozen=True)
class GaussianClasses:
    """Fitted Gaussian class models (see :func:`fit_gaussian_classes`).

    Attributes
    ----------
    center : ndarray, shape (d,)
        Weighted mean of the training vectors (subtracted before everything else).
    means : ndarray, shape (N, d)
        Class means, centred.
    cholesky : ndarray, shape (d, d) or (N, d, d)
        Lower Cholesky factor(s) of the covariance(s).
    covariance : str
    """

    center: np.ndarray
    means: np.ndarray
    cholesky: np.ndarray
    covariance: str


def _cholesky(S: np.ndarray, ridge: float, scale: float, reg: float, what: str) -> np.ndarray:
    """Lower Cholesky factor of ``S + ridge I``; ValueError when a pivot is negligible relative
    to ``scale`` (the average variance of the data), saying what can help: for a class's own
    covariance the shared one (estimated from every class's trials), and a larger ``reg``.
    """
    d = S.shape[0]
    if ridge > 0:
        S = S + ridge * np.eye(d)
    try:
        Lc = cholesky(S, lower=True)
    except LinAlgError:
        Lc = None
    if Lc is None or not np.all(np.diag(Lc) ** 2 > 1e3 * np.finfo(float).eps * scale):
        ways = "a ridge reg > 0" if reg == 0 else f"a larger ridge than reg={reg:g}"
        if what != "shared within-class":
            ways = f"covariance='shared' (one covariance from every class's trials) or {ways}"
        raise ValueError(
            f"the {what} covariance is singular (too few trials for the dimension, or constant / "
            f"collinear score columns); use {ways}"
        )
    return Lc


def fit_gaussian_classes(
    X, y, n_classes, covariance="shared", sample_weight=None, reg=0.0, class_names=None
) -> GaussianClasses:
    """Maximum-likelihood Gaussian class models.

    Parameters
    ----------
    X : ndarray of float64, shape (n_trials, d)
        Score vectors (validated, finite).
    y : ndarray of int, shape (n_trials,)
        Class indices ``0..n_classes-1``; every class needs trials of positive weight.
    covariance : {"shared", "per_class"}
    sample_weight : ndarray, shape (n_trials,), optional
        Non-negative trial weights (a trial of weight k counts as k trials).
    reg : float
        Ridge: ``reg`` times the average variance of ``X`` is added to every covariance
        diagonal (scale-free), >= 0.
    class_names : sequence, optional
        The classes' names, for messages (default: their indices).

    Raises ``ValueError`` when a covariance is singular.
    """
    if covariance not in COVARIANCE_TYPES:
        raise ValueError(f"covariance must be one of {COVARIANCE_TYPES}, got {covariance!r}")
    v = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        center = (v @ X) / v.sum()
        Xc = X - center
        top = float(np.max(np.abs(Xc))) if Xc.size else 0.0
    if not (np.isfinite(top) and np.all(np.isfinite(center))):
        raise ValueError(
            "the score vectors are too large to model (their mean or spread "
            "overflows): rescale them"
        )
    # work on the centred scores scaled by a power of two (exact), so that covariances of scores
    # of magnitude 1e154 do not overflow nor those of 1e-170 underflow; scaled back at the end
    k = int(np.frexp(top)[1]) if top > 0 else 0
    Xc = np.ldexp(Xc, -k)
    totals = np.bincount(y, weights=v, minlength=n_classes)
    means = np.zeros((n_classes, X.shape[1]))
    np.add.at(means, y, Xc * v[:, None])
    means /= totals[:, None]
    R = Xc - means[y]
    scale = float(v @ np.einsum("ij,ij->i", Xc, Xc)) / (v.sum() * X.shape[1])
    if not scale > 0:
        raise ValueError("the score vectors are all equal: nothing to model")
    ridge = reg * scale
    if covariance == "shared":
        S = (R * v[:, None]).T @ R / v.sum()
        chol = _cholesky(S, ridge, scale, reg, "shared within-class")
    else:
        chol = np.empty((n_classes, X.shape[1], X.shape[1]))
        for i in range(n_classes):
            sel = y == i
            Ri = R[sel]
            S = (Ri * v[sel, None]).T @ Ri / totals[i]
            name = i if class_names is None else class_names[i]
            chol[i] = _cholesky(S, ridge, scale, reg, f"class {name!r}")
    with np.errstate(over="ignore"):  # the largest variance, in the original units
        top_variance = np.ldexp(float(np.max(np.sum(chol * chol, axis=-1))), 2 * k)
    if not top_variance < np.finfo(float).max / 2:
        raise ValueError(
            "the score vectors are too large to model: their covariance overflows "
            "(variances above 1e308); rescale them"
        )
    return GaussianClasses(
        center=center, means=np.ldexp(means, k), cholesky=np.ldexp(chol, k), covariance=covariance
    )

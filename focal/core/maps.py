"""The maps that fitted models apply: pure NumPy, one implementation for every caller.

A fitted focal model turns scores into log-likelihood-ratios or class log-likelihoods with a
few numbers: weights and an offset, PAV blocks, Gaussian class models, quality weights. The
functions here are those maps. The estimators' ``transform`` / ``decision_function`` and the
NumPy-only runtime of saved models (:mod:`focal.runtime`) both call them, so a model applied
either way gives bit-identical outputs. This module imports NumPy only (never SciPy or
scikit-learn): a production scoring back-end loads nothing else to apply a model. It is long
because it is that one place: splitting it would give the runtime two modules to trust.

References
----------
:cite:t:`brummer2010thesis` (affine fusion eq. 8.16, PAV-LLR
eqs. 7.50-7.51 and C.20, ROC thresholds sec. 7.3.4).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "INTERPOLATIONS",
    "QUALITY_FORMS",
    "QUALITY_FEATURES",
    "QUALITY_TRANSFORMS",
    "MULTICLASS_MODES",
    "COVARIANCE_TYPES",
    "affine_llr",
    "small_product",
    "clip_llr",
    "check_finite_llr",
    "step_index",
    "block_llr_map",
    "block_llr",
    "kde_log_density",
    "kde_llr",
    "apply_multiclass",
    "solve_lower",
    "gaussian_loglikelihoods",
    "transform_quality",
    "quality_features",
    "quality_llr",
    "complete_quality",
    "quality_sides",
    "llr_with_quality",
]

#: Rules of :func:`block_llr_map` for scores between blocks.
INTERPOLATIONS = ("step", "linear")
#: Quality fusion (:mod:`focal.core.quality`): its forms, the features of the "linear" and
#: "scale" forms, and the monotone transforms of a measure (:func:`transform_quality`).
QUALITY_FORMS = ("bilinear", "linear", "scale")
QUALITY_FEATURES = ("minmax", "sides")
QUALITY_TRANSFORMS = ("log", "logit")
#: Multiclass fusion (:mod:`focal.core.multiclass_logistic`): the families of fused maps.
MULTICLASS_MODES = ("scalar", "calibration", "full")
#: Gaussian back-end (:mod:`focal.core.gaussian`): the covariance models.
COVARIANCE_TYPES = ("shared", "per_class")


# -- affine fusion -----------------------------------------------------------------------------


def small_product(A, B) -> np.ndarray:
    """``A @ B`` over a small inner dimension, the same bits whatever the layout or row count.

    BLAS sums a product in an order (and with fused multiply-adds) that depends on the memory
    layout of its operands and on how many rows it is given, so the same trial could get
    another last bit in a chunk of a file than in a whole array, or from a model read back from
    a file than from the fitted estimator. Here each term is one NumPy multiply and one add, in
    the order of the inner index: a row's value depends on that row alone. The inner dimension
    (systems, classes, score dimensions) is small, so this costs a few passes over the rows.

    Parameters
    ----------
    A : ndarray of float, shape (n, k)
    B : ndarray of float, shape (k,) or (k, m)

    Returns
    -------
    ndarray of float, shape (n,) or (n, m)
        A new array.
    """
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    out = np.zeros((A.shape[0],) + B.shape[1:])
    for j in range(A.shape[1]):
        out += (A[:, j, None] * B[j]) if B.ndim == 2 else (A[:, j] * B[j])
    return out


def _row_dots(A, B) -> np.ndarray:
    """``(A * B).sum(axis=1)`` term by term in column order (as :func:`small_product`)."""
    out = np.zeros(A.shape[0])
    for j in range(A.shape[1]):
        out += A[:, j] * B[:, j]
    return out


def affine_llr(X, coef, intercept) -> np.ndarray:
    """Fused natural-log LLRs ``X @ coef + intercept`` (thesis eq. 8.16).

    Parameters
    ----------
    X : ndarray of float, shape (n_trials, K)
        Scores of K systems.
    coef : ndarray of float, shape (K,)
        Weight of each system (LLR per unit of score).
    intercept : float
        Offset (nats).

    Returns
    -------
    ndarray of float, shape (n_trials,)
        A new array (the offset is added in place, after the product).
    """
    llr = small_product(X, coef)
    llr += intercept
    return llr


def clip_llr(llr, bounds) -> np.ndarray:
    """``llr`` clipped in place to ``bounds`` = ``(lower, upper)``, nats (e.g. ELUB limits).

    Parameters
    ----------
    llr : ndarray of float
        LLRs (a fresh array of the caller's: it is written to).
    bounds : (float, float)
        The clip; ``(-inf, inf)`` leaves ``llr`` untouched, without a pass over it.

    Returns
    -------
    ndarray of float
        ``llr`` itself.
    """
    lower, upper = bounds
    if lower > -np.inf or upper < np.inf:
        np.clip(llr, lower, upper, out=llr)
    return llr


def check_finite_llr(X, llr) -> None:
    """Raise ValueError naming the first trial whose input or output is not finite.

    Parameters
    ----------
    X : ndarray of float, shape (n_trials, K)
        The scores.
    llr : ndarray of float, shape (n_trials,)
        What a map gave for them.
    """
    bad_rows = np.flatnonzero(~np.isfinite(X).all(axis=1))
    if bad_rows.size:
        row = int(bad_rows[0])
        what = "NaN" if np.isnan(X[row]).any() else "infinity"
        raise ValueError(f"Input X contains {what} (first in trial {row})")
    bad = np.flatnonzero(~np.isfinite(llr))
    if bad.size:
        raise ValueError(
            f"the LLR of trial {int(bad[0])} overflows: X holds scores too large "
            "for the fitted weights"
        )


# -- PAV blocks --------------------------------------------------------------------------------


def step_index(score_lo, scores) -> np.ndarray:
    """Index of the block each score falls into: the last block with ``score_lo <= score``.

    ``score_lo`` holds the (strictly increasing) lowest score of each block. A score between two
    blocks goes to the block below, one below the first block to block 0: exactly the grouping
    that the accept-threshold rule "score >= score_lo[k]" of the ROC makes (thesis 7.3.4), so new
    scores get the decisions the training thresholds would give them. One binary search per score.

    Parameters
    ----------
    score_lo : array_like of float, shape (K,)
        Lowest training score of each block, strictly increasing.
    scores : array_like of float
        Scores to place (any shape).

    Returns
    -------
    ndarray of intp, the shape of ``scores``
        Block indices in ``0 .. K - 1``.
    """
    lo = np.asarray(score_lo, dtype=float)
    return np.searchsorted(lo[1:], np.asarray(scores, dtype=float), side="right")


def block_llr_map(score_lo, score_hi, llr, scores, interpolation: str = "step") -> np.ndarray:
    """Apply a monotone block map (score ranges -> LLRs) to any scores, in natural-log LLRs.

    Parameters
    ----------
    score_lo, score_hi : array_like, shape (K,)
        Lowest and highest training score of each block, ``score_lo[k] <= score_hi[k] <
        score_lo[k + 1]``.
    llr : array_like, shape (K,)
        Non-decreasing LLR of each block (a PAV solution: only ``llr[0]`` may be -inf and only
        ``llr[-1]`` +inf).
    scores : array_like
        Scores to map (any shape); must not contain NaN.
    interpolation : {"step", "linear"}
        ``"step"``: every score gets the LLR of its block (:func:`step_index`), so training
        scores get exactly their PAV-LLR and a score between two blocks gets the lower block's.
        ``"linear"``: piecewise-linear interpolation between the block centres
        ``(score_lo + score_hi) / 2``, constant beyond the first and last centre; a continuous,
        non-decreasing map. Blocks with an infinite LLR (only possible without bounding) keep
        the step rule, since no line joins a finite and an infinite LLR.

    Returns
    -------
    ndarray of float, the shape of ``scores``. Non-decreasing in the score for both rules.
    """
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}")
    lo = np.asarray(score_lo, dtype=float)
    hi = np.asarray(score_hi, dtype=float)
    values = np.asarray(llr, dtype=float)
    s = np.asarray(scores, dtype=float)
    finite = np.isfinite(values)
    if interpolation == "step" or not finite.any():
        return values.take(step_index(lo, s))
    # 0.5 lo + 0.5 hi cannot overflow, and (rounding is monotone) lies in [lo, hi]; the clip only
    # guards subnormal rounding. Centres therefore increase strictly, like the blocks.
    centres = np.clip(0.5 * lo + 0.5 * hi, lo, hi)
    if finite.all():
        return np.interp(s, centres, values)
    out = values.take(step_index(lo, s))
    return np.where(np.isfinite(out), np.interp(s, centres[finite], values[finite]), out)


def block_llr(n_tar, n_non) -> np.ndarray:
    """PAV-LLR of blocks from their trial counts, ``log((n_tar/N_tar) / (n_non/N_non))``.

    Thesis eqs. 7.50-7.51 and C.20; ``-inf`` for a block of only non-targets, ``+inf`` for a
    block of only targets.

    Parameters
    ----------
    n_tar, n_non : ndarray of int or float, shape (K,)
        Target and non-target trials in each block, or their weights (both totals positive).

    Returns
    -------
    ndarray of float, shape (K,)
        Natural-log LLR of each block.
    """
    num = n_tar.astype(float) * float(n_non.sum())  # integer totals up to 2**53: exact
    den = n_non.astype(float) * float(n_tar.sum())
    with np.errstate(divide="ignore"):
        return np.log(num / den)


# -- kernel density ratio ----------------------------------------------------------------------

_KDE_BLOCK = 1 << 16  # kernel values held at once (512 kB of float64: in cache)


def kde_log_density(x, centers, bandwidth: float, exclude_self: bool = False) -> np.ndarray:
    """Natural log of the Gaussian kernel density estimate of ``centers`` at the points ``x``.

    ``f(x) = 1 / (n h) sum_i K((x - X_i) / h)`` with the standard normal kernel ``K``
    (Silverman 1986, eq. 2.2a), summed in the log domain with the largest term (the nearest
    centre's, found by binary search) factored out, so the far tails stay finite and exact:
    ``log f(x) -> -(x - X_nearest)**2 / (2 h**2)``. Every kernel value is computed (no cut-off):
    ``O(len(x) * len(centers))`` work, in blocks of about 65,000 values that stay in cache,
    evaluated in place (3.5 times faster than with temporaries: 14 against 49 ns per kernel
    value, 1,000 centres).

    Parameters
    ----------
    x : ndarray of float, shape (m,)
        Finite points.
    centers : ndarray of float, shape (n,)
        The sample, sorted ascending (finite).
    bandwidth : float
        ``h > 0``, in the units of the scores.
    exclude_self : bool, default False
        Leave-one-out: ``x`` is ``centers`` itself and point ``i`` leaves out its own kernel
        (the density of the other ``n - 1`` points, ``n >= 2``), for cross-validation.

    Returns
    -------
    ndarray of float, shape (m,)
        ``log f(x)``.
    """
    x = np.asarray(x, dtype=float)
    c = np.asarray(centers, dtype=float)
    if exclude_self:  # the nearest other centre of each (sorted) centre
        gaps = np.diff(c)
        near = np.minimum(np.append(gaps, np.inf), np.concatenate(([np.inf], gaps)))
    else:
        k = np.searchsorted(c, x)
        near = np.minimum(
            np.abs(x - c[np.maximum(k - 1, 0)]), np.abs(x - c[np.minimum(k, c.size - 1)])
        )
    top = -0.5 * np.square(near / bandwidth)  # the largest term of each sum
    scaled = c / bandwidth
    out = np.empty(x.shape[0])
    step = max(1, _KDE_BLOCK // max(c.size, 1))
    buf = np.empty((min(step, x.shape[0]), c.size))
    for start in range(0, x.shape[0], step):  # blocks of points, not a loop over trials
        z = buf[: min(step, x.shape[0] - start)]
        np.subtract((x[start : start + step] / bandwidth)[:, None], scaled[None, :], out=z)
        np.square(z, out=z)
        z *= -0.5
        z -= top[start : start + step, None]
        if exclude_self:
            rows = np.arange(z.shape[0])
            z[rows, start + rows] = -np.inf
        np.exp(z, out=z)
        out[start : start + step] = np.log(z.sum(axis=1))
    count = c.size - 1 if exclude_self else c.size
    return out + top - np.log(count * bandwidth) - 0.5 * np.log(2.0 * np.pi)


def kde_llr(scores, tar, non, bandwidth, lower=-np.inf, upper=np.inf) -> np.ndarray:
    """LLRs of a kernel-density calibrator: ``log f_tar(s) - log f_non(s)``, clipped.

    Each class's density is the Gaussian kernel density estimate of its training scores
    (:func:`kde_log_density`); the ratio of the two is the likelihood ratio of the score.

    Parameters
    ----------
    scores : array_like of float, shape (m,)
        Finite scores.
    tar, non : ndarray of float
        The training scores of each class.
    bandwidth : (float, float)
        The bandwidths of the target and the non-target density.
    lower, upper : float, default -inf, inf
        Clip the LLRs to ``[lower, upper]`` (e.g. the ELUB limits).

    Returns
    -------
    ndarray of float, shape (m,)
        Natural-log LLRs.
    """
    s = np.asarray(scores, dtype=float)
    llr = kde_log_density(s, tar, bandwidth[0]) - kde_log_density(s, non, bandwidth[1])
    return np.clip(llr, lower, upper)


# -- multiclass --------------------------------------------------------------------------------


def apply_multiclass(L: np.ndarray, mode: str, coef: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Fused log-likelihoods of stacked multiclass inputs (natural log).

    Parameters
    ----------
    L : ndarray of float, shape (n, K, N)
        Log-likelihoods of N classes from K systems.
    mode : {"scalar", "full"}
        ``"scalar"``: ``sum_k coef[k] L[:, k] + offset``; ``"full"``: ``sum_k L[:, k] @
        coef[k].T + offset`` (a matrix per system).
    coef : ndarray of float, shape (K,) or (K, N, N)
    offset : ndarray of float, shape (N,)

    Returns
    -------
    ndarray of float, shape (n, N)
    """
    out = np.empty((L.shape[0], L.shape[2]))
    out[:] = offset
    for k in range(L.shape[1]):
        if mode == "full":
            out += small_product(L[:, k], coef[k].T)
        else:
            out += coef[k] * L[:, k]
    return out


def solve_lower(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``L^-1 B`` for a lower-triangular ``L`` with a positive diagonal, by forward substitution.

    One step per dimension, each vectorized over the columns of ``B`` (the trials).

    Parameters
    ----------
    L : ndarray of float, shape (d, d)
        Lower triangular (the part above the diagonal is not read).
    B : ndarray of float, shape (d, m)

    Returns
    -------
    ndarray of float, shape (d, m)
    """
    Z = np.empty((L.shape[0], B.shape[1]))
    for i in range(L.shape[0]):
        row = B[i] - small_product(L[i, None, :i], Z[:i])[0] if i else B[i]
        np.divide(row, L[i, i], out=Z[i])
    return Z


def gaussian_loglikelihoods(X, model) -> np.ndarray:
    """Class log-likelihoods ``(n_trials, N)`` of score vectors under Gaussian class models.

    ``"shared"`` covariance: the linear form ``x' S^-1 mu_i - mu_i' S^-1 mu_i / 2`` (exact up to
    a per-trial constant); ``"per_class"``: full log-densities.

    Parameters
    ----------
    X : ndarray of float, shape (n_trials, d)
    model : GaussianClasses
        Anything with ``center`` (d,), ``means`` (N, d, centred), ``cholesky`` ((d, d) or
        (N, d, d), lower factors of the covariances) and ``covariance`` ("shared" or
        "per_class"); see :mod:`focal.core.gaussian`.

    Returns
    -------
    ndarray of float, shape (n_trials, N)
        Natural log.
    """
    Xc = X - model.center
    if model.covariance == "shared":
        Lc = model.cholesky
        W = solve_lower(Lc, model.means.T)  # L^-1 mu_i
        Xw = solve_lower(Lc, Xc.T)  # L^-1 x
        return small_product(Xw.T, W) - 0.5 * _row_dots(W.T, W.T)
    n, d = Xc.shape
    N = model.means.shape[0]
    out = np.empty((n, N))
    for i in range(N):
        Lc = model.cholesky[i]
        Z = solve_lower(Lc, (Xc - model.means[i]).T)
        out[:, i] = (
            -0.5 * _row_dots(Z.T, Z.T) - np.log(np.diag(Lc)).sum() - 0.5 * d * np.log(2.0 * np.pi)
        )
    return out


# -- quality fusion ----------------------------------------------------------------------------


def transform_quality(q, transforms, names):
    """Apply the monotone transform of each measure to quality values; NaN (missing) stays NaN.

    Parameters
    ----------
    q : ndarray of float, shape (n_trials, M)
        Quality values of one side; NaN marks a missing value. Not modified.
    transforms : sequence of (None, "log" or "logit"), length M
        ``"log"``: natural log (the values must be positive, e.g. durations); ``"logit"``:
        ``log(q / (1 - q))`` (the values must be in (0, 1), e.g. language or channel
        posteriors); None: the values as they are.
    names : sequence of str, length M
        Measure names, for error messages.

    Returns
    -------
    ndarray of float, shape (n_trials, M)
        Column-major (each measure contiguous).
    """
    out = np.array(q, dtype=np.float64, order="F")
    for i, (how, name) in enumerate(zip(transforms, names)):
        col = out[:, i]
        if how is None:
            continue
        bad = (col <= 0) if how == "log" else (col <= 0) | (col >= 1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            need = "positive values" if how == "log" else "values in (0, 1)"
            raise ValueError(
                f"quality measure {name!r} has the value {float(col[row])!r} "
                f"(trial {row}): its {how} transform needs {need} (NaN marks a "
                "missing value)"
            )
        if how == "log":
            np.log(col, out=col)
        else:
            from scipy.special import logit  # only models with a logit-transformed measure

            col[:] = logit(col)
    return out


def quality_sides(Q, transforms, names):
    """Model-side and test-side quality of the trials, each measure transformed.

    Parameters
    ----------
    Q : ndarray of float, shape (n_trials, 2 M)
        Model-side then test-side values of M measures; NaN marks a missing value.
    transforms, names : sequence, length M
        As :func:`transform_quality`.

    Returns
    -------
    qm, qt : ndarray of float, shape (n_trials, M)

    Raises
    ------
    ValueError
        An infinite value, or one outside the domain of its measure's transform.
    """
    if np.isinf(Q).any():
        row = int(np.flatnonzero(np.isinf(Q).any(axis=1))[0])
        raise ValueError(
            f"quality contains infinity (first in trial {row}); NaN marks a missing value"
        )
    M = len(names)
    return (
        transform_quality(Q[:, :M], transforms, names),
        transform_quality(Q[:, M:], transforms, names),
    )


def quality_features(qm, qt, form, features="minmax", out=None):
    """The quality features ``g(q_m, q_t)`` of a form and their names.

    Parameters
    ----------
    qm, qt : ndarray of float, shape (n_trials, M)
        Transformed quality of the model and the test side (no NaN).
    form : {"bilinear", "linear", "scale"}
        See :mod:`focal.core.quality`.
    features : {"minmax", "sides"}
        Features of the "linear" and "scale" forms (ignored by "bilinear").
    out : ndarray of float, shape (n_trials, P), optional
        Where to write the features (e.g. columns of a design matrix).

    Returns
    -------
    g : ndarray of float, shape (n_trials, P)
    names : list of str, length P
        ``"model+test[i]"``, ``"model*test[i,j]"`` (bilinear), ``"min[i]"``, ``"max[i]"``
        (minmax) or ``"model[i]"``, ``"test[i]"`` (sides), with i, j the measure indices.
    """
    n, M = qm.shape
    if form == "bilinear":
        iu, ju = np.triu_indices(M)
        g = np.empty((n, M + iu.size), order="F") if out is None else out
        for i in range(M):
            np.add(qm[:, i], qt[:, i], out=g[:, i])
        for c, (i, j) in enumerate(zip(iu, ju), start=M):
            col = np.multiply(qm[:, i], qt[:, j], out=g[:, c])
            if i != j:
                col += qm[:, j] * qt[:, i]
        names = [f"model+test[{i}]" for i in range(M)]
        names += [f"model*test[{i},{j}]" for i, j in zip(iu, ju)]
        return g, names
    g = np.empty((n, 2 * M), order="F") if out is None else out
    if features == "minmax":
        for i in range(M):
            np.minimum(qm[:, i], qt[:, i], out=g[:, i])
            np.maximum(qm[:, i], qt[:, i], out=g[:, M + i])
        names = [f"min[{i}]" for i in range(M)] + [f"max[{i}]" for i in range(M)]
    else:
        g[:, :M] = qm
        g[:, M:] = qt
        names = [f"model[{i}]" for i in range(M)] + [f"test[{i}]" for i in range(M)]
    return g, names


def quality_llr(X, g, coef, intercept, quality_coef, scale_coef):
    """Natural-log LLRs of trials with quality: ``(X a + b) + g c + sum_k s_k (g d_k)``.

    The affine part is computed exactly as the affine fusion computes it
    (:func:`affine_llr`) and the quality part is added last, so with all quality weights zero
    the output is bit-identical to the affine fusion's.

    Parameters
    ----------
    X : ndarray of float, shape (n_trials, K)
    g : ndarray of float, shape (n_trials, P)
        :func:`quality_features` of the trials.
    coef : ndarray of float, shape (K,)
    intercept : float
    quality_coef : ndarray of float, shape (P,)
    scale_coef : ndarray of float, shape (K, P)

    Returns
    -------
    ndarray of float, shape (n_trials,)
    """
    llr = affine_llr(X, coef, intercept)
    extra = small_product(g, quality_coef)
    if scale_coef.any():
        extra += _row_dots(X, small_product(g, scale_coef.T))
    llr += extra
    return llr


def complete_quality(qm, qt) -> np.ndarray:
    """Trials with every measure of both sides (no NaN), one column at a time.

    Parameters
    ----------
    qm, qt : ndarray of float, shape (n_trials, M)

    Returns
    -------
    ndarray of bool, shape (n_trials,)
    """
    missing = np.zeros(qm.shape[0], dtype=bool)
    for q in (qm, qt):
        for i in range(q.shape[1]):
            missing |= np.isnan(q[:, i])
    return ~missing


def llr_with_quality(X, qm, qt, form, features, fitted) -> np.ndarray:
    """Quality fusion's LLRs: the affine back-off, replaced by the quality fusion where the
    quality is complete.

    Parameters
    ----------
    X : ndarray of float, shape (n_trials, K)
    qm, qt : ndarray of float, shape (n_trials, M)
        Transformed quality of both sides (:func:`transform_quality`); NaN: missing.
    form, features : str
        As :func:`quality_features`.
    fitted : object
        With ``coef_``, ``intercept_``, ``quality_coef_``, ``scale_coef_`` (the quality
        fusion) and ``linear_coef_``, ``linear_intercept_`` (the back-off).

    Returns
    -------
    ndarray of float, shape (n_trials,)
    """
    has_q = complete_quality(qm, qt)
    f = fitted
    if has_q.all():
        g, _ = quality_features(qm, qt, form, features)
        return quality_llr(X, g, f.coef_, f.intercept_, f.quality_coef_, f.scale_coef_)
    llr = affine_llr(X, f.linear_coef_, f.linear_intercept_)
    if has_q.any():
        g, _ = quality_features(qm[has_q], qt[has_q], form, features)
        llr[has_q] = quality_llr(X[has_q], g, f.coef_, f.intercept_, f.quality_coef_, f.scale_coef_)
    return llr

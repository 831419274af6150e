"""Weighted means and spreads of score columns, merged block by block, for scores of any
magnitude; and the check that refuses spreads no fit can use.

Used by the binary fits (:mod:`focal.core.logistic`) for the standardization of each system and,
for its error messages, by the multiclass objective (:mod:`focal.core.multiclass_objective`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["merged_moments", "check_spreads"]


def merged_moments(blocks, K, scaled=False):
    """Weighted mean and standard deviation of K columns, from blocks of trials, in one pass.

    Each block's mean and sum of squared deviations are computed in cache, then merged (Chan,
    Golub & LeVeque, "Algorithms for computing the sample variance", The American Statistician
    37(3), 1983), which is exact for a constant column and free of cancellation for values of
    large magnitude or with outliers. With ``scaled``, squares are taken of deviations scaled
    by a power of two (exact) and summed with a running binary exponent per column, so values of
    any magnitude (1e-300 .. 1e300) neither overflow nor underflow; the plain pass is cheaper
    and exact for ordinary values.

    Parameters
    ----------
    blocks : iterable of (S, cs)
        ``S`` of shape (>= K, m): the block's values (rows 0..K-1 are used), ``cs`` of shape
        (m,): the trials' signed weights (their absolute values weight the moments).
    K : int
        Number of columns.
    scaled : bool
        Use the exponent-tracked sums.

    Returns
    -------
    mean, sd : ndarray, shape (K,)
        Weighted mean (in the units of ``S``) and standard deviation.

    Raises
    ------
    ValueError
        When, with ``scaled``, the deviations of a column overflow (:func:`check_spreads`).
    """
    total = 0.0
    mean = np.zeros(K)
    m2 = np.zeros(K)  # sum of squares / 4^expo
    # scaled: below any float exponent, set by the first non-zero block
    expo = np.full(K, -1100 if scaled else 0)
    for S, cs in blocks:
        c = np.abs(cs)
        w = c.sum()
        if w == 0:
            continue
        m_b = (S[:K] @ c) / w
        dev = S[:K] - m_b[:, None]
        delta = m_b - mean
        if scaled:
            top = np.maximum(np.abs(dev).max(axis=1), np.abs(delta))
            if not np.all(np.isfinite(top)):
                check_spreads(top, "scores")  # names the column whose differences overflow
            new = np.maximum(expo, np.where(top > 0, np.frexp(top)[1], expo))
            m2 = np.ldexp(m2, 2 * (expo - new))
            expo = new
            dev = np.ldexp(dev, -expo[:, None])  # 2^-expo itself may overflow
        np.square(dev, out=dev)
        merged = total + w
        mean += delta * (w / merged)
        ds = np.ldexp(delta, -expo) if scaled else delta
        m2 += dev @ c + ds * ds * (total * w / merged)
        total = merged
    return mean, np.ldexp(np.sqrt(m2 / total), expo)


def check_spreads(spread, what):
    """Refuse systems whose spread (standard deviation or largest deviation, one per system)
    overflowed or is subnormal, with a ValueError naming the system.

    A subnormal spread (below 2.2e-308) would need a weight of the order of its inverse, which
    overflows; an infinite one means differences of the ``what`` ("scores", "log-likelihoods")
    overflowed.

    Parameters
    ----------
    spread : array_like, shape (K,)
        One spread per system (0 for a constant system, which is allowed).
    what : str
        What the values are, for the message.

    Raises
    ------
    ValueError
        Naming the first unusable system.
    """
    spread = np.asarray(spread, dtype=float)
    huge = ~np.isfinite(spread)
    if huge.any():
        raise ValueError(
            f"the {what} of system {int(np.flatnonzero(huge)[0])} are too large to "
            "fit (their differences overflow): rescale them"
        )
    small = (spread > 0) & (spread < np.finfo(float).tiny)
    if small.any():
        bad = int(np.flatnonzero(small)[0])
        raise ValueError(
            f"the {what} of system {bad} spread over only {spread[bad]:.3g} (below "
            "the normal floating-point range): their weight would overflow; "
            "rescale them"
        )

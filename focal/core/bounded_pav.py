"""Bounded PAV: the PAV-LLRs of the trials plus a virtual trial of each class at the ends.

The unbounded PAV map (:mod:`focal.core.pav`) gives -inf and +inf to end blocks of one class;
adding ``pseudo_count`` virtual trials of the opposite class at each end keeps every LLR finite
(used by :class:`focal.estimators.PAVCalibrator`).

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import isotonic_regression

if TYPE_CHECKING:
    from .pav import PAVResult

__all__ = ["bounded_pav_blocks"]


def bounded_pav_blocks(result: PAVResult, pseudo_count: float):
    """PAV-LLR of the trials plus ``pseudo_count`` virtual trials of the opposite class at each end.

    The unbounded PAV gives -inf to a lowest block of only non-targets and +inf to a highest block
    of only targets: it claims no target can ever score that low. Bounding adds ``a =
    pseudo_count`` virtual *target* trials below every score and ``a`` virtual *non-target* trials
    above every score (weights may be fractional) and takes the PAV-LLR (eq. C.20) of that
    augmented set, normalized by the augmented class totals ``N_tar + a`` and ``N_non + a``.
    The result is still the optimal monotone map of (augmented) data, so it is non-decreasing,
    and every LLR is finite, with

        -log(1 + N_tar / a)  <  llr  <  log(1 + N_non / a),

    a bound that grows only logarithmically with the amount of training data. Interior blocks
    move by ``log((N_non + a) N_tar / ((N_tar + a) N_non))`` (tiny); the end blocks absorb their
    virtual trial and may pool with their neighbours.

    The augmented PAV is computed on the K blocks of ``result`` (two end points added), not on
    the trials: pooling adjacent violators in any order reaches the same solution (thesis app. C,
    theorem 4), and the blocks of ``result`` are already pooled, so nothing is sorted or pooled
    twice. O(K).

    Parameters
    ----------
    result : PAVResult
        The unbounded PAV solution.
    pseudo_count : float
        Weight ``a > 0`` of the virtual trial at each end.

    Returns
    -------
    starts : ndarray of int64, shape (G,)
        Index of the first block of ``result`` in each bounded block (``starts[0] == 0``); the
        bounded blocks are unions of consecutive blocks of ``result``.
    llr : ndarray of float, shape (G,)
        Finite, non-decreasing natural-log LLR of each bounded block.
    """
    a = float(pseudo_count)
    if not (np.isfinite(a) and a > 0.0):
        raise ValueError(f"pseudo_count must be a finite number > 0, got {pseudo_count!r}")
    k = result.n_tar.size
    tar = np.concatenate(([a], result.n_tar.astype(float), [0.0]))
    non = np.concatenate(([0.0], result.n_non.astype(float), [a]))
    weight = tar + non
    fit = isotonic_regression(tar / weight, weights=weight, increasing=True)
    group_starts = np.asarray(fit.blocks[:-1], dtype=np.int64)
    with np.errstate(divide="ignore"):
        group_llr = np.log(np.add.reduceat(tar, group_starts) / (result.n_targets + a)) - np.log(
            np.add.reduceat(non, group_starts) / (result.n_nontargets + a)
        )
    # group of each real block (augmented positions 1..K); the virtual trials always pool with
    # the end blocks (fraction 1 below a block with non-targets, 0 above one with targets)
    group = np.repeat(np.arange(group_starts.size), np.diff(np.append(group_starts, k + 2)))[1:-1]
    new = np.ones(k, dtype=bool)
    new[1:] = group[1:] != group[:-1]
    starts = np.flatnonzero(new)
    # a rounding guard: pooled float fractions are non-decreasing, their logs must be too
    return starts, np.maximum.accumulate(group_llr[group[starts]])

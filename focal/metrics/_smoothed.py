"""Smoothed bootstrap of the threshold measures: the ROCCH-EER, the conventional EER and minDCF.

A smoothed bootstrap replicate draws the trials as the plain one does (the same integer weights,
:mod:`focal.metrics.bootstrap`) and adds to every drawn copy of a trial an independent
Gaussian jitter of its class's bandwidth: a draw from the kernel density estimate of each
class instead of from its empirical distribution (Silverman & Young 1987; Davison & Hinkley
1997, sec. 3.4). The measures of a replicate come from the ROC of its jittered trials, computed
for a block of replicates at once (one sort per row); the interval pivots on the measure of the
smoothed population itself, read off its ROC on a fine grid of thresholds.

Why: the ROCCH-EER and minDCF are minima over thresholds, biased low on finite data by the
optimization. A plain replicate, drawn from the tied, staircase-like empirical distribution,
reproduces only part of that bias; a replicate drawn from a smooth population reproduces it
(Hall, DiCiccio & Romano, "On smoothing and the bootstrap", Ann. Statist. 17(2), 1989, show the
same for quantiles, which these measures resemble).

References
----------
.. [1] B. W. Silverman, *Density Estimation for Statistics and Data Analysis*, Chapman & Hall,
   1986, eq. 3.31 (the rule-of-thumb bandwidth).
.. [2] B. W. Silverman and G. A. Young, "The bootstrap: to smooth or not to smooth?",
   Biometrika 74(3), 1987.
.. [3] A. C. Davison and D. V. Hinkley, *Bootstrap Methods and their Application*, Cambridge
   University Press, 1997, sec. 3.4.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

__all__ = []

SMOOTHED = ("eer", "conventional_eer", "min_dcf")  # measures the smoothed replicates give
_GRID = 4096  # thresholds of the smoothed population's ROC


def silverman_bandwidth(x):
    """Silverman's rule-of-thumb bandwidth of the finite values of ``x`` (Silverman 1986,
    eq. 3.31): ``0.9 min(sd, IQR / 1.34) n**(-1/5)``, the sd alone when the IQR is 0; 0 for
    fewer than two finite values or no spread.
    """
    x = x[np.isfinite(x)]
    if x.size < 2:
        return 0.0
    sd = float(x.std(ddof=1))
    q75, q25 = np.percentile(x, [75, 25])
    spread = min(sd, (q75 - q25) / 1.34) if q75 > q25 else sd
    return 0.9 * spread * x.size**-0.2


def hull_eer_rows(p_miss, p_fa):
    """ROCCH-EER of every row of ROC points ``(P_miss, P_fa)``, shape (B, K).

    The maximum over ``alpha`` of ``min_k alpha P_fa[k] + (1 - alpha) P_miss[k]`` (the maximum
    over priors of the minimum Bayes error-rate; Brümmer 2010, thesis eq. 7.32), found by
    cutting planes: between a point on or left of the diagonal (``P_fa >= P_miss``) and one
    right of it, the line through both; the point furthest below it replaces one of them, until
    none is below: the two are then neighbouring hull vertices and the line's level is the EER.
    Rows must start at ``(0, 1)`` and end at ``(1, 0)``.
    """
    d = p_fa - p_miss
    rows = p_miss.shape[0]
    lo = np.zeros(rows, dtype=np.int64)
    hi = np.full(rows, p_miss.shape[1] - 1, dtype=np.int64)
    out = np.full(rows, np.nan)
    active = np.arange(rows)
    for _ in range(p_miss.shape[1] + 1):  # each round adds a hull vertex: terminates
        if active.size == 0:
            break
        pl, dl = p_miss[active, lo[active]], d[active, lo[active]]
        ph, dh = p_miss[active, hi[active]], d[active, hi[active]]
        alpha = (ph - pl) / (dl - dh)
        level = pl + alpha * dl
        below = p_miss[active] + alpha[:, None] * d[active]
        k = np.argmin(below, axis=1)
        done = below[np.arange(active.size), k] >= level - 1e-13
        out[active[done]] = level[done]
        k, active = k[~done], active[~done]
        left = d[active, k] >= 0
        lo[active[left]] = k[left]
        hi[active[~left]] = k[~left]
    return out


def conventional_eer_rows(p_miss, p_fa):
    """Conventional EER of every row: where the ROC points joined by straight lines cross
    ``P_miss = P_fa`` (as :func:`focal.metrics.conventional_eer`). Rows as in
    :func:`hull_eer_rows`.
    """
    d = p_fa - p_miss
    r = np.arange(p_miss.shape[0])
    k = np.argmax(d < 0, axis=1)  # d[:, 0] = 1 > 0 and d[:, -1] = -1 < 0
    d0, d1 = d[r, k - 1], d[r, k]
    m0, m1 = p_miss[r, k - 1], p_miss[r, k]
    return m0 + d0 / (d0 - d1) * (m1 - m0)


def threshold_measures(p_miss, p_fa, specs):
    """Columns of the measures named in ``specs`` (``[(name, (p, c_miss, c_fa)), ...]``) that are
    in :data:`SMOOTHED`, from rows of ROC points; ``None`` for the other names.
    """
    cols = []
    for name, (p, cm, cf) in specs:
        if name == "eer":
            cols.append(hull_eer_rows(p_miss, p_fa))
        elif name == "conventional_eer":
            cols.append(conventional_eer_rows(p_miss, p_fa))
        elif name == "min_dcf":
            cost = p * cm * p_miss + (1 - p) * cf * p_fa
            cols.append(cost.min(axis=1) / min(p * cm, (1 - p) * cf))
        else:
            cols.append(None)
    return cols


class _Smoother:
    """Kernel jitter of the trials of replicates, and the smoothed population's measures.

    Parameters
    ----------
    tar, non : ndarray
        The trials' scores.
    factor : float
        Bandwidth of each class as a multiple of Silverman's rule (:func:`silverman_bandwidth`).
    """

    def __init__(self, tar, non, factor):
        self.tar, self.non = tar, non
        self.h_tar = factor * silverman_bandwidth(tar)
        self.h_non = factor * silverman_bandwidth(non)
        self.scores = np.concatenate((tar, non))
        self.sign = np.concatenate((np.ones(tar.size, np.int8), -np.ones(non.size, np.int8)))
        self.jitter = np.concatenate((np.full(tar.size, self.h_tar), np.full(non.size, self.h_non)))
        # jittered copies of these trials are continuous: no ties (almost surely)
        self.continuous = bool(self.h_tar > 0 and self.h_non > 0 and np.isfinite(self.scores).all())

    def roc_rows(self, w, rng=None):
        """``(P_miss, P_fa)``, shape (B, M + 1), of the jittered trials of each replicate.

        ``w`` (B, n) are the replicates' integer weights (each class present in every row); a
        trial of weight k enters k times, each copy with its own jitter (none without ``rng``:
        the plain replicate's ROC). Rows are padded with trials of no class at +inf up to the
        largest replicate, M trials.
        """
        rows, n = w.shape
        totals = w.sum(axis=1)
        width = int(totals.max())
        trial = np.repeat(np.tile(np.arange(n), rows), w.ravel())
        v = self.scores[trial]
        if rng is not None:
            v += self.jitter[trial] * rng.standard_normal(trial.size)
        if (totals == width).all():  # e.g. trial-level resampling: no padding
            s, sign = v.reshape(rows, width), self.sign[trial].reshape(rows, width)
        else:
            row = np.repeat(np.arange(rows), totals)
            pos = np.arange(trial.size) - np.repeat(np.cumsum(totals) - totals, totals)
            s = np.full((rows, width), np.inf)
            s[row, pos] = v
            sign = np.zeros((rows, width), np.int8)
            sign[row, pos] = self.sign[trial]
        order = np.argsort(s, axis=1)
        sign = np.take_along_axis(sign, order, axis=1)
        zero = np.zeros((rows, 1), np.int64)
        ct = np.concatenate((zero, np.cumsum(sign == 1, axis=1, dtype=np.int64)), axis=1)
        cn = np.concatenate((zero, np.cumsum(sign == -1, axis=1, dtype=np.int64)), axis=1)
        if rng is None or not self.continuous or s.shape[1] != totals.min():
            # ties possible: a threshold inside a run of equal scores is no ROC point; it
            # becomes the run's end (a duplicate point changes no measure)
            s = np.take_along_axis(s, order, axis=1)
            tied = np.zeros(ct.shape, bool)
            tied[:, 1:width] = s[:, :-1] == s[:, 1:]
            if tied.any():
                k = np.where(tied, width, np.arange(width + 1))
                end = np.minimum.accumulate(k[:, ::-1], axis=1)[:, ::-1]
                ct = np.take_along_axis(ct, end, axis=1)
                cn = np.take_along_axis(cn, end, axis=1)
        return ct / ct[:, -1:], 1.0 - cn / cn[:, -1:]

    def population(self, specs):
        """The measures of ``specs`` (those in :data:`SMOOTHED`; NaN for others) of the smoothed
        population: both classes' kernel densities, their ROC on ``_GRID`` thresholds.
        """
        finite = np.concatenate((self.tar, self.non))
        finite = finite[np.isfinite(finite)]
        pad = 5.0 * max(self.h_tar, self.h_non)
        lo, hi = (finite.min() - pad, finite.max() + pad) if finite.size else (-1.0, 1.0)
        t = np.linspace(lo, hi, _GRID)
        for x, h in ((self.tar, self.h_tar), (self.non, self.h_non)):
            if h == 0:  # no spread (a constant class): its steps, both sides, join the grid
                x = np.unique(x[np.isfinite(x)])
                t = np.union1d(t, np.concatenate((x, np.nextafter(x, np.inf))))
        p_miss = _smoothed_cdf(self.tar, self.h_tar, t)
        p_fa = 1.0 - _smoothed_cdf(self.non, self.h_non, t)
        p_miss = np.concatenate(([0.0], p_miss, [1.0]))[None, :]
        p_fa = np.concatenate(([1.0], p_fa, [0.0]))[None, :]
        return [
            np.nan if c is None else float(c[0]) for c in threshold_measures(p_miss, p_fa, specs)
        ]


def _smoothed_cdf(x, h, t):
    """``P(X < t)`` at increasing thresholds ``t`` of the kernel density of ``x`` (Gaussian
    kernel of width ``h``; the empirical distribution when ``h`` is 0); infinite values are
    point masses.

    With ``h > 0`` the finite values are linearly binned on ``_GRID`` equally spaced points
    spanning ``t`` and convolved with the kernel's CDF by FFT (error of order
    ``(spacing / h)**2``, Silverman 1986, sec. 3.5), then read at ``t`` by interpolation.
    """
    finite = np.sort(x[np.isfinite(x)])
    below = np.count_nonzero(x == -np.inf)
    if h == 0 or finite.size == 0:
        return (below + np.searchsorted(finite, t, side="left")) / x.size
    from scipy.signal import fftconvolve

    grid = np.linspace(t[0], t[-1], _GRID)
    step = grid[1] - grid[0]
    pos = np.clip((finite - grid[0]) / step, 0, _GRID - 1)
    left = np.minimum(np.floor(pos).astype(np.int64), _GRID - 2)
    frac = pos - left
    counts = np.bincount(left, 1 - frac, _GRID) + np.bincount(left + 1, frac, _GRID)
    kernel = ndtr(np.arange(1 - _GRID, _GRID) * (step / h))
    mass = fftconvolve(counts, kernel)[_GRID - 1 : 2 * _GRID - 1]
    return (below + np.interp(t, grid, mass)) / x.size

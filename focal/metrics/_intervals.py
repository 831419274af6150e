"""Bootstrap intervals from replicate values: BCa or percentile (Efron & Tibshirani, *An
Introduction to the Bootstrap*, 1993, ch. 13-14), the BCa acceleration from a delete-a-group
jackknife.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BootstrapInterval"]

_JACKKNIFE_GROUPS = 50  # delete-a-group jackknife of the BCa acceleration


@dataclass(frozen=True)
class BootstrapInterval:
    """A bootstrap confidence interval: BCa or percentile (Efron & Tibshirani 1993, ch. 13-14).

    Attributes
    ----------
    measure : str
        What was measured (with its operating point, e.g. ``"min_dcf(0.01:1:1)"``).
    estimate : float
        The measure on the data themselves.
    low, high : float
        The ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the replicates.
    confidence : float
        Nominal coverage, e.g. 0.95.
    n_bootstrap : int
        Replicates drawn.
    n_dropped : int
        Replicates left out because they held no trial of some class (clustered resampling of
        few clusters only); the quantiles use the others.
    resampling : str
        ``"trial"``, ``"cluster"`` or ``"two-way"``.
    replicates : ndarray
        The replicate values (NaN for dropped ones), for other interval methods or plots. Of a
        smoothed measure, pivoted: ``value - smoothed population's value + estimate``.
    """

    measure: str
    estimate: float
    low: float
    high: float
    confidence: float
    n_bootstrap: int
    n_dropped: int
    resampling: str
    replicates: np.ndarray

    def to_dict(self) -> dict:
        """Plain-Python numbers (no replicates), for JSON.

        Returns
        -------
        dict
            The fields as Python scalars.
        """
        return {
            "measure": self.measure,
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "n_bootstrap": self.n_bootstrap,
            "n_dropped": self.n_dropped,
            "resampling": self.resampling,
        }

    def __str__(self) -> str:
        return (
            f"{self.measure} = {self.estimate:.4g}, {100 * self.confidence:g} % CI "
            f"[{self.low:.4g}, {self.high:.4g}] ({self.resampling} bootstrap, "
            f"{self.n_bootstrap - self.n_dropped} replicates)"
        )


def _jackknife_groups(resampler, n_groups=_JACKKNIFE_GROUPS):
    """Weight rows of the delete-a-group jackknife: trials (or clusters of the first way) split
    into at most ``n_groups`` groups (every ``n_groups``-th one, a fixed assignment).
    """
    if resampler.ways is None:
        unit = np.empty(resampler.n, dtype=np.int64)
        for idx in resampler.strata:  # groups cut across the strata, each keeps both classes
            unit[idx] = np.arange(idx.size)
    else:
        unit = resampler.ways[0]
    group = unit % n_groups
    present = np.unique(group)
    return (group[None, :] != present[:, None]).astype(np.int64)


def _acceleration(evaluator, resampler):
    """BCa acceleration of every measure (Efron & Tibshirani 1993, eq. 14.15), from the
    delete-a-group jackknife (one weighted evaluation per group).
    """
    jack = evaluator.values(_jackknife_groups(resampler))
    d = np.nanmean(jack, axis=0) - jack
    num = np.nansum(d**3, axis=0)
    den = 6.0 * np.nansum(d**2, axis=0) ** 1.5
    with np.errstate(invalid="ignore", divide="ignore"):
        a = np.where(den > 0, num / den, 0.0)
    return np.nan_to_num(a)


def _intervals(names, estimates, values, confidence, kind, acceleration=None, basic=()):
    """Percentile or, with ``acceleration``, BCa intervals (Efron & Tibshirani 1993, sec. 13.3
    and ch. 14); basic (pivotal) intervals for the columns ``j`` in ``basic``: the estimate
    minus the quantiles of ``replicate - estimate``, clipped at 0 (Davison & Hinkley 1997,
    eq. 5.6).
    """
    from scipy.special import ndtr, ndtri

    alpha = (1.0 - confidence) / 2.0
    out = []
    for j, name in enumerate(names):
        v = values[:, j]
        good = v[~np.isnan(v)]
        if good.size == 0:
            raise ValueError("every bootstrap replicate lacked a class: too few clusters")
        levels = np.array([alpha, 1.0 - alpha])
        est = float(estimates[j])
        if j in basic:
            q_low, q_high = np.quantile(good, levels)
            low, high = max(2.0 * est - q_high, 0.0), 2.0 * est - q_low
        else:
            if acceleration is not None and np.isfinite(est) and np.isfinite(good).all():
                below = np.count_nonzero(good < est) + 0.5 * np.count_nonzero(good == est)
                frac = np.clip(below / good.size, 0.5 / good.size, 1 - 0.5 / good.size)
                z0, a = ndtri(frac), acceleration[j]
                z = z0 + ndtri(levels)
                levels = ndtr(z0 + z / (1.0 - a * z))
            low, high = np.quantile(good, levels)
        out.append(
            BootstrapInterval(
                name,
                est,
                float(low),
                float(high),
                confidence,
                values.shape[0],
                int(v.size - good.size),
                kind,
                v,
            )
        )
    return out

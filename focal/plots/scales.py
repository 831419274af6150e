"""The probit axis scale of DET plots (thesis sec. 7.3.5), registered with matplotlib as "probit".

``ax.set_xscale("probit")`` keeps the data in probabilities (fractions in [0, 1]) and places them
at ``probit(p) = sqrt(2) erfinv(2p - 1)`` (``scipy.special.ndtri``), so a DET plot is a plot of the
plain error rates on probit-scaled axes and ``line.get_xdata()`` are the rates themselves. Ticks
are the customary 1-2-5 series, labelled in percent. Rates of exactly 0 or 1 lie at minus / plus
infinity; they are clipped to a far-away finite position (as matplotlib's log scale clips 0), so a
curve that reaches 0 runs off the edge of the plot instead of stopping short.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import numpy as np
from matplotlib import scale as mscale
from matplotlib import ticker
from matplotlib.transforms import Transform
from scipy.special import ndtr, ndtri

__all__ = ["ProbitScale", "ProbitLocator", "percent_formatter", "probit_limits", "DET_TICKS"]

# smallest / largest rate given a finite position: ndtri(1e-300) = -37.0; 1 - 1e-16 -> +8.2
_TINY = 1e-300
_ALMOST_ONE = 1.0 - 1e-16


def _tick_series():
    low = [m * 10.0**e for e in range(-9, 0) for m in (1, 2, 5)]  # 1e-9 ... 0.5
    low = [v for v in low if v < 0.3] + [0.2, 0.4]
    low = sorted(set(round(v, 12) for v in low))
    high = [round(1.0 - v, 12) for v in reversed(low)]
    return np.array(low + [0.5] + high)


DET_TICKS = _tick_series()
"""Candidate tick positions of a probit axis: 1-2-5 steps up to 20 %, then 40, 50, 60, 80 % and
the mirror images 1 - p of the small values (99 %, 99.9 %, ...)."""


class _ProbitTransform(Transform):
    input_dims = output_dims = 1

    def transform_non_affine(self, values):
        p = np.clip(np.asarray(values, dtype=float), _TINY, _ALMOST_ONE)
        return ndtri(p)

    def inverted(self):
        return _InverseProbitTransform()


class _InverseProbitTransform(Transform):
    input_dims = output_dims = 1

    def transform_non_affine(self, values):
        return ndtr(np.asarray(values, dtype=float))

    def inverted(self):
        return _ProbitTransform()


class ProbitLocator(ticker.Locator):
    """Ticks from :data:`DET_TICKS` inside the view.

    Without a drawn axis (``tick_values``), thinned to about ``max_ticks``: when too many fit,
    the 2-steps go first, then the 5-steps (leaving decades). On a drawn axis, as many as fit
    without their labels touching: in order of importance (50 %,
    decades, 5-steps, then the rest), a tick is kept only if its label clears every kept one
    on screen, so a narrow figure shows fewer labels instead of overlapping ones.
    """

    def __init__(self, max_ticks: int = 11):
        self.max_ticks = max_ticks

    def __call__(self):
        """Tick locations of the attached axis."""
        vmin, vmax = self.axis.get_view_interval()
        ticks = self.tick_values(vmin, vmax)
        lo, hi = sorted((vmin, vmax))
        every = DET_TICKS[(DET_TICKS >= lo * (1 - 1e-9)) & (DET_TICKS <= hi * (1 + 1e-9))]
        try:
            spaced = _clear_of_each_other(self.axis, every, vmin, vmax)
        except (AttributeError, ValueError):  # an axis not attached to a figure yet
            return ticks
        return spaced

    def tick_values(self, vmin, vmax):
        """Round probabilities between ``vmin`` and ``vmax``, at most ``max_ticks``."""
        lo, hi = sorted((vmin, vmax))
        ticks = DET_TICKS[(DET_TICKS >= lo * (1 - 1e-9)) & (DET_TICKS <= hi * (1 + 1e-9))]
        if ticks.size <= self.max_ticks:
            return ticks
        # distance from the nearer end of [0, 1] decides the mantissa of a tick
        tail = np.minimum(ticks, 1.0 - ticks)
        mantissa = np.round(tail / 10.0 ** np.floor(np.log10(tail) + 1e-9), 6)
        for keep in ((1.0, 5.0), (1.0,)):
            kept = ticks[np.isin(mantissa, keep) | (ticks == 0.5)]
            if kept.size <= self.max_ticks:
                return kept
        return kept


def _importance(ticks):
    """Sort key of ticks: 50 %, then decades, then 5-steps, then the rest (by tail size)."""
    tail = np.minimum(ticks, 1.0 - ticks)
    mantissa = np.round(tail / 10.0 ** np.floor(np.log10(tail) + 1e-9), 6)
    rank = np.select([ticks == 0.5, mantissa == 1.0, mantissa == 5.0], [0, 1, 2], 3)
    return np.lexsort((-tail, rank))


def _clear_of_each_other(axis, ticks, vmin, vmax):
    """The ticks whose labels (estimated from the font size) do not overlap on screen."""
    if ticks.size <= 1:
        return ticks
    axes = axis.axes
    vertical = axis.axis_name == "y"
    size = axis.get_major_ticks(1)[0].label1.get_fontsize() * axes.figure.dpi / 72.0  # pixels
    pos = axis.get_transform().transform(ticks)
    lo, hi = axis.get_transform().transform(np.array([vmin, vmax]))
    length = axes.bbox.height if vertical else axes.bbox.width
    screen = (pos - lo) / (hi - lo) * length
    texts = [_percent(t) for t in ticks]
    extent = np.array([1.5 * size if vertical else (0.62 * len(t) + 1.2) * size for t in texts])
    kept = []
    for i in _importance(ticks):
        if all(abs(screen[i] - screen[j]) >= (extent[i] + extent[j]) / 2 for j in kept):
            kept.append(i)
    return ticks[np.sort(kept)]


def _percent(value, _pos=None) -> str:
    """A probability as a percentage without trailing zeros: 0.001 -> '0.1', 0.4 -> '40'."""
    text = f"{100.0 * value:.10f}".rstrip("0").rstrip(".")
    return text if text else "0"


percent_formatter = ticker.FuncFormatter(_percent)
"""Tick labels of probability axes, in percent (0.01 -> ``"1"``; the axis label says ``(%)``)."""


# matplotlib >= 3.11 constructs scales without the axis argument (and warns about scales
# registered with it); older versions always pass it.
_SCALES_TAKE_AXIS = not hasattr(mscale, "_scale_has_axis_parameter")


class ProbitScale(mscale.ScaleBase):
    """Probit-scaled axis for DET plots: data are probabilities, ticks are percentages.

    Registered as ``"probit"`` when :mod:`focal.plots` is imported::

        ax.set_xscale("probit"); ax.set_yscale("probit")

    Parameters
    ----------
    max_ticks : int, default 11
        Most tick marks shown. (Before matplotlib 3.11 the constructor also takes the
        ``axis`` it scales, first, as matplotlib passes it.)
    """

    name = "probit"

    if _SCALES_TAKE_AXIS:

        def __init__(self, axis, *, max_ticks: int = 11):
            super().__init__(axis)
            self.max_ticks = max_ticks
    else:  # the signature matplotlib >= 3.11 inspects: one of the two exists at run time

        def __init__(self, *, max_ticks: int = 11):  # type: ignore[misc]
            super().__init__(None)
            self.max_ticks = max_ticks

    def get_transform(self):
        """The probit transform of the axis.

        Returns
        -------
        matplotlib.transforms.Transform
            Probability -> probit(probability).
        """
        return _ProbitTransform()

    def set_default_locators_and_formatters(self, axis):
        """Percent ticks at round probabilities, no minor ticks.

        Parameters
        ----------
        axis : matplotlib Axis
            The axis to set up.
        """
        axis.set_major_locator(ProbitLocator(self.max_ticks))
        axis.set_major_formatter(percent_formatter)
        axis.set_minor_locator(ticker.NullLocator())
        axis.set_minor_formatter(ticker.NullFormatter())

    def limit_range_for_scale(self, vmin, vmax, minpos):
        """Keep the view inside (0, 1), where the probit is finite.

        Parameters
        ----------
        vmin, vmax : float
            The requested view limits.
        minpos : float
            The smallest positive value of the data (matplotlib's convention).

        Returns
        -------
        vmin, vmax : float
            The limits, with 0 and 1 replaced by ``minpos`` and ``1 - minpos``.
        """
        if not np.isfinite(minpos) or minpos <= 0:
            minpos = 1e-7
        return (minpos if vmin <= 0 else vmin, 1.0 - minpos if vmax >= 1 else vmax)


mscale.register_scale(ProbitScale)


def probit_limits(rates, ceiling: float = 0.5, floor: float = 1e-7):
    """Default view interval of a probit axis that shows the positive ``rates``.

    From the largest tick at or below the smallest positive rate (not below ``floor``) to the
    smallest tick at or above the largest rate below ``ceiling`` (at most ``ceiling``).
    """
    r = np.asarray(rates, dtype=float)
    r = r[np.isfinite(r)]
    positive = r[r > 0]
    lo_rate = max(float(positive.min()) if positive.size else floor, floor)
    below = DET_TICKS[DET_TICKS <= lo_rate * (1 + 1e-9)]
    lo = float(below[-1]) if below.size else float(DET_TICKS[0])
    under = r[r < ceiling]
    hi_rate = float(under.max()) if under.size else ceiling
    above = DET_TICKS[DET_TICKS >= hi_rate * (1 - 1e-9)]
    hi = min(float(above[0]) if above.size else ceiling, ceiling)
    if hi <= lo:
        hi = ceiling if ceiling > lo else float(DET_TICKS[DET_TICKS > lo][0])
    return lo, hi

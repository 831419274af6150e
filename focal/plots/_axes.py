"""Small helpers shared by the plotting modules: new axes, colours, operating points, legends.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import numpy as np

from ..core.operating_point import OperatingPoint
from ..metrics import BinaryScores, as_binary_scores

LOG2 = float(np.log(2.0))

#: Line styles of threshold lines drawn in black or grey, one per threshold (a dotted one first)
THRESHOLD_STYLES = (":", "-.", (0, (6, 2, 1, 2, 1, 2)), (0, (1, 4)), "--")


def new_axes(ax=None):
    """``ax`` itself, or the Axes of a new pyplot figure (shown by notebooks, never by us)."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(layout="constrained")
    return ax


def operating_point(op, name: str = "operating_point"):
    """``(P_target, C_miss, C_fa, h)`` of a prior or a ``(P_target, C_miss, C_fa)`` tuple.

    ``h`` is the effective prior log-odds (thesis eq. 7.13); validation errors name ``name``.
    """
    op = OperatingPoint.coerce(op, name)
    return op.p_target, op.c_miss, op.c_fa, op.log_odds


def describe_operating_point(pt: float, cm: float, cf: float) -> str:
    """``'P_tar=0.01'`` or ``'P_tar=0.01, C_miss=10, C_fa=1'`` for legends."""
    return OperatingPoint(pt, cm, cf).describe()


def has_gid(ax, gid: str) -> bool:
    """True when ``ax`` already holds an artist with this gid (drawn by an earlier call)."""
    return any(a.get_gid() == gid for a in ax.get_children())


def refresh_legend(ax, **kwargs):
    """Redraw the legend from every labelled artist (so repeated calls add systems to it)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, **kwargs)


def prior_log_odds_grid(prior_log_odds, default_range, n_points: int, extra=()):
    """The h values of a Bayes error-rate plot.

    ``prior_log_odds`` given: those values (validated, sorted). Otherwise ``n_points`` evenly
    spaced values over ``default_range``, widened to include every value of ``extra`` with a
    margin of 1 (operating points the caller wants on the plot).
    """
    if prior_log_odds is not None:
        h = np.sort(np.asarray(prior_log_odds, dtype=float).ravel())
        if h.size < 2 or not np.isfinite(h).all():
            raise ValueError("prior_log_odds must hold at least 2 finite values")
        return h
    lo, hi = default_range
    for x in extra:
        lo, hi = min(lo, x - 1.0), max(hi, x + 1.0)
    if int(n_points) < 2:
        raise ValueError(f"n_points must be at least 2, got {n_points!r}")
    return np.linspace(lo, hi, int(n_points))


def binary_scores(tar, non=None) -> BinaryScores:
    """The plots' input: ``(tar, non)`` arrays, or a BinaryScores or rocch() result as ``tar``
    (:func:`focal.metrics.as_binary_scores`).
    """
    return as_binary_scores(tar, non)


def series_label(prefix, text):
    """Legend text of one curve: ``"system: what"``, or ``what`` alone for an unnamed system."""
    return f"{prefix}: {text}" if prefix else text


def first_line(ax, x, y, label, gid, line_kwargs):
    """Draw the main curve of a system; its colour (cycle or caller's) is used for the rest."""
    (line,) = ax.plot(x, y, label=label, gid=gid, **line_kwargs)
    return line, line.get_color()


def widen_xlim(ax, first: bool, h):
    """Horizontal limits: the h range of this call, or of every call so far on ``ax``."""
    lo, hi = float(h[0]), float(h[-1])
    if not first:
        old_lo, old_hi = ax.get_xlim()
        lo, hi = min(lo, old_lo), max(hi, old_hi)
    ax.set_xlim(lo, hi)

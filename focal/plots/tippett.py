"""Tippett plots of natural-log LLRs: proportions of target and non-target LLRs above each value.

Takes ``(tar, non)`` or a :class:`focal.metrics.BinaryScores`; the curves read the error rates
of the joint sort (thesis sec. 7.6.1) at every score.

Curve data come from :mod:`focal.metrics`; this module only draws them. Each artist carries a
``gid`` so that programs and tests can find it.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import math

import numpy as np

from ._axes import binary_scores, first_line, has_gid, new_axes, series_label
from ._legend import place_legend

__all__ = ["tippett_plot"]


def _distinct_finite(sorted_values):
    v = sorted_values[np.isfinite(sorted_values)]
    if v.size == 0:
        return v
    keep = np.empty(v.size, dtype=bool)
    keep[0] = True
    np.not_equal(v[1:], v[:-1], out=keep[1:])
    return v[keep]


def tippett_plot(tar, non=None, *, label=None, ax=None, log10_lr: bool = False, **line_kwargs):
    """Tippett plot: proportion of target and of non-target LLRs at or above each value.

    The forensic view of LLRs: the solid curve is the fraction of target (same-source) trials
    with LLR >= x, i.e. ``1 - P_miss(x)``, the dashed one the fraction of non-target trials,
    ``P_fa(x)``, both exact step functions (the joint sort of thesis sec. 7.6.1). The legend
    gives the rates of misleading evidence: targets with LLR < 0, non-targets with LLR > 0.

    Parameters
    ----------
    tar, non : array_like
        Natural-log LLRs (+/-inf allowed: they are never passed on the plotted range).
    label : str, optional
        Legend label of the curve.
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure's).
    log10_lr : bool, default False
        Horizontal axis in log10 likelihood-ratio units (``llr / ln 10``) instead of nats.
    **line_kwargs
        Passed to ``ax.plot`` for the target curve.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    trials = binary_scores(tar, non).trials
    values = np.concatenate([_distinct_finite(trials.tar), _distinct_finite(trials.non)])
    lo, hi = (float(values.min()), float(values.max())) if values.size else (-1.0, 1.0)
    pad = max(0.05 * (hi - lo), 1.0)
    ends = np.array([lo - pad, hi + pad])

    def curve(own):
        x = np.concatenate([ends[:1], own, ends[1:]])
        p_miss, p_fa = trials.error_rates(x)
        return x, p_miss, p_fa

    x_t, miss_t, _ = curve(_distinct_finite(trials.tar))
    x_n, _, fa_n = curve(_distinct_finite(trials.non))
    misleading_t = trials.error_rates([0.0])[0][0]
    misleading_n = trials.error_rates([np.nextafter(0.0, 1.0)])[1][0]
    scale = 1.0 / math.log(10.0) if log10_lr else 1.0
    unit = "log10 LRs" if log10_lr else "LLRs"
    ax = new_axes(ax)
    _, color = first_line(
        ax,
        scale * x_t,
        1.0 - miss_t,
        series_label(label, f"target {unit} ({100 * misleading_t:.1f} % < 0)"),
        "tippett-target",
        dict(line_kwargs, drawstyle="steps-pre"),
    )
    ax.plot(
        scale * x_n,
        fa_n,
        color=color,
        linestyle="--",
        drawstyle="steps-pre",
        label=series_label(label, f"non-target {unit} ({100 * misleading_n:.1f} % > 0)"),
        gid="tippett-nontarget",
    )
    if not has_gid(ax, "tippett-zero"):
        ax.axvline(0.0, color="gray", linewidth=0.8, gid="tippett-zero")
    ax.set_xlabel("log10 likelihood-ratio" if log10_lr else "log-likelihood-ratio (nats)")
    ax.set_ylabel(f"proportion of trials with {'log10 LR' if log10_lr else 'LLR'} >= x")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(True, linewidth=0.5, alpha=0.6)
    place_legend(ax, inside="best")
    return ax

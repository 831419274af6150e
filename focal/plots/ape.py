"""Applied-probability-of-error (APE) plots of natural-log LLRs with their Cllr bars.

Takes ``(tar, non)`` or a :class:`focal.metrics.BinaryScores` (thesis sec. 7.7.4).

Curve data come from :mod:`focal.metrics`; this module only draws them. Each artist carries a
``gid`` so that programs and tests can find it.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`brummer2006calibration`.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..metrics import BinaryScores, bayes_error_rates, calibration_report
from ._axes import (
    LOG2,
    binary_scores,
    first_line,
    has_gid,
    new_axes,
    prior_log_odds_grid,
    series_label,
    widen_xlim,
)
from ._legend import place_legend

__all__ = ["APE_SCALE", "ape_plot", "ape_bar_axes"]

APE_SCALE = 1.0 / (2.0 * LOG2)
"""Factor from the Bayes error-rate E_err(h) to the plotted APE curve, 1 / (2 ln 2).

The area under E_err(h) = p P_miss + (1 - p) P_fa, p = sigmoid(h), over all prior log-odds h is
``2 ln 2`` times Cllr in bits (thesis sec. 7.7.4: L_tot = integral of E_err dh = E_log(W|0.5),
the logarithmic cost summed over both classes). :func:`ape_plot` multiplies by this factor so the
area under the plotted actual curve *is* Cllr in bits and the area under the minimum curve is
minCllr, as in Brümmer's APE plots (Brümmer and van Leeuwen 2006, sec. 5.3)."""


_APE_BARS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def ape_bar_axes(ax):
    """The Axes holding the Cllr bars of the APE plot drawn on ``ax`` (None if there is none).

    Parameters
    ----------
    ax : matplotlib Axes
        Axes an APE plot was drawn on.

    Returns
    -------
    matplotlib.axes.Axes or None
        Its bar axes.
    """
    return _APE_BARS.get(ax)


def _ape_axes(ax, bar_ax, bar: bool, compact: bool = False):
    """(curve axes, bar axes or None): a new figure with both, or a bar axes beside ``ax``."""
    if ax is None:
        import matplotlib.pyplot as plt

        if not bar:
            return new_axes(None), None
        _, (ax, bar_ax) = plt.subplots(
            1, 2, width_ratios=[5, 1], layout="constrained", figsize=(7.5, 4.8)
        )
    if not bar:
        return ax, None
    if bar_ax is None:
        bar_ax = _APE_BARS.get(ax)
    if bar_ax is None:
        from mpl_toolkits.axes_grid1 import make_axes_locatable

        bar_ax = make_axes_locatable(ax).append_axes(
            "right", size="20%", pad=0.3 if compact else 0.9
        )
    _APE_BARS[ax] = bar_ax
    return ax, bar_ax


def _ape_window(scores: BinaryScores, margin: float = 10.0, limit: float = 60.0):
    """Default h range of an APE plot: where the area under the actual curve lies.

    A target trial with LLR w adds p = sigmoid(h) to the curve's miss part for h < -w, a
    non-target adds 1 - p for h >= -w; outside ``[-max(non), -min(tar)]`` widened by ``margin``
    only exponential tails remain (at most ``2 exp(-margin)`` nats of area). Infinite LLRs are
    ignored and the window is kept within ``+/-limit``.
    """
    t, n = scores.trials.tar, scores.trials.non
    t, n = t[np.isfinite(t)], n[np.isfinite(n)]
    lo = -margin - max(float(n.max()) if n.size else 0.0, 0.0)
    hi = margin + max(-float(t.min()) if t.size else 0.0, 0.0)
    return max(lo, -limit), min(hi, limit)


def _ape_view(h, actual, visible: float = 1e-3):
    """View interval: where the actual curve exceeds ``visible`` times its peak, and [-7, 7].

    The plotted data extend over the whole window of :func:`_ape_window` (so the area under the
    line is Cllr); the view leaves out the flat tails.
    """
    finite = np.isfinite(actual)
    peak = float(actual[finite].max()) if finite.any() else 0.0
    shown = h[finite & (actual > visible * peak)] if peak > 0 else h[:0]
    lo = min(float(shown[0]) if shown.size else 0.0, -7.0)
    hi = max(float(shown[-1]) if shown.size else 0.0, 7.0)
    return np.array([max(lo, float(h[0])), min(hi, float(h[-1]))])


def _draw_ape_bar(bar_ax, report, label, color, compact: bool = False):
    """Stacked bar: minCllr (discrimination loss) below, Cllr - minCllr (calibration) above."""
    x = sum(1 for p in bar_ax.patches if p.get_gid() == "ape-discrimination-loss")
    dis = report.min_cllr
    bar_ax.bar(
        x,
        dis,
        width=0.6,
        color=color,
        gid="ape-discrimination-loss",
        label="discrimination loss (minCllr)" if x == 0 else None,
    )
    if np.isfinite(report.cllr):
        bar_ax.bar(
            x,
            report.cllr - dis,
            bottom=dis,
            width=0.6,
            color=color,
            alpha=0.35,
            hatch="//",
            edgecolor=color,
            gid="ape-calibration-loss",
            label="calibration loss" if x == 0 else None,
        )
        top, text = report.cllr, f"{report.cllr:.3f}"
    else:
        top, text = dis, "Cllr = inf"
    # values stand upright above their bars, so neighbours never collide however narrow
    bar_ax.annotate(
        text,
        (x, top),
        xytext=(0, 3),
        textcoords="offset points",
        ha="center",
        va="bottom",
        fontsize="small",
        rotation=90,
        gid="ape-bar-value",
    )
    names = [t.get_text() for t in bar_ax.get_xticklabels()][:x] if x else []
    names.append(str(label) if label else f"system {x + 1}")
    if compact:
        bar_ax.set_xticks([])
    else:
        bar_ax.set_xticks(range(x + 1), names, rotation=90)
    bar_ax.set_xlim(-0.6, x + 0.6)
    heights = [p.get_y() + p.get_height() for p in bar_ax.patches]
    bar_ax.set_ylim(0, 1.35 * max(max(heights), 1e-3))
    if not compact:
        bar_ax.set_ylabel("Cllr (bits)")
    bar_ax.yaxis.set_label_position("right")
    bar_ax.yaxis.tick_right()


def ape_plot(
    tar,
    non=None,
    *,
    label=None,
    ax=None,
    bar_ax=None,
    bar: bool = True,
    prior_log_odds=None,
    n_points: int = 2001,
    compact: bool = False,
    **line_kwargs,
):
    """Applied-probability-of-error (APE) plot of natural-log LLRs (thesis sec. 7.7.4).

    Against the prior log-odds h = logit(P_tar): the actual Bayes error-rate of the LLRs'
    decisions (solid), the minimum after the optimal monotone recalibration (dashed; its maximum
    is the ROCCH-EER) and the default system's ``min(p, 1 - p)`` (dotted, drawn once per axes).
    The vertical axis is ``E_err(h) / (2 ln 2)`` (:data:`APE_SCALE`), so that **the area under
    the actual curve is Cllr** and the area under the minimum curve is minCllr, in bits (the
    default curve's area is 1 bit); the right-hand axis gives the unscaled error-rate. Beside
    the plot, a stacked bar per system: discrimination loss minCllr below, calibration loss
    Cllr - minCllr above, total height Cllr (the numbers of :func:`focal.metrics.cllr` and
    :func:`focal.metrics.min_cllr`).

    Parameters
    ----------
    tar, non : array_like
        Natural-log LLRs of the target and non-target trials.
    label : str, optional
        System name (legend and bar).
    ax : matplotlib Axes, optional
        Curve axes; default a new figure with a curve and a bar panel.
    bar_ax : matplotlib Axes, optional
        Where to draw the bars; default one made beside ``ax`` (and reused by later calls with
        the same ``ax``, see :func:`ape_bar_axes`).
    bar : bool, default True
        Draw the bar.
    prior_log_odds : array_like, optional
        The h values. Default ``n_points`` values over the range where the curve's area lies
        (at least [-10, 10], widened to the LLRs: the plotted area then equals Cllr to within
        a small fraction; the bar always shows the exact value).
    n_points : int, default 2001
        Number of prior log-odds of the grid.
    compact : bool, default False
        For grids of small plots: no legend (the curves keep their labels), no axis labels and
        no right-hand error-rate axis.
    **line_kwargs
        Passed to ``ax.plot`` for the actual curve.

    Returns
    -------
    matplotlib.axes.Axes
        The curve axes.
    """
    scores = binary_scores(tar, non)
    h = prior_log_odds_grid(prior_log_odds, _ape_window(scores), n_points)
    rates = bayes_error_rates(scores, prior_log_odds=h)
    report = calibration_report(scores, operating_points=())
    ax, bar_ax = _ape_axes(ax, bar_ax, bar, compact)
    first = not has_gid(ax, "ape-actual")
    _, color = first_line(
        ax,
        h,
        APE_SCALE * rates.actual,
        series_label(label, f"actual (Cllr = {report.cllr:.3f} bits)"),
        "ape-actual",
        line_kwargs,
    )
    ax.plot(
        h,
        APE_SCALE * rates.minimum,
        color=color,
        linestyle="--",
        label=series_label(
            label, f"minimum (minCllr = {report.min_cllr:.3f}, EER = {100 * report.eer:.2f} %)"
        ),
        gid="ape-minimum",
    )
    if not has_gid(ax, "ape-default"):
        ax.plot(
            h,
            APE_SCALE * rates.default,
            color="black",
            linestyle=":",
            linewidth=1.0,
            label="default (LLR = 0, 1 bit)",
            gid="ape-default",
        )
        if not compact:
            secondary = ax.secondary_yaxis(
                "right", functions=(lambda y: y / APE_SCALE, lambda e: e * APE_SCALE)
            )
            secondary.set_ylabel("Bayes error-rate")
    if not compact:
        ax.set_xlabel("prior log-odds  logit P_tar")
        ax.set_ylabel("E_err / (2 ln 2)")
    widen_xlim(ax, first, _ape_view(h, APE_SCALE * rates.actual))
    ax.set_ylim(bottom=0)
    ax.grid(True, linewidth=0.5, alpha=0.6)
    if bar_ax is not None:
        _draw_ape_bar(bar_ax, report, label, color, compact)
    if not compact:  # the bars' two parts get a key too
        bars = [] if bar_ax is None else list(zip(*bar_ax.get_legend_handles_labels()))
        place_legend(ax, inside="upper left", extra=bars)
    return ax

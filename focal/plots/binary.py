"""Plots of binary scores and LLRs: DET, APE, normalized Bayes error-rate, ECE and Tippett.

Every function takes target and non-target scores ``(tar, non)`` (natural-log LLRs where the plot
is about calibration), or a :class:`focal.metrics.BinaryScores` as ``tar`` (``non`` omitted) so
that several plots of one system share one sort and one PAV; it draws on the given ``ax`` or on a
new figure's axes, returns the Axes and never calls ``show()``. Calling a function again with the
same ``ax`` adds another system (the property cycle gives it a new colour; the legend lists every
system).

All curve data come from :mod:`focal.metrics` (one sort per class and one PAV, the joint-sort
computation of thesis sec. 7.6.1), or from the core functions behind it where a plot needs them
many times: the ECE curve evaluates the cross-entropy of :func:`focal.metrics.cross_entropy` at
each prior on the once-validated LLRs, the Tippett curves read the error rates of the joint sort
at every score. This module only draws them.
Each artist carries a ``gid`` (``"det"``, ``"ape-actual"``, ...) so that programs and tests can
find it.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from ..core.priors import prior_entropy, sigmoid
from ..core.scoring import cross_entropy_nats
from ..metrics import BinaryScores, calibration_report_of
from ._axes import (
    LOG2,
    describe_operating_point,
    has_gid,
    new_axes,
    operating_point as _parse_operating_point,
    prior_log_odds_grid,
    refresh_legend,
)
from .scales import probit_limits

__all__ = ["det_plot", "ape_plot", "ape_bar_axes", "nbe_plot", "ece_plot", "tippett_plot",
           "APE_SCALE"]

APE_SCALE = 1.0 / (2.0 * LOG2)
"""Factor from the Bayes error-rate E_err(h) to the plotted APE curve, 1 / (2 ln 2).

The area under E_err(h) = p P_miss + (1 - p) P_fa, p = sigmoid(h), over all prior log-odds h is
``2 ln 2`` times Cllr in bits (thesis sec. 7.7.4: L_tot = integral of E_err dh = E_log(W|0.5),
the logarithmic cost summed over both classes). :func:`ape_plot` multiplies by this factor so the
area under the plotted actual curve *is* Cllr in bits and the area under the minimum curve is
minCllr, as in Brümmer's APE plots (Brümmer and van Leeuwen 2006, sec. 5.3)."""

_FEW_ERRORS = 30  # Doddington's rule of 30 (thesis appendix B)


def binary_scores(tar, non=None) -> BinaryScores:
    """The plots' input: ``(tar, non)`` arrays, or an existing BinaryScores given as ``tar``."""
    if isinstance(tar, BinaryScores):
        if non is not None:
            raise ValueError("give either a BinaryScores or the (tar, non) arrays, not both")
        return tar
    if non is None:
        raise ValueError("non-target scores are missing: give (tar, non) or a BinaryScores")
    return BinaryScores(tar, non)


def _label(prefix, text):
    return f"{prefix}: {text}" if prefix else text


def _first_line(ax, x, y, label, gid, line_kwargs):
    """Draw the main curve of a system; its colour (cycle or caller's) is used for the rest."""
    (line,) = ax.plot(x, y, label=label, gid=gid, **line_kwargs)
    return line, line.get_color()


def _widen_xlim(ax, first: bool, h):
    """Horizontal limits: the h range of this call, or of every call so far on ``ax``."""
    lo, hi = float(h[0]), float(h[-1])
    if not first:
        old_lo, old_hi = ax.get_xlim()
        lo, hi = min(lo, old_lo), max(hi, old_hi)
    ax.set_xlim(lo, hi)


# ---------------------------------------------------------------------------------------------
# DET


def _hull_segments(pfa, pmiss, points_per_segment: int = 24):
    """ROCCH vertices joined by straight segments *in probability space*.

    Under the probit transform the hull's straight segments become curves (thesis sec. 7.3.6,
    fig. 7.3), so each segment is drawn through ``points_per_segment`` points; the vertices are
    among them.
    """
    t = np.linspace(0.0, 1.0, points_per_segment)[:-1]
    x = (pfa[:-1, None] + np.outer(pfa[1:] - pfa[:-1], t)).ravel()
    y = (pmiss[:-1, None] + np.outer(pmiss[1:] - pmiss[:-1], t)).ravel()
    return np.append(x, pfa[-1]), np.append(y, pmiss[-1])


def set_probit_limits(ax, first: bool, xlim, ylim, curve, marks, ceiling=(0.5, 0.5)):
    """View limits covering the new curve and marks (and, after the first call, the earlier ones).

    ``curve`` and ``marks`` are ``(pfa, pmiss)`` pairs. The curve is shown up to ``ceiling``
    (per axis); a mark beyond (a minDCF point at a low prior often has P_miss > 50 %) raises
    the limit to show it.
    """
    for given, axis, setter, getter in ((xlim, 0, ax.set_xlim, ax.get_xlim),
                                        (ylim, 1, ax.set_ylim, ax.get_ylim)):
        if given is not None:
            setter(*given)
            continue
        mark = np.asarray(marks[axis], dtype=float)
        top = ceiling[axis]
        below_one = mark[mark < 1.0]
        top = min(max(top, 1.0 - (1.0 - float(below_one.max())) / 1.5
                      if below_one.size else top), 0.9999)
        lo, hi = probit_limits(np.concatenate([curve[axis], mark]), ceiling=top)
        if not first:
            old_lo, old_hi = getter()
            lo, hi = min(lo, old_lo), max(hi, old_hi)
        setter(lo, hi)


_OP_MARKERS = (("s", "x"), ("D", "+"), ("^", "1"), ("v", "2"))  # (minDCF, actDCF) per point


def _edge_mark(ax, pfa, pmiss, **kwargs):
    """A DET marker; a rate of 0 or 1 (at minus / plus infinity on the probit axis) sits on the
    axis edge.

    The rate stays the data value (0 or 1, which are also the edges in the axes' own
    coordinates); only the coordinate system of that axis changes, so the marker stays on the
    edge whatever limits later calls set.
    """
    from matplotlib.transforms import blended_transform_factory

    x_edge, y_edge = not 0 < pfa < 1, not 0 < pmiss < 1
    transform = blended_transform_factory(ax.transAxes if x_edge else ax.transData,
                                          ax.transAxes if y_edge else ax.transData)
    ax.plot([pfa], [pmiss], linestyle="none", transform=transform, clip_on=not (x_edge or y_edge),
            **kwargs)


def det_plot(tar, non=None, *, label=None, ax=None, rocch_curve: bool = False, eer: bool = True,
             operating_point=None, operating_points=None, xlim=None, ylim=None, **line_kwargs):
    """DET plot: miss rate against false-alarm rate on probit axes (thesis sec. 7.3.4-7.3.7).

    Draws the steppy empirical DET (every operating point "accept iff score >= threshold",
    joined by horizontal and vertical steps), optionally its ROC convex hull (whose straight
    segments are curves on probit axes), the ROCCH-EER point, and at an operating point the
    minimum-DCF point (the optimal hull vertex) and the actual-DCF point (Bayes decisions on the
    scores read as LLRs, threshold ``-logit(P_tar)``). Axes are ``"probit"`` scaled
    (:class:`focal.plots.scales.ProbitScale`): the plotted data are the rates themselves
    (fractions), the tick labels percentages.

    Parameters
    ----------
    tar, non : array_like
        Target and non-target scores (natural-log LLRs for the actual-DCF point).
    label : str, optional
        System name for the legend.
    ax : matplotlib Axes, optional
        Draw here (call again with the same ``ax`` to add systems); default a new figure.
    rocch_curve : bool, default False
        Also draw the ROCCH-DET, dashed.
    eer : bool, default True
        Mark the ROCCH-EER, the point where the hull crosses P_miss = P_fa (thesis 7.3.7).
    operating_point : float or (P_target, C_miss, C_fa), optional
        Mark the minDCF and actual-DCF points there; the legend gives both normalized costs
        (SWS plan eqs. 8-10). A point with no false alarms (or no misses), at minus infinity
        on the probit axis, is drawn on the axis edge.
    operating_points : sequence, optional
        Several such points, each marked with its own marker shapes.
    xlim, ylim : (float, float), optional
        View limits as rates (fractions); default from the data, up to 50 %.
    **line_kwargs
        Passed to ``ax.plot`` for the steppy curve (``color``, ``linewidth``, ...).

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    scores = binary_scores(tar, non)
    hull = scores.hull
    if operating_point is not None and operating_points is not None:
        raise ValueError("give operating_point or operating_points, not both")
    ops = [] if operating_point is None else [_parse_operating_point(operating_point)]
    ops += [_parse_operating_point(op, f"operating_points[{i}]")
            for i, op in enumerate(operating_points or ())]
    rates = scores.bayes_error_rates([op[3] for op in ops]) if ops else None
    pfa, pmiss, _ = hull.pav.roc_points()
    ax = new_axes(ax)
    first = not has_gid(ax, "det")
    ax.set_xscale("probit")
    ax.set_yscale("probit")
    line, color = _first_line(ax, pfa, pmiss, label, "det", line_kwargs)
    if rocch_curve:
        x, y = _hull_segments(hull.pfa, hull.pmiss)
        ax.plot(x, y, color=color, linestyle="--", linewidth=0.9 * line.get_linewidth(),
                label=_label(label, "ROCCH"), gid="det-rocch")
    if eer:
        e = hull.eer
        ax.plot([e], [e], linestyle="none", marker="o", color=color, markerfacecolor="none",
                label=_label(label, f"EER = {100 * e:.2f} %"), gid="det-eer")
    for i, (pt, cm, cf, _) in enumerate(ops):
        where = describe_operating_point(pt, cm, cf)
        default = rates.default[i]
        mark_min, mark_act = _OP_MARKERS[i % len(_OP_MARKERS)]
        _edge_mark(ax, rates.min_pfa[i], rates.min_pmiss[i], marker=mark_min, color=color,
                   label=_label(label, f"minDCF = {rates.minimum[i] / default:.3f} ({where})"),
                   gid="det-min-dcf")
        _edge_mark(ax, rates.actual_pfa[i], rates.actual_pmiss[i], marker=mark_act, color=color,
                   markersize=8, gid="det-act-dcf",
                   label=_label(label, f"actDCF = {rates.actual[i] / default:.3f}"
                                + (f" ({where})" if len(ops) > 1 else "")))
    marks = ([hull.eer], [hull.eer]) if eer else ([], [])
    if rates is not None:
        marks = (np.concatenate([marks[0], rates.min_pfa, rates.actual_pfa]),
                 np.concatenate([marks[1], rates.min_pmiss, rates.actual_pmiss]))
    set_probit_limits(ax, first, xlim, ylim, (pfa, pmiss), marks)
    finish_det(ax)
    return ax


def finish_det(ax):
    """Axis labels, grid and legend of a DET plot."""
    ax.set_xlabel("False-alarm rate (%)")
    ax.set_ylabel("Miss rate (%)")
    ax.grid(True, which="major", linewidth=0.5, alpha=0.6)
    refresh_legend(ax, loc="lower left", fontsize="small")


# ---------------------------------------------------------------------------------------------
# APE


_APE_BARS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


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
        _, (ax, bar_ax) = plt.subplots(1, 2, width_ratios=[5, 1], layout="constrained",
                                       figsize=(7.5, 4.8))
    if not bar:
        return ax, None
    if bar_ax is None:
        bar_ax = _APE_BARS.get(ax)
    if bar_ax is None:
        from mpl_toolkits.axes_grid1 import make_axes_locatable

        bar_ax = make_axes_locatable(ax).append_axes("right", size="20%",
                                                     pad=0.3 if compact else 0.9)
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
    bar_ax.bar(x, dis, width=0.6, color=color, gid="ape-discrimination-loss",
               label="discrimination loss (minCllr)" if x == 0 else None)
    if np.isfinite(report.cllr):
        bar_ax.bar(x, report.cllr - dis, bottom=dis, width=0.6, color=color, alpha=0.35,
                   hatch="//", edgecolor=color, gid="ape-calibration-loss",
                   label="calibration loss" if x == 0 else None)
        top, text = report.cllr, f"{report.cllr:.3f}"
    else:
        top, text = dis, "Cllr = inf"
    # values stand upright above their bars, so neighbours never collide however narrow
    bar_ax.annotate(text, (x, top), xytext=(0, 3), textcoords="offset points", ha="center",
                    va="bottom", fontsize="small", rotation=90, gid="ape-bar-value")
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


def ape_plot(tar, non=None, *, label=None, ax=None, bar_ax=None, bar: bool = True,
             prior_log_odds=None, n_points: int = 2001, compact: bool = False, **line_kwargs):
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
    rates = scores.bayes_error_rates(h)
    report = calibration_report_of(scores, operating_points=())
    ax, bar_ax = _ape_axes(ax, bar_ax, bar, compact)
    first = not has_gid(ax, "ape-actual")
    _, color = _first_line(ax, h, APE_SCALE * rates.actual,
                              _label(label, f"actual (Cllr = {report.cllr:.3f} bits)"),
                              "ape-actual", line_kwargs)
    ax.plot(h, APE_SCALE * rates.minimum, color=color, linestyle="--",
            label=_label(label, f"minimum (minCllr = {report.min_cllr:.3f}, "
                                f"EER = {100 * report.eer:.2f} %)"),
            gid="ape-minimum")
    if not has_gid(ax, "ape-default"):
        ax.plot(h, APE_SCALE * rates.default, color="black", linestyle=":", linewidth=1.0,
                label="default (LLR = 0, 1 bit)", gid="ape-default")
        if not compact:
            secondary = ax.secondary_yaxis("right", functions=(lambda y: y / APE_SCALE,
                                                               lambda e: e * APE_SCALE))
            secondary.set_ylabel("Bayes error-rate")
    if not compact:
        ax.set_xlabel("prior log-odds  logit P_tar")
        ax.set_ylabel("error-rate / (2 ln 2)")
    _widen_xlim(ax, first, _ape_view(h, APE_SCALE * rates.actual))
    ax.set_ylim(bottom=0)
    ax.grid(True, linewidth=0.5, alpha=0.6)
    if not compact:
        refresh_legend(ax, loc="upper left", fontsize="small")
    if bar_ax is not None:
        _draw_ape_bar(bar_ax, report, label, color, compact)
    return ax


# ---------------------------------------------------------------------------------------------
# normalized Bayes error-rate


def _dr30_points(h, rates):
    """Indices of the DR30 points on the minimum curve (thesis sec. 7.6, appendix B), or None.

    False alarms: the first h (from the left) with at least 30 false alarms at the optimal
    threshold; to its left fewer than 30 remain. Misses: the last h with at least 30 misses.
    """
    few_fa = rates.min_n_false_alarms < _FEW_ERRORS
    fa = None
    if few_fa.any() and not few_fa.all():
        i = int(np.flatnonzero(few_fa)[-1]) + 1
        fa = i if i < h.size else None
    few_miss = rates.min_n_misses < _FEW_ERRORS
    miss = None
    if few_miss.any() and not few_miss.all():
        j = int(np.flatnonzero(few_miss)[0]) - 1
        miss = j if j >= 0 else None
    return fa, miss


def nbe_plot(tar, non=None, *, label=None, ax=None, prior_log_odds=None, n_points: int = 401,
             components: bool = False, dr30: bool = True, operating_point=None,
             operating_points=None, ylim=None, **line_kwargs):
    """Normalized Bayes error-rate plot of natural-log LLRs (thesis sec. 7.6, figs. 7.8-7.9).

    Against h = logit(P_tar): the actual Bayes error-rate of the LLRs' decisions ("actDCF",
    solid) and the minimum over thresholds ("minDCF", dashed; eq. 7.42), both divided by the
    default system's ``min(p, 1 - p)`` (eqs. 7.20, 7.43): the normalized DCF at every effective
    prior. Where the solid curve rises above the dashed one the calibration loses; above 1 the
    LLRs do worse than ignoring them.

    Parameters
    ----------
    tar, non : array_like
        Natural-log LLRs of the target and non-target trials.
    label : str, optional
        System name (e.g. ``"eval"`` and ``"dev"`` in two calls, as in fig. 7.8).
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure's).
    prior_log_odds : array_like, optional
        The h values; default ``n_points`` over [-7, 2], widened to show the operating point.
    n_points : int, default 401
        Number of prior log-odds of the default grid.
    components : bool, default False
        Also draw the two parts of the actual curve, ``p P_miss / min(p, 1 - p)`` (dotted) and
        ``(1 - p) P_fa / min(p, 1 - p)`` (dash-dot); for h < 0 these are P_miss and the
        normalized false-alarm rate ``exp(-h) P_fa`` of eq. 7.44.
    dr30 : bool, default True
        Mark the DR30 point on the minimum curve: to its left fewer than 30 false alarms
        remain at the optimal threshold (Doddington's rule of 30, appendix B), so the curves
        there rest on too few errors. The mirror point (fewer than 30 misses to its right) is
        marked too when it falls in the plotted range.
    operating_point : float or (P_target, C_miss, C_fa), optional
        Draw a vertical line at its effective prior log-odds.
    operating_points : sequence, optional
        Several such points, a line each.
    ylim : (float, float), optional
        Default from 0 to a little above the curves (at most 3).
    **line_kwargs
        Passed to ``ax.plot`` for the actual curve.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    if operating_point is not None and operating_points is not None:
        raise ValueError("give operating_point or operating_points, not both")
    ops = [] if operating_point is None else [_parse_operating_point(operating_point)]
    ops += [_parse_operating_point(o, f"operating_points[{i}]")
            for i, o in enumerate(operating_points or ())]
    h = prior_log_odds_grid(prior_log_odds, (-7.0, 2.0), n_points, extra=[o[3] for o in ops])
    rates = binary_scores(tar, non).bayes_error_rates(h)
    ax = new_axes(ax)
    first = not has_gid(ax, "nbe-actual")
    act = rates.actual_normalized
    _, color = _first_line(ax, h, act, _label(label, "actDCF"), "nbe-actual", line_kwargs)
    mn = rates.minimum_normalized
    ax.plot(h, mn, color=color, linestyle="--", label=_label(label, "minDCF"), gid="nbe-minimum")
    if components:
        p, q = sigmoid(h), sigmoid(-h)
        ax.plot(h, p * rates.actual_pmiss / rates.default, color=color, linestyle=":",
                linewidth=1.0, label=_label(label, "P_miss"), gid="nbe-pmiss")
        ax.plot(h, q * rates.actual_pfa / rates.default, color=color, linestyle="-.",
                linewidth=1.0, label=_label(label, "normalized P_fa"), gid="nbe-pfa")
    if dr30:
        fa, miss = _dr30_points(h, rates)
        for i, gid, text in ((fa, "nbe-dr30-fa", "DR30: < 30 false alarms to the left"),
                             (miss, "nbe-dr30-miss", "DR30: < 30 misses to the right")):
            if i is None:
                continue
            ax.plot([h[i]], [mn[i]], linestyle="none", marker="o", markersize=7, color=color,
                    markerfacecolor="white", zorder=3, gid=gid,
                    label=None if has_gid(ax, gid) else text)
    for pt, cm, cf, h_op in ops:
        drawn = [a for a in ax.lines if a.get_gid() == "nbe-operating-point"
                 and np.array_equal(a.get_xdata(), [h_op, h_op])]
        if not drawn:
            ax.axvline(h_op, color="magenta", linestyle="--", linewidth=1.0,
                       gid="nbe-operating-point", label=describe_operating_point(pt, cm, cf))
    if ylim is None:
        finite = act[np.isfinite(act)]
        top = max(1.2, min(1.05 * float(finite.max()) if finite.size else 1.2, 3.0))
        if not first:
            top = max(top, ax.get_ylim()[1])
        ylim = (0.0, top)
    ax.set_ylim(*ylim)
    _widen_xlim(ax, first, h)
    if first:
        ax.axhline(1.0, color="gray", linewidth=0.8, gid="nbe-default")
    ax.set_xlabel("prior log-odds  logit P_tar")
    ax.set_ylabel("normalized Bayes error-rate (DCF)")
    ax.grid(True, linewidth=0.5, alpha=0.6)
    refresh_legend(ax, loc="best", fontsize="small")
    return ax


# ---------------------------------------------------------------------------------------------
# ECE


def ece_plot(tar, non=None, *, label=None, ax=None, prior_log_odds=None, n_points: int = 101,
             log10_odds: bool = False, **line_kwargs):
    """Empirical cross-entropy (ECE) plot of natural-log LLRs (Ramos; thesis sec. 7.7.4).

    Against the prior log-odds: the cross-entropy E_log(W | P_tar) of the LLRs in bits (solid;
    thesis eq. 7.40, :func:`focal.metrics.cross_entropy`), the same after the PAV recalibration
    (dashed: the minimum over monotone recalibrations, eq. 7.46) and the default system's prior
    entropy (dotted, drawn once). The gap between solid and dashed is the calibration loss at
    each prior; at h = 0 the curves are Cllr and minCllr.

    Parameters
    ----------
    tar, non : array_like
        Natural-log LLRs of the target and non-target trials.
    label : str, optional
        Legend label of the curve.
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure's).
    prior_log_odds : array_like, optional
        Natural-log prior odds h; default ``n_points`` over [-7, 7].
    n_points : int, default 101 (the curves are smooth; each point is one pass over the trials)
        Number of prior log-odds of the grid.
    log10_odds : bool, default False
        Label the horizontal axis in log10 prior odds (forensic practice); the curves are the
        same, drawn at ``h / ln 10``.
    **line_kwargs
        Passed to ``ax.plot`` for the ECE curve of the LLRs.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    h = prior_log_odds_grid(prior_log_odds, (-7.0, 7.0), n_points)
    if np.abs(h).max() > 700:
        raise ValueError("prior_log_odds must lie within +/-700 (priors strictly inside (0, 1))")
    scores = binary_scores(tar, non)
    t, n = scores.trials.tar, scores.trials.non
    pav = scores.hull.pav
    priors = sigmoid(h)
    actual = np.array([cross_entropy_nats(t, n, p) for p in priors]) / LOG2
    after_pav = np.array([pav.cross_entropy(p) for p in priors]) / LOG2
    x = h / math.log(10.0) if log10_odds else h
    ax = new_axes(ax)
    _, color = _first_line(ax, x, actual, _label(label, "LLRs"), "ece-actual", line_kwargs)
    ax.plot(x, after_pav, color=color, linestyle="--", label=_label(label, "after PAV"),
            gid="ece-pav")
    if not has_gid(ax, "ece-default"):
        ax.plot(x, [prior_entropy(p) for p in priors], color="black", linestyle=":",
                linewidth=1.0, label="default (LLR = 0)", gid="ece-default")
    ax.set_xlabel("prior log10-odds" if log10_odds else "prior log-odds  logit P_tar")
    ax.set_ylabel("empirical cross-entropy (bits)")
    ax.set_ylim(bottom=0)
    ax.grid(True, linewidth=0.5, alpha=0.6)
    refresh_legend(ax, loc="upper left", fontsize="small")
    return ax


# ---------------------------------------------------------------------------------------------
# Tippett


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
    ax = new_axes(ax)
    _, color = _first_line(
        ax, scale * x_t, 1.0 - miss_t,
        _label(label, f"target LLRs ({100 * misleading_t:.1f} % < 0)"), "tippett-target",
        dict(line_kwargs, drawstyle="steps-pre"))
    ax.plot(scale * x_n, fa_n, color=color, linestyle="--", drawstyle="steps-pre",
            label=_label(label, f"non-target LLRs ({100 * misleading_n:.1f} % > 0)"),
            gid="tippett-nontarget")
    if not has_gid(ax, "tippett-zero"):
        ax.axvline(0.0, color="gray", linewidth=0.8, gid="tippett-zero")
    ax.set_xlabel("log10 likelihood-ratio" if log10_lr else "log-likelihood-ratio (nats)")
    ax.set_ylabel("proportion of trials with LLR >= x")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(True, linewidth=0.5, alpha=0.6)
    refresh_legend(ax, loc="best", fontsize="small")
    return ax

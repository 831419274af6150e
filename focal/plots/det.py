"""DET plots of binary scores: the steppy DET, its ROC convex hull, EER and DCF points.

Takes ``(tar, non)`` or a :class:`focal.metrics.BinaryScores` (thesis sec. 7.3.4-7.3.7).

Curve data come from :mod:`focal.metrics`; this module only draws them. Each artist carries a
``gid`` so that programs and tests can find it.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

import numpy as np

from ..metrics.binary import bayes_error_rates, det_curve
from ..metrics.binary import eer as rocch_eer  # the parameter ``eer`` says whether to mark it
from ._axes import (
    binary_scores,
    describe_operating_point,
    first_line,
    has_gid,
    new_axes,
    series_label,
)
from ._axes import (
    operating_point as _parse_operating_point,
)
from ._legend import place_legend
from .scales import probit_limits

__all__ = ["det_plot", "finish_det", "set_probit_limits"]


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
    for given, axis, setter, getter in (
        (xlim, 0, ax.set_xlim, ax.get_xlim),
        (ylim, 1, ax.set_ylim, ax.get_ylim),
    ):
        if given is not None:
            setter(*given)
            continue
        mark = np.asarray(marks[axis], dtype=float)
        top = ceiling[axis]
        below_one = mark[mark < 1.0]
        top = min(
            max(top, 1.0 - (1.0 - float(below_one.max())) / 1.5 if below_one.size else top), 0.9999
        )
        lo, hi = probit_limits(np.concatenate([curve[axis], mark]), ceiling=top)
        if not first:
            old_lo, old_hi = getter()
            lo, hi = min(lo, old_lo), max(hi, old_hi)
        setter(lo, hi)


_OP_MARKERS = (("s", "x"), ("D", "+"), ("^", "1"), ("v", "2"))  # (minDCF, actDCF) per point


_EDGES = {  # (axis, rate): (gid of the note, arrow offset in points, the note)
    (0, 0.0): ("det-edge-left", (10, 0), r"$\leftarrow$", "left edge: P_fa 0 %"),
    (0, 1.0): ("det-edge-right", (-10, 0), r"$\rightarrow$", "right edge: P_fa 100 %"),
    (1, 0.0): ("det-edge-bottom", (0, 10), r"$\downarrow$", "bottom edge: P_miss 0 %"),
    (1, 1.0): ("det-edge-top", (0, -10), r"$\uparrow$", "top edge: P_miss 100 %"),
}


def _edge_mark(ax, pfa, pmiss, **kwargs):
    """A DET marker; a rate of 0 or 1 (at minus / plus infinity on the probit axis) sits on the
    axis edge, with a short arrow pointing off the plot, and the legend says once per edge that
    its markers are off scale (so that none is read as the edge's tick value).

    The rate stays the data value (0 or 1, which are also the edges in the axes' own
    coordinates); only the coordinate system of that axis changes, so the marker stays on the
    edge whatever limits later calls set.
    """
    from matplotlib.transforms import blended_transform_factory

    x_edge, y_edge = not 0 < pfa < 1, not 0 < pmiss < 1
    transform = blended_transform_factory(
        ax.transAxes if x_edge else ax.transData, ax.transAxes if y_edge else ax.transData
    )
    (mark,) = ax.plot(
        [pfa],
        [pmiss],
        linestyle="none",
        transform=transform,
        clip_on=not (x_edge or y_edge),
        **kwargs,
    )
    edges = [(0, float(pfa))] * x_edge + [(1, float(pmiss))] * y_edge
    for edge in edges:
        gid, (dx, dy), arrow, note = _EDGES[edge]
        ax.annotate(  # from inside the plot to the marker: off the scale
            "",
            xy=(pfa, pmiss),
            xycoords=transform,
            xytext=(dx, dy),
            textcoords="offset points",
            arrowprops={"arrowstyle": "->", "color": mark.get_color(), "linewidth": 0.8},
            annotation_clip=False,
            gid="det-off-scale",
        )
        if not has_gid(ax, gid):  # the note, once per edge: an entry of the legend only
            ax.plot([], [], linestyle="none", marker=arrow, color="grey", label=note, gid=gid)


def det_plot(
    tar,
    non=None,
    *,
    label=None,
    ax=None,
    rocch_curve: bool = False,
    eer: bool = True,
    operating_point=None,
    operating_points=None,
    xlim=None,
    ylim=None,
    **line_kwargs,
):
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
    ops += [
        _parse_operating_point(op, f"operating_points[{i}]")
        for i, op in enumerate(operating_points or ())
    ]
    rates = bayes_error_rates(scores, prior_log_odds=[op[3] for op in ops]) if ops else None
    steppy = det_curve(scores)
    pfa, pmiss = steppy.p_fa, steppy.p_miss
    ax = new_axes(ax)
    first = not has_gid(ax, "det")
    ax.set_xscale("probit")
    ax.set_yscale("probit")
    line, color = first_line(ax, pfa, pmiss, label, "det", line_kwargs)
    if rocch_curve:
        x, y = _hull_segments(hull.p_fa, hull.p_miss)
        ax.plot(
            x,
            y,
            color=color,
            linestyle="--",
            linewidth=0.9 * line.get_linewidth(),
            label=series_label(label, "ROCCH"),
            gid="det-rocch",
        )
    if eer:
        e = rocch_eer(hull)
        ax.plot(
            [e],
            [e],
            linestyle="none",
            marker="o",
            color=color,
            markerfacecolor="none",
            label=series_label(label, f"EER = {100 * e:.2f} %"),
            gid="det-eer",
        )
    for i, (pt, cm, cf, _) in enumerate(ops):
        assert rates is not None  # computed whenever there are operating points
        where = describe_operating_point(pt, cm, cf)
        default = rates.default[i]
        mark_min, mark_act = _OP_MARKERS[i % len(_OP_MARKERS)]
        _edge_mark(
            ax,
            rates.min_p_fa[i],
            rates.min_p_miss[i],
            marker=mark_min,
            color=color,
            gid="det-min-dcf",
            label=series_label(label, f"minDCF = {rates.minimum[i] / default:.3f} ({where})"),
        )
        _edge_mark(
            ax,
            rates.actual_p_fa[i],
            rates.actual_p_miss[i],
            marker=mark_act,
            color=color,
            markersize=8,
            gid="det-act-dcf",
            label=series_label(
                label,
                f"actDCF = {rates.actual[i] / default:.3f}"
                + (f" ({where})" if len(ops) > 1 else ""),
            ),
        )
    marks: tuple = ([rocch_eer(hull)], [rocch_eer(hull)]) if eer else ([], [])
    if rates is not None:
        marks = (
            np.concatenate([marks[0], rates.min_p_fa, rates.actual_p_fa]),
            np.concatenate([marks[1], rates.min_p_miss, rates.actual_p_miss]),
        )
    set_probit_limits(ax, first, xlim, ylim, (pfa, pmiss), marks)
    finish_det(ax)
    return ax


def finish_det(ax):
    """Axis labels, grid and legend of a DET plot (:func:`focal.plots._legend.place_legend`:
    under the axes when there is room, else in the lower left corner).
    """
    ax.set_xlabel("False-alarm rate (%)")
    ax.set_ylabel("Miss rate (%)")
    ax.grid(True, which="major", linewidth=0.5, alpha=0.6)
    place_legend(ax, inside="lower left")

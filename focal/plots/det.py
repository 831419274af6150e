"""DET plots of binary scores: the steppy DET, its ROC convex hull, EER and DCF points.

Takes ``(tar, non)`` or a :class:`focal.metrics.BinaryScores` (thesis sec. 7.3.4-7.3.7).

Curve data come from :mod:`focal.metrics`; this module only draws them. Each artist carries a
``gid`` so that programs and tests can find it.

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
.. [2] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
   Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
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
    refresh_legend,
    series_label,
)
from ._axes import (
    operating_point as _parse_operating_point,
)
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


def _edge_mark(ax, pfa, pmiss, **kwargs):
    """A DET marker; a rate of 0 or 1 (at minus / plus infinity on the probit axis) sits on the
    axis edge.

    The rate stays the data value (0 or 1, which are also the edges in the axes' own
    coordinates); only the coordinate system of that axis changes, so the marker stays on the
    edge whatever limits later calls set.
    """
    from matplotlib.transforms import blended_transform_factory

    x_edge, y_edge = not 0 < pfa < 1, not 0 < pmiss < 1
    transform = blended_transform_factory(
        ax.transAxes if x_edge else ax.transData, ax.transAxes if y_edge else ax.transData
    )
    ax.plot(
        [pfa],
        [pmiss],
        linestyle="none",
        transform=transform,
        clip_on=not (x_edge or y_edge),
        **kwargs,
    )


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
    """Axis labels, grid and legend of a DET plot.

    When the figure's layout engine makes room for it (constrained layout, as in a figure of its
    own) the legend goes under the axes, below the x label, where it hides no curve: a column per
    system when they fit, each headed by the system's name and its curve, its points listed
    under it without repeating the name; in a small font, or with the systems' columns stacked,
    when the figure is narrow. When not even that fits in about half the figure's height (e.g.
    three systems at 360 x 270 px), a key without the numbers: the systems' names and one grey
    marker per kind of point. Only when no legend fits under the axes (a tiny figure), or
    without a layout engine (a caller's grid of plots), does it go in the lower left corner
    inside the axes.
    """
    ax.set_xlabel("False-alarm rate (%)")
    ax.set_ylabel("Miss rate (%)")
    ax.grid(True, which="major", linewidth=0.5, alpha=0.6)
    engine = ax.figure.get_layout_engine()
    layout = None
    if type(engine).__name__ == "ConstrainedLayoutEngine":
        layout = _legend_below(ax)
    if layout is None:
        refresh_legend(ax, loc="lower left", fontsize="small")
        return
    import matplotlib as mpl
    from matplotlib.transforms import offset_copy

    handles, labels, ncols, fontsize = layout
    size = float(mpl.rcParams["font.size"])  # the tick labels and the x label above it
    below = offset_copy(ax.transAxes, fig=ax.figure, y=-(2.6 * size + 12), units="points")
    ax.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        bbox_transform=below,
        fontsize=fontsize,
        frameon=False,
        borderaxespad=0,
        ncols=ncols,
    )


_MAIN_CURVES = ("det", "std-det")  # the artist that starts each system's legend entries


def _system_entries(ax):
    """The legend entries of each system: ``[[(handle, label), ...], ...]``, in drawing order.

    A system's entries are its curve (labelled with its name) and the points drawn after it;
    the points' labels lose the ``"name: "`` prefix, which the column's head already says.
    """
    groups = []
    name = None
    for line in ax.lines:
        if line.get_gid() in _MAIN_CURVES or not groups:
            groups.append([])
            name = line.get_label() if line.get_gid() in _MAIN_CURVES else None
        label = line.get_label()
        if not label or label.startswith("_"):
            continue
        if name and not name.startswith("_") and label.startswith(f"{name}: "):
            label = label[len(name) + 2 :]
        groups[-1].append((line, label))
    return [g for g in groups if g]


def _marker_key(groups):
    """The entries of a legend without numbers: each system's curve and name, then one grey
    marker (or line) per kind of point (``"minDCF (P_tar=0.01)"``, the value dropped), in
    drawing order.
    """
    import re

    from matplotlib.lines import Line2D

    systems, kinds = [], {}
    for group in groups:
        for line, label in group:
            if line.get_gid() in _MAIN_CURVES:
                systems.append((line, label))
                continue
            kind = re.sub(r" = \S+( %)?", "", label)
            if (line.get_marker(), kind) not in kinds:
                face = "none" if line.get_markerfacecolor() == "none" else "grey"
                key = Line2D(
                    [],
                    [],
                    color="grey",
                    linestyle=line.get_linestyle(),  # a dashed ROCCH stays dashed
                    marker=line.get_marker(),
                    markerfacecolor=face,
                    markersize=line.get_markersize(),
                )
                kinds[line.get_marker(), kind] = (key, kind)
    return [[e] for e in systems + list(kinds.values())]


def _legend_below(ax):
    """``(handles, labels, ncols, fontsize)`` of the legend under the axes, or None if none fits.

    Tries the systems side by side (a column each), then fewer columns (a column holds several
    systems, one under the other), first in the "small" font then in "x-small"; then, for a
    figure too small for every number, a key of the systems' names and the kinds of points
    (:func:`_marker_key`). A layout fits when its width (estimated from the text outlines, in
    points) is within the figure's and its height within 45 % of the figure's. Columns are
    padded with empty entries so that each system starts at the head of a column or right under
    the system above it.
    """
    import matplotlib as mpl
    from matplotlib.font_manager import FontProperties
    from matplotlib.lines import Line2D
    from matplotlib.textpath import TextPath

    groups = _system_entries(ax)
    if not groups:
        return None
    width_pt = ax.figure.get_figwidth() * 72
    height_pt = ax.figure.get_figheight() * 72
    base = float(mpl.rcParams["font.size"])
    for blocks in (groups, _marker_key(groups)):
        length = max(len(b) for b in blocks)
        for fontsize, scale in (("small", 0.833), ("x-small", 0.694)):
            font = FontProperties(size=scale * base)
            size = font.get_size()
            entry = (
                max(
                    TextPath((0, 0), t, prop=font).get_extents().width for b in blocks for _, t in b
                )
                + 3.5 * size
            )  # the handle and the gap after it
            for ncols in range(len(blocks), 0, -1):
                rows = -(-len(blocks) // ncols) * length
                wide = ncols * entry + (ncols - 1) * 2.0 * size  # columnspacing: 2 em
                if wide > 0.95 * width_pt or rows * 1.6 * size > 0.45 * height_pt:
                    continue
                columns = [
                    [e for b in blocks[j::ncols] for e in b + [None] * (length - len(b))]
                    for j in range(ncols)
                ]
                # every column as long as the first: matplotlib fills columns in equal parts
                columns = [c + [None] * (len(columns[0]) - len(c)) for c in columns]
                entries = [e for column in columns for e in column]
                blank = Line2D([], [], linestyle="none")
                return (
                    [blank if e is None else e[0] for e in entries],
                    ["" if e is None else e[1] for e in entries],
                    ncols,
                    fontsize,
                )
    return None

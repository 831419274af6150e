"""Spoken term detection: the DET curve of the threshold sweep with the ATWV and MTWV points.

References
----------
.. [1] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

from ..std import SWS2013, AlignedTrials, STDReport, atwv, mtwv, term_det_curve
from ._axes import has_gid, new_axes
from .det import finish_det, set_probit_limits

__all__ = ["std_det_plot"]


def std_det_plot(
    source,
    *,
    operating_point=SWS2013,
    threshold=None,
    label=None,
    ax=None,
    xlim=None,
    ylim=None,
    **line_kwargs,
):
    """DET of a term detection system: average P_miss against average P_fa over the queries.

    The curve is :func:`focal.std.term_det_curve` (every distinct score as threshold, SWS plan
    sec. 2.5, eqs. 4-5) on probit axes. The MTWV point (the threshold of maximum TWV,
    :func:`focal.std.mtwv`) is marked with a square, the ATWV point (the system's own YES
    decisions, or ``threshold``; :func:`focal.std.atwv`) with a cross; the legend gives both
    values at the operating point. Unlike a binary DET the curve never reaches P_miss = 0:
    occurrences the system never detected are missed at every threshold.

    Parameters
    ----------
    source : focal.std.STDReport or focal.std.AlignedTrials
        A report (its operating point, ATWV and MTWV are used as they are) or aligned trials.
    operating_point : OperatingPoint, tuple or "sws2012", default SWS 2013
        With aligned trials: the application of ATWV / MTWV.
    threshold : float, optional
        With aligned trials: decide YES iff ``score >= threshold`` for ATWV (needed when the
        detections carry no decisions; otherwise no ATWV point is drawn).
    label : str, optional
        Legend label of the curve.
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure's).
    xlim, ylim : (float, float), optional
        View limits as rates; default from the curve.
    **line_kwargs
        Passed to ``ax.plot`` for the curve.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    if isinstance(source, STDReport):
        trials, actual, best = source.trials, source.atwv, source.mtwv
    elif isinstance(source, AlignedTrials):
        trials = source
        best = mtwv(trials, operating_point)
        actual = (
            atwv(trials, operating_point, threshold)
            if threshold is not None or trials.decision is not None
            else None
        )
    else:
        raise ValueError(
            "source must be a focal.std.STDReport or focal.std.AlignedTrials, "
            f"got {type(source).__name__}"
        )
    curve = term_det_curve(trials)
    ax = new_axes(ax)
    first = not has_gid(ax, "std-det")
    ax.set_xscale("probit")
    ax.set_yscale("probit")
    (line,) = ax.plot(curve.p_fa, curve.p_miss, label=label, gid="std-det", **line_kwargs)
    color = line.get_color()
    prefix = f"{label}: " if label else ""
    ax.plot(
        [best.p_fa],
        [best.p_miss],
        linestyle="none",
        marker="s",
        color=color,
        label=f"{prefix}MTWV = {best.twv:.4f}",
        gid="std-mtwv",
    )
    marks = ([best.p_fa], [best.p_miss])
    if actual is not None:
        ax.plot(
            [actual.p_fa],
            [actual.p_miss],
            linestyle="none",
            marker="x",
            markersize=8,
            color=color,
            label=f"{prefix}ATWV = {actual.twv:.4f}",
            gid="std-atwv",
        )
        marks = ([best.p_fa, actual.p_fa], [best.p_miss, actual.p_miss])
    set_probit_limits(ax, first, xlim, ylim, (curve.p_fa, curve.p_miss), marks, ceiling=(0.5, 0.95))
    finish_det(ax)
    return ax

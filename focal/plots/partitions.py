"""The per-partition picture of a partitioned evaluation: minimum and actual DCF of every
partition, the pooled trials and the equalized measures, as horizontal bars.

Takes a :class:`focal.metrics.PartitionReport` (:func:`focal.metrics.partition_report`); nothing
is recomputed here. Each artist carries a ``gid`` so that programs and tests can find it.
"""

from __future__ import annotations

import numpy as np

from ._axes import describe_operating_point, new_axes
from ._legend import place_legend

__all__ = ["partition_dcf_plot"]


def partition_dcf_plot(report, *, operating_point: int = 0, ax=None, color=None):
    """Minimum and actual normalized DCF of each partition, the pooled and equalized trials.

    One row per line of the report's table (pooled, each partition, each equalization), from
    the top: a solid bar of the minimum DCF (discrimination) continued by a lighter bar up to
    the actual DCF (the calibration loss at that operating point, thesis sec. 7.3.3); a
    partition holding one class only has no bar. The dotted line at 1 is the cost of the best
    decision made without the scores.

    Parameters
    ----------
    report : focal.metrics.PartitionReport
        The partitioned evaluation.
    operating_point : int, default 0
        Which of the report's operating points.
    ax : matplotlib Axes, optional
        Draw here; default a new figure (taller with more partitions).
    color : str, optional
        Colour of the bars (default the first of the property cycle).

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    ops = report.pooled.operating_points
    if not -len(ops) <= operating_point < len(ops):
        raise ValueError(
            f"operating_point must index the report's {len(ops)} operating point(s), "
            f"got {operating_point!r}"
        )
    op = ops[operating_point]
    rows = report.rows()
    labels = [label for label, *_ in rows]
    act = np.array([np.nan if m is None else m.operating_points[operating_point].act_dcf
                    for *_, m in rows])  # fmt: skip
    mins = np.array([np.nan if m is None else m.operating_points[operating_point].min_dcf
                     for *_, m in rows])  # fmt: skip
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.4, 1.2 + 0.28 * len(rows)), layout="constrained")
    ax = new_axes(ax)
    color = color or "C0"
    y = np.arange(len(rows))[::-1]
    shown = np.isfinite(mins)
    ax.barh(y[shown], mins[shown], height=0.6, color=color, label="minDCF", gid="partition-min")
    loss = np.maximum(act - mins, 0.0)
    ax.barh(y[shown], loss[shown], left=mins[shown], height=0.6, color=color, alpha=0.35,
            label="actDCF (lighter: calibration loss)", gid="partition-act")  # fmt: skip
    ax.axvline(1.0, color="black", linestyle=":", linewidth=1.0, label="no scores (DCF 1)",
               gid="partition-default")  # fmt: skip
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    top = np.nanmax(np.append(act, 1.0))
    ax.set_xlim(0.0, 1.05 * top)
    ax.set_xlabel(f"normalized DCF ({describe_operating_point(op.p_target, op.c_miss, op.c_fa)})")
    ax.grid(True, axis="x", linewidth=0.5, alpha=0.6)
    place_legend(ax, inside="lower right")
    return ax

"""Plots of NIST LRE's CAVG over multiclass log-likelihoods (Brümmer 2010, ch. 8).

* :func:`subset_scatter`: a measure over every subset of the classes (thesis fig. 8.3);
* :func:`cavg_sweep_plot`: normalized CAVG / E_lre swept over the target prior (thesis 8.5.1).

The numbers come from :func:`focal.metrics.subset_analysis` and :func:`focal.metrics.cavg_sweep`;
these functions draw them.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import numpy as np

from ._axes import new_axes, refresh_legend

__all__ = ["subset_scatter", "cavg_sweep_plot"]

_SUBSET_LABELS = {
    "cavg": "CAVG",
    "multiclass_cross_entropy": "C_mce (nats)",
    "multiclass_cllr": "multiclass Cllr (bits)",
}


def subset_scatter(analysis, *, ax=None, jitter: float = 0.3, label=None, **scatter_kwargs):
    """Every subset of the classes as a dot: its measure against its size (thesis fig. 8.3).

    ``analysis`` is :func:`focal.metrics.subset_analysis`: each subset of two or more classes is
    an LRE of its own (flat prior over its classes, only their trials). Dots are spread
    horizontally by up to ``jitter`` around their subset size (a fixed pseudo-random spread, the
    same at every call) so the thousands of subsets of one size stay visible; a bar marks the
    mean of each size and a star the set of all classes. Call again with the same ``ax`` (and a
    ``label``) to compare systems, e.g. before and after a calibration.

    Parameters
    ----------
    analysis : focal.metrics.SubsetAnalysis
        The measure of every subset.
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure's).
    jitter : float, default 0.3
        Largest horizontal offset of a dot from its subset size.
    label : str, optional
        Legend label (e.g. the system's name).
    **scatter_kwargs
        Passed to matplotlib's ``scatter``.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    sizes = np.asarray(analysis.sizes)
    values = np.asarray(analysis.values, dtype=float)
    offset = np.random.default_rng(0).uniform(-jitter, jitter, sizes.size)
    ax = new_axes(ax)
    kwargs = dict(s=4, alpha=0.5) | scatter_kwargs
    dots = ax.scatter(
        sizes + offset, values, label=label or f"{sizes.size:,} subsets", gid="subsets", **kwargs
    )
    color = dots.get_facecolor()[0][:3]
    prefix = f"{label}: " if label else ""
    levels = np.unique(sizes)
    means = np.array([values[sizes == k].mean() for k in levels])
    ax.plot(
        levels,
        means,
        linestyle="none",
        marker="_",
        markersize=18,
        markeredgewidth=2,
        color=color,
        label=f"{prefix}mean per size",
        gid="subset-means",
    )
    full = sizes == sizes.max()
    ax.plot(
        sizes[full],
        values[full],
        linestyle="none",
        marker="*",
        markersize=12,
        color=color,
        markeredgecolor="black",
        label=f"{prefix}all {int(sizes.max())} classes: {values[full][0]:.4g}",
        gid="subset-all",
    )
    ax.set_xticks(levels)
    ax.set_xlabel("number of classes in the subset")
    ax.set_ylabel(_SUBSET_LABELS.get(analysis.measure, str(analysis.measure)))
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", linewidth=0.5, alpha=0.6)
    refresh_legend(ax, loc="best", fontsize="small")
    return ax


def cavg_sweep_plot(sweep, *, ax=None, label=None, normalized: bool = True, **line_kwargs):
    """CAVG (E_lre) swept over the target prior alpha, against logit alpha (thesis sec. 8.5.1).

    ``sweep`` is :func:`focal.metrics.cavg_sweep`: application k has target prior alpha and
    non-target priors ``(1 - alpha)/(N - 1)`` (eq. 8.28), so the curve runs from "reject every
    target" (alpha -> 0) to "accept every target" (alpha -> 1). Normalized (default), each
    value is divided by the best decision without the recognizer, ``min(alpha, 1 - alpha)``
    (at a non-flat ``prior`` of the sweep, :attr:`~focal.metrics.CavgSweep.default`), like the
    normalized Bayes error-rate plots of the two-class case (thesis sec. 7.6): 1 (the dotted
    line) means no better than ignoring the scores. The solid curve is the actual
    criterion of the log-likelihoods' Bayes decisions; the dashed one, when the sweep has it,
    is E_lre^opt after the optimal affine calibration (eq. 8.24), the thesis' contrast for
    calibration analysis: the gap between them is the calibration loss at each operating
    point. The value at logit alpha = 0 is CAVG.

    Parameters
    ----------
    sweep : focal.metrics.CavgSweep
        The sweep to draw (:func:`focal.metrics.cavg_sweep`).
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure's).
    label : str, optional
        Prefix for the legend (e.g. the system's name); call again on the same ``ax`` to
        compare systems.
    normalized : bool
        Divide by ``min(alpha, 1 - alpha)`` (default) or plot the fraction itself.
    **line_kwargs
        Passed to the solid curve's ``plot``.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    p = np.asarray(sweep.p_target, dtype=float)
    x = np.log(p) - np.log1p(-p)
    actual = sweep.actual_normalized if normalized else sweep.actual
    rec = sweep.recalibrated_normalized if normalized else sweep.recalibrated
    ax = new_axes(ax)
    prefix = f"{label}: " if label else ""
    (line,) = ax.plot(x, actual, label=f"{prefix}actual", gid="cavg-actual", **line_kwargs)
    if rec is not None:
        ax.plot(
            x,
            rec,
            linestyle="--",
            color=line.get_color(),
            label=f"{prefix}after affine calibration (alpha={sweep.alpha:.3g})",
            gid="cavg-recalibrated",
        )
    if normalized:
        if not any(a.get_gid() == "cavg-default" for a in ax.get_children()):
            ax.axhline(
                1.0,
                color="black",
                linestyle=":",
                linewidth=1,
                label="default (no scores)",
                gid="cavg-default",
            )
        ax.set_ylabel(
            "normalized E_lre (1: no better than the prior alone)"
            if sweep.prior is not None
            else "normalized E_lre (CAVG / min(alpha, 1 - alpha))"
        )
        top = float(np.nanmax(np.r_[actual, [1.0]] if rec is None else np.r_[actual, rec, 1.0]))
        ax.set_ylim(0, min(max(1.2, 1.05 * top), 3.0))
    else:
        ax.set_ylabel("E_lre (CAVG at target prior alpha)")
        ax.set_ylim(bottom=0)
    ax.axvline(0.0, color="grey", linewidth=0.5)
    ax.set_xlabel("logit alpha (target prior log-odds of every detection application)")
    ax.set_xlim(x.min(), x.max())
    ax.grid(True, linewidth=0.5, alpha=0.6)
    refresh_legend(ax, loc="best", fontsize="small")
    return ax

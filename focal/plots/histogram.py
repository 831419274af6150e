"""Histograms of target and non-target scores: the first picture of a score set.

Takes ``(tar, non)`` or a :class:`focal.metrics.BinaryScores`; both classes share the bins, so
the two histograms compare bin by bin. Each artist carries a ``gid`` so that programs and tests
can find it.
"""

from __future__ import annotations

import math

import numpy as np

from ._axes import (
    THRESHOLD_STYLES,
    binary_scores,
    describe_operating_point,
    has_gid,
    new_axes,
    series_label,
)
from ._axes import operating_point as _parse_operating_point
from ._legend import place_legend

__all__ = ["score_histogram", "score_histogram_plot"]


def score_histogram(tar, non=None, bins="auto", density: bool = True):
    """The shared bin edges and the two classes' histograms of ``(tar, non)``.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / RocHull as ``tar`` alone
        Target and non-target scores (+/-inf allowed: they are counted apart, not binned).
    bins : int, sequence or str, default "auto"
        As ``numpy.histogram_bin_edges`` of the finite scores of both classes together.
    density : bool, default True
        Each class's histogram integrates to its share of finite scores (a density per score
        unit, so classes of very different sizes compare); False: trial counts.

    Returns
    -------
    edges : ndarray, shape (n_bins + 1,)
        The bin edges.
    tar_hist, non_hist : ndarray, shape (n_bins,)
        Densities or counts of each class.
    n_inf : dict
        ``{"tar": (n_minus_inf, n_plus_inf), "non": (...)}``: the infinite scores left out.
    """
    trials = binary_scores(tar, non).trials
    t, n = trials.tar, trials.non
    ft, fn = t[np.isfinite(t)], n[np.isfinite(n)]
    finite = np.concatenate((ft, fn))
    if finite.size == 0:
        raise ValueError("no finite scores to draw a histogram of")
    edges = np.histogram_bin_edges(finite, bins=bins)
    hist = []
    for x, total in ((ft, t.size), (fn, n.size)):
        counts = np.histogram(x, bins=edges)[0].astype(float)
        if density:  # per unit score, scaled by the class's share of finite scores
            counts = counts / (total * np.diff(edges))
        hist.append(counts)
    n_inf = {
        "tar": (int(np.isneginf(t).sum()), int(np.isposinf(t).sum())),
        "non": (int(np.isneginf(n).sum()), int(np.isposinf(n).sum())),
    }
    return edges, hist[0], hist[1], n_inf


def score_histogram_plot(
    tar,
    non=None,
    *,
    label=None,
    ax=None,
    bins="auto",
    density: bool = True,
    thresholds=None,
    operating_points=None,
    log10_lr: bool = False,
    **line_kwargs,
):
    """Histograms of the target (solid, filled) and non-target (dashed) scores of a system.

    Both classes share the bins (:func:`score_histogram`). Vertical lines mark score
    thresholds: given values, and the Bayes thresholds ``-logit(P_eff)`` of operating points
    (the scores read as natural-log LLRs, thesis eq. 7.13). Calling again with the same ``ax``
    adds another system in the next colour.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / RocHull as ``tar`` alone
        Target and non-target scores.
    label : str, optional
        System name for the legend.
    ax : matplotlib Axes, optional
        Draw here; default a new figure.
    bins : int, sequence or str, default "auto"
        Bins of ``numpy.histogram_bin_edges``.
    density : bool, default True
        Densities (each class integrates to 1 over its finite scores) or trial counts.
    thresholds : sequence of float or mapping, optional
        Score thresholds to mark, or ``{name: value}``.
    operating_points : sequence, optional
        Priors or ``(P_target, C_miss, C_fa)``: mark their Bayes thresholds on the LLRs.
    log10_lr : bool, default False
        The scores are natural-log LLRs to be drawn in log10 LR units (``llr / ln 10``).
    **line_kwargs
        Passed to ``ax.stairs`` of the target histogram (``color``, ``linewidth``, ...).

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    edges, h_tar, h_non, n_inf = score_histogram(tar, non, bins=bins, density=density)
    marks = []
    if thresholds is not None:
        items = (
            thresholds.items()
            if hasattr(thresholds, "items")
            else ((f"threshold {float(v):.4g}", v) for v in np.atleast_1d(thresholds))
        )
        for name, value in items:
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"thresholds must be finite, got {value!r}")
            marks.append((str(name), value))
    for i, op in enumerate(operating_points or ()):
        pt, cm, cf, h = _parse_operating_point(op, f"operating_points[{i}]")
        marks.append((f"Bayes threshold ({describe_operating_point(pt, cm, cf)})", -h))
    scale = 1.0 / math.log(10.0) if log10_lr else 1.0
    if density:  # per log10 LR unit
        h_tar, h_non = h_tar / scale, h_non / scale
    ax = new_axes(ax)
    kwargs = {"linewidth": 1.5, **line_kwargs}
    target = ax.stairs(
        h_tar, scale * edges, label=series_label(label, "targets"), gid="hist-target", **kwargs
    )
    color = target.get_edgecolor()
    ax.stairs(h_tar, scale * edges, fill=True, alpha=0.2, color=color, gid="hist-target-fill")
    ax.stairs(
        h_non,
        scale * edges,
        color=color,
        linestyle="--",
        linewidth=kwargs["linewidth"],
        label=series_label(label, "non-targets"),
        gid="hist-nontarget",
    )
    for cls, words in (("tar", "target"), ("non", "non-target")):
        low, high = n_inf[cls]
        if low or high:
            note = ", ".join(f"{k} at {s}inf" for k, s in ((low, "-"), (high, "+")) if k)
            ax.plot(
                [],
                [],
                linestyle="none",
                label=series_label(label, f"{words} scores {note}: not drawn"),
                gid="hist-infinite",
            )
    for name, value in marks:
        gid = f"hist-threshold-{name}"
        if not has_gid(ax, gid):
            n_drawn = sum(
                a.get_gid().startswith("hist-threshold-") for a in ax.lines if a.get_gid()
            )
            ax.axvline(
                scale * value,
                color="black",
                linestyle=THRESHOLD_STYLES[n_drawn % len(THRESHOLD_STYLES)],
                linewidth=1.0,
                label=name,
                gid=gid,
            )
    if log10_lr:
        ax.set_xlabel("log10 likelihood-ratio")
    else:
        ax.set_xlabel("log-likelihood-ratio (nats)" if operating_points else "score")
    unit = "log10 LR" if log10_lr else ("nat" if operating_points else "score")
    ax.set_ylabel(f"density (per {unit} unit)" if density else "trials")
    heights = [
        float(np.max(p.get_data().values, initial=0.0))
        for p in ax.patches
        if p.get_gid() in ("hist-target", "hist-nontarget")
    ]
    ax.set_ylim(0.0, 1.05 * max(max(heights), 1e-300))  # every system's histograms in view
    ax.grid(True, linewidth=0.5, alpha=0.6)
    place_legend(ax, inside="best")
    return ax

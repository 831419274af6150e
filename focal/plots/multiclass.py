"""Plots of multiclass (language recognition) log-likelihoods: the analyses of [1]_ and [2]_.

* :func:`pairwise_bar_matrix`: Cllr of every pair of classes before and after a calibration,
  and minCllr, as a matrix of small bar graphs (Brümmer & van Leeuwen 2006, fig. 3);
* :func:`detection_ape_plots`: an APE plot of the one-vs-rest detection LLRs of every target
  class, before and after a calibration (2006 paper, fig. 2);
* :func:`detection_llr_scatter`: detection LLRs after calibration against before (fig. 1).

The plots of NIST LRE's CAVG (its sweep, every subset of the classes) are in
:mod:`focal.plots.lre` (re-exported here). The numbers come from :mod:`focal.metrics`
(:func:`~focal.metrics.pairwise_analysis`, :func:`~focal.metrics.detection_llrs`); these
functions draw them. The detection plots take a :class:`~focal.core.multiclass.MulticlassTrials`
in place of ``(llh, labels)``. Grids are drawn on a given or new figure and returned as arrays
of Axes.

References
----------
.. [1] :cite:t:`brummer2006calibration`.
.. [2] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import numpy as np

from ..core.multiclass import as_class_labels, as_llh_matrix, as_multiclass_trials
from ..metrics import detection_llrs
from ..metrics.multiclass_detection import detection_trials
from ._axes import new_axes, refresh_legend
from .ape import ape_plot

__all__ = [
    "pairwise_bar_matrix",
    "detection_ape_plots",
    "detection_llr_scatter",
]


def _figure(fig, figsize):
    if fig is not None:
        return fig
    import matplotlib.pyplot as plt

    return plt.figure(figsize=figsize)


def _names(class_names, n_classes: int):
    if class_names is None:
        return [str(i) for i in range(n_classes)]
    names = [str(c) for c in class_names]
    if len(names) != n_classes:
        raise ValueError(f"class_names has {len(names)} names for {n_classes} classes")
    return names


def pairwise_bar_matrix(analysis, recalibrated=None, *, class_names=None, fig=None):
    """Bar-graph matrix of the pairwise calibration analysis (2006 paper sec. 5.2, fig. 3).

    One small bar graph per pair of classes (i, j), in the upper triangle of a grid whose rows
    are the first class and columns the second: Cllr of the pairwise LLR ``l_i - l_j`` as given
    (left bar), after the calibration (middle, when ``recalibrated`` is given) and minCllr, the
    PAV minimum (right; the same before and after an ``alpha l + beta`` calibration). Bits at
    the flat pair prior; the dotted line at 1 bit is the uninformative system.

    Parameters
    ----------
    analysis : focal.metrics.PairwiseAnalysis
        :func:`focal.metrics.pairwise_analysis` of the log-likelihoods as given.
    recalibrated : focal.metrics.PairwiseAnalysis, optional
        The same analysis after a calibration (same pairs).
    class_names : sequence of str, optional
        Names of the ``analysis.n_classes`` classes.
    fig : matplotlib Figure, optional
        Figure to draw in (default: a new one).

    Returns
    -------
    ndarray of Axes, shape (m - 1, m - 1)
        For the m classes analysed; cells below the diagonal are switched off.
    """
    pairs = np.asarray(analysis.pairs)
    if recalibrated is not None and not np.array_equal(pairs, recalibrated.pairs):
        raise ValueError("analysis and recalibrated must be analyses of the same class pairs")
    names = _names(class_names, analysis.n_classes)
    classes = np.unique(pairs)
    m = classes.size
    fig = _figure(fig, (1.5 * (m - 1) + 1.5, 1.25 * (m - 1) + 1.2))
    axes = fig.subplots(m - 1, m - 1, sharey=True, squeeze=False)
    columns = [("Cllr", analysis.cllr, "pairwise-cllr")]
    if recalibrated is not None:
        columns.append(("Cllr after calibration", recalibrated.cllr, "pairwise-cllr-recalibrated"))
    columns.append(("minCllr (PAV)", analysis.min_cllr, "pairwise-min-cllr"))
    values = np.concatenate([c[1] for c in columns])
    finite = values[np.isfinite(values)]
    top = max(1.05, 1.1 * float(finite.max()) if finite.size else 1.05)
    used = np.zeros((m - 1, m - 1), dtype=bool)
    for k, (i, j) in enumerate(pairs):
        r, c = int(np.searchsorted(classes, i)), int(np.searchsorted(classes, j)) - 1
        ax = axes[r, c]
        used[r, c] = True
        for x, (text, vals, gid) in enumerate(columns):
            v = float(vals[k])
            ax.bar(
                x,
                v if np.isfinite(v) else top,
                width=0.8,
                color=f"C{x}",
                gid=gid,
                hatch=None if np.isfinite(v) else "xx",
                label=text,
            )
        ax.axhline(1.0, color="gray", linestyle=":", linewidth=0.8)
        ax.set_xticks([])
        ax.set_xlim(-0.6, len(columns) - 0.4)
    axes[0, 0].set_ylim(0, top)
    for r in range(m - 1):
        for c in range(m - 1):
            if not used[r, c]:
                axes[r, c].set_axis_off()
        axes[r, r].set_ylabel(names[classes[r]], rotation=0, ha="right", va="center")
        axes[0, r].set_title(names[classes[r + 1]], fontsize="medium")
        axes[r, r].tick_params(labelleft=True)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    _place_grid(fig, axes, handles, labels)
    return axes


def _text_inches(text, size_points) -> float:
    """Width of ``text`` set in the default font at ``size_points``, in inches."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    return TextPath((0, 0), text, prop=FontProperties(size=size_points)).get_extents().width / 72


def _place_grid(fig, axes, handles, labels):
    """Lay out the pairwise grid from the sizes of its texts (inches), at any figure size.

    No layout engine: it shrinks a grid of many small axes to nothing at phone widths, and is
    slow. Row names sit left of the diagonal cells, over the empty cells below the diagonal
    (upright when they fit there, else turned vertical); column names on top (vertical when a
    column is too narrow for them); the legend in a strip along the bottom.
    """
    import matplotlib as mpl

    fig.set_layout_engine(None)  # the grid places its own axes
    width, height = fig.get_size_inches()
    n = axes.shape[0]
    pt = float(mpl.rcParams["font.size"]) / 72.0  # 1 pt of text, in inches
    pad = 0.08
    ticks = _text_inches("0.5", 72 * pt) + 7 / 72  # tick labels, ticks and their pad
    row_names = [axes[r, r].get_ylabel() for r in range(n)]
    col_names = [axes[0, c].get_title() for c in range(n)]
    col_widths = [_text_inches(t, 72 * pt) for t in col_names]
    gap = 0.12
    left = pad + _text_inches(row_names[0], 72 * pt) + 4 / 72 + ticks
    pitch0 = (width - left - pad - 0.5 * pt) / n  # column pitch before the right edge
    upright_cols = max(col_widths) <= 0.95 * pitch0
    right = pad + (max(0.0, col_widths[-1] / 2 - (pitch0 - gap) / 2) if upright_cols else 0.8 * pt)
    top = pad + 6 / 72 + (1.3 * pt if upright_cols else max(col_widths))
    small = 0.833 * pt
    legend_w = sum(_text_inches(t, 72 * small) + 3.2 * small for t in labels)
    legend_rows = 1 if legend_w <= width - 2 * pad else len(labels)
    bottom = pad + legend_rows * 1.5 * small + 0.1
    cell_w = (width - left - right) / n - gap
    cell_h = (height - top - bottom) / n - 0.9 * pt
    if cell_w <= 0.05 or cell_h <= 0.05:
        raise ValueError(
            f"a figure of {width:.2g} x {height:.2g} inches is too small for the "
            f"{n + 1} classes' pairwise grid"
        )
    fig.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        bottom=bottom / height,
        top=1 - top / height,
        wspace=gap / cell_w,
        hspace=0.9 * pt / cell_h,
    )
    for c in range(n):
        if not upright_cols:
            axes[0, c].set_title(col_names[c], fontsize="medium", rotation=90)
    for r in range(1, n):  # over the empty cell to the left: upright if it fits there
        if _text_inches(row_names[r], 72 * pt) + 4 / 72 + ticks > cell_w + gap:
            axes[r, r].set_ylabel(row_names[r], rotation=90, ha="center", va="bottom")
    fig.legend(
        handles,
        labels,
        loc="lower left",
        bbox_to_anchor=(pad / width, pad / height),
        fontsize="small",
        frameon=False,
        ncol=len(labels) if legend_rows == 1 else 1,
        borderaxespad=0,
        borderpad=0,
    )


def _validated(llh, labels, prior, recalibrated, who):
    """``(L, y, p, R)``: full log-likelihood matrix, labels, prior and the recalibrated matrix
    (or None), of arrays or a MulticlassTrials (:func:`focal.core.multiclass.as_multiclass_trials`).
    """
    t = as_multiclass_trials(llh, labels, prior, who=who)
    R = None
    if recalibrated is not None:
        R = as_llh_matrix(recalibrated, "recalibrated")
        if R.shape != t.llh.shape:
            raise ValueError(f"recalibrated has shape {R.shape}, llh {t.llh.shape}")
    return t.llh, t.labels, t.prior, R


def detection_ape_plots(
    llh,
    labels=None,
    *,
    prior=None,
    recalibrated=None,
    class_names=None,
    classes=None,
    fig=None,
    n_points: int = 1001,
):
    """APE plots of the detection LLRs of every target class (2006 paper sec. 5.3, fig. 2).

    For each target class t, the one-vs-rest detection LLRs of :func:`focal.metrics.detection_llrs`
    (eq. 9; non-targets weighted by ``prior``) are a binary detector: targets are the trials of
    class t, non-targets those of the other classes with non-zero prior. Each gets an
    :func:`ape_plot` (curves and Cllr bar); with ``recalibrated`` a second column shows the same
    after the calibration (the paper's "En (opt)").

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Log-likelihoods as given; or a :class:`~focal.core.multiclass.MulticlassTrials`
        (log-likelihoods, labels and prior), with ``labels`` omitted.
    labels : array_like of int, optional
        True class of every trial (with array ``llh``).
    prior : array_like, shape (N,), optional
        Prior of the non-target mixture (flat by default, or the trials'); zero-prior classes
        are left out.
    recalibrated : array_like, shape (n_trials, N), optional
        The log-likelihoods after a calibration (e.g. ``MulticlassFusion(mode="calibration")``).
    class_names : sequence of str, optional
        Names of the classes, for the titles.
    classes : sequence of int, optional
        Target classes to plot (default every class with non-zero prior).
    fig : matplotlib Figure, optional
        Figure to draw in (default: a new one).
    n_points : int, default 1001
        Points per APE curve.

    Returns
    -------
    ndarray of Axes, shape (n_targets, 1 or 2)
        The curve axes (each with its bar beside it, :func:`focal.plots.ape_bar_axes`).
    """
    L, y, p, R = _validated(llh, labels, prior, recalibrated, "detection_ape_plots")
    N = L.shape[1]
    lam = detection_llrs(L, p)
    lam_cal = None if R is None else detection_llrs(R, p)
    names = _names(class_names, N)
    targets = (
        np.flatnonzero(p > 0)
        if classes is None
        else np.unique(as_class_labels(classes, N, "classes"))
    )
    ncols = 1 if lam_cal is None else 2
    fig = _figure(fig, (4.8 * ncols, 2.4 * targets.size + 0.6))
    axes = fig.subplots(targets.size, ncols, squeeze=False)
    for r, t in enumerate(targets):
        for c, (values, suffix) in enumerate(
            [(lam, "")] + ([] if lam_cal is None else [(lam_cal, " (opt)")])
        ):
            tar, non = detection_trials(values, y, p, t)
            ax = ape_plot(
                tar, non, ax=axes[r, c], label=names[t] + suffix, compact=True, n_points=n_points
            )
            ax.set_title(names[t] + suffix, fontsize="medium")
    for ax in axes[-1]:
        ax.set_xlabel("prior log-odds")
    for ax in axes[:, 0]:
        ax.set_ylabel("error-rate / (2 ln 2)", fontsize="small")
    # one key for every panel: the compact panels have no legends of their own
    from matplotlib.lines import Line2D

    key = [
        Line2D([], [], color="C0", label="actual (area = Cllr)"),
        Line2D([], [], color="C0", linestyle="--", label="minimum, after PAV (area = minCllr)"),
        Line2D([], [], color="black", linestyle=":", label="default (LLR = 0)"),
    ]
    fig.legend(handles=key, loc="lower center", ncols=3, fontsize="small", frameon=False)
    fig.subplots_adjust(
        hspace=0.5,
        wspace=0.4,
        left=0.1,
        right=0.94,
        top=1 - 0.4 / fig.get_figheight(),
        bottom=0.9 / fig.get_figheight(),
    )
    return axes


def detection_llr_scatter(
    llh,
    recalibrated,
    labels=None,
    target: int | None = None,
    *,
    prior=None,
    class_names=None,
    ax=None,
):
    """Detection LLRs of one target after calibration against before (2006 paper, fig. 1).

    x: the detection LLR of class ``target`` (:func:`focal.metrics.detection_llrs`) computed from
    ``llh``; y: from ``recalibrated``. Target trials and non-target trials are drawn in two
    colours; the dotted diagonal is "no change". An ``alpha l + beta`` calibration gives points
    close to a line of slope about alpha, though not exactly a function of x (the paper's
    eq. 19).

    Parameters
    ----------
    llh : array_like, shape (n_trials, N), or MulticlassTrials
        Log-likelihoods as given; or a :class:`~focal.core.multiclass.MulticlassTrials`
        (log-likelihoods, labels and prior), with ``labels`` omitted (give ``target`` by
        keyword).
    recalibrated : array_like, shape (n_trials, N)
        The log-likelihoods after a calibration.
    labels : array_like of int, optional
        True class of every trial (with array ``llh``).
    target : int
        The target class whose detection LLRs are drawn (required).
    prior : array_like, shape (N,), optional
        Prior of the non-target mixture (flat by default, or the trials').
    class_names : sequence of str, optional
        Names of the classes, for the axis labels.
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure's).

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    if target is None:
        raise ValueError("target is missing: the class whose detection LLRs are drawn")
    L, y, p, R = _validated(llh, labels, prior, recalibrated, "detection_llr_scatter")
    N = L.shape[1]
    t = int(as_class_labels([target], N, "target")[0])
    if p[t] == 0:
        raise ValueError(f"target class {t} has zero prior")
    names = _names(class_names, N)
    before, after = detection_llrs(L, p)[:, t], detection_llrs(R, p)[:, t]
    counted = p[y] > 0
    ax = new_axes(ax)
    is_tar = y == t
    is_non = counted & ~is_tar
    ax.scatter(
        before[is_non],
        after[is_non],
        s=6,
        alpha=0.5,
        color="C1",
        label=f"non-target trials ({is_non.sum():,})",
        gid="scatter-nontarget",
    )
    ax.scatter(
        before[is_tar],
        after[is_tar],
        s=6,
        alpha=0.6,
        color="C0",
        label=f"target trials ({is_tar.sum():,})",
        gid="scatter-target",
    )
    lo = float(min(before[counted].min(), after[counted].min()))
    hi = float(max(before[counted].max(), after[counted].max()))
    ax.plot([lo, hi], [lo, hi], color="gray", linestyle=":", linewidth=1.0, gid="scatter-diagonal")
    ax.set_xlabel(f"detection LLR of {names[t]}, as given")
    ax.set_ylabel(f"detection LLR of {names[t]}, calibrated")
    ax.grid(True, linewidth=0.5, alpha=0.6)
    refresh_legend(ax, loc="upper left", fontsize="small")
    return ax

"""Calibration pictures: a calibrator's score -> LLR map against the evaluation data's PAV map,
and the reliability diagram of posteriors at a prior.

Both take the evaluation trials as ``(tar, non)`` or a :class:`focal.metrics.BinaryScores`; the
PAV map, its ROC convex hull and the thresholds come from :mod:`focal.metrics` (one sort, one
PAV). Each artist carries a ``gid`` so that programs and tests can find it.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] M. H. DeGroot and S. E. Fienberg, "The comparison and evaluation of forecasters", The
   Statistician 32, 12-22, 1983 (reliability diagrams).
"""

from __future__ import annotations

import math
import weakref

import numpy as np
from matplotlib.patches import Patch
from scipy.special import expit

from ..core.priors import logit
from ..core.validation import check_int, check_probability
from ..metrics import eer as rocch_eer
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

__all__ = ["calibration_map", "calibration_map_plot", "reliability", "reliability_plot"]


def _estimator_map(estimator):
    """The score -> LLR function of a fitted one-column estimator (or a callable)."""
    if estimator is None:
        return None
    if callable(estimator) and not hasattr(estimator, "decision_function"):
        return lambda s: np.asarray(estimator(s), dtype=float).reshape(-1)
    n_in = getattr(estimator, "n_features_in_", 1)
    if n_in != 1:
        raise ValueError(
            f"a calibration map is drawn for a one-column calibrator; this estimator takes "
            f"{n_in} columns (draw the map of the calibrator after the fusion instead)"
        )
    return lambda s: np.asarray(estimator.decision_function(s.reshape(-1, 1)), dtype=float)


def calibration_map(tar, non=None, estimator=None, operating_points=(0.01,), n_points=512):
    """The data of a calibration-map plot: the calibrator's map, the evaluation PAV map and
    its EER / minDCF points.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / RocHull as ``tar`` alone
        Evaluation scores of the target and non-target trials: the calibrator's input scores,
        or LLRs when ``estimator`` is None.
    estimator : fitted estimator or callable, optional
        A one-column score -> LLR calibrator (``decision_function``: :class:`focal.PAVCalibrator`,
        :class:`focal.LinearCalibrator`, :class:`focal.estimators.KDECalibrator`, a pipeline
        ending in one) or a function of an array of scores; None: the scores are LLRs already
        (the identity map).
    operating_points : sequence, default (0.01,)
        Priors or ``(P_target, C_miss, C_fa)`` of the minDCF points.
    n_points : int, default 512
        Scores at which the map is evaluated.

    Returns
    -------
    dict
        ``scores`` and ``llr`` (the map), ``pav_lo``, ``pav_hi`` and ``pav_llr`` (the PAV blocks
        of the evaluation trials, thesis eq. C.20), ``eer`` (``(threshold, llr, rate)``: the
        score threshold nearest the ROCCH-EER and the LLR of the hull segment it lies on, whose
        Bayes threshold that is, thesis 7.3.7) and ``min_dcf`` (a list of ``(threshold, llr,
        (P_target, C_miss, C_fa))``: the score threshold of each minimum DCF and the Bayes
        threshold ``-logit(P_eff)`` a calibrated map takes there).
    """
    scores = binary_scores(tar, non)
    hull = scores.hull
    t, n = scores.trials.tar, scores.trials.non
    finite = np.concatenate((t[np.isfinite(t)], n[np.isfinite(n)]))
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
    pad = 0.05 * (hi - lo) if hi > lo else 1.0
    x = np.linspace(lo - pad, hi + pad, check_int(n_points, "n_points", 2))
    apply = _estimator_map(estimator)
    llr = x.copy() if apply is None else apply(x)
    diff = hull.p_miss - hull.p_fa  # increasing from -1 to 1: the EER segment
    k = max(int(np.argmax(diff >= 0)), 1)
    eer = (float(hull.eer_threshold.value), float(hull.llr[k - 1]), rocch_eer(hull))
    points = []
    for i, op in enumerate(operating_points or ()):
        pt, cm, cf, h = _parse_operating_point(op, f"operating_points[{i}]")
        points.append((float(hull.min_dcf_threshold(pt, cm, cf).value), -h, (pt, cm, cf)))
    pav = hull.pav
    return {
        "scores": x,
        "llr": llr,
        "pav_lo": pav.score_lo,
        "pav_hi": pav.score_hi,
        "pav_llr": pav.llr,
        "eer": eer,
        "min_dcf": points,
    }


def calibration_map_plot(
    tar,
    non=None,
    *,
    estimator=None,
    label=None,
    ax=None,
    operating_points=(0.01,),
    n_points: int = 512,
    log10_lr: bool = False,
    **line_kwargs,
):
    """A calibrator's score -> LLR map (solid) over the PAV map of the evaluation trials.

    The PAV map (dashed steps) is the best monotone map for these trials (thesis sec. 7.7.3,
    eq. C.20): where the calibrator's map leaves it, its LLRs over- or under-state the evidence.
    Marked on the PAV map: the score threshold of the ROCCH-EER (circle, at the LLR of the hull
    segment it lies on) and of each minimum DCF (square, at the Bayes threshold
    ``-logit(P_eff)``, where a calibrated map crosses the dotted horizontal line of that
    operating point). PAV blocks of LLR -inf / +inf (only one class) are drawn at the plot's
    edge. With ``estimator=None`` the scores are LLRs and the map is the diagonal: the plot then
    compares the LLRs with their own PAV recalibration (the "PAV plot" of forensic practice).

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / RocHull as ``tar`` alone
        Evaluation scores of the target and non-target trials (the calibrator's input).
    estimator : fitted estimator or callable, optional
        The one-column calibrator (see :func:`calibration_map`); None: the identity.
    label : str, optional
        System name for the legend.
    ax : matplotlib Axes, optional
        Draw here; default a new figure.
    operating_points : sequence, default (0.01,)
        Priors or ``(P_target, C_miss, C_fa)`` of the minDCF points.
    n_points : int, default 512
        Scores at which the map is evaluated.
    log10_lr : bool, default False
        Draw the LLRs in log10 likelihood-ratio units (``llr / ln 10``, forensic practice):
        the vertical axis, and with ``estimator=None`` (the scores are LLRs) the horizontal
        one too.
    **line_kwargs
        Passed to ``ax.plot`` of the calibrator's map.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    data = calibration_map(
        tar, non, estimator=estimator, operating_points=operating_points, n_points=n_points
    )
    if log10_lr:
        data = _in_log10(data, estimator is None)
    x, llr = data["scores"], data["llr"]
    pav_llr = data["pav_llr"]
    keep = np.isfinite(pav_llr)  # blocks of one class (LLR -inf / +inf) are drawn as arrows
    pav_x = np.append(data["pav_lo"][keep], data["pav_hi"][keep][-1:])
    pav_y = np.append(pav_llr[keep], pav_llr[keep][-1:])
    finite = np.concatenate((llr[np.isfinite(llr)], pav_y))
    finite = np.append(finite, [m[1] for m in data["min_dcf"]] + [data["eer"][1]])
    finite = finite[np.isfinite(finite)]
    y_lo, y_hi = float(finite.min()), float(finite.max())
    pad = 0.08 * (y_hi - y_lo) if y_hi > y_lo else 1.0
    y_lo, y_hi = y_lo - pad, y_hi + pad
    ax = new_axes(ax)
    first = not has_gid(ax, "calibration-map")
    what = "identity (the LLRs)" if estimator is None else "calibrator"
    (line,) = ax.plot(x, llr, label=series_label(label, what), gid="calibration-map", **line_kwargs)
    color = line.get_color()
    ax.plot(
        pav_x,
        pav_y,
        color=color,
        linestyle="--",
        drawstyle="steps-post",
        linewidth=1.0,
        label=series_label(label, "PAV of the evaluation trials"),
        gid="calibration-pav",
    )
    _infinite_blocks(ax, data, keep, pav_y, color, label)
    threshold, y_eer, rate = data["eer"]
    if math.isfinite(threshold):
        ax.plot(
            [threshold],
            [float(np.clip(y_eer, y_lo, y_hi))],
            linestyle="none",
            marker="o",
            markerfacecolor="none",
            color=color,
            label=series_label(label, f"EER = {100 * rate:.2f} %"),
            gid="calibration-eer",
        )
    for (threshold, y_op, op), marker in zip(data["min_dcf"], ("s", "D", "^", "v")):
        where = describe_operating_point(*op)
        if not math.isfinite(threshold):  # rejecting every trial is optimal: no threshold
            continue
        ax.plot(
            [threshold],
            [y_op],
            linestyle="none",
            marker=marker,
            color=color,
            label=series_label(label, f"minDCF ({where})"),
            gid="calibration-min-dcf",
        )
        gid = f"calibration-bayes-{where}"
        if not has_gid(ax, gid):
            n_drawn = sum(str(a.get_gid()).startswith("calibration-bayes-") for a in ax.lines)
            ax.axhline(
                y_op,
                color="grey",
                linestyle=THRESHOLD_STYLES[n_drawn % len(THRESHOLD_STYLES)],
                linewidth=0.8,
                gid=gid,
                label=f"Bayes threshold ({where})",
            )
    if not first:
        old_lo, old_hi = ax.get_ylim()
        y_lo, y_hi = min(y_lo, old_lo), max(y_hi, old_hi)
        x_lo, x_hi = ax.get_xlim()
        ax.set_xlim(min(x_lo, x[0]), max(x_hi, x[-1]))
    else:
        ax.set_xlim(x[0], x[-1])
    ax.set_ylim(y_lo, y_hi)
    unit = "log10 LR" if log10_lr else "LLR"
    ax.set_xlabel(f"{unit} in" + ("" if log10_lr else " (nats)") if estimator is None else "score")
    ax.set_ylabel(f"{unit} out" + ("" if log10_lr else " (nats)"))
    ax.grid(True, linewidth=0.5, alpha=0.6)
    place_legend(ax, inside="upper left", extra=_COUNT_KEYS.get(ax, ()))
    return ax


def _in_log10(data, scores_are_llrs: bool) -> dict:
    """:func:`calibration_map` data with its LLRs (and, when the scores are LLRs, its scores)
    divided by ``ln 10``.
    """
    s = 1.0 / math.log(10.0)
    x = s if scores_are_llrs else 1.0
    threshold, y_eer, rate = data["eer"]
    return dict(
        data,
        scores=data["scores"] * x,
        llr=data["llr"] * s,
        pav_lo=data["pav_lo"] * x,
        pav_hi=data["pav_hi"] * x,
        pav_llr=data["pav_llr"] * s,
        eer=(threshold * x, y_eer * s, rate),
        min_dcf=[(t * x, y * s, op) for t, y, op in data["min_dcf"]],
    )


def _infinite_blocks(ax, data, keep, pav_y, color, label):
    """PAV blocks of LLR -inf (lowest, only non-targets) or +inf (highest, only targets): an
    arrow from the neighbouring finite block's level off the bottom / top of the plot, at the
    block's lowest score, and a legend entry saying so.
    """
    from matplotlib.transforms import blended_transform_factory

    ends = []
    if not keep[0] and pav_y.size:
        ends.append((float(data["pav_lo"][keep][0]), float(pav_y[0]), 0.0, "-inf"))
    if not keep[-1] and pav_y.size:
        ends.append((float(data["pav_lo"][~keep][-1]), float(pav_y[-1]), 1.0, "+inf"))
    if keep.all() or not pav_y.size:
        return
    blend = blended_transform_factory(ax.transData, ax.transAxes)
    for x, y, edge, _ in ends:
        ax.annotate(
            "",
            xy=(x, edge),
            xycoords=blend,
            xytext=(x, y),
            textcoords="data",
            arrowprops={"arrowstyle": "->", "color": color, "linestyle": "--", "linewidth": 1.0},
            annotation_clip=False,
            gid="calibration-pav-infinite",
        )
    ax.plot(
        [],
        [],
        color=color,
        marker=r"$\updownarrow$",
        linestyle="none",
        label=series_label(label, "PAV LLR " + " / ".join(e[3] for e in ends)),
        gid="calibration-pav-infinite-key",
    )


_STRATEGIES = ("uniform", "quantile")
_COUNT_KEYS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # the bars' legend entries


def reliability(tar, non=None, p_target=0.5, n_bins: int = 10, strategy: str = "uniform"):
    """The data of a reliability diagram of natural-log LLRs at target prior ``p_target``.

    Each trial's posterior is ``P(target | llr) = sigmoid(llr + logit p)`` (Bayes' rule, thesis
    eq. 8.17). The trials are binned by posterior; in each bin, with every trial weighted by its
    class's prior over its count (``p / N_tar`` or ``(1 - p) / N_non``, thesis eq. 7.40, so the
    class proportions of the data do not matter), the mean posterior is set against the
    observed posterior ``p t_b / N_tar / (p t_b / N_tar + (1 - p) n_b / N_non)`` of its ``t_b``
    target and ``n_b`` non-target trials. Calibrated LLRs lie on the diagonal.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / RocHull as ``tar`` alone
        Natural-log LLRs of the target and non-target trials.
    p_target : float in (0, 1), default 0.5
        The prior.
    n_bins : int, default 10
        Number of bins.
    strategy : {"uniform", "quantile"}, default "uniform"
        Bins of equal width in the posterior, or holding equal prior-weighted mass.

    Returns
    -------
    dict
        ``edges`` (the posterior bin edges), ``predicted`` and ``observed`` (per bin; NaN for an
        empty bin), ``n_tar`` and ``n_non`` (trials per bin), ``p_target``.
    """
    p = check_probability(p_target)
    k = check_int(n_bins, "n_bins", 1)
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy must be one of {_STRATEGIES}, got {strategy!r}")
    trials = binary_scores(tar, non).trials
    t, n = trials.tar, trials.non
    plo = float(logit(p))
    post_t, post_n = expit(t + plo), expit(n + plo)
    w_t, w_n = p / t.size, (1.0 - p) / n.size
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, k + 1)
    else:  # prior-weighted quantiles of the posteriors (sorted: the trials are)
        post = np.concatenate((post_t, post_n))
        order = np.argsort(post, kind="stable")
        mass = np.cumsum(np.where(order < t.size, w_t, w_n))
        cuts = np.searchsorted(mass, np.linspace(0, 1, k + 1)[1:-1] * mass[-1])
        edges = np.unique(np.concatenate(([0.0], post[order][cuts], [1.0])))
    b_t = np.clip(np.searchsorted(edges, post_t, side="right") - 1, 0, edges.size - 2)
    b_n = np.clip(np.searchsorted(edges, post_n, side="right") - 1, 0, edges.size - 2)
    nb = edges.size - 1
    n_tar = np.bincount(b_t, minlength=nb)
    n_non = np.bincount(b_n, minlength=nb)
    mass_t, mass_n = w_t * n_tar, w_n * n_non
    total = mass_t + mass_n
    with np.errstate(invalid="ignore", divide="ignore"):
        predicted = (
            w_t * np.bincount(b_t, post_t, minlength=nb) + w_n * np.bincount(b_n, post_n, nb)
        ) / total
        observed = mass_t / total
    return {
        "edges": edges,
        "predicted": predicted,
        "observed": observed,
        "n_tar": n_tar,
        "n_non": n_non,
        "p_target": p,
    }


def reliability_plot(
    tar,
    non=None,
    *,
    p_target=0.5,
    n_bins: int = 10,
    strategy: str = "uniform",
    label=None,
    ax=None,
    counts: bool = True,
    **line_kwargs,
):
    """Reliability diagram: mean posterior against observed posterior per bin, with counts.

    See :func:`reliability` for the binning and the prior weighting. The dotted diagonal is
    perfect calibration; points above it are under-confident for the target class, below it
    over-confident. With ``counts``, bars on a right-hand axis give the trials in each bin
    (non-targets grey, targets in the system's colour on top), scaled so that they stay in the
    lower third of the plot.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / RocHull as ``tar`` alone
        Natural-log LLRs of the target and non-target trials.
    p_target : float in (0, 1), default 0.5
        The prior of the posteriors.
    n_bins : int, default 10
        Number of posterior bins.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width bins or bins of equal prior-weighted mass.
    label : str, optional
        System name for the legend.
    ax : matplotlib Axes, optional
        Draw here; default a new figure.
    counts : bool, default True
        Draw the trial counts per bin (the first system's only, on a right-hand axis).
    **line_kwargs
        Passed to ``ax.plot`` of the reliability curve.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    data = reliability(tar, non, p_target=p_target, n_bins=n_bins, strategy=strategy)
    ax = new_axes(ax)
    first = not has_gid(ax, "reliability")
    shown = np.isfinite(data["predicted"])
    kwargs = {"marker": "o", "markersize": 4, **line_kwargs}
    (line,) = ax.plot(
        data["predicted"][shown],
        data["observed"][shown],
        label=series_label(label, f"posteriors at P_tar = {data['p_target']:g}"),
        gid="reliability",
        **kwargs,
    )
    if first:
        ax.plot(
            [0, 1],
            [0, 1],
            color="black",
            linestyle=":",
            linewidth=1.0,
            label="perfect calibration",
            gid="reliability-diagonal",
        )
        if counts:
            bars = ax.twinx()
            edges = data["edges"]
            widths = 0.9 * np.diff(edges)
            left = edges[:-1] + 0.05 * np.diff(edges)
            bars.bar(
                left,
                data["n_non"],
                widths,
                align="edge",
                color="0.8",
                zorder=0,
                label="non-target trials (right axis)",
                gid="reliability-count-non",
            )
            bars.bar(
                left,
                data["n_tar"],
                widths,
                bottom=data["n_non"],
                align="edge",
                color=line.get_color(),
                alpha=0.45,
                zorder=0,
                label="target trials (right axis)",
                gid="reliability-count-tar",
            )
            total = data["n_non"] + data["n_tar"]
            top = float(max(total.max(), 1))
            if top > 20 * max(float(total[total > 0].min()), 1.0):  # skewed: log counts
                bars.set_yscale("log")
                bars.set_ylim(0.8, top**3)  # the bars in the lower third
                ticks = 10.0 ** np.arange(0, math.floor(math.log10(top)) + 1)
                bars.set_yticks(ticks, [f"{t:g}" for t in ticks])
                bars.set_yticks([], minor=True)
                bars.set_ylabel("trials (log)")
            else:
                bars.set_ylim(0, 3.0 * top)
                bars.set_ylabel("trials")
            ax.set_zorder(bars.get_zorder() + 1)  # the curves over the bars
            ax.patch.set_visible(False)
            _COUNT_KEYS[ax] = [
                (Patch(color="0.8"), "non-target trials (right axis)"),
                (Patch(color=line.get_color(), alpha=0.45), "target trials (right axis)"),
            ]
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel(f"mean posterior P(target | LLR), P_tar = {data['p_target']:g}")
    ax.set_ylabel("observed posterior")
    ax.grid(True, linewidth=0.5, alpha=0.6)
    place_legend(ax, inside="upper left", extra=_COUNT_KEYS.get(ax, ()))
    return ax

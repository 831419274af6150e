"""Bayes error-rate plots of natural-log LLRs against the prior log-odds: normalized DCF and ECE.

Takes ``(tar, non)`` or a :class:`focal.metrics.BinaryScores` (thesis secs. 7.6 and 7.7.4); the
ECE curve evaluates the cross-entropy of :func:`focal.metrics.cross_entropy` at each prior on
the once-validated LLRs.

Curve data come from :mod:`focal.metrics`; this module only draws them. Each artist carries a
``gid`` so that programs and tests can find it.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import math

import numpy as np

from ..core.priors import prior_entropy, sigmoid
from ..core.scoring import cross_entropy_nats
from ..metrics.binary import bayes_error_rates
from ._axes import (
    LOG2,
    binary_scores,
    describe_operating_point,
    first_line,
    has_gid,
    new_axes,
    prior_log_odds_grid,
    series_label,
    widen_xlim,
)
from ._axes import (
    operating_point as _parse_operating_point,
)
from ._legend import place_legend

__all__ = ["nbe_plot", "ece_plot"]

_FEW_ERRORS = 30  # Doddington's rule of 30 (thesis appendix B)


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


def nbe_plot(
    tar,
    non=None,
    *,
    label=None,
    ax=None,
    prior_log_odds=None,
    n_points: int = 401,
    components: bool = False,
    dr30: bool = True,
    operating_point=None,
    operating_points=None,
    ylim=None,
    **line_kwargs,
):
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
    ops += [
        _parse_operating_point(o, f"operating_points[{i}]")
        for i, o in enumerate(operating_points or ())
    ]
    h = prior_log_odds_grid(prior_log_odds, (-7.0, 2.0), n_points, extra=[o[3] for o in ops])
    rates = bayes_error_rates(binary_scores(tar, non), prior_log_odds=h)
    ax = new_axes(ax)
    first = not has_gid(ax, "nbe-actual")
    act = rates.actual_normalized
    _, color = first_line(ax, h, act, series_label(label, "actDCF"), "nbe-actual", line_kwargs)
    mn = rates.minimum_normalized
    ax.plot(
        h, mn, color=color, linestyle="--", label=series_label(label, "minDCF"), gid="nbe-minimum"
    )
    if components:
        p, q = sigmoid(h), sigmoid(-h)
        ax.plot(
            h,
            p * rates.actual_p_miss / rates.default,
            color=color,
            linestyle=":",
            linewidth=1.0,
            label=series_label(label, "P_miss"),
            gid="nbe-pmiss",
        )
        ax.plot(
            h,
            q * rates.actual_p_fa / rates.default,
            color=color,
            linestyle="-.",
            linewidth=1.0,
            label=series_label(label, "normalized P_fa"),
            gid="nbe-pfa",
        )
    if dr30:
        fa, miss = _dr30_points(h, rates)
        for i, gid, text in (
            (fa, "nbe-dr30-fa", "DR30: < 30 false alarms to the left"),
            (miss, "nbe-dr30-miss", "DR30: < 30 misses to the right"),
        ):
            if i is None:
                continue
            ax.plot(
                [h[i]],
                [mn[i]],
                linestyle="none",
                marker="o",
                markersize=7,
                color=color,
                markerfacecolor="white",
                zorder=3,
                gid=gid,
                label=None if has_gid(ax, gid) else text,
            )
    for pt, cm, cf, h_op in ops:
        drawn = [
            a
            for a in ax.lines
            if a.get_gid() == "nbe-operating-point" and np.array_equal(a.get_xdata(), [h_op, h_op])
        ]
        if not drawn:
            ax.axvline(
                h_op,
                color="magenta",
                linestyle="--",
                linewidth=1.0,
                gid="nbe-operating-point",
                label=describe_operating_point(pt, cm, cf),
            )
    if ylim is None:
        finite = act[np.isfinite(act)]
        top = max(1.2, min(1.05 * float(finite.max()) if finite.size else 1.2, 3.0))
        if not first:
            top = max(top, ax.get_ylim()[1])
        ylim = (0.0, top)
    ax.set_ylim(*ylim)
    widen_xlim(ax, first, h)
    if first:
        ax.axhline(1.0, color="gray", linewidth=0.8, gid="nbe-default")
    ax.set_xlabel("prior log-odds  logit P_tar")
    ax.set_ylabel("normalized DCF")
    ax.grid(True, linewidth=0.5, alpha=0.6)
    place_legend(ax, inside="best")
    return ax


def ece_plot(
    tar,
    non=None,
    *,
    label=None,
    ax=None,
    prior_log_odds=None,
    n_points: int = 101,
    log10_odds: bool = False,
    **line_kwargs,
):
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
    _, color = first_line(ax, x, actual, series_label(label, "LLRs"), "ece-actual", line_kwargs)
    ax.plot(
        x,
        after_pav,
        color=color,
        linestyle="--",
        label=series_label(label, "after PAV"),
        gid="ece-pav",
    )
    if not has_gid(ax, "ece-default"):
        ax.plot(
            x,
            [prior_entropy(p) for p in priors],
            color="black",
            linestyle=":",
            linewidth=1.0,
            label="default (LLR = 0)",
            gid="ece-default",
        )
    ax.set_xlabel("prior log10-odds" if log10_odds else "prior log-odds  logit P_tar")
    ax.set_ylabel("empirical cross-entropy (bits)")
    ax.set_ylim(bottom=0)
    ax.grid(True, linewidth=0.5, alpha=0.6)
    place_legend(ax, inside="upper left")
    return ax

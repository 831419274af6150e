"""Display objects in scikit-learn's style: the curve data of a plot, and the Axes it is drawn on.

Like :class:`sklearn.metrics.DetCurveDisplay`, each Display is built from data with a class
method (``from_scores(tar, non)`` or ``from_labels(scores, labels)``), holds the curve data as
attributes, draws itself with :meth:`plot` and keeps ``ax_``, ``figure_`` and ``line_`` (the main
curve). Drawing is done by the plotting functions (:func:`focal.plots.det_plot` ...), which stay the
functional interface; the curve data come from :mod:`focal.metrics` (one sort and one PAV per
system, shared by the data and the drawing).

>>> import numpy as np
>>> from focal.plots import DETDisplay
>>> rng = np.random.default_rng(0)
>>> tar, non = rng.normal(2.0, 1.0, 300), rng.normal(-2.0, 1.0, 3000)
>>> disp = DETDisplay.from_scores(tar, non, name="sys1", operating_points=[0.01])
>>> round(disp.eer, 3), disp.p_fa.shape == disp.p_miss.shape          # the data
(0.023, True)
>>> tar2, non2 = rng.normal(1.0, 1.0, 300), rng.normal(-1.0, 1.0, 3000)
>>> disp2 = DETDisplay.from_scores(tar2, non2, name="sys2", ax=disp.ax_)  # a second system
>>> disp2.ax_ is disp.ax_
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..metrics import (
    BinaryScores,
    bayes_error_rates,
    calibration_report,
    det_curve,
    eer,
    from_labels,
)
from ._axes import binary_scores, prior_log_odds_grid
from .ape import APE_SCALE, _ape_window, ape_plot
from .bayes_error import ece_plot, nbe_plot
from .calibration import calibration_map, calibration_map_plot, reliability, reliability_plot
from .det import det_plot
from .histogram import score_histogram, score_histogram_plot
from .tippett import tippett_plot

__all__ = [
    "DETDisplay",
    "APEDisplay",
    "NBEDisplay",
    "ECEDisplay",
    "TippettDisplay",
    "ScoreHistogramDisplay",
    "CalibrationMapDisplay",
    "ReliabilityDisplay",
]


class _ScoresDisplay:
    """Shared by the binary Displays: construction from scores or labels, and ``plot``."""

    _plot: Callable[..., Any] | None = None  # the plotting function
    _main_gid: str | None = None  # gid of the main curve it draws

    def __init__(self, scores: BinaryScores, *, name=None, plot_kwargs=None):
        self.scores = scores
        self.name = name
        self.plot_kwargs = dict(plot_kwargs or {})

    @classmethod
    def from_scores(cls, tar, non=None, *, name=None, ax=None, **kwargs):
        """Compute the curve data of ``(tar, non)`` (or a BinaryScores) and plot them.

        ``kwargs`` are the options of the plotting function (e.g. ``operating_points`` of
        :func:`focal.plots.det_plot`) and line properties.
        """
        return cls(binary_scores(tar, non), name=name, plot_kwargs=kwargs).plot(ax=ax)

    @classmethod
    def from_labels(cls, scores, labels, *, name=None, ax=None, **kwargs):
        """As :meth:`from_scores`, from ``(scores, labels)`` (1 / True = target)."""
        return cls.from_scores(*from_labels(scores, labels), name=name, ax=ax, **kwargs)

    def plot(self, ax=None, *, name=None, **kwargs):
        """Draw on ``ax`` (default a new figure); ``kwargs`` override the stored options.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Axes to draw on (default: a new figure's).
        name : str, optional
            Legend label, instead of the stored one.
        **kwargs
            Options of the plotting function, overriding the stored ones.

        Returns
        -------
        self
            The Display, with ``ax_``, ``figure_`` and ``line_`` set.
        """
        options = {**self.plot_kwargs, **kwargs}
        label = self.name if name is None else name
        ax = type(self)._plot(self.scores, label=label, ax=ax, **options)
        self.ax_ = ax
        self.figure_ = ax.figure
        self.line_ = [ln for ln in ax.lines if ln.get_gid() == self._main_gid][-1]
        return self


class DETDisplay(_ScoresDisplay):
    """DET curve (thesis sec. 7.3.4-7.3.7), drawn by :func:`focal.plots.det_plot`.

    Parameters
    ----------
    scores : focal.metrics.BinaryScores
        The validated, sorted trials (use :meth:`from_scores` or :meth:`from_labels`).
    name : str, optional
        Legend label of the curves.
    plot_kwargs : dict, optional
        Options of the plotting function, used by :meth:`plot`.

    Attributes
    ----------
    p_fa, p_miss, thresholds : ndarray
        The steppy empirical DET points (fractions) and their score thresholds.
    hull_p_fa, hull_p_miss : ndarray
        The ROC convex hull's vertices. (``pfa``, ``pmiss``, ``hull_pfa``, ``hull_pmiss``:
        deprecated names.)
    eer : float
        ROCCH-EER.
    ax_, figure_, line_ :
        Set by :meth:`plot`.
    """

    _plot = staticmethod(det_plot)
    _main_gid = "det"

    def __init__(self, scores, *, name=None, plot_kwargs=None):
        super().__init__(scores, name=name, plot_kwargs=plot_kwargs)
        det = det_curve(scores)
        self.p_fa, self.p_miss, self.thresholds = det.p_fa, det.p_miss, det.thresholds
        self.hull_p_fa, self.hull_p_miss = scores.hull.p_fa, scores.hull.p_miss
        self.eer = eer(scores)


class APEDisplay(_ScoresDisplay):
    """Applied-probability-of-error curves (thesis sec. 7.7.4), drawn by
    :func:`focal.plots.ape_plot`.

    Parameters
    ----------
    scores : focal.metrics.BinaryScores
        The validated, sorted trials (use :meth:`from_scores` or :meth:`from_labels`).
    name : str, optional
        Legend label of the curves.
    plot_kwargs : dict, optional
        Options of the plotting function, used by :meth:`plot`.

    Attributes
    ----------
    prior_log_odds : ndarray
        The h grid of the curves.
    actual, minimum : ndarray
        ``E_err(h) / (2 ln 2)``: the areas under them are Cllr and minCllr in bits.
    cllr, min_cllr, eer : float
    """

    _plot = staticmethod(ape_plot)
    _main_gid = "ape-actual"

    def __init__(self, scores, *, name=None, plot_kwargs=None):
        super().__init__(scores, name=name, plot_kwargs=plot_kwargs)
        kw = self.plot_kwargs
        h = prior_log_odds_grid(
            kw.get("prior_log_odds"), _ape_window(scores), kw.get("n_points", 2001)
        )
        rates = bayes_error_rates(scores, prior_log_odds=h)
        report = calibration_report(scores, operating_points=())
        self.prior_log_odds = h
        self.actual, self.minimum = APE_SCALE * rates.actual, APE_SCALE * rates.minimum
        self.cllr, self.min_cllr, self.eer = report.cllr, report.min_cllr, report.eer


class NBEDisplay(_ScoresDisplay):
    """Normalized Bayes error-rate curves (thesis sec. 7.6), drawn by :func:`focal.plots.nbe_plot`.

    Parameters
    ----------
    scores : focal.metrics.BinaryScores
        The validated, sorted trials (use :meth:`from_scores` or :meth:`from_labels`).
    name : str, optional
        Legend label of the curves.
    plot_kwargs : dict, optional
        Options of the plotting function, used by :meth:`plot`.

    Attributes
    ----------
    prior_log_odds : ndarray
    actual, minimum : ndarray
        Normalized actual and minimum DCF at each effective prior log-odds.
    """

    _plot = staticmethod(nbe_plot)
    _main_gid = "nbe-actual"

    def __init__(self, scores, *, name=None, plot_kwargs=None):
        super().__init__(scores, name=name, plot_kwargs=plot_kwargs)
        kw = self.plot_kwargs
        op = kw.get("operating_point")
        from ._axes import operating_point

        extra = () if op is None else (operating_point(op)[3],)
        h = prior_log_odds_grid(
            kw.get("prior_log_odds"), (-7.0, 2.0), kw.get("n_points", 401), extra=extra
        )
        rates = bayes_error_rates(scores, prior_log_odds=h)
        self.prior_log_odds = h
        self.actual, self.minimum = rates.actual_normalized, rates.minimum_normalized


class ECEDisplay(_ScoresDisplay):
    """Empirical cross-entropy curves, drawn by :func:`focal.plots.ece_plot`; after
    :meth:`plot` the data of the drawn curves are ``prior_log_odds``, ``actual`` (the LLRs) and
    ``minimum`` (after PAV), in bits.

    Parameters
    ----------
    scores : focal.metrics.BinaryScores
        The validated, sorted trials (use :meth:`from_scores` or :meth:`from_labels`).
    name : str, optional
        Legend label of the curves.
    plot_kwargs : dict, optional
        Options of the plotting function, used by :meth:`plot`.
    """

    _plot = staticmethod(ece_plot)
    _main_gid = "ece-actual"

    def plot(self, ax=None, *, name=None, **kwargs):
        """Draw on ``ax`` and keep the drawn curves' data.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Axes to draw on (default: a new figure's).
        name : str, optional
            Legend label, instead of the stored one.
        **kwargs
            Options of :func:`focal.plots.ece_plot`, overriding the stored ones.

        Returns
        -------
        ECEDisplay
            ``self``, with ``ax_``, ``figure_``, ``line_`` and the curve data set.
        """
        super().plot(ax=ax, name=name, **kwargs)
        own = [ln for ln in self.ax_.lines if ln.get_color() == self.line_.get_color()]
        self.prior_log_odds = np.asarray(self.line_.get_xdata())
        self.actual = np.asarray(self.line_.get_ydata())
        minimum = [ln for ln in own if ln.get_gid() == "ece-pav"]
        self.minimum = np.asarray(minimum[-1].get_ydata()) if minimum else None
        return self


class TippettDisplay(_ScoresDisplay):
    """Tippett plot, drawn by :func:`focal.plots.tippett_plot`.

    Parameters
    ----------
    scores : focal.metrics.BinaryScores
        The validated, sorted trials (use :meth:`from_scores` or :meth:`from_labels`).
    name : str, optional
        Legend label of the curves.
    plot_kwargs : dict, optional
        Options of the plotting function, used by :meth:`plot`.

    Attributes
    ----------
    tar, non : ndarray
        The sorted target and non-target LLRs whose survival curves are drawn.
    """

    _plot = staticmethod(tippett_plot)
    _main_gid = "tippett-target"

    def __init__(self, scores, *, name=None, plot_kwargs=None):
        super().__init__(scores, name=name, plot_kwargs=plot_kwargs)
        self.tar, self.non = scores.trials.tar, scores.trials.non


class ScoreHistogramDisplay(_ScoresDisplay):
    """Histograms of the target and non-target scores, drawn by
    :func:`focal.plots.score_histogram_plot` (shared bins; densities or counts; optional
    threshold lines).

    Parameters
    ----------
    scores : focal.metrics.BinaryScores
        The validated, sorted trials (use :meth:`from_scores` or :meth:`from_labels`).
    name : str, optional
        Legend label of the histograms.
    plot_kwargs : dict, optional
        Options of the plotting function (``bins``, ``density``, ``thresholds``,
        ``operating_points``, ``log10_lr``), used by :meth:`plot`.

    Attributes
    ----------
    edges : ndarray
        The bin edges (score units).
    tar_hist, non_hist : ndarray
        Densities (or counts, with ``density=False``) of each class per bin.
    ax_, figure_, line_ :
        Set by :meth:`plot`; ``line_`` is the targets' histogram (a ``StepPatch``).

    Examples
    --------
    >>> import numpy as np
    >>> from focal.plots import ScoreHistogramDisplay
    >>> rng = np.random.default_rng(0)
    >>> disp = ScoreHistogramDisplay.from_scores(
    ...     rng.normal(2, 1, 300), rng.normal(-2, 1, 900), name="sys", bins=20,
    ...     operating_points=[0.01])
    >>> disp.edges.shape, disp.tar_hist.shape
    ((21,), (20,))
    """

    _plot = staticmethod(score_histogram_plot)
    _main_gid = "hist-target"

    def __init__(self, scores, *, name=None, plot_kwargs=None):
        super().__init__(scores, name=name, plot_kwargs=plot_kwargs)
        kw = self.plot_kwargs
        self.edges, self.tar_hist, self.non_hist, _ = score_histogram(
            scores, bins=kw.get("bins", "auto"), density=kw.get("density", True)
        )

    def plot(self, ax=None, *, name=None, **kwargs):
        """Draw on ``ax`` (default a new figure); ``kwargs`` override the stored options.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Axes to draw on (default: a new figure's).
        name : str, optional
            Legend label, instead of the stored one.
        **kwargs
            Options of :func:`focal.plots.score_histogram_plot`, overriding the stored ones.

        Returns
        -------
        ScoreHistogramDisplay
            ``self``, with ``ax_``, ``figure_`` and ``line_`` set.
        """
        options = {**self.plot_kwargs, **kwargs}
        ax = score_histogram_plot(
            self.scores, label=self.name if name is None else name, ax=ax, **options
        )
        self.ax_, self.figure_ = ax, ax.figure
        self.line_ = [p for p in ax.patches if p.get_gid() == self._main_gid][-1]
        return self


class CalibrationMapDisplay:
    """A calibrator's score -> LLR map over the PAV map of evaluation trials, with the
    ROCCH-EER and minDCF thresholds, drawn by :func:`focal.plots.calibration_map_plot`.

    Parameters
    ----------
    scores : focal.metrics.BinaryScores
        The evaluation trials (the calibrator's input scores; LLRs without an estimator).
    estimator : fitted estimator or callable, optional
        The one-column calibrator; None: the scores are LLRs (the identity map).
    name : str, optional
        Legend label.
    plot_kwargs : dict, optional
        Options of the plotting function (``operating_points``, ``n_points``).

    Attributes
    ----------
    scores_grid, llr : ndarray
        The calibrator's map (named ``scores_grid``: the ``scores`` attribute holds the trials).
    pav_lo, pav_hi, pav_llr : ndarray
        The PAV blocks of the evaluation trials.
    eer : (float, float, float)
        Score threshold, LLR and rate of the ROCCH-EER point.
    min_dcf : list of (float, float, tuple)
        Score threshold and Bayes threshold LLR of each minimum DCF, with its operating point.
    ax_, figure_, line_ :
        Set by :meth:`plot`.

    Examples
    --------
    >>> import numpy as np
    >>> from focal import LinearCalibrator
    >>> from focal.plots import CalibrationMapDisplay
    >>> rng = np.random.default_rng(0)
    >>> x = np.r_[rng.normal(1, 1, 200), rng.normal(-1, 1, 600)]
    >>> y = np.r_[np.ones(200), np.zeros(600)]
    >>> cal = LinearCalibrator().fit(x, y)
    >>> disp = CalibrationMapDisplay.from_estimator(cal, x, y, name="linear")
    >>> disp.llr.shape == disp.scores_grid.shape
    True
    """

    def __init__(self, scores, *, estimator=None, name=None, plot_kwargs=None):
        self.scores = scores
        self.estimator = estimator
        self.name = name
        self.plot_kwargs = dict(plot_kwargs or {})
        kw = self.plot_kwargs
        data = calibration_map(
            scores,
            estimator=estimator,
            operating_points=kw.get("operating_points", (0.01,)),
            n_points=kw.get("n_points", 512),
        )
        self.scores_grid, self.llr = data["scores"], data["llr"]
        self.pav_lo, self.pav_hi, self.pav_llr = data["pav_lo"], data["pav_hi"], data["pav_llr"]
        self.eer, self.min_dcf = data["eer"], data["min_dcf"]

    @classmethod
    def from_estimator(cls, estimator, X, y, *, pos_label=None, name=None, ax=None, **kwargs):
        """The map of a fitted one-column calibrator on evaluation scores ``X`` and labels ``y``.

        Parameters
        ----------
        estimator : fitted estimator or callable
            The calibrator (``decision_function`` of one column of scores).
        X : array_like of shape (n_trials,) or (n_trials, 1)
            Evaluation scores (the calibrator's input).
        y : array_like of shape (n_trials,)
            Labels: 1 / True for targets, or any two with ``pos_label``.
        pos_label : scalar, optional
            The target label.
        name : str, optional
            Legend label.
        ax : matplotlib Axes, optional
            Axes to draw on.
        **kwargs
            Options of :func:`focal.plots.calibration_map_plot`.

        Returns
        -------
        CalibrationMapDisplay
            Plotted.
        """
        x = np.asarray(X, dtype=float)
        if x.ndim == 2 and x.shape[1] == 1:
            x = x[:, 0]
        tar, non = from_labels(x, y, pos_label=pos_label)
        return cls.from_scores(tar, non, estimator=estimator, name=name, ax=ax, **kwargs)

    @classmethod
    def from_scores(cls, tar, non=None, *, estimator=None, name=None, ax=None, **kwargs):
        """The map on the evaluation scores ``(tar, non)`` (or a BinaryScores).

        Parameters
        ----------
        tar, non : array_like, or a BinaryScores as ``tar`` alone
            Evaluation scores of the target and non-target trials.
        estimator : fitted estimator or callable, optional
            The calibrator; None: the scores are LLRs.
        name : str, optional
            Legend label.
        ax : matplotlib Axes, optional
            Axes to draw on.
        **kwargs
            Options of :func:`focal.plots.calibration_map_plot`.

        Returns
        -------
        CalibrationMapDisplay
            Plotted.
        """
        scores = binary_scores(tar, non)
        return cls(scores, estimator=estimator, name=name, plot_kwargs=kwargs).plot(ax=ax)

    def plot(self, ax=None, *, name=None, **kwargs):
        """Draw on ``ax`` (default a new figure); ``kwargs`` override the stored options.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Axes to draw on (default: a new figure's).
        name : str, optional
            Legend label, instead of the stored one.
        **kwargs
            Options of :func:`focal.plots.calibration_map_plot`.

        Returns
        -------
        CalibrationMapDisplay
            ``self``, with ``ax_``, ``figure_`` and ``line_`` set.
        """
        options = {**self.plot_kwargs, **kwargs}
        ax = calibration_map_plot(
            self.scores,
            estimator=self.estimator,
            label=self.name if name is None else name,
            ax=ax,
            **options,
        )
        self.ax_, self.figure_ = ax, ax.figure
        self.line_ = [ln for ln in ax.lines if ln.get_gid() == "calibration-map"][-1]
        return self


class ReliabilityDisplay(_ScoresDisplay):
    """Reliability diagram of natural-log LLRs at a prior, with the trials per bin, drawn by
    :func:`focal.plots.reliability_plot`.

    Parameters
    ----------
    scores : focal.metrics.BinaryScores
        The validated, sorted LLRs (use :meth:`from_scores` or :meth:`from_labels`).
    name : str, optional
        Legend label.
    plot_kwargs : dict, optional
        Options of the plotting function (``p_target``, ``n_bins``, ``strategy``, ``counts``).

    Attributes
    ----------
    edges : ndarray
        Posterior bin edges.
    predicted, observed : ndarray
        Mean and observed posterior of each bin, prior-weighted (NaN for an empty bin).
    n_tar, n_non : ndarray of int
        Trials of each class per bin.
    p_target : float
    ax_, figure_, line_ :
        Set by :meth:`plot`.

    Examples
    --------
    >>> import numpy as np
    >>> from focal.plots import ReliabilityDisplay
    >>> rng = np.random.default_rng(0)
    >>> disp = ReliabilityDisplay.from_scores(rng.normal(2, 2, 500), rng.normal(-2, 2, 500))
    >>> int(disp.n_tar.sum() + disp.n_non.sum())
    1000
    """

    _plot = staticmethod(reliability_plot)
    _main_gid = "reliability"

    def __init__(self, scores, *, name=None, plot_kwargs=None):
        super().__init__(scores, name=name, plot_kwargs=plot_kwargs)
        kw = self.plot_kwargs
        data = reliability(
            scores,
            p_target=kw.get("p_target", 0.5),
            n_bins=kw.get("n_bins", 10),
            strategy=kw.get("strategy", "uniform"),
        )
        self.edges, self.predicted, self.observed = (
            data["edges"],
            data["predicted"],
            data["observed"],
        )
        self.n_tar, self.n_non, self.p_target = data["n_tar"], data["n_non"], data["p_target"]

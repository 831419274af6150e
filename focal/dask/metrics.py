"""Binary measures of ``(scores, labels)`` held in dask collections, equal to focal.metrics'.

Each function is its :mod:`focal.metrics` namesake taking ``(scores, labels)`` (1-D dask arrays
or dask Series with lined-up partitions; NumPy arrays are accepted too) instead of ``(tar, non)``,
plus optional integer trial multiplicities ``sample_weight``. One pass over the data computes
the PAV block summary of the pooled scores and the sums the actual-decision measures need
(:mod:`focal.dask._summary`); the result is then read off the summary with the same code as
in memory, so counts, EER, PRBEP, AUC, minDCF and the PAV blocks are identical and Cllr equal to
rounding. For several measures of the same trials, call :func:`summarize` once and ask the
returned :class:`focal.metrics.SummarizedScores`.

Work runs on the active dask scheduler: open a ``dask.distributed.Client`` first to use a
cluster.

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
.. [2] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
   Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
"""

from __future__ import annotations

import numpy as np

from ..core.operating_point import OperatingPoint
from ..core.priors import bayes_threshold
from ..core.rocch import ROCCH
from ..core.validation import as_score_array, check_probability
from ..metrics.binary_scores import BayesErrorRates, DETCurve
from ..metrics.report import CalibrationReport, _operating_points, calibration_report_of
from ..metrics.summary import SummarizedScores
from ._summary import summarize_dask

__all__ = [
    "summarize",
    "cross_entropy",
    "cllr",
    "min_cllr",
    "dcf",
    "min_dcf",
    "eer",
    "rocch",
    "det_curve",
    "bayes_error_rates",
    "calibration_report",
    "pav_llr",
]


def summarize(
    scores,
    labels,
    sample_weight=None,
    *,
    p_targets=(),
    thresholds=(),
    keep_runs: bool = False,
    n_ranges=None,
) -> SummarizedScores:
    """Block summary and trial sums of trials held in dask collections, in one pass.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs (+/-inf allowed, NaN not).
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for target trials, 0 / False for non-targets; partitions lined up with
        ``scores`` (a dask array is rechunked to ``scores``' chunks).
    sample_weight : dask array or dask Series, optional
        Non-negative integer multiplicity of each trial (None: every trial counts once).
    p_targets : array_like
        Priors at which Cllr / cross-entropy will be asked for.
    thresholds : array_like
        Score thresholds at which actual error rates will be asked for (``dcf`` at prior ``p``
        uses ``-logit(p)``; ``bayes_error_rates`` at ``h`` uses ``-h``).
    keep_runs : bool, default False
        Keep the runs behind the steppy DET curve (their number can approach the number of
        trials).
    n_ranges : int, optional
        Score ranges of the shuffle (default: the number of partitions, at most 128; raise it
        when ``n_trials / n_ranges`` trials would not fit a worker). Cut at sampled quantiles;
        ties are never split, so a range may hold more than its share.

    Returns
    -------
    SummarizedScores
        The PAV block summary and the trial sums, from which every measure is read.
    """
    summary, sums = summarize_dask(
        scores,
        labels,
        sample_weight,
        p_targets=p_targets,
        thresholds=thresholds,
        keep_runs=keep_runs,
        n_ranges=n_ranges,
    )
    return SummarizedScores(summary, sums)


def _at_prior(scores, labels, sample_weight, p_target, measure, sums=True) -> float:
    """``measure`` (a method of :class:`focal.metrics.SummarizedScores`) at the prior
    ``p_target``, checked before the pass (``sums``: the pass also sums the trials' costs).
    """
    p = check_probability(p_target)
    summary = summarize(scores, labels, sample_weight, p_targets=[p] if sums else ())
    return getattr(summary, measure)(p)


def cross_entropy(scores, labels, p_target=0.5, sample_weight=None) -> float:
    """C_xe in bits (SWS plan eq. 38), as :func:`focal.metrics.cross_entropy`.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs, as in :func:`summarize`.
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.
    p_target : float, default 0.5
        Effective target prior weighting the two classes' mean costs (thesis eq. 7.40).

    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    float
        Bits; the prior entropy H(p_target) for an uninformative system (SWS plan eq. 39), 0 for
        a perfect one.
    """
    return _at_prior(scores, labels, sample_weight, p_target, "cross_entropy")


def cllr(scores, labels, p_target=0.5, sample_weight=None) -> float:
    """Cllr / C_nxe in bits per bit (thesis eq. 7.41, SWS plan eq. 40), as
    :func:`focal.metrics.cllr`.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs, as in :func:`summarize`.
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.
    p_target : float, default 0.5
        Effective target prior (0.5: the classical Cllr).

    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    float
        Bits per bit (1 = uninformative).
    """
    return _at_prior(scores, labels, sample_weight, p_target, "cllr")


def min_cllr(scores, labels, p_target=0.5, sample_weight=None) -> float:
    """Cllr after PAV in bits per bit (thesis 7.7.4), as :func:`focal.metrics.min_cllr`.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs, as in :func:`summarize`.
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.
    p_target : float, default 0.5
        Effective target prior.

    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    float
        Bits per bit, at most 1.
    """
    return _at_prior(scores, labels, sample_weight, p_target, "min_cllr", sums=False)


def dcf(
    scores, labels, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True, sample_weight=None
) -> float:
    """Actual DCF of Bayes decisions on LLRs (SWS plan eqs. 8-10), as :func:`focal.metrics.dcf`.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs, as in :func:`summarize`.
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).
    normalize : bool, default True
        Divide by the cost of the best fixed decision.

    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    float
        Normalized cost (dimensionless), or in units of the costs.
    """
    op = OperatingPoint(p_target, c_miss, c_fa)
    summary = summarize(scores, labels, sample_weight, thresholds=[op.bayes_threshold])
    return summary.dcf(op.p_target, op.c_miss, op.c_fa, normalize)


def min_dcf(
    scores, labels, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True, sample_weight=None
) -> float:
    """Minimum DCF over all thresholds (thesis eq. 7.21), as :func:`focal.metrics.min_dcf`.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs, as in :func:`summarize`.
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.
    p_target : float
        Target prior P_target in (0, 1).
    c_miss, c_fa : float, default 1.0
        Costs of a miss and of a false alarm (> 0).
    normalize : bool, default True
        Divide by the cost of the best fixed decision.

    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    float
        At most the actual DCF of the same trials, and at most 1 when normalized.
    """
    op = OperatingPoint(p_target, c_miss, c_fa)
    return summarize(scores, labels, sample_weight).min_dcf(
        op.p_target, op.c_miss, op.c_fa, normalize
    )


def eer(scores, labels, sample_weight=None) -> float:
    """ROCCH-EER (thesis 7.3.7), as :func:`focal.metrics.eer`.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs, as in :func:`summarize`.
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.

    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    float
        A fraction in [0, 0.5].
    """
    return summarize(scores, labels, sample_weight).eer


def rocch(scores, labels, sample_weight=None) -> ROCCH:
    """ROC convex hull of the trials (thesis 7.3.6), as :func:`focal.metrics.rocch`.

    ``scores``, ``labels`` and ``sample_weight`` are as in :func:`summarize`. Returns a
    :class:`focal.core.ROCCH` with the vertices, ``eer``, ``prbep``, ``auc``, ``min_dcf``,
    ``min_cllr`` and ``min_bayes_errors``, from the PAV blocks of all the trials.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs, as in :func:`summarize`.
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.
    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    focal.core.ROCCH
        The hull of all the trials.
    """
    return summarize(scores, labels, sample_weight).hull


def det_curve(scores, labels, convex_hull: bool = False, sample_weight=None) -> DETCurve:
    """DET points, steppy (thesis 7.3.4) or of the hull (7.3.6), as :func:`focal.metrics.det_curve`.

    The steppy curve keeps every run of one label, which can be as many points as trials; the
    hull (``convex_hull=True``) has only the PAV blocks.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs, as in :func:`summarize`.
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.
    convex_hull : bool, default False
        False: the empirical ROC's operating points; True: the ROCCH vertices.
    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    focal.metrics.DETCurve
        The operating points.
    """
    return summarize(scores, labels, sample_weight, keep_runs=not convex_hull).det_curve(
        convex_hull
    )


def bayes_error_rates(scores, labels, prior_log_odds, sample_weight=None) -> BayesErrorRates:
    """Actual and minimum Bayes error-rates at many prior log-odds (thesis 7.6.1), as
    :func:`focal.metrics.bayes_error_rates`.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs, as in :func:`summarize`.
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.
    prior_log_odds : array_like
        Values of h = logit(effective prior), in nats.
    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    focal.metrics.BayesErrorRates
        The actual and minimum error-rates at each ``h``.
    """
    h = as_score_array(np.atleast_1d(prior_log_odds), "prior_log_odds", allow_inf=True)
    return summarize(scores, labels, sample_weight, thresholds=-h).bayes_error_rates(h)


def calibration_report(
    scores,
    labels,
    operating_points=((0.01, 1.0, 1.0),),
    p_target=0.5,
    name: str = "",
    sample_weight=None,
) -> CalibrationReport:
    """Calibration analysis (Cllr, minCllr, EER, PRBEP, actual / minimum DCF) in one pass, as
    :func:`focal.metrics.calibration_report` of the same trials (thesis 7.3.7, 7.7.4; SWS plan
    eqs. 8-10).

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs, as in :func:`summarize`.
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.
    operating_points : sequence of (p_target, c_miss, c_fa)
        The applications at which actual and minimum DCF are reported.
    p_target : float, default 0.5
        Prior of Cllr / minCllr (0.5: the classical Cllr).
    name : str, default ""
        Name of the system, shown in the report.
    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    focal.metrics.CalibrationReport
        The report, equal to that of :func:`focal.metrics.calibration_report`.
    """
    p = check_probability(p_target)
    points = _operating_points(operating_points)
    thresholds = [bayes_threshold(*point) for point in points]
    scores = summarize(scores, labels, sample_weight, p_targets=[p], thresholds=thresholds)
    return calibration_report_of(scores, points, p, name)


def pav_llr(scores, labels, sample_weight=None):
    """PAV log-likelihood-ratio (natural log) of every trial, as :func:`focal.metrics.pav_llr`.

    The PAV blocks are computed now (one pass); the result is a lazy dask array shaped like
    ``scores`` (a dask array), each partition mapped through the blocks' score ranges
    (:func:`focal.core.pav.step_index`): tied scores get the same LLR, and ``cllr`` of the
    result equals :func:`min_cllr`.

    Parameters
    ----------
    scores : dask array, shape (n_trials,)
        Scores or natural-log LLRs (a dask array: the result has its chunks).
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for targets, 0 / False for non-targets, as in :func:`summarize`.
    sample_weight : dask array or dask Series, optional
        Integer trial multiplicities, as in :func:`summarize`.

    Returns
    -------
    dask array, shape (n_trials,)
        The PAV LLR of each trial in nats, lazily computed.
    """
    from ..core.maps import step_index
    from ._partitions import _is_dask

    if not (_is_dask(scores) and hasattr(scores, "map_blocks")):
        raise ValueError("pav_llr needs scores as a dask array (the result has its chunks)")
    pav = summarize(scores, labels, sample_weight).summary.to_pav()
    lo, llr = pav.score_lo, pav.llr
    return scores.map_blocks(lambda b: llr[step_index(lo, b)], dtype=float)

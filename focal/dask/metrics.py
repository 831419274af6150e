"""Binary measures of ``(scores, labels)`` held in dask collections: one pass, then
:mod:`focal.metrics`.

:func:`summarize` computes, in one pass over the data, the PAV block summary of the pooled
scores and the trial sums the measures of actual decisions need (:mod:`focal.dask._summary`),
and returns them as a :class:`focal.metrics.SummarizedScores`. Every binary measure of
:mod:`focal.metrics` takes it in place of ``(tar, non)``, so there is one definition of each::

    from focal import bayes_threshold
    from focal.metrics import cllr, dcf, eer, min_dcf
    s = focal.dask.summarize(scores, labels, thresholds=[bayes_threshold(0.01)])
    eer(s), min_dcf(s, p_target=0.01), cllr(s), dcf(s, p_target=0.01)

The values are those of the in-memory trials: counts, EER, PRBEP, AUC, minDCF and the PAV blocks
exactly (the same code on the same blocks), Cllr to rounding. :func:`calibration_report` is that
pass with the sums the report needs, then :func:`focal.metrics.calibration_report`;
:func:`pav_llr` maps a dask array through the blocks of the pass.

Work runs on the active dask scheduler: open a ``dask.distributed.Client`` first to use a
cluster.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

from ..core.operating_point import as_operating_points
from ..core.priors import bayes_threshold
from ..core.validation import check_probability
from ..metrics.binary_scores import SummarizedScores
from ..metrics.report import CalibrationReport
from ..metrics.report import calibration_report as _report_of
from ._summary import summarize_dask

__all__ = ["summarize", "calibration_report", "pav_llr"]


def summarize(
    scores,
    labels,
    sample_weight=None,
    *,
    p_targets=(0.5,),
    thresholds=(),
    keep_runs: bool = False,
    n_ranges=None,
) -> SummarizedScores:
    """Block summary and trial sums of trials held in dask collections, in one pass: the input
    of every binary measure of :mod:`focal.metrics`.

    Parameters
    ----------
    scores : dask array or dask Series, shape (n_trials,)
        Scores or natural-log LLRs (+/-inf allowed, NaN not).
    labels : dask array or dask Series, shape (n_trials,)
        1 / True for target trials, 0 / False for non-targets; partitions lined up with
        ``scores`` (a dask array is rechunked to ``scores``' chunks).
    sample_weight : dask array or dask Series, optional
        Non-negative integer multiplicity of each trial (None: every trial counts once).
    p_targets : array_like, default (0.5,)
        Priors at which Cllr / cross-entropy will be asked for.
    thresholds : array_like
        Score thresholds at which actual error rates will be asked for (``dcf`` at an
        operating point uses :func:`focal.bayes_threshold` of it; ``bayes_error_rates`` at
        ``h`` uses ``-h``).
    keep_runs : bool, default False
        Keep the runs behind the steppy DET curve and the conventional EER (their number can
        approach the number of trials).
    n_ranges : int, optional
        Score ranges of the shuffle (default: the number of partitions, at most 128; raise it
        when ``n_trials / n_ranges`` trials would not fit a worker). Cut at sampled quantiles;
        ties are never split, so a range may hold more than its share.

    Returns
    -------
    focal.metrics.SummarizedScores
        The PAV block summary and the trial sums; pass it to the measures of
        :mod:`focal.metrics` (``eer(s)``, ``min_dcf(s, p_target=0.01)``, ``cllr(s)``, ...).
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


def calibration_report(
    scores,
    labels,
    operating_points=((0.01, 1.0, 1.0),),
    p_target=0.5,
    name: str = "",
    sample_weight=None,
) -> CalibrationReport:
    """:func:`focal.metrics.calibration_report` of trials held in dask collections: one
    :func:`summarize` pass with the sums the report needs (at ``p_target`` and at the Bayes
    threshold of every operating point), then the report of that summary.

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
        The report, equal to that of :func:`focal.metrics.calibration_report` of the trials.
    """
    p = check_probability(p_target)
    points = as_operating_points(operating_points)
    thresholds = [bayes_threshold(*point) for point in points]
    summary = summarize(scores, labels, sample_weight, p_targets=[p], thresholds=thresholds)
    return _report_of(summary, operating_points=points, p_target=p, name=name)


def pav_llr(scores, labels, sample_weight=None):
    """PAV log-likelihood-ratio (natural log) of every trial, as :func:`focal.metrics.pav_llr`.

    The PAV blocks are computed now (one pass); the result is a lazy dask array shaped like
    ``scores`` (a dask array), each partition mapped through the blocks' score ranges
    (:func:`focal.core.maps.step_index`): tied scores get the same LLR, and ``cllr`` of the
    result equals :func:`focal.metrics.min_cllr`.

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
    pav = summarize(scores, labels, sample_weight, p_targets=()).summary.to_pav()
    lo, llr = pav.score_lo, pav.llr
    return scores.map_blocks(lambda b: llr[step_index(lo, b)], dtype=float)

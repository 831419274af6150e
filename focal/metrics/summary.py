"""Binary measures from block summaries and trial sums (score sets too large for one machine).

:class:`SummarizedScores` answers what :class:`focal.metrics.BinaryScores` answers, from a
:class:`focal.core.summary.ScoreSummary` (the PAV blocks of all the trials, merged from
contiguous score ranges computed anywhere) and, for the actual-decision measures, a
:class:`focal.core.summary.TrialSums` (sums over any split of the trials). The values equal
those of the in-memory functions: exactly for the counts, EER, PRBEP, AUC, minDCF and the PAV
blocks (the same integer computation on the same blocks), to rounding for the sums (Cllr).
See :mod:`focal.core.summary` for how an engine (Spark, Ray, Dask) produces the inputs.

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
.. [2] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
   Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..core.operating_point import OperatingPoint
from ..core.rocch import ROCCH
from ..core.scoring import normalized_cross_entropy
from ..core.summary import ScoreSummary, TrialSums
from ..core.validation import as_score_array, check_probability
from .binary_scores import BayesErrorRates, DETCurve

__all__ = ["SummarizedScores"]

_LOG2 = np.log(2.0)


class SummarizedScores:
    """Binary measures of a score set known by its PAV block summary and trial sums.

    Parameters
    ----------
    summary : ScoreSummary
        Merged PAV blocks of all the trials (both classes present).
    sums : TrialSums, optional
        Sums at the priors / thresholds the actual-decision measures will be asked for
        (``cllr(p)`` needs ``p`` among ``sums.p_targets``; ``dcf`` and ``bayes_error_rates`` need
        their Bayes thresholds among ``sums.thresholds``).
    """

    def __init__(self, summary: ScoreSummary, sums: TrialSums | None = None):
        self.summary = summary
        self.sums = sums
        if sums is not None and (sums.n_targets, sums.n_nontargets) != (
            summary.n_targets,
            summary.n_nontargets,
        ):
            raise ValueError(
                f"sums count {sums.n_targets} / {sums.n_nontargets} target / "
                f"non-target trials but the summary {summary.n_targets} / "
                f"{summary.n_nontargets}: they describe different trials"
            )

    @cached_property
    def hull(self) -> ROCCH:
        """ROC convex hull of the summarized trials (thesis 7.3.6)."""
        return self.summary.hull()

    @property
    def n_targets(self) -> int:
        """Number of target trials."""
        return self.summary.n_targets

    @property
    def n_nontargets(self) -> int:
        """Number of non-target trials."""
        return self.summary.n_nontargets

    def _sums(self, what: str) -> TrialSums:
        if self.sums is None:
            raise ValueError(f"{what} needs TrialSums of the trials (pass sums=)")
        return self.sums

    # -- actual decisions: sums -----------------------------------------------------------
    def cross_entropy(self, p_target=0.5) -> float:
        """C_xe in bits (SWS plan eq. 38), as :func:`focal.metrics.cross_entropy`.

        Parameters
        ----------
        p_target : float, default 0.5
            Target prior in (0, 1).

        Returns
        -------
        float
            C_xe in bits.
        """
        p = check_probability(p_target)
        c_t, c_n = self._sums("cross_entropy").mean_costs(p)
        return (p * c_t + (1.0 - p) * c_n) / _LOG2

    def cllr(self, p_target=0.5) -> float:
        """Cllr / C_nxe in bits per bit (thesis eq. 7.41, SWS eq. 40), as
        :func:`focal.metrics.cllr`.

        Parameters
        ----------
        p_target : float, default 0.5
            Target prior in (0, 1).

        Returns
        -------
        float
            Cllr in bits per bit.
        """
        p = check_probability(p_target)
        c_t, c_n = self._sums("cllr").mean_costs(p)
        return normalized_cross_entropy(p * c_t + (1.0 - p) * c_n, p)

    def dcf(self, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
        """Actual DCF of Bayes decisions on the scores read as LLRs, as
        :func:`focal.metrics.dcf`.

        Parameters
        ----------
        p_target : float
            Target prior P_target in (0, 1).
        c_miss, c_fa : float, default 1.0
            Costs of a miss and of a false alarm (> 0).
        normalize : bool, default True
            Divide by the cost of the best fixed decision.

        Returns
        -------
        float
            The detection cost.
        """
        op = OperatingPoint(p_target, c_miss, c_fa)
        n_mis, n_fa = self._sums("dcf").error_counts(op.bayes_threshold)
        return float(op.detection_cost(n_mis / self.n_targets, n_fa / self.n_nontargets, normalize))

    # -- threshold-optimized: the hull ----------------------------------------------------
    def min_cllr(self, p_target=0.5) -> float:
        """Cllr after PAV, bits per bit (thesis 7.7.4), as :func:`focal.metrics.min_cllr`.

        Parameters
        ----------
        p_target : float, default 0.5
            Target prior in (0, 1).

        Returns
        -------
        float
            minCllr in bits per bit, in [0, 1].
        """
        return self.hull.min_cllr(p_target)

    def min_dcf(self, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
        """Minimum DCF over all thresholds (thesis eq. 7.21), as :func:`focal.metrics.min_dcf`.

        Parameters
        ----------
        p_target : float
            Target prior P_target in (0, 1).
        c_miss, c_fa : float, default 1.0
            Costs of a miss and of a false alarm (> 0).
        normalize : bool, default True
            Divide by the cost of the best fixed decision.

        Returns
        -------
        float
            The minimum detection cost.
        """
        return self.hull.min_dcf(p_target, c_miss, c_fa, normalize)

    @property
    def eer(self) -> float:
        """ROCCH-EER, a fraction (thesis 7.3.7), as :func:`focal.metrics.eer`."""
        return self.hull.eer

    @property
    def prbep(self) -> float:
        """Precision-recall break-even point, an error count (thesis 7.3.8)."""
        return self.hull.prbep

    @property
    def auc(self) -> float:
        """Area under the ROC convex hull."""
        return self.hull.auc

    def det_curve(self, convex_hull: bool = False) -> DETCurve:
        """DET points, steppy (needs a summary with runs) or of the hull, as
        :func:`focal.metrics.det_curve`.

        Parameters
        ----------
        convex_hull : bool, default False
            False: the empirical ROC's operating points; True: the ROCCH vertices.

        Returns
        -------
        DETCurve
            The operating points.
        """
        if convex_hull:
            return DETCurve(self.hull.p_fa, self.hull.p_miss, self.hull.thresholds)
        if not self.summary.has_runs:
            raise ValueError(
                "the steppy DET curve needs a summary made with keep_runs=True; "
                "or ask for convex_hull=True"
            )
        return DETCurve(*self.hull.pav.roc_points())

    def bayes_error_rates(self, prior_log_odds) -> BayesErrorRates:
        """Actual and minimum Bayes error-rates at many prior log-odds (thesis 7.6.1), as
        :func:`focal.metrics.bayes_error_rates` (thresholds ``-h`` must be in the sums).

        Parameters
        ----------
        prior_log_odds : array_like
            Values of h = logit(effective prior), in nats.

        Returns
        -------
        BayesErrorRates
            The error-rates at each ``h``.
        """
        h = as_score_array(np.atleast_1d(prior_log_odds), "prior_log_odds", allow_inf=True)
        sums = self._sums("bayes_error_rates")
        idx = np.searchsorted(sums.thresholds, -h)
        ok = idx < sums.thresholds.size
        ok[ok] = sums.thresholds[idx[ok]] == -h[ok]
        if not ok.all():
            raise ValueError(
                f"threshold {-h[~ok][0]!r} (prior log-odds {h[~ok][0]!r}) was not "
                "among the thresholds of these sums"
            )
        p_miss = sums.n_misses[idx] / self.n_targets
        p_fa = sums.n_false_alarms[idx] / self.n_nontargets
        return BayesErrorRates.of(h, p_miss, p_fa, self.hull, self.n_targets, self.n_nontargets)

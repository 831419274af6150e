"""Posteriors, Bayes decisions and a Cllr score for any estimator whose output is an LLR.

An estimator with ``decision_function`` giving natural-log LLRs and ``classes_`` (target last)
gets ``predict_proba`` / ``predict_log_proba`` (Bayes' rule at a target prior, thesis eq. 8.17),
``predict`` (Bayes decisions at ``(p_target, c_miss, c_fa)``, thesis eq. 7.13) and ``score``
(minus Cllr at the prior, greater is better) from :class:`BinaryLLROutputMixin`. The default
prior is the estimator's ``p_target`` parameter if it has one, else 0.5.

An estimator with a ``bounds`` parameter clips its output LLRs to ``bounds_``: to the ELUB
limits of its training trials' LLRs (:cite:t:`vergeer2016elub`), to given ``(lower, upper)``
LLRs, or not at all; :func:`fitted_bounds` computes ``bounds_`` and
:func:`refuse_elub_weights` refuses ``"elub"`` with ``sample_weight``, for every such estimator.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`vergeer2016elub`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..core.priors import bayes_threshold, logit
from ..core.scoring import cross_entropy_nats, normalized_cross_entropy
from ..core.validation import as_sample_weight, check_probability

__all__ = ["BinaryLLROutputMixin", "fitted_bounds", "refuse_elub_weights"]


def fitted_bounds(bounds, training_llrs) -> np.ndarray:
    """``bounds_``: the clip ``(lower, upper)`` of an estimator's output LLRs, nats.

    Parameters
    ----------
    bounds : "elub", (float, float) or None
        The estimator's ``bounds`` parameter (checked here by
        :func:`focal.models.fitted_state.check_bounds`).
    training_llrs : (ndarray, ndarray) or callable
        The LLRs of the training trials of each class, ``(targets, non-targets)``, or a
        function of no argument returning them (called for ``"elub"`` only: for LLRs that
        cost a pass over the data).

    Returns
    -------
    ndarray of shape (2,)
        ``(-inf, inf)`` for None, the given pair, or for ``"elub"`` the ELUB limits of the
        training LLRs (:func:`focal.metrics.elub_bounds`, :cite:t:`vergeer2016elub`).
    """
    from ..models.fitted_state import check_bounds

    bounds = check_bounds(bounds)
    if bounds is None:
        return np.array([-np.inf, np.inf])
    if isinstance(bounds, str):
        from ..metrics.forensic import elub_bounds

        tar, non = training_llrs() if callable(training_llrs) else training_llrs
        bounds = elub_bounds(tar, non)
    return np.array(bounds, dtype=float)


def refuse_elub_weights(bounds, sample_weight) -> None:
    """Refuse ``bounds="elub"`` with ``sample_weight``: the ELUB limits count trials.

    Parameters
    ----------
    bounds : object
        The estimator's ``bounds`` parameter.
    sample_weight : array_like or None
        The weights given to ``fit``.
    """
    if sample_weight is not None and isinstance(bounds, str) and bounds == "elub":
        raise ValueError(
            "bounds='elub' counts trials and cannot take sample_weight: fit without "
            "weights, or give bounds as (lower, upper) LLRs"
        )


class BinaryLLROutputMixin:
    """``predict_proba``, ``predict_log_proba``, ``predict`` and ``score`` from LLR outputs."""

    def _output_prior(self, p_target):
        default = getattr(self, "p_target", 0.5)
        return check_probability(default if p_target is None else p_target, "p_target")

    def predict_log_proba(self, X, p_target=None):
        """Log posteriors (nats) of ``classes_`` at prior ``p_target``: for the target
        ``-softplus(-(llr + logit p))``, exact for LLRs of any magnitude.
        """
        z = self.decision_function(X) + logit(self._output_prior(p_target))
        return -np.logaddexp(0.0, np.column_stack([z, -z]))

    def predict_proba(self, X, p_target=None):
        """Posteriors of ``classes_`` at prior ``p_target``:
        ``P(target) = sigmoid(llr + logit p)``.
        """
        z = self.decision_function(X) + logit(self._output_prior(p_target))
        return np.column_stack([expit(-z), expit(z)])

    def predict(self, X, p_target=None, c_miss=1.0, c_fa=1.0, cost=None):
        """Bayes decisions for ``(p_target, c_miss, c_fa)``: ``classes_[1]`` iff
        ``llr >= -logit(P_eff)`` (thesis eq. 7.13).

        With ``cost``, a matrix ``cost[d, j]`` of decisions d (e.g. reject, accept, refer) by
        classes ``classes_[j]`` (non-target, target), the result is instead the index of each
        trial's Bayes decision (:func:`focal.metrics.bayes_decisions`); ``c_miss`` and ``c_fa``
        must then be left at 1.
        """
        if cost is not None:
            if c_miss != 1.0 or c_fa != 1.0:
                raise ValueError("give either cost or (c_miss, c_fa), not both")
            from ..metrics.decisions import bayes_decisions

            return bayes_decisions(self.decision_function(X), self._output_prior(p_target), cost)
        threshold = bayes_threshold(self._output_prior(p_target), c_miss, c_fa)
        accept = self.decision_function(X) >= threshold  # first: refuses an unfitted estimator
        return self.classes_[accept.astype(np.intp)]

    def score(self, X, y, sample_weight=None, p_target=None):
        """Minus Cllr (bits per bit, :func:`focal.metrics.cllr`) at ``p_target``: 0 for perfect
        LLRs, -1 for uninformative ones. ``y`` holds labels of ``classes_`` (both present).
        """
        llr = self.decision_function(X)
        y = np.asarray(y)
        if y.shape != llr.shape:
            raise ValueError(f"y must have shape {llr.shape}, got {y.shape}")
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise ValueError(f"y contains labels not seen in fit: {np.unique(y[unknown])!r}")
        is_target = y == self.classes_[1]
        if is_target.all() or not is_target.any():
            raise ValueError("y must contain both target and non-target trials to compute Cllr")
        tw = nw = None
        if sample_weight is not None:
            w = as_sample_weight(sample_weight, llr.shape[0])
            tw, nw = w[is_target], w[~is_target]
        p = self._output_prior(p_target)
        xe = cross_entropy_nats(llr[is_target], llr[~is_target], p, tw, nw)
        return -float(normalized_cross_entropy(xe, p))

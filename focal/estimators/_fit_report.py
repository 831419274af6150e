"""What a binary fit reports: its training cost, and the warnings of fits not held by the data.

After :class:`focal.estimators.LogisticFusion` (and the fits built on it) has fitted, the
training cost is stored as Cllr at ``p_target`` (thesis eq. 7.41) and the rule's normalized
expected cost; a fit whose size is set by the penalty (perfectly separable scores) or by the
solver's stopping point (a scoring rule without a finite minimum on the scores) warns, as does
one that did not converge.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`brummer2012keynote` ("the keynote").
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..core.scoring import cross_entropy_nats, normalized_cross_entropy
from ..core.scoring_rules import default_expected_cost, expected_cost_at_infinity

__all__ = [
    "MiscalibrationWarning",
    "PerfectSeparationWarning",
    "UnboundedObjectiveWarning",
    "report_fit",
    "training_cllr",
    "warn_not_converged",
]


class PerfectSeparationWarning(UserWarning):
    """The training scores separate the classes (nearly) perfectly: the fit is held by ``reg``.

    Issued when the penalty is at least a tenth of the data term at the solution. With
    overlapping classes and the default ``reg`` it is smaller than 1e-4 of it; on (nearly)
    separable data it is 0.5 to 10 times it, whatever ``reg``, because the data term then keeps
    falling as the weights grow until the penalty stops them.
    """


class UnboundedObjectiveWarning(UserWarning):
    """The training rule has no finite minimum on these scores: the weights run away.

    A proper scoring rule with a bounded side (a Beta(a, b) rule with a > 1 bounds the cost of
    a missed target by (a + b - 1) / (a - 1), e.g. 10/9 for the keynote's low false-alarm rule
    Beta(10, 1)) lets the fit trade a few targets sent to -inf for non-targets at -inf and
    targets at +inf: sharpening the LLRs without bound lowers the cost
    (:func:`focal.core.scoring_rules.expected_cost_at_infinity`). Issued when that limit is not
    above the rule's cost at the fitted solution; the fitted LLRs are then set by ``reg`` and by
    the solver's stopping point, not by the data.
    """


class MiscalibrationWarning(UserWarning):
    """Calibrated outputs on held-out data cost more than no information at all.

    Issued by :class:`focal.CalibratedClassifier` when the LLRs (or log-likelihoods) of its
    cross-fitted calibration on held-out folds have a Cllr above 1 bit per bit at the
    training prior: an uninformative system (every LLR 0) would do better. The calibration
    found on some folds does not carry over to the others, so a map of the same kind cannot
    be trusted on new data either.
    """


_HELD_BY_PENALTY = 0.1


def _bounded_side(rule):
    """Which of a Beta(a, b) rule's costs is bounded, for messages."""
    sides = []
    if rule.a > 1:
        sides.append(f"a missed target costs at most {(rule.a + rule.b - 1) / (rule.a - 1):.4g}")
    if rule.b > 1:
        sides.append(f"a false alarm costs at most {(rule.a + rule.b - 1) / (rule.b - 1):.4g}")
    return " and ".join(sides)


def training_cllr(llr, is_target, weights, p) -> float:
    """Cllr at ``p`` (bits per bit, thesis eq. 7.41) of the training trials' fitted LLRs."""
    tw = None if weights is None else weights[is_target]
    nw = None if weights is None else weights[~is_target]
    xe = cross_entropy_nats(llr[is_target], llr[~is_target], p, tw, nw)
    return float(normalized_cross_entropy(xe, p))


def warn_not_converged(estimator, max_iter, grad_norm, tol, stacklevel=3) -> None:
    """A :class:`~sklearn.exceptions.ConvergenceWarning` for a fit that stopped at
    ``max_iter`` (issued at the caller of the estimator's ``fit``).
    """
    warnings.warn(
        f"{type(estimator).__name__} did not converge in {max_iter} iterations (gradient "
        f"norm {grad_norm:.3g} > tol={tol:g}); increase max_iter or tol",
        ConvergenceWarning,
        stacklevel=stacklevel,
    )


def report_fit(estimator, X, is_target, weights, p, rule, sol):
    """Set ``objective_`` and ``rule_objective_`` of a fitted binary ``estimator`` from the
    solution ``sol`` (:class:`focal.core.logistic.LogisticSolution`); warn if the penalty holds
    the fit or the rule has no finite minimum on the training scores ``X`` (read for rules
    other than the logarithmic one only).
    """
    limit = np.inf
    if not rule.is_logarithmic:
        llr = estimator._llr(X)
        limit = expected_cost_at_infinity(llr, is_target, p, rule, weights)
    if sol.penalty >= _HELD_BY_PENALTY * sol.loss or limit == 0.0:
        warnings.warn(
            f"the fit is held by the penalty (reg={estimator.reg:g} costs "
            f"{sol.penalty / max(sol.loss, np.finfo(float).tiny):.2g} times the data term): "
            "the training scores separate the classes perfectly or nearly, so the size of "
            "the LLRs is set by reg, not by the data, and they will be overconfident on new "
            "data. Train on more (overlapping) data, or choose reg deliberately.",
            PerfectSeparationWarning,
            stacklevel=3,
        )
    elif limit <= sol.loss:
        warnings.warn(
            f"the {rule.name!r} scoring rule (Beta({rule.a:g}, {rule.b:g})) has no finite "
            f"minimum on these training scores at p_target={p:g}: sharpening the LLRs "
            f"without bound lowers its cost to {limit:.10g}, not above its cost at the fit "
            f"({sol.loss:.10g}), because {_bounded_side(rule)} under it. The fitted LLRs "
            f"(from {llr.min():.4g} to {llr.max():.4g}) are set by reg={estimator.reg:g} and by "
            "where the solver stopped, not by the data; use the logarithmic rule, or a "
            "larger reg chosen deliberately.",
            UnboundedObjectiveWarning,
            stacklevel=3,
        )
    estimator.rule_objective_ = float(sol.loss / default_expected_cost(p, rule))
    if rule.is_logarithmic:
        estimator.objective_ = float(normalized_cross_entropy(sol.loss, p))
    else:
        estimator.objective_ = training_cllr(llr, is_target, weights, p)

"""The Brier, C_eta, E_lre and Bayes-risk measures take a MulticlassTrials in place of
(llh, labels[, prior]) and give the array call's results bit for bit.
"""

import numpy as np
import pytest

from focal.core.multiclass import MulticlassTrials
from focal.metrics import (
    bayes_risk,
    bayes_risk_analysis,
    brier_analysis,
    e_lre,
    eta_risk,
    eta_risk_analysis,
    misclassification_cost_matrix,
    multiclass_brier,
)


def _data(prior):
    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, 90)
    llh = rng.normal(size=(90, 3)) + 1.5 * np.eye(3)[y]
    return llh, y, prior


@pytest.mark.parametrize("prior", [None, [0.5, 0.3, 0.2], [0.6, 0.0, 0.4]])
def test_trials_give_the_array_results(prior):
    llh, y, p = _data(prior)
    t = MulticlassTrials(llh, y, p)
    assert multiclass_brier(t) == multiclass_brier(llh, y, p)
    assert multiclass_brier(t, normalize=True) == multiclass_brier(llh, y, p, normalize=True)
    a, b = brier_analysis(t), brier_analysis(llh, y, p)
    assert (a.actual, a.default, a.minimum, a.alpha) == (b.actual, b.default, b.minimum, b.alpha)
    np.testing.assert_array_equal(a.beta, b.beta)
    assert e_lre(t) == e_lre(llh, y, p)
    assert eta_risk(t, prior=p) == eta_risk(llh, y, prior=p)
    _same(eta_risk_analysis(t, exact=False), eta_risk_analysis(llh, y, prior=p, exact=False))
    C = misclassification_cost_matrix(np.full(3, 1 / 3))
    assert bayes_risk(t, None, p, C) == bayes_risk(llh, y, p, C)
    _same(bayes_risk_analysis(t, None, p, C), bayes_risk_analysis(llh, y, p, C))


def _same(a, b):
    for name in ("actual", "minimum", "default", "recalibrated"):
        assert getattr(a, name) == getattr(b, name), name


def test_trials_with_labels_or_another_prior_are_refused():
    llh, y, _ = _data(None)
    t = MulticlassTrials(llh, y)
    with pytest.raises(ValueError, match="not both"):
        multiclass_brier(t, y)
    with pytest.raises(ValueError, match="conflicts"):
        e_lre(t, prior=[0.5, 0.3, 0.2])


def test_missing_labels_are_named():
    llh, _, _ = _data(None)
    with pytest.raises(ValueError, match="labels are missing"):
        multiclass_brier(llh)
    with pytest.raises(ValueError, match="labels are missing"):
        eta_risk(llh)

"""One vocabulary: p_miss / p_fa and n_targets / n_nontargets (no other name for them)."""

import warnings

import numpy as np
import pytest

from focal.core import sort_trials
from focal.core.summary import trial_sums
from focal.metrics import BinaryScores, bayes_error_rates, det_curve, min_dcf, rocch

TAR = np.array([-1.0, 0.5, 2.0, 3.0])
NON = np.array([-2.0, -0.5, 1.0])


def _only_the_new_name(obj, old, new):
    """The old name is gone (no release shipped it): one name per thing."""
    assert hasattr(obj, new) and not hasattr(obj, old)


def test_rates_are_p_miss_and_p_fa():
    hull = rocch(TAR, NON)
    # hull by hand: accept everything (0 misses of 4, 3 false alarms of 3) ... reject all
    assert hull.p_miss[0] == 0.0 and hull.p_fa[0] == 1.0
    assert hull.p_miss[-1] == 1.0 and hull.p_fa[-1] == 0.0
    _only_the_new_name(hull, "pmiss", "p_miss")
    _only_the_new_name(hull, "pfa", "p_fa")
    best = hull.min_bayes_errors(np.array([0.0]))  # the curve of bayes_error_rates
    _only_the_new_name(best, "pmiss", "p_miss")
    curve = det_curve(TAR, NON)
    _only_the_new_name(curve, "pfa", "p_fa")
    _only_the_new_name(curve, "pmiss", "p_miss")
    rates = bayes_error_rates(TAR, NON, [0.0, 1.0])
    # at h = 0 the Bayes threshold is 0: misses {-1}, false alarms {1.0}
    np.testing.assert_array_equal(rates.actual_p_miss[:1], [0.25])
    np.testing.assert_array_equal(rates.actual_p_fa[:1], [1 / 3])
    for old in ("actual_pmiss", "actual_pfa", "min_pmiss", "min_pfa"):
        _only_the_new_name(rates, old, old.replace("pmiss", "p_miss").replace("pfa", "p_fa"))


def test_estimator_and_display_attributes():
    from focal import ROCCH

    est = ROCCH().fit(np.r_[TAR, NON], np.r_[np.ones(4), np.zeros(3)])
    _only_the_new_name(est, "pmiss_", "p_miss_")
    _only_the_new_name(est, "pfa_", "p_fa_")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from focal.plots import DETDisplay

    disp = DETDisplay.from_scores(TAR, NON)
    for old, new in (
        ("pfa", "p_fa"),
        ("pmiss", "p_miss"),
        ("hull_pfa", "hull_p_fa"),
        ("hull_pmiss", "hull_p_miss"),
    ):
        _only_the_new_name(disp, old, new)


def test_counts_are_n_targets_and_n_nontargets():
    trials = sort_trials(TAR, NON)
    assert (trials.n_targets, trials.n_nontargets) == (4, 3)
    _only_the_new_name(trials, "n_tar", "n_targets")
    _only_the_new_name(trials, "n_non", "n_nontargets")
    sums = trial_sums(
        np.r_[TAR, NON], np.r_[np.ones(4), np.zeros(3)], p_targets=[0.5], thresholds=[0.0]
    )
    assert (sums.n_targets, sums.n_nontargets) == (4, 3)
    _only_the_new_name(sums, "n_tar", "n_targets")
    # n_tar / n_non keep one meaning: per-block count arrays
    pav = BinaryScores(TAR, NON).hull.pav
    assert pav.n_tar.sum() == 4 and pav.n_non.sum() == 3 and pav.n_tar.ndim == 1


def test_no_focal_code_path_uses_an_old_name():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*will be removed in the next release")
        scores = BinaryScores(TAR, NON)
        det_curve(scores), det_curve(scores, convex_hull=True)
        bayes_error_rates(scores, prior_log_odds=[-1.0, 0.0, 1.0])
        min_dcf(scores.hull, p_target=0.1), scores.hull.min_bayes_errors(np.array([0.0]))

"""MulticlassTrials: one validation of (llh, labels, prior, weights) for every multiclass
measure, plot and estimator, its active-class view, and one wording per error.
"""

import re

import numpy as np
import pytest

from focal import MulticlassFusion, metrics
from focal.core.multiclass import (
    MulticlassTrials,
    active_classes,
    check_multiclass_trials,
)

LLH = np.array(
    [[0.0, 1.0, 2.0], [3.0, 1.0, 0.0], [1.0, 1.0, 1.0], [2.0, 0.0, 5.0], [0.5, 0.0, 0.0]]
)
LABELS = np.array([0, 2, 1, 2, 1])


def test_holds_validated_copies_and_counts():
    t = MulticlassTrials(LLH.astype(np.float32), LABELS.astype(float), [0.5, 0.25, 0.25])
    assert t.llh.dtype == np.float64 and np.array_equal(t.llh, LLH)
    assert t.labels.dtype == np.int64 and np.array_equal(t.labels, LABELS)
    assert t.prior.tolist() == [0.5, 0.25, 0.25] and t.active_mask.all()
    assert t.counts.tolist() == [1, 2, 2] and t.n_trials == 5 and t.n_classes == 3
    assert t.active() is t  # nothing to drop
    w = MulticlassTrials(LLH, LABELS, sample_weight=[1, 2, 0, 3, 1])
    assert w.counts.tolist() == [1.0, 1.0, 5.0]


def test_active_view_drops_zero_prior_classes_and_their_trials():
    """Albayzin footnote 8: class 1 has prior 0; its column and its two trials go, the labels
    are renumbered, and ``classes`` / ``scatter`` map back to the original columns.
    """
    t = MulticlassTrials(LLH, LABELS, [0.5, 0.0, 0.5], sample_weight=[1, 2, 3, 4, 5])
    a = t.active()
    assert np.array_equal(a.llh, LLH[[0, 1, 3]][:, [0, 2]])
    assert a.labels.tolist() == [0, 1, 1] and a.prior.tolist() == [0.5, 0.5]
    assert a.sample_weight.tolist() == [1.0, 2.0, 4.0] and a.counts.tolist() == [1.0, 6.0]
    assert a.classes.tolist() == [0, 2] and a.n_columns == 3
    assert a.scatter([7.0, 8.0]).tolist() == [7.0, 0.0, 8.0]
    act, keep, y = active_classes(t.prior, t.labels)
    assert act.tolist() == [0, 2] and keep.tolist() == [True, True, False, True, False]
    assert y.tolist() == [0, 1, 1]
    # the tuple form is the same view
    L, yy, _, w, classes = check_multiclass_trials(LLH, LABELS, [0.5, 0.0, 0.5], [1, 2, 3, 4, 5])
    assert np.array_equal(L, a.llh) and np.array_equal(yy, a.labels)
    assert np.array_equal(classes, a.classes) and np.array_equal(w, a.sample_weight)


def test_with_prior_checks_the_new_prior():
    t = MulticlassTrials(LLH, LABELS, [0.5, 0.0, 0.5])
    assert t.with_prior([0.2, 0.3, 0.5]).prior.tolist() == [0.2, 0.3, 0.5]
    with pytest.raises(ValueError, match="sum to 1"):
        t.with_prior([0.2, 0.3, 0.6])


def test_errors():
    with pytest.raises(
        ValueError,
        match=r"llh and labels have different numbers of trials "
        r"\(5 and 4\)",
    ):
        MulticlassTrials(LLH, LABELS[:4])
    with pytest.raises(
        ValueError,
        match=r"class\(es\) \[0\] have non-zero prior but no "
        r"trials in labels",
    ):
        MulticlassTrials(LLH[1:], LABELS[1:])
    with pytest.raises(ValueError, match="no trials of positive weight"):
        MulticlassTrials(LLH, LABELS, sample_weight=[0, 1, 1, 1, 1])
    MulticlassTrials(LLH[1:], LABELS[1:], [0.0, 0.5, 0.5])  # class 0 ignored: fine
    with pytest.raises(ValueError, match="non-finite"):
        MulticlassTrials(np.where(LLH > 4, np.nan, LLH), LABELS)
    with pytest.raises(ValueError, match=r"class indices 0..2"):
        MulticlassTrials(LLH, LABELS + 1)


_MISMATCH = "llh and labels have different numbers of trials (5 and 4)"
_EMPTY = "class(es) [0] have non-zero prior but no trials in labels"


@pytest.mark.parametrize(
    "measure",
    [
        metrics.multiclass_cross_entropy,
        metrics.multiclass_cllr,
        metrics.albayzin_measures,
        metrics.affine_calibration,
        metrics.multiclass_brier,
        metrics.brier_analysis,
        metrics.eta_risk_analysis,
        metrics.e_lre,
        metrics.detection_analysis,
        metrics.cavg,
        metrics.cavg_sweep,
        metrics.subset_analysis,
        metrics.pairwise_analysis,
        lambda L, y: metrics.bayes_risk(
            L, y, None, np.ones((2, L.shape[1])) - np.eye(2, L.shape[1])
        ),
    ],
)
def test_every_multiclass_measure_has_the_one_wording(measure):
    L = np.c_[LLH, np.zeros(5)] if measure is metrics.albayzin_measures else LLH
    with pytest.raises(ValueError, match=re.escape(_MISMATCH)):
        measure(L, LABELS[:4])
    if measure in (metrics.albayzin_measures,):
        return  # its prior of eq. 2 makes the last class inactive
    with pytest.raises(ValueError, match=re.escape(_EMPTY)):
        measure(L[1:], LABELS[1:])


def test_the_estimator_and_the_plots_use_it_too():
    pytest.importorskip("matplotlib")
    from focal import plots

    with pytest.raises(ValueError, match=re.escape(_MISMATCH)):
        plots.detection_ape_plots(LLH, LABELS[:4])
    with pytest.raises(ValueError, match=re.escape(_EMPTY)):
        plots.detection_ape_plots(LLH[1:], LABELS[1:])
    fusion = MulticlassFusion(mode="calibration").fit(LLH, LABELS)
    with pytest.raises(ValueError, match=re.escape("X and y have different numbers of trials")):
        fusion.score(LLH, LABELS[:4])
    with pytest.raises(
        ValueError,
        match=r"class\(es\) \[0\] have non-zero prior but no trials "
        r"in y",
    ):
        fusion.score(LLH[1:], LABELS[1:])
    with pytest.raises(
        ValueError,
        match=r"class\(es\) \[0\] have non-zero prior but no trials "
        r"in y",
    ):
        MulticlassFusion(prior=[0.5, 0.25, 0.25]).fit(LLH[1:], LABELS[1:])

"""Every multiclass measure takes a MulticlassTrials in place of (llh, labels[, prior]): the same
numbers, bit for bit, as the array call; and a clear error when the two forms are mixed.
"""

import numpy as np
import pytest

from focal.core.multiclass import MulticlassTrials, as_multiclass_trials
from focal.metrics import (
    affine_calibration,
    albayzin_measures,
    albayzin_prior,
    cavg,
    cavg_sweep,
    detection_analysis,
    detection_llrs,
    multiclass_cllr,
    multiclass_cross_entropy,
    multiclass_report,
    pairwise_analysis,
    subset_analysis,
)
from tests._support.multiclass import make_trials

RNG = np.random.default_rng(12)
LLH, LABELS = make_trials(120, 4, RNG)
PRIOR = np.array([0.1, 0.2, 0.3, 0.4])
CLOSED = albayzin_prior(4)  # zero prior for the last class: its column and trials are ignored


def same(a, b):
    """Equal to the last bit: floats, arrays and (nested) dataclass fields."""
    if hasattr(a, "__dataclass_fields__"):
        assert type(a) is type(b)
        for field in a.__dataclass_fields__:
            same(getattr(a, field), getattr(b, field))
    elif isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif a is None:
        assert b is None
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), strict=True)


# (measure, keyword arguments) of the measures with a prior, called at None, PRIOR and CLOSED
WITH_PRIOR = [
    (multiclass_cross_entropy, {}),
    (multiclass_cllr, {}),
    (multiclass_cllr, {"normalize": True}),
    (affine_calibration, {}),
    (affine_calibration, {"nonnegative_alpha": True}),
    (detection_analysis, {"p_target": 0.2}),
    (albayzin_measures, {}),
]


@pytest.mark.parametrize("prior", [None, PRIOR, CLOSED], ids=["flat", "prior", "closed"])
@pytest.mark.parametrize(
    ("measure", "kwargs"), WITH_PRIOR, ids=[f"{m.__name__}{sorted(k)}" for m, k in WITH_PRIOR]
)
def test_a_measure_of_trials_equals_the_array_call(measure, kwargs, prior):
    pr = np.full(4, 0.25) if prior is None and measure is albayzin_measures else prior
    expected = measure(LLH, LABELS, prior=pr, **kwargs)
    trials = MulticlassTrials(LLH, LABELS, pr)
    same(measure(trials, **kwargs), expected)
    same(measure(trials, prior=pr, **kwargs), expected)  # the same prior again is no conflict


def test_albayzin_measures_take_the_prior_of_the_trials():
    L = np.c_[LLH, RNG.normal(size=LLH.shape[0])]  # a fake out-of-set column, no OOS trials
    for open_set in (False, True):
        y = LABELS if not open_set else np.r_[LABELS[:-4], 4, 4, 4, 4]
        expected = albayzin_measures(L, y, open_set=open_set)
        trials = MulticlassTrials(L, y, albayzin_prior(5, open_set))
        same(albayzin_measures(trials), expected)
        same(albayzin_measures(trials, open_set=open_set), expected)
        with pytest.raises(ValueError, match="conflicts with the prior of the MulticlassTrials"):
            albayzin_measures(trials, open_set=not open_set)


def test_detection_llrs_of_trials():
    for prior in (None, PRIOR, CLOSED):
        same(detection_llrs(MulticlassTrials(LLH, LABELS, prior)), detection_llrs(LLH, prior))


def test_pairwise_analysis_of_trials_pairs_the_classes_of_nonzero_prior():
    same(pairwise_analysis(MulticlassTrials(LLH, LABELS)), pairwise_analysis(LLH, LABELS))
    closed = MulticlassTrials(LLH, LABELS, CLOSED)
    same(pairwise_analysis(closed), pairwise_analysis(LLH, LABELS, classes=[0, 1, 2]))
    same(pairwise_analysis(closed, classes=[1, 3]), pairwise_analysis(LLH, LABELS, [1, 3]))


def test_cavg_and_subsets_of_trials_use_the_classes_of_nonzero_prior():
    flat = MulticlassTrials(LLH, LABELS)
    same(cavg(flat, p_target=0.3), cavg(LLH, LABELS, p_target=0.3))
    D = detection_llrs(LLH) > 0.5
    same(cavg(flat, decisions=D), cavg(LLH, LABELS, decisions=D))
    keep = LABELS < 3
    L3, y3 = LLH[keep][:, :3], LABELS[keep]
    closed = MulticlassTrials(LLH, LABELS, CLOSED)  # CAVG of the 3 target classes
    same(cavg(closed), cavg(L3, y3))
    for measure in ("cavg", "multiclass_cllr"):
        same(subset_analysis(flat, measure=measure), subset_analysis(LLH, LABELS, measure))
        same(subset_analysis(closed, measure=measure), subset_analysis(L3, y3, measure))
    for measure in (cavg, subset_analysis):
        with pytest.raises(ValueError, match="flat prior"):
            measure(MulticlassTrials(LLH, LABELS, PRIOR))


def test_cavg_sweep_of_trials_sweeps_at_their_prior():
    pt = [0.1, 0.5, 0.8]
    same(
        cavg_sweep(MulticlassTrials(LLH, LABELS), p_targets=pt),
        cavg_sweep(LLH, LABELS, p_targets=pt),
    )
    for prior in (PRIOR, CLOSED):  # E_lre at the trials' prior (thesis eq. 8.11)
        same(
            cavg_sweep(MulticlassTrials(LLH, LABELS, prior), p_targets=pt),
            cavg_sweep(LLH, LABELS, p_targets=pt, prior=prior),
        )


def test_the_report_is_unchanged_by_validating_once():
    """The report validates its trials once; its numbers are those of the measures called
    on the arrays at the Albayzin prior of each condition.
    """
    L = np.c_[LLH, RNG.normal(size=LLH.shape[0])]
    y = np.r_[LABELS[:-4], 4, 4, 4, 4]
    report = multiclass_report(L, y, list("abcde"), ["closed", "open"])
    for result in report.results:
        m = albayzin_measures(L, y, open_set=result.condition == "open")
        same(result.albayzin, m)
        assert result.multiclass_cllr == multiclass_cllr(L, y, m.prior)
        keep = m.prior[y] > 0
        active = m.prior > 0
        assert result.cavg == cavg(
            L[keep][:, active], np.searchsorted(np.flatnonzero(active), y[keep])
        )


# ------------------------------------------------------------------------------ the errors

MEASURES = [
    multiclass_cross_entropy,
    multiclass_cllr,
    affine_calibration,
    albayzin_measures,
    detection_analysis,
    pairwise_analysis,
    cavg,
    cavg_sweep,
    subset_analysis,
]


@pytest.mark.parametrize("measure", MEASURES, ids=[m.__name__ for m in MEASURES])
def test_trials_and_labels_together_are_refused(measure):
    with pytest.raises(ValueError, match="either a MulticlassTrials or the .* not both"):
        measure(MulticlassTrials(LLH, LABELS), LABELS)


@pytest.mark.parametrize(
    "measure",
    [m for m in MEASURES if m not in (cavg, pairwise_analysis, subset_analysis)] + [detection_llrs],
    ids=lambda m: m.__name__,
)
def test_a_conflicting_prior_is_refused(measure):
    with pytest.raises(ValueError, match=r"prior \[0\.1, .*conflicts .* trials\.with_prior"):
        measure(MulticlassTrials(LLH, LABELS), prior=PRIOR)


@pytest.mark.parametrize("measure", MEASURES, ids=[m.__name__ for m in MEASURES])
def test_missing_labels_are_named(measure):
    with pytest.raises(ValueError, match="labels are missing"):
        measure(LLH)


def test_weighted_trials_are_refused_where_weights_would_be_ignored():
    weighted = MulticlassTrials(LLH, LABELS, sample_weight=np.ones(LLH.shape[0]))
    with pytest.raises(ValueError, match="multiclass_cllr does not take sample weights"):
        multiclass_cllr(weighted)
    # a per-trial transform has no use for weights: accepted
    same(detection_llrs(weighted), detection_llrs(LLH))


def test_as_multiclass_trials_returns_the_trials_given():
    trials = MulticlassTrials(LLH, LABELS, PRIOR)
    assert as_multiclass_trials(trials) is trials
    assert as_multiclass_trials(trials, prior=trials.prior) is trials  # to rounding: the same
    built = as_multiclass_trials(LLH, LABELS, PRIOR, labels_name="y")
    same(built.prior, trials.prior)
    with pytest.raises(ValueError, match="^y must be class indices"):
        as_multiclass_trials(LLH, LABELS + 7, labels_name="y")

"""Every binary measure takes a BinaryScores, a SummarizedScores or a rocch() result in place of
(tar, non), and then reuses its one sort and one PAV.
"""

import numpy as np
import pytest

from focal.core.summary import summarize
from focal.metrics import (
    BinaryScores,
    as_binary_scores,
    bayes_error_rates,
    c_primary,
    cllr,
    conventional_eer,
    cross_entropy,
    dcf,
    det_curve,
    eer,
    min_cllr,
    min_dcf,
    min_truncated_cllr,
    prbep,
    rocch,
    rocch_auc,
    truncated_cllr,
)
from focal.metrics import binary_scores as binary

RNG = np.random.default_rng(11)
TAR = np.round(RNG.normal(1.5, 1.0, 300), 1)  # ties within and between the classes
NON = np.round(RNG.normal(-0.5, 1.2, 700), 1)
H = np.linspace(-4, 4, 9)

# each measure: (call with the pair, call with a BinaryScores-like object)
MEASURES = {
    "min_cllr": (lambda t, n: min_cllr(t, n, 0.3), lambda s: min_cllr(s, p_target=0.3)),
    "eer": (eer, eer),
    "min_dcf": (
        lambda t, n: min_dcf(t, n, 0.01, 2.0, 1.0),
        lambda s: min_dcf(s, p_target=0.01, c_miss=2.0),
    ),
    "dcf": (
        lambda t, n: dcf(t, n, 0.2, normalize=False),
        lambda s: dcf(s, p_target=0.2, normalize=False),
    ),
    "rocch_auc": (rocch_auc, rocch_auc),
    "prbep": (prbep, prbep),
    "conventional_eer": (conventional_eer, conventional_eer),
    "det_curve": (lambda t, n: det_curve(t, n), det_curve),
    "det_curve hull": (
        lambda t, n: det_curve(t, n, convex_hull=True),
        lambda s: det_curve(s, convex_hull=True),
    ),
    "bayes_error_rates": (
        lambda t, n: bayes_error_rates(t, n, H),
        lambda s: bayes_error_rates(s, prior_log_odds=H),
    ),
    "c_primary": (lambda t, n: c_primary(t, n), c_primary),
    "min_truncated_cllr": (
        lambda t, n: min_truncated_cllr(t, n, (-3.0, 1.0)),
        lambda s: min_truncated_cllr(s, prior_log_odds_range=(-3.0, 1.0)),
    ),
}
# sums over trials: the sorted order may round differently in the last bits
SUMS = {
    "cllr": (lambda t, n: cllr(t, n, 0.1), lambda s: cllr(s, p_target=0.1)),
    "cross_entropy": (cross_entropy, cross_entropy),
    "truncated_cllr": (
        lambda t, n: truncated_cllr(t, n, (-2.0, 2.0)),
        lambda s: truncated_cllr(s, prior_log_odds_range=(-2.0, 2.0)),
    ),
}


def _values(x):
    if isinstance(x, (float, int)):
        return [x]
    fields = vars(x) if hasattr(x, "__dict__") else {f: getattr(x, f) for f in x.__slots__}
    return [v for v in fields.values() if isinstance(v, (float, int, np.ndarray, tuple))]


def _assert_same(a, b):
    for u, v in zip(_values(a), _values(b), strict=True):
        np.testing.assert_array_equal(np.asarray(u, dtype=object), np.asarray(v, dtype=object))


@pytest.mark.parametrize("wrap", ["BinaryScores", "rocch"])
@pytest.mark.parametrize("name", sorted(MEASURES))
def test_measures_of_a_binary_scores_equal_those_of_the_pair(name, wrap):
    pair, one = MEASURES[name]
    scores = BinaryScores(TAR, NON) if wrap == "BinaryScores" else rocch(TAR, NON)
    _assert_same(one(scores), pair(TAR, NON))


@pytest.mark.parametrize("wrap", ["BinaryScores", "rocch"])
@pytest.mark.parametrize("name", sorted(SUMS))
def test_sums_of_a_binary_scores_equal_those_of_the_sorted_pair(name, wrap):
    pair, one = SUMS[name]
    scores = BinaryScores(TAR, NON) if wrap == "BinaryScores" else rocch(TAR, NON)
    assert one(scores) == pair(np.sort(TAR), np.sort(NON))
    assert one(scores) == pytest.approx(pair(TAR, NON), rel=1e-12)


def test_measures_called_one_by_one_sort_and_pav_once(monkeypatch):
    calls = {"sort": 0, "pav": 0}
    sort, pav = binary.sort_trials, binary.pav_from_sorted

    def counting_sort(*args):
        calls["sort"] += 1
        return sort(*args)

    def counting_pav(*args):
        calls["pav"] += 1
        return pav(*args)

    monkeypatch.setattr(binary, "sort_trials", counting_sort)
    monkeypatch.setattr(binary, "pav_from_sorted", counting_pav)
    scores = BinaryScores(TAR, NON)
    for _, one in list(MEASURES.values()) + list(SUMS.values()):
        one(scores)
    hull = rocch(scores)
    for _, one in list(MEASURES.values()) + list(SUMS.values()):
        one(hull)
    assert calls == {"sort": 1, "pav": 1}
    assert hull is scores.hull and as_binary_scores(scores) is scores


def test_a_binary_scores_with_non_too_is_refused_with_a_hint():
    scores = BinaryScores(TAR, NON)
    with pytest.raises(ValueError, match="not both.*keyword"):
        min_dcf(scores, 0.01)
    with pytest.raises(ValueError, match="not both"):
        eer(rocch(TAR, NON), NON)
    with pytest.raises(ValueError, match="non-target scores are missing"):
        eer(TAR)
    with pytest.raises(TypeError, match="p_target"):
        min_dcf(scores)
    with pytest.raises(TypeError, match="prior_log_odds"):
        bayes_error_rates(scores)


def test_a_hull_without_trials_answers_threshold_measures_only():
    s = np.r_[TAR, NON]
    y = np.r_[np.ones(TAR.size, bool), np.zeros(NON.size, bool)]
    hull = summarize(s, y).hull()  # from block summaries: no trials
    assert eer(hull) == eer(TAR, NON)
    assert min_dcf(hull, p_target=0.05) == min_dcf(TAR, NON, 0.05)
    assert min_cllr(hull) == min_cllr(TAR, NON)
    np.testing.assert_array_equal(
        det_curve(hull, convex_hull=True).p_miss, det_curve(TAR, NON, convex_hull=True).p_miss
    )
    for measure in (cllr, lambda h: dcf(h, p_target=0.1)):
        with pytest.raises(ValueError, match="without its trials"):
            measure(hull)
    for measure in (det_curve, conventional_eer):  # the steppy ROC: runs not kept
        with pytest.raises(ValueError, match="runs of the empirical ROC"):
            measure(hull)

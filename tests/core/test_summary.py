"""Block summaries of score ranges: merging per-range PAV summaries equals PAV of all trials."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focal import bayes_threshold
from focal.core.pav import pav
from focal.core.summary import ScoreSummary, TrialSums, merge, summarize, trial_sums
from focal.metrics import (
    BinaryScores,
    SummarizedScores,
    bayes_error_rates,
    cllr,
    conventional_eer,
    dcf,
    det_curve,
    eer,
    min_cllr,
    min_dcf,
    prbep,
    rocch_auc,
)


def _tied_trials(seed, n=4000, p=0.2):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < p
    s = np.round(rng.normal(size=n) + 1.5 * y, 1)  # heavy ties, mixed runs
    s[:6] = np.where(y[:6], np.inf, 2.0)  # +/-inf LLRs
    s[6:12] = np.where(y[6:12], -2.0, -np.inf)
    return s, y


def _cut(s, cuts):
    return np.searchsorted(np.asarray(cuts, dtype=float), s, side="right")


def _assert_same_blocks(summary, ref, runs=False):
    fields = ["score_lo", "score_hi", "n_tar", "n_non"]
    if runs:
        fields += ["runs_n_tar", "runs_n_non", "runs_score_lo"]
    for f in fields:
        np.testing.assert_array_equal(getattr(summary, f), getattr(ref, f), err_msg=f)


@pytest.mark.parametrize(
    "cuts", [[], [0.0], [-1.0, 0.3, 0.31, 1.7], [-np.inf, np.inf], [-5, -4, 9]]
)
def test_merge_of_ranges_equals_pav_of_all(cuts):
    s, y = _tied_trials(0)
    r = _cut(s, cuts)
    parts = [summarize(s[r == j], y[r == j], keep_runs=True) for j in range(len(cuts) + 1)]
    _assert_same_blocks(merge(parts), pav(s[y], s[~y]), runs=True)


def test_weights_are_multiplicities():
    s, y = _tied_trials(1)
    w = np.random.default_rng(1).integers(0, 4, s.size)
    ref = pav(np.repeat(s[y], w[y]), np.repeat(s[~y], w[~y]))
    r = _cut(s, [-0.5, 0.5, 1.0])
    parts = [summarize(s[r == j], y[r == j], w[r == j], keep_runs=True) for j in range(4)]
    _assert_same_blocks(merge(parts), ref, runs=True)
    with pytest.raises(ValueError, match="whole numbers"):
        summarize(s, y, w + 0.5)
    with pytest.raises(ValueError, match="non-negative"):
        summarize(s, y, -w)


def test_merge_refuses_overlapping_ranges():
    s, y = _tied_trials(2)
    a = summarize(s[s <= 0.5], y[s <= 0.5])
    b = summarize(s[s >= 0.5], y[s >= 0.5])  # 0.5 in both: ties split
    with pytest.raises(ValueError, match="disjoint, increasing"):
        merge([a, b])
    with pytest.raises(ValueError, match="disjoint, increasing"):
        merge([summarize(s[s > 0.5], y[s > 0.5]), summarize(s[s < 0.5], y[s < 0.5])])


def test_one_class_and_empty_parts():
    assert merge([]).n_blocks == 0
    e = summarize([], [])
    assert e.n_blocks == 0 and e.n_targets == 0
    one = summarize([3.0, 1.0, 2.0], [1, 1, 1])
    np.testing.assert_array_equal([one.score_lo[0], one.score_hi[0], one.n_tar[0]], [1, 3, 3])
    with pytest.raises(ValueError, match="both classes"):
        one.to_pav()


def test_measures_from_summary_equal_in_memory():
    s, y = _tied_trials(3)
    h = np.linspace(-4, 4, 17)
    p = [0.5, 0.01, 0.3]
    thr = np.concatenate((-h, [2.0]))
    r = _cut(s, [0.0, 1.0])
    summary = merge(summarize(s[r == j], y[r == j], keep_runs=True) for j in range(3))
    sums = trial_sums(s[:1000], y[:1000], p_targets=p, thresholds=thr) + trial_sums(
        s[1000:], y[1000:], p_targets=p, thresholds=thr
    )
    got = SummarizedScores(summary, sums)
    ref = BinaryScores(s[y], s[~y])
    assert eer(got) == eer(ref) and prbep(got) == prbep(ref)
    assert rocch_auc(got) == rocch_auc(ref) and conventional_eer(got) == conventional_eer(ref)
    for q in p:
        assert min_dcf(got, p_target=q) == min_dcf(ref, p_target=q)
        assert min_cllr(got, p_target=q) == min_cllr(ref, p_target=q)
        assert cllr(got, p_target=q) == pytest.approx(cllr(ref, p_target=q), rel=1e-12, abs=0)
    wrong = s.copy()
    wrong[0] = -np.inf if y[0] else np.inf  # an infinitely wrong LLR
    sums_w = trial_sums(wrong, y, p_targets=p)
    assert cllr(SummarizedScores(summarize(wrong, y), sums_w)) == np.inf
    assert dcf(got, p_target=0.5, c_miss=1.0, c_fa=1.0) == dcf(ref, p_target=0.5)
    a = bayes_error_rates(got, prior_log_odds=h)
    b = bayes_error_rates(ref, prior_log_odds=h)
    for f in ("actual", "minimum", "min_n_misses", "min_n_false_alarms"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    for hull in (False, True):
        da, db = det_curve(got, convex_hull=hull), det_curve(ref, convex_hull=hull)
        np.testing.assert_array_equal(da.p_fa, db.p_fa)
        np.testing.assert_array_equal(da.thresholds, db.thresholds)
    with pytest.raises(ValueError, match="not among the priors"):
        cllr(got, p_target=0.2)
    with pytest.raises(ValueError, match="not among the thresholds"):
        dcf(got, p_target=0.2)
    with pytest.raises(ValueError, match="keep_runs"):
        det_curve(SummarizedScores(summarize(s, y), sums))
    with pytest.raises(ValueError, match="keep_runs"):
        conventional_eer(SummarizedScores(summarize(s, y), sums))
    with pytest.raises(ValueError, match="TrialSums"):
        cllr(SummarizedScores(summary))


def test_sums_must_match_the_summary():
    s, y = _tied_trials(4)
    with pytest.raises(ValueError, match="different trials"):
        SummarizedScores(summarize(s, y), trial_sums(s[:10], y[:10]))
    with pytest.raises(ValueError, match="same p_targets"):
        trial_sums(s, y, p_targets=[0.5]) + TrialSums.empty([0.1])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-6, 6), st.booleans(), st.integers(0, 3)), min_size=2, max_size=60
    ),
    st.lists(st.integers(-7, 7), max_size=4, unique=True),
)
def test_merge_property(trials, cuts):
    s = np.array([t[0] for t in trials], dtype=float) / 2
    y = np.array([t[1] for t in trials])
    w = np.array([t[2] for t in trials])
    if not ((w * y).sum() and (w * ~y).sum()):
        return
    cuts = np.sort(np.asarray(cuts, dtype=float)) / 2
    r = _cut(s, cuts)
    parts = [
        summarize(s[r == j], y[r == j], w[r == j], keep_runs=True) for j in range(cuts.size + 1)
    ]
    _assert_same_blocks(
        merge(parts), pav(np.repeat(s[y], w[y]), np.repeat(s[~y], w[~y])), runs=True
    )
    assert isinstance(parts[0], ScoreSummary)


def test_engine_recipe_of_the_module_docstring():
    """The few lines a Spark / Ray user writes, with a list standing in for the engine."""
    s, y = _tied_trials(5, n=20000)
    rng = np.random.default_rng(5)
    sample_of_scores = rng.choice(s, 500)
    cuts = np.unique(np.quantile(sample_of_scores, np.linspace(0, 1, 65)[1:-1]))
    r = np.searchsorted(cuts, s, side="right")
    ranges = [(s[r == j], y[r == j]) for j in range(cuts.size + 1)]
    chunks = [(s[i : i + 3000], y[i : i + 3000]) for i in range(0, s.size, 3000)]
    parts = [summarize(s_j, y_j) for s_j, y_j in ranges]
    thr = [bayes_threshold(0.01)]
    sums = [trial_sums(s_c, y_c, p_targets=[0.5], thresholds=thr) for s_c, y_c in chunks]
    scores = SummarizedScores(merge(parts), sum(sums[1:], sums[0]))
    ref = BinaryScores(s[y], s[~y])
    assert (eer(scores), min_dcf(scores, p_target=0.01), min_cllr(scores)) == (
        eer(ref),
        min_dcf(ref, p_target=0.01),
        min_cllr(ref),
    )
    assert cllr(scores) == pytest.approx(cllr(ref), rel=1e-12)
    assert dcf(scores, p_target=0.01) == dcf(ref, p_target=0.01)

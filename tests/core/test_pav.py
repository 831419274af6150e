"""PAV (thesis 7.7.3, appendix C) against its closed form, on data with heavy ties."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from focal.core import pav
from focal.core._pav_kernel import _exact_pav_starts, _tie_runs
from focal.metrics import cllr, from_labels, min_cllr, pav_llr
from tests._support.calibration_reference import closed_form_pav_llr as reference_pav_llr

# scores drawn from a handful of values give heavy ties between and within classes
tied_scores = st.lists(st.integers(-4, 4), min_size=2, max_size=40)


def both_classes(flags, n):
    """First n labels, with one flipped if needed so that both classes occur (n >= 2)."""
    labels = np.array(flags[:n])
    if labels.all():
        labels[0] = False
    elif not labels.any():
        labels[0] = True
    return labels


def closed_form_pav_llr(scores, labels, prior=None):
    """The O(G^2) closed form of eqs. 7.47-7.51 (tests/_support/calibration_reference.py).

    With ``prior`` the trials carry the prior weights of eq. C.7 (v1 = prior / N_tar,
    v2 = (1 - prior) / N_non), so the posterior solution is that of the prior and the prior
    log-odds are removed afterwards (eq. C.21); theorem 5 says the result does not depend on it.
    """
    labels = np.asarray(labels, dtype=bool)
    weights = None
    if prior is not None:
        n_t, n_n = int(labels.sum()), int((~labels).sum())
        weights = [prior / n_t if y else (1 - prior) / n_n for y in labels]
    return np.array(reference_pav_llr(np.asarray(scores, dtype=float), labels, weights))


@given(tied_scores, st.lists(st.booleans(), min_size=2, max_size=40))
def test_pav_llr_matches_closed_form_with_ties(values, flags):
    n = min(len(values), len(flags))
    scores = np.array(values[:n], dtype=float) * 0.5
    labels = both_classes(flags, n)
    got = pav_llr(scores, labels)
    want = closed_form_pav_llr(scores, labels)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@given(
    tied_scores,
    st.lists(st.booleans(), min_size=2, max_size=40),
    st.fractions(Fraction(1, 1000), Fraction(999, 1000)),
)
def test_pav_llr_is_independent_of_the_prior(values, flags, prior):
    # theorem 5 / eq. C.23: PAV with prior weights at any prior gives the same LLRs
    n = min(len(values), len(flags))
    scores = np.array(values[:n], dtype=float)
    labels = both_classes(flags, n)
    np.testing.assert_allclose(
        pav_llr(scores, labels),
        closed_form_pav_llr(scores, labels, prior=prior),
        rtol=1e-12,
        atol=1e-12,
    )


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=60), st.randoms(use_true_random=False))
def test_pav_llr_is_monotone_and_tie_consistent(values, rnd):
    scores = np.array(values)
    labels = np.array([rnd.random() < 0.5 for _ in values])
    labels[0], labels[1] = True, False
    llr = pav_llr(scores, labels)
    ordered = llr[np.argsort(scores, kind="stable")]
    assert np.all(ordered[1:] >= ordered[:-1])
    for v in np.unique(scores):
        assert np.unique(llr[scores == v]).size == 1


@given(tied_scores, st.lists(st.booleans(), min_size=2, max_size=40), st.floats(0.01, 0.99))
def test_cllr_of_pav_llr_is_min_cllr(values, flags, p):
    n = min(len(values), len(flags))
    scores = np.array(values[:n], dtype=float)
    labels = both_classes(flags, n)
    llr = pav_llr(scores, labels)
    assert cllr(*from_labels(llr, labels), p_target=p) == pytest.approx(
        min_cllr(*from_labels(scores, labels), p_target=p), rel=1e-12, abs=1e-12
    )


def test_pav_output_in_input_order():
    scores = np.array([3.0, -1.0, 2.0, 0.0])
    labels = np.array([1, 0, 0, 1])
    # sorted: -1(n) 0(t) 2(n) 3(t): blocks [-1] -> -inf, [0, 2] -> 0, [3] -> +inf
    np.testing.assert_array_equal(pav_llr(scores, labels), [np.inf, -np.inf, 0.0, 0.0])


def test_pav_of_a_single_tied_group_is_zero():
    # every score tied: one block whose target fraction is the overall one -> LLR exactly 0
    np.testing.assert_array_equal(pav_llr(np.ones(7), [1, 0, 0, 1, 0, 0, 0]), np.zeros(7))


def test_pav_blocks_expose_counts_and_score_ranges():
    result = pav([0.0, 2.0, 2.0, 5.0], [1.0, 2.0, 3.0, -1.0])
    # merged: -1n | 0t | 1n | 2t 2t 2n | 3n | 5t  (runs; the tied 2s form one mixed run)
    # PAV: [0t,1n] pools to 1/2; [2t2t2n] + [3n] pools to 1/2, equal to the block before -> one
    # block [0 .. 3] with 3 targets and 3 non-targets
    np.testing.assert_array_equal(result.n_tar, [0, 3, 1])
    np.testing.assert_array_equal(result.n_non, [1, 3, 0])
    np.testing.assert_array_equal(result.score_lo, [-1, 0, 5])
    np.testing.assert_array_equal(result.score_hi, [-1, 3, 5])
    assert result.n_targets == 4 and result.n_nontargets == 4
    # block LLRs by eq. 7.51: log((n_tar/4) / (n_non/4))
    np.testing.assert_array_equal(result.llr, [-np.inf, 0.0, np.inf])
    # the runs PAV started from, for the steppy ROC
    np.testing.assert_array_equal(result.runs_n_tar, [0, 1, 0, 2, 0, 1])
    np.testing.assert_array_equal(result.runs_n_non, [1, 0, 1, 1, 1, 0])


def test_pav_blocks_have_strictly_increasing_fractions():
    rng = np.random.default_rng(3)
    result = pav(rng.normal(1, 1, 3000).round(1), rng.normal(0, 1, 5000).round(1))
    frac = result.n_tar / (result.n_tar + result.n_non)
    assert np.all(np.diff(frac) > 0)
    assert np.all(result.score_hi[:-1] < result.score_lo[1:])
    assert np.all(np.diff(result.llr) > 0)


@pytest.mark.parametrize("seed", range(5))
def test_exact_fallback_agrees_with_fast_path(seed):
    rng = np.random.default_rng(seed)
    tar = rng.normal(1.0, 1.0, 500).round(1)
    non = rng.normal(0.0, 1.0, 700).round(1)
    fast = pav(tar, non)
    n_t, n_n, _, _ = _tie_runs(np.sort(tar), np.sort(non))
    starts = _exact_pav_starts(n_t, n_t + n_n)
    np.testing.assert_array_equal(np.add.reduceat(n_t, starts), fast.n_tar)
    np.testing.assert_array_equal(np.add.reduceat(n_n, starts), fast.n_non)


def test_larger_class_can_be_targets():
    # the run construction places the smaller class inside the larger one: both ways must agree
    rng = np.random.default_rng(7)
    a = rng.normal(0, 1, 300).round(1)
    b = rng.normal(1, 1, 40).round(1)
    forward = pav(b, a)
    mirrored = pav(-a, -b)  # targets <-> non-targets with scores negated: blocks reversed
    np.testing.assert_array_equal(forward.n_tar, mirrored.n_non[::-1])
    np.testing.assert_allclose(forward.llr, -mirrored.llr[::-1])


def _merged_runs_oracle(tar, non):
    """Runs of the merged sorted trials by plain Python: (n_tar, n_non, score) per distinct score,
    then neighbouring single-label scores of the same label joined.
    """
    scores = sorted(set(tar) | set(non))
    counts = [(list(tar).count(s), list(non).count(s), s) for s in scores]
    runs = []
    for t, n, s in counts:
        if runs and n == 0 and t and runs[-1][1] == 0:
            runs[-1][0] += t
        elif runs and t == 0 and n and runs[-1][0] == 0:
            runs[-1][1] += n
        else:
            runs.append([t, n, s])
    return np.array(runs, dtype=float).T


def _naive_pav(n_t, n_n):
    """Textbook PAV with exact fractions (thesis app. C): block counts, lowest run first."""
    blocks = []
    for t, n in zip(n_t.tolist(), n_n.tolist()):
        blocks.append([t, n])
        # pool while the previous block is at least as target-rich as the last one
        while len(blocks) > 1 and (
            Fraction(blocks[-2][0], sum(blocks[-2])) >= Fraction(blocks[-1][0], sum(blocks[-1]))
        ):
            t_last, n_last = blocks.pop()
            blocks[-1][0] += t_last
            blocks[-1][1] += n_last
    return np.array(blocks, dtype=np.int64).T


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("small_paths", [False, True])
def test_blocks_and_lazy_runs_match_a_naive_merge(seed, small_paths, monkeypatch):
    """Elements, the chunked search and the strides of targets skipped above a coarse
    minorant (forced on small inputs) give the blocks of a naive PAV over the merged runs,
    and the runs built on demand.
    """
    import importlib

    core_pav = importlib.import_module("focal.core._pav_kernel")
    if small_paths:
        monkeypatch.setattr(core_pav, "_CHUNK", 3)
        monkeypatch.setattr(core_pav, "_STRIDE", 2)
    rng = np.random.default_rng(seed)
    n_tar = rng.integers(1, 400) if seed % 2 else rng.integers(130, 400)
    n_non = rng.integers(n_tar, 900)
    scale = [1, 3, 10, 100, 1000, 10, 1e6, 1e9][seed]
    tar = np.round(rng.normal(1.0, 1.0, n_tar) * scale)
    non = np.round(rng.normal(0.0, 1.0, n_non) * scale)
    for t, n in ((tar, non), (non[:n_tar], tar)):  # targets the fewer, then the more
        result = pav(t, n)
        r_t, r_n, r_lo = _merged_runs_oracle(t, n)
        b_t, b_n = _naive_pav(r_t.astype(np.int64), r_n.astype(np.int64))
        np.testing.assert_array_equal(result.n_tar, b_t)
        np.testing.assert_array_equal(result.n_non, b_n)
        first = np.cumsum(np.r_[0, (b_t + b_n)[:-1]])  # trials before each block
        everything = np.sort(np.r_[t, n])
        np.testing.assert_array_equal(result.score_lo, everything[first])
        np.testing.assert_array_equal(result.score_hi, everything[first + b_t + b_n - 1])
        np.testing.assert_array_equal(result.runs_n_tar, r_t)
        np.testing.assert_array_equal(result.runs_n_non, r_n)
        np.testing.assert_array_equal(result.runs_score_lo, r_lo)


def test_nan_is_named_at_its_input_position_after_the_sort():
    with pytest.raises(ValueError, match=r"^non contains 2 NaN value\(s\), first at index 1"):
        pav([0.0, 1.0], [3.0, np.nan, -1.0, np.nan])


@pytest.mark.parametrize("side", ["left", "right"])
def test_chunked_sorted_search_equals_searchsorted(side, monkeypatch):
    import importlib

    core_pav = importlib.import_module("focal.core._pav_kernel")
    monkeypatch.setattr(core_pav, "_CHUNK", 4)
    rng = np.random.default_rng(2)
    for _ in range(50):
        hay = np.sort(np.round(rng.normal(0, 1, rng.integers(1, 200)) * rng.choice([1, 5, 100])))
        q = np.sort(np.round(rng.normal(0.5, 1.5, rng.integers(17, 200)) * rng.choice([1, 5])))
        np.testing.assert_array_equal(
            core_pav._sorted_positions(hay, q, side), np.searchsorted(hay, q, side=side)
        )

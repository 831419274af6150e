"""Core pieces behind the PAV / ROCCH estimators: PAV-LLR against the closed form (thesis eqs.
7.47-7.51), the step / linear block maps for unseen scores, and bounding by virtual trials.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from focal.core.maps import block_llr_map, step_index
from focal.core.pav import bounded_pav_blocks, pav
from focal.metrics import pav_llr
from tests._support.calibration_reference import closed_form_pav_llr

# small integer scores give many ties between and within classes
trials = st.lists(st.tuples(st.integers(-4, 4), st.booleans()), min_size=2, max_size=30).filter(
    lambda t: any(y for _, y in t) and not all(y for _, y in t)
)


def assert_llr_equal(got, want, rtol=1e-12):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])
    np.testing.assert_allclose(got[~inf], want[~inf], rtol=rtol, atol=1e-12)


@given(trials)
def test_pav_llr_equals_closed_form(t):
    scores = np.array([s for s, _ in t], dtype=float)
    labels = np.array([y for _, y in t])
    assert_llr_equal(pav_llr(scores, labels), closed_form_pav_llr(scores, labels))


def test_step_index_by_hand():
    lo = np.array([-1.0, 1.0, 3.0])
    s = np.array([-9.0, -1.0, 0.0, 0.999, 1.0, 2.5, 3.0, 7.0])
    np.testing.assert_array_equal(step_index(lo, s), [0, 0, 0, 0, 1, 1, 2, 2])


def test_block_llr_map_by_hand():
    lo, hi = np.array([-1.0, 1.0, 3.0]), np.array([0.0, 2.5, 5.0])  # centres -0.5, 1.75, 4
    llr = np.array([-2.0, 0.5, 1.0])
    s = np.array([-9.0, -0.5, 0.0, 1.0, 1.75, 2.875, 4.0, 9.0])
    np.testing.assert_array_equal(
        block_llr_map(lo, hi, llr, s), [-2.0, -2.0, -2.0, 0.5, 0.5, 0.5, 1.0, 1.0]
    )
    # linear: (s - c_k) / (c_{k+1} - c_k) of the way from llr_k to llr_{k+1}; flat outside
    want = [
        -2.0,
        -2.0,
        -2.0 + 2.5 * 0.5 / 2.25,
        -2.0 + 2.5 * 1.5 / 2.25,
        0.5,
        0.5 + 0.5 * 1.125 / 2.25,
        1.0,
        1.0,
    ]
    np.testing.assert_allclose(block_llr_map(lo, hi, llr, s, "linear"), want, rtol=1e-15)


def test_block_llr_map_linear_keeps_infinite_end_blocks_as_steps():
    lo, hi = np.array([-1.0, 1.0, 3.0]), np.array([0.0, 2.0, 5.0])  # centres -0.5, 1.5, 4
    llr = np.array([-np.inf, 0.25, np.inf])
    s = np.array([-3.0, -0.5, 0.9, 1.0, 1.5, 2.9, 3.0, 8.0])
    np.testing.assert_array_equal(
        block_llr_map(lo, hi, llr, s, "linear"),
        [-np.inf, -np.inf, -np.inf, 0.25, 0.25, 0.25, np.inf, np.inf],
    )
    # perfect separation: no finite block, the step rule everywhere
    np.testing.assert_array_equal(
        block_llr_map([0.0, 2.0], [1.0, 3.0], [-np.inf, np.inf], [0.5, 1.5, 2.0], "linear"),
        [-np.inf, -np.inf, np.inf],
    )


def test_block_llr_map_rejects_unknown_interpolation():
    with pytest.raises(ValueError, match="interpolation must be one of"):
        block_llr_map([0.0], [1.0], [0.0], [0.5], "cubic")


def test_linear_centres_of_huge_blocks_do_not_overflow():
    big = np.finfo(float).max
    out = block_llr_map([-big, big / 2], [big / 4, big], [-1.0, 1.0], [-big, 0.0, big], "linear")
    assert np.all(np.isfinite(out)) and out[0] == -1.0 and out[-1] == 1.0
    assert -1.0 <= out[1] <= 1.0


@given(
    trials,
    st.lists(st.floats(-6, 6, allow_nan=False), max_size=20),
    st.sampled_from(["step", "linear"]),
    st.sampled_from([0.0, 0.5, 1.0, 3.0]),
)
def test_block_llr_map_is_monotone_on_any_scores(t, extra, interpolation, a):
    scores = np.array([s for s, _ in t], dtype=float)
    labels = np.array([y for _, y in t])
    r = pav(scores[labels], scores[~labels])
    if a > 0:
        starts, llr = bounded_pav_blocks(r, a)
        ends = np.append(starts[1:], r.n_tar.size) - 1
        lo, hi = r.score_lo[starts], r.score_hi[ends]
    else:
        lo, hi, llr = r.score_lo, r.score_hi, r.llr
    query = np.sort(np.concatenate([scores, extra, (scores[:-1] + scores[1:]) / 2]))
    out = block_llr_map(lo, hi, llr, query, interpolation)
    assert np.all(out[1:] >= out[:-1])
    assert not np.isnan(out).any()
    # constant beyond the ends
    below = block_llr_map(lo, hi, llr, [lo[0] - 1.0, lo[0] - 1e9], interpolation)
    above = block_llr_map(lo, hi, llr, [hi[-1] + 1.0, hi[-1] + 1e9], interpolation)
    assert below[0] == below[1] == llr[0] and above[0] == above[1] == llr[-1]


# -- bounding ------------------------------------------------------------------------------


def bounded_llr_of_training_scores(scores, labels, a):
    r = pav(scores[labels], scores[~labels])
    starts, llr = bounded_pav_blocks(r, a)
    ends = np.append(starts[1:], r.n_tar.size) - 1
    return block_llr_map(r.score_lo[starts], r.score_hi[ends], llr, scores), llr, r


def test_bounded_pav_by_hand_on_separated_scores():
    # virtual target below, virtual non-target above: blocks {vT, N, N} and {T, T, vN}
    scores = np.array([-1.0, 0.0, 1.0, 2.0])
    labels = np.array([False, False, True, True])
    out, llr, _ = bounded_llr_of_training_scores(scores, labels, 1.0)
    # (1/3) / (2/3) with N_tar + a = N_non + a = 3
    np.testing.assert_allclose(llr, [-math.log(2), math.log(2)], rtol=1e-15)
    np.testing.assert_allclose(out, [-math.log(2)] * 2 + [math.log(2)] * 2, rtol=1e-15)


@given(
    trials,
    st.sampled_from(
        [Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(7, 2), Fraction(50)]
    ),
)
def test_bounded_pav_is_the_pav_of_the_augmented_trials(t, a):
    scores = np.array([s for s, _ in t], dtype=float)
    labels = np.array([y for _, y in t])
    got, llr, _ = bounded_llr_of_training_scores(scores, labels, float(a))
    # the definition: a target of weight a below every score, a non-target of weight a above
    aug_scores = list(scores) + [scores.min() - 1.0, scores.max() + 1.0]
    aug_labels = list(labels) + [True, False]
    want = closed_form_pav_llr(aug_scores, aug_labels, [1] * len(scores) + [a, a])[:-2]
    assert_llr_equal(got, want, rtol=1e-11)
    assert np.all(np.isfinite(llr)) and np.all(np.diff(llr) >= 0)


@given(trials, st.sampled_from([1e-3, 0.5, 1.0, 10.0]))
def test_bounded_llr_obeys_the_data_size_bound(t, a):
    scores = np.array([s for s, _ in t], dtype=float)
    labels = np.array([y for _, y in t])
    _, llr, r = bounded_llr_of_training_scores(scores, labels, a)
    assert llr[0] > -math.log1p(r.n_targets / a)
    assert llr[-1] < math.log1p(r.n_nontargets / a)


def test_bounded_pav_moves_interior_blocks_only_by_the_renormalization():
    rng = np.random.default_rng(3)
    tar, non = rng.normal(2, 1, 400), rng.normal(0, 1, 600)
    r = pav(tar, non)
    starts, llr = bounded_pav_blocks(r, 1.0)
    assert np.isinf(r.llr[0]) and np.isinf(r.llr[-1]) and np.all(np.isfinite(llr))
    shift = math.log((600 + 1) * 400 / ((400 + 1) * 600))  # N_tar + a and N_non + a
    sizes = np.diff(np.append(starts, r.n_tar.size))
    interior = [g for g in range(1, starts.size - 1) if sizes[g] == 1]
    assert len(interior) > 5
    for g in interior:
        assert llr[g] == pytest.approx(r.llr[starts[g]] + shift, rel=1e-12)


@pytest.mark.parametrize("a", [0.0, -1.0, np.nan, np.inf])
def test_bounded_pav_rejects_bad_pseudo_count(a):
    r = pav([1.0, 2.0], [0.0, 1.5])
    with pytest.raises(ValueError, match="pseudo_count"):
        bounded_pav_blocks(r, a)

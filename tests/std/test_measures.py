"""TWV / ATWV / MTWV, DET points, C_nxe, C_nxe^min and processing load (SWS 2013 plan)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from focal.std import (
    STD2006,
    SWS2013,
    Detections,
    OperatingPoint,
    Reference,
    STDTask,
    affine_recalibration,
    align,
    atwv,
    cnxe,
    cxe,
    indexing_speed_factor,
    min_cnxe,
    mtwv,
    processing_load,
    searching_speed_factor,
    term_det_curve,
    twv,
)


def random_task(
    seed, n_queries=4, n_files=3, file_seconds=60.0, n_far=30, decisions="threshold", n_tps=1.0
):
    """A small random search with occurrences, nearby detections and false alarms."""
    rng = np.random.default_rng(seed)
    occ = []
    for q in range(n_queries):
        for _ in range(int(rng.integers(1, 5))):
            occ.append(
                (
                    f"q{q}",
                    f"f{rng.integers(n_files)}",
                    round(rng.uniform(0, file_seconds - 2), 2),
                    round(rng.uniform(0.3, 1.2), 2),
                )
            )
    det = []
    for q, f, t, d in occ:
        for _ in range(int(rng.integers(0, 3))):
            det.append((q, f, round(t + rng.normal(0, 0.4), 2), d, round(rng.normal(2, 2), 1)))
    for _ in range(n_far):
        det.append(
            (
                f"q{rng.integers(n_queries)}",
                f"f{rng.integers(n_files)}",
                round(rng.uniform(0, file_seconds), 2),
                0.5,
                round(rng.normal(-1, 2), 1),
            )
        )
    q, f, t, d, s = (list(c) for c in zip(*det))
    s = np.array(s)
    if decisions == "threshold":
        dec = s >= rng.choice(s)
    elif decisions == "random":
        dec = rng.random(s.size) < 0.5
    else:
        dec = None
    detections = Detections(q, f, t, d, s, dec)
    reference = Reference(*(list(c) for c in zip(*occ)))
    return STDTask(detections, reference, t_audio=n_files * file_seconds, n_tps=n_tps)


def brute_twv(trials, accept, beta):
    """TWV of plan eq. 6 from scratch: a loop over queries counting hits and false alarms."""
    total = 0.0
    for k in range(trials.n_queries):
        mine = trials.query == k
        n_hit = np.count_nonzero(mine & accept & trials.hit)
        n_fa = np.count_nonzero(mine & accept & ~trials.hit)
        n_act = trials.n_act[k]
        total += (n_act - n_hit) / n_act + beta * n_fa / (trials.n_trials - n_act)
    return 1.0 - total / trials.n_queries


# ---------------------------------------------------------------------------------------------
# operating points


def test_sws2013_operating_point_numbers_from_the_plan():
    assert round(SWS2013.beta, 2) == 66.66  # plan sec. 4.1
    assert round(SWS2013.effective_prior, 4) == 0.0148  # plan sec. 4.2.1, eq. 23
    assert round(STD2006.beta, 1) == 999.9  # plan sec. 2.5
    same = OperatingPoint.from_effective_prior(SWS2013.effective_prior)
    assert same.beta == pytest.approx(SWS2013.beta, rel=1e-12)  # eq. 22


def test_sws2012_operating_point():
    trials = align(random_task(3))
    op = OperatingPoint.sws2012(trials.n_true, trials.n_trials)
    n = trials.n_trials
    assert op.beta == pytest.approx((n - trials.n_true) / trials.n_true, rel=1e-12)  # eq. 18
    assert op.p_target == trials.n_true / n  # eq. 17
    r = atwv(trials, "sws2012")
    assert r.beta == pytest.approx(op.beta, rel=1e-12)
    assert r.twv == pytest.approx(brute_twv(trials, trials.decision, op.beta), abs=1e-12)
    assert atwv(trials, (op.p_target, 1.0, 1.0)).twv == pytest.approx(r.twv, abs=1e-15)
    with pytest.raises(ValueError, match="sws2012"):
        atwv(trials, "sws2011")
    with pytest.raises(ValueError, match="N_true"):
        OperatingPoint.sws2012(0, 100.0)


def test_operating_points_by_name():
    trials = align(random_task(3))
    for name, point in (("sws2013", SWS2013), ("STD2006", STD2006)):
        assert OperatingPoint.named(name) == point
        assert mtwv(trials, name) == mtwv(trials, point)
        assert cnxe(trials, name) == cnxe(trials, point)
    assert cnxe(trials, "SWS2012") == cnxe(
        trials, OperatingPoint.sws2012(trials.n_true, trials.n_trials)
    )
    with pytest.raises(ValueError, match="depends on the data"):
        OperatingPoint.named("sws2012")  # no trials to take N_true from
    with pytest.raises(ValueError, match="'sws2013', 'std2006', 'sws2012'"):
        OperatingPoint.named("nist")


# ---------------------------------------------------------------------------------------------
# TWV family


def test_trivial_and_perfect_systems():
    ref = Reference(
        query=["a", "a", "b"], file=["x", "y", "x"], tbeg=[1.0, 5.0, 9.0], dur=[0.5, 0.5, 1.0]
    )
    # rejects everything: decisions all NO, and a system with no detection at all
    rejecting = Detections(
        query=["a", "b"],
        file=["x", "x"],
        tbeg=[1.0, 9.0],
        dur=[0.5, 1.0],
        score=[1.0, 2.0],
        decision=[0, 0],
    )
    r = atwv(align(STDTask(rejecting, ref, 100.0)))
    assert r.twv == 0.0 and r.c_norm == 1.0 and r.threshold == math.inf  # plan sec. 2.6
    silent = Detections([], [], [], [], [], [])
    trials = align(STDTask(silent, ref, 100.0))
    assert atwv(trials).twv == 0.0 and mtwv(trials).twv == 0.0
    assert mtwv(trials).threshold == math.inf
    # detects every occurrence, says YES only there
    perfect = Detections(
        query=["a", "a", "b", "b"],
        file=["x", "y", "x", "y"],
        tbeg=[1.0, 5.0, 9.0, 30.0],
        dur=[0.5, 0.5, 1.0, 1.0],
        score=[3.0, 2.0, 4.0, -1.0],
        decision=[1, 1, 1, 0],
    )
    trials = align(STDTask(perfect, ref, 100.0))
    assert atwv(trials).twv == 1.0 and mtwv(trials).twv == 1.0
    assert atwv(trials).c_norm == 0.0


@pytest.mark.parametrize("seed", range(12))
def test_mtwv_sweep_equals_brute_force_and_bounds_atwv(seed):
    trials = align(random_task(seed))
    for op in (SWS2013, OperatingPoint(0.01, 1.0, 1.0), STD2006):
        best = mtwv(trials, op)
        thresholds = sorted(set(trials.score.tolist())) + [math.inf]
        values = [brute_twv(trials, trials.score >= t, op.beta) for t in thresholds]
        assert best.twv == pytest.approx(max(values), abs=1e-12)
        assert best.twv == pytest.approx(
            brute_twv(trials, trials.score >= best.threshold, op.beta), abs=1e-12
        )
        act = atwv(trials, op)
        assert not math.isnan(act.threshold)
        assert best.twv >= act.twv - 1e-12
        assert act.twv == pytest.approx(brute_twv(trials, trials.decision, op.beta), abs=1e-12)


@settings(max_examples=40)
@given(st.integers(0, 10_000), st.sampled_from([0.5, 1.0, 2.0]))
def test_mtwv_is_at_least_atwv_for_threshold_decisions(seed, n_tps):
    trials = align(random_task(seed, n_tps=n_tps))
    assert mtwv(trials).twv >= atwv(trials).twv - 1e-12
    assert mtwv(trials).twv >= 0.0


def test_twv_and_atwv_with_threshold_argument():
    trials = align(random_task(5, decisions=None))
    with pytest.raises(ValueError, match="no YES/NO decisions"):
        atwv(trials)
    r = atwv(trials, threshold=1.0)
    assert (
        r.twv
        == twv(trials, 1.0).twv
        == pytest.approx(brute_twv(trials, trials.score >= 1.0, SWS2013.beta), abs=1e-12)
    )
    with pytest.raises(ValueError, match="NaN"):
        twv(trials, float("nan"))


def test_query_dependent_decisions_are_flagged():
    trials = align(random_task(2, decisions="random"))
    assert math.isnan(atwv(trials).threshold)


def test_det_curve_points():
    trials = align(random_task(8))
    det = term_det_curve(trials)
    assert det.thresholds[-1] == math.inf and det.p_miss[-1] == 1.0 and det.p_fa[-1] == 0.0
    assert (np.diff(det.thresholds) > 0).all()
    assert (np.diff(det.p_miss) >= -1e-15).all() and (np.diff(det.p_fa) <= 1e-15).all()
    for t, pm, pf in zip(det.thresholds[:-1], det.p_miss[:-1], det.p_fa[:-1]):
        accept = trials.score >= t
        c = trials.counts(accept)
        assert pm == pytest.approx(np.mean(c.n_misses / c.n_act), abs=1e-13)  # eq. 4
        assert pf == pytest.approx(np.mean(c.n_false_alarms / c.n_nontarget), abs=1e-13)  # eq. 5


# ---------------------------------------------------------------------------------------------
# C_nxe over the censored trial set


def materialized_cnxe(trials, p_tar, gamma=1.0, delta=0.0):
    """Plan eqs. 37-43 with every censored trial written out (n_tps T_audio must be an integer)."""
    llr_min = trials.score.min()
    tar, non = [], []
    for k in range(trials.n_queries):
        mine = trials.query == k
        hits = trials.score[mine & trials.hit]
        fas = trials.score[mine & ~trials.hit]
        n_nt = int(round(trials.n_trials)) - int(trials.n_act[k])
        tar += hits.tolist() + [llr_min] * (int(trials.n_act[k]) - hits.size)
        non += fas.tolist() + [llr_min] * (n_nt - fas.size)
    tar = gamma * np.array(tar) + delta
    non = gamma * np.array(non) + delta
    h = math.log(p_tar / (1 - p_tar))
    c_tar = np.log1p(np.exp(-(tar + h)))  # eq. 37
    c_non = np.log1p(np.exp(non + h))
    xe = (p_tar * c_tar.mean() + (1 - p_tar) * c_non.mean()) / math.log(2)  # eq. 43
    prior = (p_tar * math.log(1 / p_tar) + (1 - p_tar) * math.log(1 / (1 - p_tar))) / math.log(2)
    return xe / prior, xe


@pytest.mark.parametrize("seed,n_tps", [(0, 1.0), (1, 2.0), (4, 1.0)])
def test_weighted_cnxe_equals_materialized(seed, n_tps):
    trials = align(random_task(seed, n_files=2, file_seconds=25.0, n_far=12, n_tps=n_tps))
    for op in (SWS2013, OperatingPoint(0.3, 1.0, 1.0)):
        want_n, want_xe = materialized_cnxe(trials, op.effective_prior)
        assert cnxe(trials, op) == pytest.approx(want_n, rel=1e-12)
        assert cxe(trials, op) == pytest.approx(want_xe, rel=1e-12)


def test_all_zero_llrs_give_cnxe_one():
    task = random_task(6)
    det = task.detections
    zero = Detections(det.query, det.file, det.tbeg, det.dur, np.zeros(len(det)), det.decision)
    trials = align(STDTask(zero, task.reference, task.t_audio))
    assert cnxe(trials) == 1.0
    assert cnxe(trials, STD2006) == 1.0
    rec = affine_recalibration(trials)
    assert rec.min_cnxe == 1.0 and rec.calibration_loss == 0.0


@pytest.mark.parametrize("seed", range(6))
def test_min_cnxe_is_the_affine_minimum(seed):
    trials = align(random_task(seed, n_files=2, file_seconds=25.0, n_far=12))
    p = SWS2013.effective_prior
    rec = affine_recalibration(trials)
    assert rec.min_cnxe <= rec.cnxe and rec.min_cnxe <= 1.0 + 1e-12
    assert rec.cnxe == cnxe(trials)
    assert rec.llr_min == trials.score.min()
    assert min_cnxe(trials) == rec.min_cnxe
    if math.isfinite(rec.gamma):
        assert materialized_cnxe(trials, p, rec.gamma, rec.delta)[0] == pytest.approx(
            rec.min_cnxe, rel=1e-9
        )
    # an independent optimizer on the materialized trials finds nothing lower
    fun = lambda v: materialized_cnxe(trials, p, v[0], v[1])[0]  # noqa: E731
    other = min(
        minimize(
            fun, x0, method="Nelder-Mead", options=dict(xatol=1e-10, fatol=1e-13, maxiter=4000)
        ).fun
        for x0 in ([1.0, 0.0], [0.1, 0.0], [2.0, -2.0])
    )
    assert rec.min_cnxe <= other + 1e-9
    assert rec.min_cnxe == pytest.approx(other, abs=1e-6)


def _separable_task(miss_one: bool):
    # occurrences at 10, 20, 30 s of query q; hits score 10, false alarms score 0
    ref = Reference(query=["q"] * 3, file=["a"] * 3, tbeg=[10.0, 20.0, 30.0], dur=[1.0] * 3)
    n_hit = 2 if miss_one else 3
    det = Detections(
        query=["q"] * (n_hit + 2),
        file=["a"] * (n_hit + 2),
        tbeg=[10.0, 20.0, 30.0][:n_hit] + [50.0, 60.0],
        dur=[1.0] * (n_hit + 2),
        score=[10.0] * n_hit + [0.0, 0.0],
    )
    return align(STDTask(det, ref, t_audio=100.0))


def test_min_cnxe_on_separable_trials():
    rec = affine_recalibration(_separable_task(miss_one=False))
    assert rec.min_cnxe == 0.0 and rec.gamma == math.inf and math.isnan(rec.delta)
    assert rec.cnxe > 0.0


def test_min_cnxe_with_a_tie_at_the_boundary():
    # one missed occurrence is a censored target at llr_min = 0, tied with every non-target (the
    # two false alarms and the 97 - 2 censored ones, all at 0). As gamma -> inf the hits cost 0
    # and the tied group sits at one LLR x: the infimum is min_x a C_tar(x) + b C_non(x) with
    # a = P_tar / 3 (one of 3 targets) and b = 1 - P_tar (all non-targets), i.e.
    # (a + b) H(a / (a + b)) nats, H the binary entropy in nats.
    trials = _separable_task(miss_one=True)
    p = SWS2013.effective_prior
    a, b = p / 3, 1 - p
    r = a / (a + b)
    infimum = (a + b) * (-r * math.log(r) - (1 - r) * math.log(1 - r))
    prior = -p * math.log(p) - (1 - p) * math.log(1 - p)
    rec = affine_recalibration(trials)
    assert math.isfinite(rec.min_cnxe) and math.isfinite(rec.gamma)
    assert rec.min_cnxe == pytest.approx(infimum / prior, rel=1e-7)
    assert rec.min_cnxe >= infimum / prior - 1e-12


def test_cnxe_errors():
    ref = Reference(query=["q"], file=["a"], tbeg=[1.0], dur=[1.0])
    empty = align(STDTask(Detections([], [], [], [], []), ref, 10.0))
    with pytest.raises(ValueError, match="llr_min"):
        cnxe(empty)
    inf = align(
        STDTask(
            Detections(["q", "q"], ["a", "a"], [1.0, 5.0], [1.0, 1.0], [np.inf, -np.inf]), ref, 10.0
        )
    )
    assert cnxe(inf) == pytest.approx(materialized_cnxe(inf, SWS2013.effective_prior)[0])
    with pytest.raises(ValueError, match="finite"):
        min_cnxe(inf)


# ---------------------------------------------------------------------------------------------
# processing load (plan sec. 4.3)


def test_speed_factors_and_processing_load():
    assert round(indexing_speed_factor(14 * 16, 300), 4) == 0.7467  # the plan's ISF example
    # eq. 46 on the plan's SSF example: 48 CPU hours, T_Q = 900 s = 0.25 h, 300 h of audio
    assert searching_speed_factor(3 * 16, 0.25, 300) == pytest.approx(48 / 75)
    assert searching_speed_factor(48, [0.1, 0.15], 300) == pytest.approx(48 / 75)  # eq. 47
    assert processing_load(0.7, 2.0, 0.5, 4.0) == pytest.approx(0.1 * 1.4 + 0.9 * 2.0)  # eq. 48
    assert processing_load(0.7, 2.0, 0.5, 4.0, lam=1.0) == pytest.approx(1.4)
    with pytest.raises(ValueError, match="lam"):
        processing_load(1, 1, 1, 1, lam=1.5)
    with pytest.raises(ValueError, match="t_audio"):
        indexing_speed_factor(1.0, 0.0)
    with pytest.raises(ValueError, match="t_queries"):
        searching_speed_factor(1.0, [0.0], 10.0)
    with pytest.raises(ValueError, match="isf"):
        processing_load(-1, 1, 1, 1)


def test_cnxe_keeping_queries_without_occurrences_eq_41():
    """Hand case of tests/std/test_alignment.py: query C (no occurrence, one detection scored 9)
    joins Q, so |T| = 3 * 1000 trials; its detection is a non-target trial and llr_min is the
    minimum over every submitted detection (0).
    """
    from focal.std import align, cxe
    from tests._support.std import hand_task

    trials = align(hand_task())
    op = OperatingPoint(0.01, 1.0, 1.0)
    p = op.effective_prior
    tar = np.array([5.0, 1.0, 4.0, 0.0])  # aligned: d0, d2, d5, d6
    non = np.array([3.0, 2.0, 0.5, 9.0])  # unaligned d1, d3, d4 and C's d7
    n_true, n_all = 5, 3 * 1000
    llr_min = 0.0
    tar_all = np.r_[tar, np.full(n_true - tar.size, llr_min)]
    non_all = np.r_[non, np.full(n_all - n_true - non.size, llr_min)]
    h = math.log(p / (1 - p))
    xe = (
        p * np.mean(np.logaddexp(0, -(tar_all + h)))
        + (1 - p) * np.mean(np.logaddexp(0, non_all + h))
    ) / math.log(2)
    prior_xe = (p * math.log(1 / p) + (1 - p) * math.log(1 / (1 - p))) / math.log(2)
    assert cxe(trials, op, queries="all") == pytest.approx(xe, rel=1e-12)
    assert cnxe(trials, op, queries="all") == pytest.approx(xe / prior_xe, rel=1e-12)
    # the default leaves C out entirely: 2 queries, no score 9
    non_eval = np.r_[non[:3], np.full(2 * 1000 - n_true - 3, llr_min)]
    xe_eval = (
        p * np.mean(np.logaddexp(0, -(tar_all + h)))
        + (1 - p) * np.mean(np.logaddexp(0, non_eval + h))
    ) / math.log(2)
    assert cxe(trials, op) == pytest.approx(xe_eval, rel=1e-12)
    assert min_cnxe(trials, op, queries="all") <= cnxe(trials, op, queries="all")
    with pytest.raises(ValueError, match="queries"):
        cnxe(trials, op, queries="some")


def test_cnxe_all_queries_refuses_more_detections_than_trials():
    from focal.std import Detections, Reference, STDTask, align

    det = Detections(
        query=["A", "B", "B", "B"],
        file=["f"] * 4,
        tbeg=[1.0, 2.0, 3.0, 4.0],
        dur=[0.5] * 4,
        score=[1.0, 0.0, 0.5, 0.2],
    )
    ref = Reference(query=["A"], file=["f"], tbeg=[1.0], dur=[0.5])
    trials = align(STDTask(det, ref, t_audio=2.0, n_tps=1.0))  # N = 2 trials per query
    assert np.isfinite(cnxe(trials))  # B is excluded: fine
    with pytest.raises(ValueError, match="'B' has 3 detections"):
        cnxe(trials, queries="all")

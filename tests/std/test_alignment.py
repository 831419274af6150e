"""Alignment of detections with reference occurrences (SWS plan sec. 2.1)."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import focal.std.matching as matching_module
from focal.std import Detections, OperatingPoint, Reference, STDTask, align, atwv, mtwv
from tests._support.std import HAND_DETECTIONS, HAND_REFERENCE, hand_task

# the hand-built case: tests/_support/std.py


def test_hand_case_alignment():
    trials = align(hand_task())
    assert trials.detection_occurrence.tolist() == [0, -1, 1, -1, -1, 3, 4, -1]
    assert trials.occurrence_detection(5).tolist() == [0, 2, -1, 5, 6]
    assert trials.queries == ("A", "B")
    assert trials.n_act.tolist() == [3, 2]
    assert trials.excluded_queries == ("C",)
    assert trials.excluded_detections.tolist() == [1]
    assert trials.n_detections == 7 and trials.n_aligned == 4


def test_hand_case_counts_and_twv():
    op = OperatingPoint(0.00015, 100.0, 1.0)
    beta = Fraction(1) * (1 - Fraction(15, 100000)) / (100 * Fraction(15, 100000))
    trials = align(hand_task())
    c = trials.counts(trials.decision)
    assert c.n_hits.tolist() == [1, 2]
    assert c.n_misses.tolist() == [2, 0]
    assert c.n_false_alarms.tolist() == [2, 0]
    act = atwv(trials, op)
    assert (act.n_hits, act.n_misses, act.n_false_alarms) == (3, 2, 2)
    assert act.p_miss == pytest.approx(1 / 3, abs=1e-15)
    assert act.p_fa == pytest.approx(1 / 997, abs=1e-15)
    assert act.twv == pytest.approx(float(Fraction(2, 3) - beta / 997), abs=1e-13)
    assert np.isnan(act.threshold)

    best = mtwv(trials, op)
    assert best.threshold == 0.0
    assert (best.n_hits, best.n_misses, best.n_false_alarms) == (4, 1, 3)
    assert best.twv == pytest.approx(float(Fraction(5, 6) - 3 * beta / 1994), abs=1e-13)
    sweep = {
        5: Fraction(1, 6),
        4: Fraction(5, 12),
        3: Fraction(5, 12) - beta / 1994,
        2: Fraction(5, 12) - beta / 997,
        1: Fraction(7, 12) - beta / 997,
        0.5: Fraction(7, 12) - 3 * beta / 1994,
        0: Fraction(5, 6) - 3 * beta / 1994,
    }
    sw = trials.sweep
    assert sw.thresholds.tolist() == [5, 4, 3, 2, 1, 0.5, 0]
    got = 1 - (sw.p_miss + op.beta * sw.p_fa)
    assert got == pytest.approx([float(sweep[t]) for t in sw.thresholds.tolist()], abs=1e-13)


def test_tolerance_boundary_and_decimal_times():
    # occurrence [1.0, 2.0]; mid points 0.5 and 2.5 are exactly 0.5 s away, 2.5 + 1e-6 is not
    ref = Reference(
        query=["q"] * 3, file=["a", "b", "c"], tbeg=[1.0, 1.0, 0.0], dur=[1.0, 1.0, 0.1]
    )
    det = Detections(
        query=["q"] * 4,
        file=["a", "b", "b", "c"],
        tbeg=[0.25, 2.25, 2.25 + 1e-6, 0.4],
        dur=[0.5, 0.5, 0.5, 0.4],
        score=[1, 2, 3, 4],
    )
    trials = align(STDTask(det, ref, 100.0))
    # the last detection's mid point 0.4 + 0.4/2 is 0.6000000000000001 in binary: the decimal
    # times are exactly 0.5 s after the occurrence [0.0, 0.1], so it is aligned
    assert trials.detection_occurrence.tolist() == [0, 1, -1, 2]
    # with 0.6 s both 'b' detections are candidates of one occurrence: the higher score wins
    wider = align(STDTask(det, ref, 100.0), tolerance=0.6)
    assert wider.detection_occurrence.tolist() == [0, -1, 1, 2]


def test_channels_separate_sources():
    ref = Reference(query=["q"], file=["a"], tbeg=[1.0], dur=[1.0], channel=["1"])
    det = Detections(
        query=["q", "q"],
        file=["a", "a"],
        tbeg=[1.0, 1.0],
        dur=[1.0, 1.0],
        score=[5.0, 1.0],
        channel=["2", "1"],
    )
    assert align(STDTask(det, ref, 100.0)).detection_occurrence.tolist() == [-1, 0]


def test_integer_and_string_ids_stay_distinct():
    ref = Reference(query=np.array([1], dtype=object), file=["a"], tbeg=[1.0], dur=[1.0])
    det = Detections(
        query=np.array(["1", 1], dtype=object),
        file=["a", "a"],
        tbeg=[1.0, 1.0],
        dur=[1.0, 1.0],
        score=[5.0, 1.0],
    )
    trials = align(STDTask(det, ref, 100.0))
    assert trials.detection_occurrence.tolist() == [-1, 0]
    assert trials.excluded_queries == ("1",)


# ---------------------------------------------------------------------------------------------
# an independent reference implementation: rule 4 means that, for every threshold, the number
# of aligned detections scoring >= threshold is the maximum matching size among those detections


def _adjacent(det, ref, i, j, tol=0.5):
    if det["query"][i] != ref["query"][j] or det["file"][i] != ref["file"][j]:
        return False
    mid = det["tbeg"][i] + det["dur"][i] / 2
    start, end = ref["tbeg"][j], ref["tbeg"][j] + ref["dur"][j]
    return max(start - mid, mid - end, 0.0) <= tol


def _max_matching(dets, n_ref, adjacent):
    """Kuhn's augmenting paths, O(V E): obviously correct, slow."""
    owner = [-1] * n_ref

    def augment(i, seen):
        for j in range(n_ref):
            if adjacent(i, j) and j not in seen:
                seen.add(j)
                if owner[j] < 0 or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in dets)


def _check_against_brute_force(det, ref):
    task = STDTask(Detections(**det), Reference(**ref), t_audio=1000.0)
    trials = align(task)
    d2o = trials.detection_occurrence
    n_det, n_ref = len(det["score"]), len(ref["tbeg"])
    matched = [o for o in d2o.tolist() if o >= 0]
    assert len(matched) == len(set(matched))  # one-to-one
    for i, o in enumerate(d2o.tolist()):
        if o >= 0:
            assert _adjacent(det, ref, i, o)  # only candidates
    adjacent = lambda i, j: _adjacent(det, ref, i, j)  # noqa: E731
    scores = np.asarray(det["score"], dtype=float)
    for theta in sorted(set(scores.tolist())) + [-np.inf]:
        above = [i for i in range(n_det) if scores[i] >= theta]
        best = _max_matching(above, n_ref, adjacent)
        assert int(np.count_nonzero(d2o[scores >= theta] >= 0)) == best


_coords = st.integers(0, 24).map(lambda k: k * 0.25)
_durs = st.integers(0, 6).map(lambda k: k * 0.25)


@st.composite
def small_tasks(draw):
    n_ref = draw(st.integers(0, 6))
    n_det = draw(st.integers(0, 9))
    qs, fs = st.sampled_from(["a", "b"]), st.sampled_from(["x", "y"])
    ref = dict(
        query=draw(st.lists(qs, min_size=n_ref, max_size=n_ref)),
        file=draw(st.lists(fs, min_size=n_ref, max_size=n_ref)),
        tbeg=draw(st.lists(_coords, min_size=n_ref, max_size=n_ref)),
        dur=draw(st.lists(_durs, min_size=n_ref, max_size=n_ref)),
    )
    det = dict(
        query=draw(st.lists(qs, min_size=n_det, max_size=n_det)),
        file=draw(st.lists(fs, min_size=n_det, max_size=n_det)),
        tbeg=draw(st.lists(_coords, min_size=n_det, max_size=n_det)),
        dur=draw(st.lists(_durs, min_size=n_det, max_size=n_det)),
        score=draw(st.lists(st.integers(-3, 3), min_size=n_det, max_size=n_det)),
    )
    return det, ref


@given(small_tasks())
def test_alignment_is_maximum_at_every_threshold(case):
    _check_against_brute_force(*case)


def test_dense_components_against_brute_force():
    """Crowded single-file cases: many components with several detections and occurrences."""
    rng = np.random.default_rng(7)
    for _ in range(60):
        n_ref, n_det = int(rng.integers(2, 7)), int(rng.integers(2, 10))
        ref = dict(
            query=["q"] * n_ref,
            file=["f"] * n_ref,
            tbeg=(rng.integers(0, 16, n_ref) * 0.5).tolist(),
            dur=(rng.integers(0, 4, n_ref) * 0.5).tolist(),
        )
        det = dict(
            query=["q"] * n_det,
            file=["f"] * n_det,
            tbeg=(rng.integers(0, 18, n_det) * 0.5).tolist(),
            dur=(rng.integers(0, 3, n_det) * 0.5).tolist(),
            score=rng.integers(-2, 3, n_det).tolist(),
        )
        _check_against_brute_force(det, ref)


def test_sparse_path_for_large_components(monkeypatch):
    """Components above the dense limit use LAPJVsp: same guarantees."""
    monkeypatch.setattr(matching_module, "_DENSE_LIMIT", 0)
    rng = np.random.default_rng(11)
    for _ in range(30):
        n_ref, n_det = int(rng.integers(2, 6)), int(rng.integers(2, 9))
        ref = dict(
            query=["q"] * n_ref,
            file=["f"] * n_ref,
            tbeg=(rng.integers(0, 12, n_ref) * 0.5).tolist(),
            dur=[0.5] * n_ref,
        )
        det = dict(
            query=["q"] * n_det,
            file=["f"] * n_det,
            tbeg=(rng.integers(0, 14, n_det) * 0.5).tolist(),
            dur=[0.0] * n_det,
            score=rng.normal(size=n_det).round(1).tolist(),
        )
        _check_against_brute_force(det, ref)


# ---------------------------------------------------------------------------------------------
# errors


def test_bad_inputs():
    task = hand_task()
    with pytest.raises(ValueError, match="tolerance"):
        align(task, tolerance=-0.1)
    with pytest.raises(ValueError, match="tolerance"):
        align(task, tolerance=float("nan"))
    det = Detections(query=["q"], file=["a"], tbeg=[0.0], dur=[1.0], score=[0.0], channel=["1"])
    ref = Reference(query=["q"], file=["a"], tbeg=[0.0], dur=[1.0])
    with pytest.raises(ValueError, match="channels"):
        align(STDTask(det, ref, 10.0))


def test_trial_model_violations():
    ref = Reference(query=["q"] * 3, file=["a"] * 3, tbeg=[0.0, 2.0, 4.0], dur=[1.0] * 3)
    det = Detections(query=["q"], file=["a"], tbeg=[0.0], dur=[1.0], score=[0.0])
    with pytest.raises(ValueError, match="N_act=3"):
        align(STDTask(det, ref, t_audio=3.0))
    many = Detections(
        query=["q"] * 4,
        file=["a"] * 4,
        tbeg=[10.0, 12.0, 14.0, 16.0],
        dur=[1.0] * 4,
        score=[0.0] * 4,
    )
    with pytest.raises(ValueError, match="unaligned detections"):
        align(STDTask(many, ref, t_audio=6.0))
    assert align(STDTask(many, ref, t_audio=6.0, n_tps=2.0)).n_aligned == 0


def test_data_model_validation():
    ok = dict(query=["q", "q"], file=["a", "a"], tbeg=[0.0, 1.0], dur=[1.0, 1.0], score=[0.0, 1.0])
    with pytest.raises(ValueError, match=r"detections.tbeg has 1 entries, expected 2"):
        Detections(**{**ok, "tbeg": [0.0]})
    with pytest.raises(ValueError, match=r"detections.dur must be >= 0 seconds; entry 1"):
        Detections(**{**ok, "dur": [1.0, -1.0]})
    with pytest.raises(ValueError, match=r"detections.score contains 1 NaN"):
        Detections(**{**ok, "score": [0.0, np.nan]})
    with pytest.raises(ValueError, match=r"detections.tbeg contains 1 non-finite"):
        Detections(**{**ok, "tbeg": [0.0, np.inf]})
    with pytest.raises(ValueError, match=r"detections.query must hold identifiers"):
        Detections(**{**ok, "query": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"detections.file contains None"):
        Detections(**{**ok, "file": np.array(["a", None], dtype=object)})
    with pytest.raises(ValueError, match=r"detections.decision"):
        Detections(**ok, decision=[1, 2])
    with pytest.raises(ValueError, match=r"reference.channel has 1 entries, expected 2"):
        Reference(query=["q", "q"], file=["a", "a"], tbeg=[0, 1], dur=[1, 1], channel=["1"])
    raw = [0.0, 1.0]
    det = Detections(**{**ok, "tbeg": raw})
    det.tbeg[0] = 5.0
    assert raw == [0.0, 1.0]  # stored copies
    ref = Reference(query=["q"], file=["a"], tbeg=[0.0], dur=[1.0])
    with pytest.raises(ValueError, match="t_audio"):
        STDTask(det, ref, t_audio=0.0)
    with pytest.raises(ValueError, match="n_tps"):
        STDTask(det, ref, t_audio=10.0, n_tps=-1)
    with pytest.raises(ValueError, match="duplicate"):
        STDTask(det, ref, t_audio=10.0, queries=["q", "q"])
    with pytest.raises(
        ValueError, match=r"reference.query names 1 query id\(s\) not in the term list: 'q'"
    ):
        STDTask(Detections([], [], [], [], []), ref, t_audio=10.0, queries=["z"])
    with pytest.raises(ValueError, match="detections must be"):
        STDTask(ref, ref, t_audio=10.0)


# ---------------------------------------------------------------------------------------------
# competing detections whose decisions are not monotone in score


def _competing_task():
    """One occurrence o0 = A f1 [10, 11]; d0 (mid 10.25, score 5, NO) and d1 (mid 10.75,
    score 3, YES) both within tolerance. N = 1000 trials, N_nt = 999.
    """
    det = Detections(
        query=["A", "A"],
        file=["f1", "f1"],
        tbeg=[9.75, 10.25],
        dur=[1.0, 1.0],
        score=[5.0, 3.0],
        decision=[0, 1],
    )
    ref = Reference(query=["A"], file=["f1"], tbeg=[10.0], dur=[1.0])
    return STDTask(det, ref, t_audio=1000.0)


def test_prefer_yes_decisions_changes_atwv_by_hand():
    op = OperatingPoint(0.00015, 100.0, 1.0)
    beta = op.beta
    by_score = align(_competing_task())
    assert by_score.detection_occurrence.tolist() == [0, -1]  # the higher score wins
    # at the decisions: the occurrence is missed (d0 says NO), d1 is a false alarm
    assert atwv(by_score, op).twv == pytest.approx(1 - (1 + beta / 999), rel=1e-12)
    assert mtwv(by_score, op).twv == pytest.approx(1.0)  # threshold 5: one hit
    by_decision = align(_competing_task(), prefer="decision")
    assert by_decision.detection_occurrence.tolist() == [-1, 0]  # the YES detection wins
    assert atwv(by_decision, op).twv == pytest.approx(1.0)  # a hit, no false alarm
    # the price: no longer optimal at every threshold (5 accepts only the unaligned d0)
    assert mtwv(by_decision, op).twv == pytest.approx(1 - beta / 999, rel=1e-12)


def test_prefer_decision_equals_score_when_decisions_are_monotone():
    task = hand_task()
    monotone = dict(HAND_DETECTIONS, decision=[int(s >= 2) for s in HAND_DETECTIONS["score"]])
    task = STDTask(Detections(**monotone), Reference(**HAND_REFERENCE), t_audio=1000.0)
    a, b = align(task), align(task, prefer="decision")
    assert np.array_equal(a.detection_occurrence, b.detection_occurrence)


def test_prefer_decision_needs_decisions():
    d = dict(HAND_DETECTIONS)
    d.pop("decision")
    task = STDTask(Detections(**d), Reference(**HAND_REFERENCE), t_audio=1000.0)
    with pytest.raises(ValueError, match="decisions"):
        align(task, prefer="decision")
    with pytest.raises(ValueError, match="prefer"):
        align(hand_task(), prefer="yes")


def test_report_passes_the_alignment_preference():
    from focal.std import term_detection_report

    op = OperatingPoint(0.00015, 100.0, 1.0)
    assert term_detection_report(_competing_task(), operating_point=op).atwv.n_hits == 0
    assert (
        term_detection_report(_competing_task(), operating_point=op, prefer="decision").atwv.n_hits
        == 1
    )

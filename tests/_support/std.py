"""The hand-built term-detection case shared by the alignment and measures tests."""

from focal.std import Detections, Reference, STDTask

# T_audio = 1000 s, n_tps = 1: N = 1000 trials per query.
#
# reference                    detections (query file tbeg dur -> mid point, score, decision)
#   o0 A f1 [10.0, 11.0]         d0 A f1  9.75 1.0 -> 10.25  5    YES  inside o0
#   o1 A f1 [30.0, 31.0]         d1 A f1 10.25 1.0 -> 10.75  3    YES  in o0 too: competes with d0
#   o2 A f2 [ 5.0,  6.0]         d2 A f1 31.0  1.0 -> 31.5   1    NO   0.5 s after o1: aligned
#   o3 B f1 [10.0, 10.5]         d3 A f1 40.0  1.0 -> 40.5   2    YES  near nothing
#   o4 B f1 [11.0, 11.5]         d4 A f2  7.0  0.2 ->  7.1   0.5  NO   1.1 s after o2: not aligned
#                                d5 B f1 10.5  0.5 -> 10.75  4    YES  0.25 s from o3 AND from o4
#                                d6 B f1 11.25 0.5 -> 11.5   0    YES  in o4 only (1.0 s from o3)
#                                d7 C f1  3.0  1.0 ->  3.5   9    YES  query C has no occurrence
#
# Alignment: d0-o0 (d0 beats d1: higher score), d2-o1, d5-o3 and d6-o4 (aligning d5 with o4 would
# leave d6 alone: the maximum alignment has both). d1, d3, d4 unaligned; C excluded.
# Decisions: A: hit d0; misses d2 (aligned, NO) and o2 (never detected); false alarms d1, d3 (d4 is
#            NO: not counted). B: hits d5, d6.
# P_miss(A) = 2/3, P_fa(A) = 2/997; P_miss(B) = 0, P_fa(B) = 0.
# ATWV = 1 - 1/2 (2/3 + beta 2/997) = 2/3 - beta/997.
# Threshold sweep (TWV(theta) = 1/2 (H_A/3 + H_B/2) - beta/2 (F_A/997 + F_B/998)):
#   theta 5: 1/6; 4: 5/12; 3: 5/12 - beta/1994; 2: 5/12 - beta/997; 1: 7/12 - beta/997;
#   0.5: 7/12 - 3 beta/1994; 0: 5/6 - 3 beta/1994 (4 hits, 1 miss, 3 false alarms) = MTWV.
# The YES decisions are not one threshold (d2 NO at 1, d6 YES at 0).

HAND_DETECTIONS = dict(
    query=["A", "A", "A", "A", "A", "B", "B", "C"],
    file=["f1", "f1", "f1", "f1", "f2", "f1", "f1", "f1"],
    tbeg=[9.75, 10.25, 31.0, 40.0, 7.0, 10.5, 11.25, 3.0],
    dur=[1.0, 1.0, 1.0, 1.0, 0.2, 0.5, 0.5, 1.0],
    score=[5, 3, 1, 2, 0.5, 4, 0, 9],
    decision=[1, 1, 0, 1, 0, 1, 1, 1],
)
HAND_REFERENCE = dict(
    query=["A", "A", "A", "B", "B"],
    file=["f1", "f1", "f2", "f1", "f1"],
    tbeg=[10.0, 30.0, 5.0, 10.0, 11.0],
    dur=[1.0, 1.0, 1.0, 0.5, 0.5],
)


def hand_task():
    return STDTask(Detections(**HAND_DETECTIONS), Reference(**HAND_REFERENCE), t_audio=1000.0)

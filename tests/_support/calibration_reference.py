"""Slow, obviously correct reference implementations: the sources of truth of the tests of PAV,
the ROCCH, the binary measures, the calibration estimators and the report. Nothing here imports
focal.

Each follows the seed formula directly, on tiny inputs, with Python loops and exact fractions
where it helps; none shares code (or an algorithm) with focal's fast path.
"""

from __future__ import annotations

import math
from fractions import Fraction


def distinct_groups(scores, labels, weights=None):
    """Distinct scores ascending, with the (target, non-target) weight of each (ties pooled)."""
    weights = [1] * len(scores) if weights is None else list(weights)
    acc = {}
    for s, y, w in zip(scores, labels, weights):
        t, n = acc.get(float(s), (0, 0))
        acc[float(s)] = (t + w, n) if y else (t, n + w)
    keys = sorted(acc)
    return keys, [acc[k][0] for k in keys], [acc[k][1] for k in keys]


def closed_form_pav_llr(scores, labels, weights=None):
    """PAV-LLR of every trial by the O(T^2) closed form, thesis eqs. 7.47-7.51 and C.20.

    Tied scores are one element (a monotone map gives them one value). With pi equal to the
    (weighted) target proportion, r(i, j) is the target fraction of elements i..j, and
    ``p_t = max_{i<=t} min_{j>=t} r(i, j)``; the LLR is ``logit p_t - logit pi``. Exact rationals
    (weights may be Fractions). Returns a list of floats in the input order.
    """
    keys, tar, non = distinct_groups(scores, labels, weights)
    g = len(keys)
    ct, cw = [Fraction(0)], [Fraction(0)]
    for t, n in zip(tar, non):
        ct.append(ct[-1] + Fraction(t))
        cw.append(cw[-1] + Fraction(t) + Fraction(n))

    def r(i, j):
        return (ct[j + 1] - ct[i]) / (cw[j + 1] - cw[i])

    # min_{j >= t} r(i, j) for every i <= t, by a suffix minimum along each row: O(G^2)
    suffix_min = []
    for i in range(g):
        row = [r(i, j) for j in range(i, g)]
        for k in range(len(row) - 2, -1, -1):
            row[k] = min(row[k], row[k + 1])
        suffix_min.append(row)  # row[t - i] = min_{j >= t} r(i, j)
    p = [max(suffix_min[i][t - i] for i in range(t + 1)) for t in range(g)]
    total_t, total_n = ct[-1], cw[-1] - ct[-1]
    llr_of = {}
    for k, pt in zip(keys, p):
        if pt == 0:
            llr_of[k] = -math.inf
        elif pt == 1:
            llr_of[k] = math.inf
        else:  # logit p - logit pi, computed as one exact ratio
            llr_of[k] = math.log((pt * total_n) / ((1 - pt) * total_t))
    return [llr_of[float(s)] for s in scores]


def log_cost_cllr(tar_llr, non_llr, p_target=0.5):
    """Normalized cross-entropy in bits (thesis eq. 7.41, SWS eq. 40), by a plain Python sum."""
    plo = math.log(p_target / (1 - p_target))

    def softplus(x):
        if x == math.inf:
            return math.inf
        if x == -math.inf:
            return 0.0
        return max(x, 0.0) + math.log1p(math.exp(-abs(x)))

    c_t = sum(softplus(-(w + plo)) for w in tar_llr) / len(tar_llr)
    c_n = sum(softplus(w + plo) for w in non_llr) / len(non_llr)
    xe_bits = (p_target * c_t + (1 - p_target) * c_n) / math.log(2)
    h = -(p_target * math.log2(p_target) + (1 - p_target) * math.log2(1 - p_target))
    return xe_bits / h


def roc_counts(tar, non):
    """Every operating point of the empirical ROC as exact (misses, false_alarms) counts.

    Threshold at each distinct score and at +inf, accepting ``score >= threshold``.
    """
    thresholds = sorted(set(map(float, tar)) | set(map(float, non))) + [math.inf]
    return [(sum(1 for t in tar if t < thr), sum(1 for n in non if n >= thr)) for thr in thresholds]


def lower_hull(points):
    """Bottom-left convex hull of (x, y) points (Andrew's monotone chain), x increasing.

    Sorting ties in x by decreasing y keeps the vertical segment at the smallest x (from the
    highest point down) and drops the points above the lowest one at the largest x.
    """
    pts = sorted(set(points), key=lambda p: (p[0], -p[1]))
    hull = []
    for p in pts:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) <= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return hull


def rocch_vertices(tar, non):
    """ROCCH vertices as exact rational (pfa, pmiss), pfa increasing (thesis 7.3.6)."""
    nt, nn = len(tar), len(non)
    pts = [(Fraction(f, nn), Fraction(m, nt)) for m, f in roc_counts(tar, non)]
    return lower_hull(pts)


def brute_min_dcf(tar, non, p_target, c_miss=1.0, c_fa=1.0):
    """Normalized minDCF by trying every threshold (thesis eq. 7.21, SWS eqs. 8-10)."""
    nt, nn = len(tar), len(non)
    a, b = p_target * c_miss, (1 - p_target) * c_fa
    return min(a * m / nt + b * f / nn for m, f in roc_counts(tar, non)) / min(a, b)


def brute_act_dcf(tar_llr, non_llr, p_target, c_miss=1.0, c_fa=1.0):
    """Normalized actual DCF of Bayes decisions ``llr >= -logit(effective prior)``."""
    thr = -(math.log(p_target / (1 - p_target)) + math.log(c_miss / c_fa))
    p_miss = sum(1 for t in tar_llr if t < thr) / len(tar_llr)
    p_fa = sum(1 for n in non_llr if n >= thr) / len(non_llr)
    a, b = p_target * c_miss, (1 - p_target) * c_fa
    return (a * p_miss + b * p_fa) / min(a, b)


def max_min_weighted_errors(points):
    """``max_pi min_i (pi * m_i + (1 - pi) * f_i)`` over pi in [0, 1], exactly (thesis eq. 7.29).

    The inner minimum is concave and piecewise linear in pi, so its maximum sits at pi = 0, 1 or
    where two points' lines cross; try them all (exact rationals).
    """
    pts = [(Fraction(m), Fraction(f)) for m, f in points]
    cands = {Fraction(0), Fraction(1)}
    for i, (m1, f1) in enumerate(pts):
        for m2, f2 in pts[i + 1 :]:
            den = (m1 - f1) - (m2 - f2)
            if den != 0:
                pi = (f2 - f1) / den
                if 0 <= pi <= 1:
                    cands.add(pi)
    return max(min(pi * m + (1 - pi) * f for m, f in pts) for pi in cands)


def rocch_eer(tar, non):
    """ROCCH-EER as max over priors of the min Bayes error-rate (thesis eq. 7.32), exact."""
    nt, nn = len(tar), len(non)
    return max_min_weighted_errors(
        [(Fraction(m, nt), Fraction(f, nn)) for m, f in roc_counts(tar, non)]
    )


def rocch_prbep(tar, non):
    """PRBEP: where misses = false alarms on the hull (thesis 7.3.8), by the same minimax on
    absolute counts; an exact rational count.
    """
    return max_min_weighted_errors(roc_counts(tar, non))

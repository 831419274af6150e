"""Multiclass Brier, C_eta and E_lre against direct numpy formulas, the thesis' identities and
generic optimizers; the Albayzin C_min of a sign-inverted submission (unconstrained alpha).
"""

import pathlib

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax

from focal.core.scoring_rules import BRIER, expected_cost
from focal.metrics import (
    albayzin_measures,
    bayes_risk,
    bayes_risk_analysis,
    brier_analysis,
    cavg,
    e_lre,
    e_lre_default,
    eta_risk,
    lre_cost_matrix,
    misclassification_cost_matrix,
    multiclass_brier,
)
from tests._support.multiclass import make_trials

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "data_samples" / "language_recognition"


def _weights(y, prior):
    return prior[y] / np.bincount(y, minlength=prior.size)[y]


def direct_brier(llh, y, prior):
    """2006 paper eq. 13 literally, prior-weighted over trials."""
    Q = np.exp(llh) * prior
    Q = Q / Q.sum(axis=1, keepdims=True)
    per = np.array(
        [1 - 2 * Q[t, y[t]] + sum(Q[t, i] ** 2 for i in range(Q.shape[1])) for t in range(y.size)]
    )
    return float(_weights(y, prior) @ per)


# ------------------------------------------------------------------------- Brier


@pytest.mark.parametrize("N", [2, 3, 6])
def test_multiclass_brier_is_eq_13(N):
    rng = np.random.default_rng(N)
    llh, y = make_trials(300, N, rng)
    prior = rng.dirichlet(np.ones(N))
    assert multiclass_brier(llh, y, prior) == pytest.approx(
        direct_brier(llh, y, prior), rel=1e-12, abs=1e-12
    )
    flat = np.full(N, 1 / N)
    assert multiclass_brier(llh, y) == pytest.approx(direct_brier(llh, y, flat), rel=1e-12)


def test_brier_known_answers():
    # default system: 1 - sum pi^2; normalized: exactly 1 at any prior
    prior = np.array([0.5, 0.3, 0.2])
    y = np.array([0, 1, 2, 2])
    assert multiclass_brier(np.zeros((4, 3)), y, prior) == pytest.approx(1 - 0.38, rel=1e-15)
    assert multiclass_brier(np.zeros((4, 3)), y, prior, normalize=True) == pytest.approx(1.0)
    # perfectly confident and right: 0; confidently wrong: 2
    big = 800.0 * np.eye(3)
    assert multiclass_brier(big[[0, 1, 2]], [0, 1, 2]) == 0.0
    assert multiclass_brier(big[[1, 2, 0]], [0, 1, 2]) == 2.0


def test_two_class_brier_is_two_thirds_of_the_canonical_binary_rule():
    """N = 2: R_B = 2 (1 - q)^2 for targets, 2 q^2 for non-targets; thesis eq. 7.36 has 3x."""
    rng = np.random.default_rng(9)
    llr = rng.normal(0, 3, 400)
    y = (rng.uniform(size=400) < 0.4).astype(int)
    y[:2] = [0, 1]
    llh = np.column_stack([np.zeros(400), llr])
    for p in (0.5, 0.1):
        ours = multiclass_brier(llh, y, [1 - p, p])
        theirs = expected_cost(llr[y == 1], llr[y == 0], p, BRIER)
        assert ours == pytest.approx(2 / 3 * theirs, rel=1e-12)


def test_brier_minimum_agrees_with_a_generic_optimizer():
    rng = np.random.default_rng(11)
    llh, y = make_trials(500, 4, rng, scale=2.6)  # over-confident
    prior = np.array([0.4, 0.3, 0.2, 0.1])
    a = brier_analysis(llh, y, prior)

    def objective(theta):  # alpha, beta_1..beta_{N-1}
        beta = np.r_[0.0, theta[1:]]
        return direct_brier_vec(theta[0] * llh + beta, y, prior)

    best = min(
        (
            minimize(
                objective,
                x0,
                method="Nelder-Mead",
                options={"xatol": 1e-11, "fatol": 1e-15, "maxiter": 40000, "maxfev": 40000},
            )
            for x0 in ([1.0, 0, 0, 0], [0.4, 0, 0, 0])
        ),
        key=lambda r: r.fun,
    )
    assert a.minimum == pytest.approx(best.fun, abs=1e-8)
    assert a.minimum < a.actual and a.minimum < a.default
    assert a.alpha == pytest.approx(best.x[0], rel=1e-4)
    assert a.calibration_loss == pytest.approx(a.actual - a.minimum)
    recal = a.alpha * llh + a.beta
    assert multiclass_brier(recal, y, prior) == pytest.approx(a.minimum, rel=1e-12)


def direct_brier_vec(llh, y, prior):
    Q = softmax(llh + np.log(prior), axis=1)
    per = 1 - 2 * Q[np.arange(y.size), y] + (Q**2).sum(axis=1)
    return float(_weights(y, prior) @ per)


# ------------------------------------------------------------------------- C_eta


def direct_eta_risk(llh, y, prior, eta):
    """Albayzin eqs. 17-19: decide argmin_j sum_i q_i C(j|i), cost C(j|true)."""
    N = llh.shape[1]
    Q = softmax(llh + np.log(prior), axis=1)
    C = np.array([[0.0 if j == i else 1 / ((N - 1) * eta[i]) for i in range(N)] for j in range(N)])
    d = np.argmin(Q @ C.T, axis=1)
    return float(_weights(y, prior) @ C[d, y])


@pytest.mark.parametrize("N", [2, 3, 5])
def test_eta_risk_is_eqs_17_to_19(N):
    rng = np.random.default_rng(20 + N)
    llh, y = make_trials(400, N, rng)
    prior = rng.dirichlet(np.ones(N))
    eta = rng.dirichlet(np.ones(N))
    assert eta_risk(llh, y, eta, prior) == pytest.approx(
        direct_eta_risk(llh, y, prior, eta), rel=1e-12
    )
    # flat eta: (N - 1)/N times the risk is the prior-weighted error rate
    flat = np.full(N, 1 / N)
    err = _weights(y, prior) @ (np.argmax(llh + np.log(prior), axis=1) != y)
    assert (N - 1) / N * eta_risk(llh, y, None, prior) == pytest.approx(err, rel=1e-12)
    assert eta_risk(llh, y, flat, prior) == eta_risk(llh, y, None, prior)


def test_eta_rules_average_to_the_logarithmic_rule():
    """Thesis eq. 8.13 / Albayzin eq. 21: E_eta[C*_eta(q | i)] = -log q_i for eta uniform on
    the simplex (Monte Carlo over eta, fixed posteriors).
    """
    rng = np.random.default_rng(31)
    q = np.array([0.6, 0.3, 0.1])
    etas = rng.dirichlet(np.ones(3), 200000)
    d = np.argmax(q / etas, axis=1)  # Bayes decision (eq. 19)
    for i in range(3):
        cost = np.where(d != i, 1 / (2 * etas[:, i]), 0.0)
        # heavy-tailed (1/eta); the mean converges slowly: 2% is ~5 standard errors here
        assert cost.mean() == pytest.approx(-np.log(q[i]), rel=0.02)


def test_eta_analysis_two_classes_is_the_exact_threshold_minimum():
    rng = np.random.default_rng(41)
    llh, y = make_trials(60, 2, rng)
    eta = np.array([0.3, 0.7])
    prior = np.array([0.5, 0.5])
    C = misclassification_cost_matrix(eta)
    a = bayes_risk_analysis(llh, y, prior, C, normalize=False)
    llr = llh[:, 1] - llh[:, 0]
    w = _weights(y, prior)
    best = min(
        float(w @ C[(llr >= t).astype(int), y]) for t in np.r_[-np.inf, np.sort(llr), np.inf]
    )
    assert a.minimum == pytest.approx(best, rel=1e-12)


# ------------------------------------------------------------------------- E_lre


def test_e_lre_at_the_flat_prior_is_cavg():
    rng = np.random.default_rng(51)
    llh, y = make_trials(500, 4, rng)
    for a in (0.5, 0.2, 0.8):
        assert e_lre(llh, y, None, a) == pytest.approx(cavg(llh, y, p_target=a), rel=1e-13)


def test_e_lre_non_flat_prior_is_the_compound_bayes_risk():
    rng = np.random.default_rng(52)
    llh, y = make_trials(400, 4, rng)
    prior = np.array([0.4, 0.3, 0.2, 0.1])
    for a in (0.5, 0.3):
        _, C = lre_cost_matrix(4, a)
        assert e_lre(llh, y, prior, a) == pytest.approx(
            bayes_risk(llh, y, prior, C, normalize=False), rel=1e-13
        )
        assert e_lre(llh, y, prior, a, normalize=True) == pytest.approx(
            bayes_risk(llh, y, prior, C), rel=1e-13
        )
        # direct: posterior at the prior, accept iff q_k >= (1-a)/((N-1)a + 1-a)
        Q = np.exp(log_softmax(llh + np.log(prior), axis=1))
        acc = Q >= (1 - a) / (3 * a + 1 - a)
        own = acc[np.arange(y.size), y]
        cost = a * ~own + (1 - a) / 3 * (acc.sum(axis=1) - own)
        assert e_lre(llh, y, prior, a) == pytest.approx(float(_weights(y, prior) @ cost), rel=1e-13)


def test_e_lre_default_hand_computed():
    # prior (1/2, 1/4, 1/4), a = 1/2: accept class 0 (cost 1/2 * 1/2 * 1/2 = 1/8 < 1/4),
    # reject 1 and 2 (1/8 each < 3/4 * 1/4 = 3/16): total 1/8 + 1/8 + 1/8 = 3/8
    assert e_lre_default([0.5, 0.25, 0.25]) == pytest.approx(0.375, rel=1e-15)
    assert e_lre_default(np.full(5, 0.2), 0.3) == pytest.approx(0.3, rel=1e-15)


# ------------------------------------------------------------------------- Albayzin alpha


def _sample_system():
    from focal.io import align_multiclass, read_albayzin_scores, read_multiclass_key

    key = read_multiclass_key(SAMPLES / "eval.key")
    sys1 = read_albayzin_scores(SAMPLES / "eval_sys1_closed.txt")
    X, y, _, _ = align_multiclass(key, sys1, other="oos")
    return X, y


def _generic_c_min(L, y, prior, alpha_sign):
    """C_min by a generic optimizer over (alpha, beta) on the closed-set trials."""
    keep = prior[y] > 0
    La, ya, pa = L[keep][:, prior > 0], y[keep], prior[prior > 0]

    def xe(theta):
        W = theta[0] * La + np.r_[0.0, theta[1:]] + np.log(pa)
        return float(_weights(ya, pa) @ -log_softmax(W, axis=1)[np.arange(ya.size), ya])

    res = minimize(
        xe, np.r_[alpha_sign, np.zeros(pa.size - 1)], method="BFGS", options={"gtol": 1e-10}
    )
    return res.fun


def test_albayzin_sign_inverted_submission():
    """Negated log-likelihoods of the sample's eval sys1 (closed set): the plan's C_min
    (eqs. 11-12, alpha free) finds alpha < 0 and keeps the system's discrimination; the
    thesis' alpha >= 0 gives the default system (F_dis = 1).
    """
    L, y = _sample_system()
    m = albayzin_measures(-L, y)
    c = albayzin_measures(-L, y, nonnegative_alpha=True)
    prior = m.prior
    generic = _generic_c_min(-L, y, prior, -1.0)
    assert m.c_min == pytest.approx(generic, abs=1e-8)
    assert m.alpha < 0
    # the system itself has the same C_min (alpha -> -alpha)
    assert m.c_min == pytest.approx(albayzin_measures(L, y).c_min, rel=1e-10)
    # the numbers, computed independently here: C_mce by log-softmax (Albayzin eq. 6) on the
    # closed-set trials, C_min by the generic optimizer, F's by eqs. 8-14 (F_def = n - 1 = 5)
    keep = y < 6
    W = -L[keep, :6]
    costs = -log_softmax(W, axis=1)[np.arange(W.shape[0]), y[keep]]
    c_mce = float(_weights(y[keep], np.full(6, 1 / 6)) @ costs)
    f_act, f_dis = np.expm1(c_mce) / 5.0, np.expm1(generic) / 5.0
    f_cal = f_act / f_dis - 1
    assert m.c_mce == pytest.approx(c_mce, rel=1e-12)
    assert m.f_dis == pytest.approx(f_dis, rel=1e-7) and m.f_cal == pytest.approx(f_cal, rel=1e-7)
    # a second, independent computation of C_min: the unnegated system from alpha > 0 (a
    # recalibration alpha of -l is -alpha of l), and the plan's identity F_act = (1 + F_cal) F_dis
    assert generic == pytest.approx(_generic_c_min(L, y, prior, 1.0), abs=1e-8)
    assert m.f_act == pytest.approx((1 + m.f_cal) * m.f_dis, rel=1e-12)
    assert m.f_dis < 1.0  # the discrimination is kept, the inversion is all calibration loss
    # thesis form: clamped to the default system, C_min = C_def = log 6, F_dis = 1
    assert c.c_min == pytest.approx(np.log(6), rel=1e-15) and c.f_dis == pytest.approx(1.0)
    assert c.f_cal == pytest.approx(f_act - 1, rel=1e-12)
    assert c.alpha == 0.0


def test_zero_prior_class_is_not_a_target():
    """Albayzin closed set (out-of-set prior 0): E_lre and C_eta ignore the OOS column and its
    trials, so E_lre equals the CAVG of the targets alone.
    """
    rng = np.random.default_rng(61)
    llh, y = make_trials(500, 5, rng)
    prior = np.array([0.25, 0.25, 0.25, 0.25, 0.0])
    keep = y < 4
    assert e_lre(llh, y, prior) == pytest.approx(cavg(llh[keep, :4], y[keep]), rel=1e-13)
    # C_eta: the OOS column (posterior 0) is never decided and its trials are ignored; a miss
    # still costs 1/((N - 1) eta_i) with N = 5, i.e. 1/(3 eta'_i) with eta' = 4/3 eta
    eta = np.array([0.1, 0.2, 0.3, 0.2, 0.2])
    assert eta_risk(llh, y, eta, prior) == pytest.approx(
        direct_eta_risk(llh[keep, :4], y[keep], prior[:4], eta[:4] * 4 / 3), rel=1e-12
    )


def test_cavg_sweep_at_a_non_flat_prior_is_e_lre():
    """Thesis 8.5.1 at a non-flat evaluation prior: every point is E_lre (eq. 8.11) at that
    alpha, normalized by the prior-only default; the flat prior given explicitly is CAVG's
    sweep; a zero-prior class is no target.
    """
    from focal.metrics import cavg_sweep

    rng = np.random.default_rng(71)
    llh, y = make_trials(600, 4, rng)
    prior = np.array([0.4, 0.3, 0.2, 0.1])
    a = np.array([0.02, 0.3, 0.5, 0.8, 0.97])
    sw = cavg_sweep(llh, y, a, prior=prior)
    for k, ak in enumerate(a):
        assert sw.actual[k] == pytest.approx(e_lre(llh, y, prior, ak), rel=1e-12)
        assert sw.actual_normalized[k] == pytest.approx(
            e_lre(llh, y, prior, ak, normalize=True), rel=1e-12
        )
        assert sw.default[k] == pytest.approx(e_lre_default(prior, ak), rel=1e-14)
        rec = sw.alpha * llh + sw.beta
        assert sw.recalibrated[k] == pytest.approx(e_lre(rec, y, prior, ak), rel=1e-12)
    flat = cavg_sweep(llh, y, a, prior=np.full(4, 0.25))
    np.testing.assert_allclose(flat.actual, cavg_sweep(llh, y, a).actual, rtol=1e-13)
    with_oos = np.column_stack([llh, rng.normal(size=600)])
    y5 = np.where(rng.uniform(size=600) < 0.2, 4, y)
    keep = y5 < 4
    sw5 = cavg_sweep(with_oos, y5, a, prior=np.r_[prior, 0.0])
    np.testing.assert_allclose(
        sw5.actual, cavg_sweep(llh[keep], y5[keep], a, prior=prior).actual, rtol=1e-13
    )


def test_eta_risk_of_binary_llrs_is_a_dcf():
    """Two classes: C_eta is detection cost with C_miss = 1/eta_1, C_fa = 1/eta_0."""
    from focal.metrics import dcf

    rng = np.random.default_rng(81)
    tar, non = rng.normal(1, 2, 200), rng.normal(-1, 2, 500)
    llr = np.r_[tar, non]
    y = np.r_[np.ones(200), np.zeros(500)].astype(int)
    eta = [0.7, 0.3]
    p = 0.2
    expected = dcf(tar, non, p, 1 / 0.3, 1 / 0.7, normalize=False)
    assert eta_risk(llr, y, eta, p) == pytest.approx(expected, rel=1e-13)


def _exact_offset_minimum_3(S, y, w, miss):
    """Exact min over offsets (0, b1, b2) of the argmax risk, N = 3: the risk is constant on the
    cells of the arrangement of the lines where two classes tie; every cell touches a vertex,
    so evaluate just off every vertex in the four directions between its two lines.
    """
    a = np.r_[S[:, 0] - S[:, 1], S[:, 0] - S[:, 2], S[:, 1] - S[:, 2]]
    kind = np.repeat([0, 1, 2], S.shape[0])  # b1 = c, b2 = c, b2 - b1 = c
    direction = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    pts = []
    for k1, k2 in [(0, 1), (0, 2), (1, 2)]:
        c1, c2 = a[kind == k1], a[kind == k2]
        C1, C2 = np.meshgrid(c1, c2, indexing="ij")
        if (k1, k2) == (0, 1):
            v = np.stack([C1, C2], axis=-1)
        elif (k1, k2) == (0, 2):
            v = np.stack([C1, C1 + C2], axis=-1)
        else:
            v = np.stack([C1 - C2, C1], axis=-1)
        v = v.reshape(-1, 2)
        for s1 in (-1, 1):
            for s2 in (-1, 1):
                pts.append(v + 1e-7 * (s1 * direction[k1] + s2 * direction[k2]))
    pts = np.concatenate(pts)
    best = np.inf
    for lo in range(0, pts.shape[0], 2000):
        b = np.column_stack([np.zeros(min(2000, pts.shape[0] - lo)), pts[lo : lo + 2000]])
        d = np.argmax(S[None, :, :] + b[:, None, :], axis=2)
        risk = np.where(d == y, 0.0, miss[y]) @ w
        best = min(best, float(risk.min()))
    return best


def test_eta_analysis_coordinate_minimum():
    """N = 3: the coordinate-wise minimum over offsets is never below the exact minimum (found
    by enumerating the cells of the line arrangement) nor above E^opt / actual / default; on
    this case it is the exact minimum. A sign-inverted system gets the same minimum.
    """
    from focal.metrics import eta_risk_analysis

    rng = np.random.default_rng(91)
    llh, y = make_trials(45, 3, rng, sep=1.0)
    eta = np.array([0.5, 0.3, 0.2])
    a = eta_risk_analysis(llh, y, eta)
    S = llh + np.log(1 / 3) - np.log(eta)
    w = _weights(y, np.full(3, 1 / 3))
    exact = _exact_offset_minimum_3(S, y, w, 1 / (2 * eta))
    assert a.minimum >= exact - 1e-12
    assert a.minimum <= min(a.actual, a.recalibrated, a.default)
    assert a.minimum == pytest.approx(exact, rel=1e-12)
    assert eta_risk_analysis(-llh, y, eta).minimum == pytest.approx(a.minimum, rel=1e-12)
    assert a.actual == pytest.approx(eta_risk(llh, y, eta), rel=1e-15)
    n = eta_risk_analysis(llh, y, eta, normalize=True)
    assert n.minimum == pytest.approx(a.minimum / a.default, rel=1e-14) and n.default == 1.0


def test_docstring_examples_of_the_split_modules():
    """The examples moved with their functions out of multiclass_rules and bayes."""
    import doctest

    import focal.metrics.brier
    import focal.metrics.c_eta
    import focal.metrics.decisions

    for module in (focal.metrics.brier, focal.metrics.c_eta, focal.metrics.decisions):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted >= 1, module.__name__

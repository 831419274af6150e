"""The minimum of the multiclass Brier cost over the affine calibration ``alpha l + beta``
(Brümmer & van Leeuwen, "On calibration of language recognition scores", 2006, eq. 13 and
eq. 18) against a generic optimizer (scipy) from many starts, the oracle written here."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import softmax

from focal.metrics import brier_analysis, multiclass_brier
from tests._support.multiclass import make_trials


def _brier(llh, y, prior):
    """Eq. 13 ``1 - 2 q_y + sum_i q_i^2`` averaged with weights pi_i / |T_i|."""
    Q = softmax(llh + np.log(prior), axis=1)
    per = 1 - 2 * Q[np.arange(y.size), y] + (Q**2).sum(axis=1)
    return float((prior[y] / np.bincount(y, minlength=prior.size)[y]) @ per)


def _generic_minimum(llh, y, prior, rng):
    """min over (alpha, beta_1..beta_{N-1}) by BFGS from eight starts (alpha of both signs and
    several sizes, random offsets)."""
    N = prior.size

    def objective(theta):
        return _brier(theta[0] * llh + np.r_[0.0, theta[1:]], y, prior)

    starts = [np.r_[a, np.zeros(N - 1)] for a in (1.0, 0.3, 3.0, -1.0, -0.3)]
    starts += [np.r_[rng.uniform(-2, 2), rng.normal(size=N - 1)] for _ in range(3)]
    return min(minimize(objective, x0, method="BFGS", options={"gtol": 1e-12}).fun
               for x0 in starts)


CASES = [  # (seed, N, sep, scale, prior, sign)
    (1, 3, 1.5, 1.0, None, 1),
    (2, 4, 1.0, 2.6, [0.4, 0.3, 0.2, 0.1], 1),        # over-confident, non-flat prior
    (3, 3, 2.0, 0.3, None, -1),                        # under-confident and sign-inverted
    (4, 6, 1.5, 1.0, [0.2, 0.2, 0.2, 0.2, 0.2, 0.0], 1),  # a zero-prior class (Albayzin eq. 2)
    (5, 5, 0.3, 4.0, [0.1, 0.1, 0.2, 0.3, 0.3], -1),   # weak, over-confident, inverted
]


@pytest.mark.parametrize("seed, N, sep, scale, prior, sign", CASES)
def test_brier_minimum_over_the_affine_calibration_agrees_with_a_generic_optimizer(
        seed, N, sep, scale, prior, sign):
    rng = np.random.default_rng(seed)
    llh, y = make_trials(400, N, rng, sep, scale)
    llh = sign * llh
    p = np.full(N, 1 / N) if prior is None else np.asarray(prior)
    a = brier_analysis(llh, y, p)
    keep = p[y] > 0
    act = np.flatnonzero(p > 0)
    yy = np.searchsorted(act, y[keep])
    oracle = _generic_minimum(llh[keep][:, act], yy, p[act], rng)
    assert a.minimum == pytest.approx(oracle, abs=1e-8)
    assert a.minimum <= oracle + 1e-12
    assert a.minimum <= min(a.actual, a.default)
    # the returned calibration attains the minimum
    assert multiclass_brier(a.alpha * llh + a.beta, y, p) == pytest.approx(a.minimum, rel=1e-12)
    assert np.sign(a.alpha) == sign

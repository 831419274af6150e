"""KDECalibrator against the definitions: Gaussian kernel density estimates (Silverman 1986,
eq. 2.2a) with the rule-of-thumb bandwidth (eq. 3.31), their log ratio, the ELUB clip, and NFI
lir's published numbers for the same estimator.
"""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

from focal.estimators import KDECalibrator
from focal.metrics import cllr, elub_bounds
from tests._support.reference_data import lir_cartridge_llrs


def silverman(x):
    """Silverman (1986) eq. 3.31: 0.9 min(sd, IQR / 1.34) n^(-1/5)."""
    q1, q3 = np.quantile(x, [0.25, 0.75])
    return 0.9 * min(np.std(x, ddof=1), (q3 - q1) / 1.34) * len(x) ** -0.2


def kde_llr(s, tar, non, h_tar, h_non):
    """log(mean_i phi((s - t_i) / h) / h) of the targets minus that of the non-targets (the
    mean taken in the log domain, so far tails do not underflow).
    """

    def log_density(x, h):
        return logsumexp(norm.logpdf((s[:, None] - x[None, :]) / h), axis=1) - np.log(x.size * h)

    return log_density(tar, h_tar) - log_density(non, h_non)


def _fit(tar, non, **kwargs):
    x = np.concatenate((tar, non))
    y = np.concatenate((np.ones(tar.size, int), np.zeros(non.size, int)))
    return KDECalibrator(**kwargs).fit(x, y)


def test_the_lir_cartridge_cases_agree_with_the_definition():
    tar, non = lir_cartridge_llrs()
    tar, non = tar / np.log(10), non / np.log(10)  # calibrate the log10 LRs themselves
    cal = _fit(tar, non, bounds=None)
    h = np.array([silverman(tar), silverman(non)])
    np.testing.assert_allclose(cal.bandwidth_, h, rtol=1e-13)
    s = np.linspace(-3.0, 80.0, 1001)
    np.testing.assert_allclose(cal.decision_function(s), kde_llr(s, tar, non, *h), rtol=1e-10)


def test_the_elub_clip_is_that_of_the_leave_one_out_llrs():
    tar, non = lir_cartridge_llrs()
    tar, non = tar / np.log(10), non / np.log(10)
    cal = _fit(tar, non)
    h_t, h_n = cal.bandwidth_
    # leave-one-out LLRs from the definition: each trial out of its own class's estimate
    loo_t = np.array(
        [kde_llr(tar[i : i + 1], np.delete(tar, i), non, h_t, h_n)[0] for i in range(tar.size)]
    )
    loo_n = np.array(
        [kde_llr(non[i : i + 1], tar, np.delete(non, i), h_t, h_n)[0] for i in range(non.size)]
    )
    lower, upper = elub_bounds(loo_t, loo_n)
    np.testing.assert_allclose(cal.bounds_, [lower, upper], rtol=1e-9)
    s = np.linspace(-5, 80, 500)
    out = cal.decision_function(s)
    assert out.min() == pytest.approx(lower) and out.max() == pytest.approx(upper)
    assert cal.loo_cllr_ == pytest.approx(
        cllr(np.clip(loo_t, lower, upper), np.clip(loo_n, lower, upper)), rel=1e-9
    )


def test_lir_published_values_with_lirs_bandwidth():
    """NFI lir 1.x's test of its KDECalibrator (``test_kde_calibrator``): nine LRs per class
    from calibrated LLR distributions, calibrated on their log10 odds with lir's bandwidth
    rule (``std * (4 / (3 n)) ** (1 / 5)``, population std) and the LRs its test expects.
    """
    odds0 = [9.10734621e-02, 1.37045394e-06, 7.09420701e-07, 5.71489514e-07, 2.44360004e-02,
             5.53264987e-02, 6.40338659e-04, 8.22553310e-09, 2.57792725e-06]  # fmt: skip
    odds1 = [2.42776744e05, 5.35255527e03, 1.50355963e03, 1.08776892e03, 2.19083530e01,
             7.13508826e02, 2.23486401e03, 5.52239060e03, 1.12077833e07]  # fmt: skip
    expected = [3.59562799e-02, 1.75942116e-11, 2.59633540e-12, 1.36799721e-12, 8.15673411e-03,
                2.10030624e-02, 3.70456430e-05, 1.40710861e-18, 1.04459592e-10, 3.14589737e03,
                2.59568527e02, 1.08519904e02, 8.56459139e01, 3.81243702e00, 6.23873841e01,
                1.43844114e02, 2.64913149e02, 1.49097168e05]  # fmt: skip
    x0, x1 = np.log10(odds0), np.log10(odds1)
    h0, h1 = (np.std(x) * (4 / (3 * x.size)) ** 0.2 for x in (x0, x1))
    cal = _fit(x1, x0, bandwidth=(h1, h0), bounds=None)
    lr = np.exp(cal.decision_function(np.concatenate((x0, x1))))
    np.testing.assert_allclose(lr, expected, rtol=1e-6)


def test_cross_validation_minimizes_the_leave_one_out_cllr():
    rng = np.random.default_rng(4)
    tar, non = rng.normal(1.5, 1.0, 60), rng.normal(-1.0, 1.5, 120)
    cal = _fit(tar, non, bandwidth="cv", bounds=None)
    i, j = np.unravel_index(np.argmin(cal.cv_cllr_), cal.cv_cllr_.shape)
    factors = 2.0 ** np.linspace(-2, 2, 17)
    h_t, h_n = factors[i] * silverman(tar), factors[j] * silverman(non)
    np.testing.assert_allclose(cal.bandwidth_, [h_t, h_n], rtol=1e-12)
    # the grid's value at the choice is the leave-one-out Cllr of the definition
    loo_t = [kde_llr(tar[k : k + 1], np.delete(tar, k), non, h_t, h_n)[0] for k in range(60)]
    loo_n = [kde_llr(non[k : k + 1], tar, np.delete(non, k), h_t, h_n)[0] for k in range(120)]
    assert cal.cv_cllr_[i, j] == pytest.approx(cllr(loo_t, loo_n), rel=1e-10)
    assert cal.loo_cllr_ == pytest.approx(cal.cv_cllr_.min(), rel=1e-12)
    assert cal.cv_cllr_.min() <= _fit(tar, non, bounds=None).loo_cllr_


def test_far_tails_stay_finite_and_bounds_clip():
    rng = np.random.default_rng(1)
    tar, non = rng.normal(2, 1, 50), rng.normal(-2, 2, 80)
    free = _fit(tar, non, bounds=None).decision_function([-1e6, 1e6])
    assert np.isfinite(free).all() and np.all(np.abs(free) > 1e10)  # quadratic tails: clip them
    fixed = _fit(tar, non, bounds=(-3.0, 3.0)).decision_function([-1e6, 2.0, 1e6])
    assert fixed.tolist() == [-3.0, 3.0, -3.0]  # the target density falls off faster


def test_save_load_and_runtime_give_the_same_llrs(tmp_path):
    import focal.runtime

    rng = np.random.default_rng(2)
    tar, non = rng.normal(2, 1, 40), rng.normal(-2, 1, 90)
    cal = _fit(tar, non, bandwidth="cv")
    path = tmp_path / "kde.json"
    focal.save(cal, path)
    s = np.linspace(-8, 8, 101)
    assert np.array_equal(focal.load(path).decision_function(s), cal.decision_function(s))
    assert np.array_equal(focal.runtime.load(path).decision_function(s), cal.decision_function(s))


@pytest.mark.parametrize(
    ("kwargs", "y", "match"),
    [
        ({"bandwidth": "scott"}, [0, 1] * 5, "bandwidth"),
        ({"bandwidth": -1.0}, [0, 1] * 5, "bandwidth"),
        ({"bounds": (2.0, 1.0)}, [0, 1] * 5, "bounds"),
        ({}, [0] * 9 + [1], "at least 2 target"),
    ],
)
def test_bad_parameters_and_data_are_refused(kwargs, y, match):
    with pytest.raises(ValueError, match=match):
        KDECalibrator(**kwargs).fit(np.arange(10.0), y)
    with pytest.raises(ValueError, match="no spread"):
        KDECalibrator().fit([1.0, 1.0, 0.0, 2.0], [1, 1, 0, 0])


def test_the_users_labels_are_its_classes():
    rng = np.random.default_rng(5)
    scores = np.concatenate([rng.normal(2, 1, 40), rng.normal(-2, 1, 60)])
    labels = np.repeat(["same", "different"], [40, 60])
    cal = KDECalibrator(pos_label="same").fit(scores, labels)
    assert cal.classes_.tolist() == ["different", "same"]
    assert cal.predict([-4.0, 4.0]).tolist() == ["different", "same"]
    numeric = KDECalibrator().fit(scores, labels == "same")
    np.testing.assert_array_equal(cal.decision_function(scores), numeric.decision_function(scores))

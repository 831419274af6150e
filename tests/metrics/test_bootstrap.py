"""Bootstrap confidence intervals: replicate weights give the measures of the resampled trials,
intervals are reproducible, cover the true value at the nominal rate, and clustered resampling
sees the variance that speaker effects add.
"""

import numpy as np
import pytest
from scipy import integrate, stats

from focal.metrics import (
    cavg,
    cllr,
    conventional_eer,
    dcf,
    eer,
    min_cllr,
    min_dcf,
    multiclass_cllr,
    multiclass_cross_entropy,
    rocch,
)
from focal.metrics._replicate_measures import _BinaryMeasures, _MulticlassMeasures
from focal.metrics._smoothed import (
    _smoothed_cdf,
    _Smoother,
    hull_eer_rows,
    silverman_bandwidth,
    threshold_measures,
)
from focal.metrics.bootstrap import _Resampler, bootstrap_ci, bootstrap_ci_multiclass

SPECS = [
    ("cllr", (0.5, 1.0, 1.0)),
    ("cllr", (0.1, 1.0, 1.0)),
    ("min_cllr", (0.3, 1.0, 1.0)),
    ("eer", (0.5, 1.0, 1.0)),
    ("dcf", (0.05, 2.0, 1.0)),
    ("min_dcf", (0.01, 1.0, 3.0)),
]


def reference_binary(tar, non):
    """Every measure of SPECS computed by the library's plain functions."""
    return [
        cllr(tar, non),
        cllr(tar, non, 0.1),
        min_cllr(tar, non, 0.3),
        eer(tar, non),
        dcf(tar, non, 0.05, 2.0),
        min_dcf(tar, non, 0.01, 1.0, 3.0),
    ]


@pytest.mark.parametrize("seed", range(5))
def test_replicate_weights_give_the_measures_of_the_resampled_trials(seed):
    rng = np.random.default_rng(seed)
    tar = np.round(rng.normal(1.5, 1.5, 60), 1)  # rounded: ties inside and across classes
    non = np.round(rng.normal(-1.5, 1.5, 90), 1)
    evaluator = _BinaryMeasures(tar, non, SPECS)
    w = rng.integers(0, 4, size=(4, 150))
    got = evaluator.values(w)
    for r in range(4):
        expected = reference_binary(np.repeat(tar, w[r, :60]), np.repeat(non, w[r, 60:]))
        np.testing.assert_allclose(got[r], expected, rtol=1e-12, atol=1e-14)


THRESHOLD_SPECS = [
    ("eer", (0.5, 1.0, 1.0)),
    ("conventional_eer", (0.5, 1.0, 1.0)),
    ("min_dcf", (0.05, 1.0, 3.0)),
]


@pytest.mark.parametrize("seed", range(4))
def test_roc_rows_of_unjittered_replicates_give_the_measures_of_the_resampled_trials(seed):
    # rounded scores tie inside and across classes; rows of unequal sizes are padded
    rng = np.random.default_rng(seed)
    tar = np.round(rng.normal(1.0, 1.5, 50), 1)
    non = np.round(rng.normal(-1.0, 1.5, 70), 1)
    w = rng.integers(0, 4, size=(5, 120))
    w[0] = 1  # the data themselves
    got = np.column_stack(
        threshold_measures(*_Smoother(tar, non, 1.0).roc_rows(w), THRESHOLD_SPECS)
    )
    for r in range(5):
        t, n = np.repeat(tar, w[r, :50]), np.repeat(non, w[r, 50:])
        hull = rocch(t, n)
        expected = [eer(hull), conventional_eer(hull), min_dcf(t, n, 0.05, 1.0, 3.0)]
        np.testing.assert_allclose(got[r], expected, rtol=1e-12, atol=1e-14)


def test_hull_eer_of_rows_by_brute_force():
    # oracle: the minimum over all pairs of ROC points on both sides of the diagonal of the
    # level where their segment crosses it (the hull's lowest crossing)
    rng = np.random.default_rng(1)
    pfa = np.concatenate(([1.0], np.sort(rng.random(30))[::-1], [0.0]))
    pm = np.concatenate(([0.0], np.sort(rng.random(30)), [1.0]))
    d = pfa - pm
    left, right = np.flatnonzero(d >= 0), np.flatnonzero(d < 0)
    i, j = np.meshgrid(left, right, indexing="ij")
    lam = -d[j] / (d[i] - d[j])
    expected = np.min(lam * pm[i] + (1 - lam) * pm[j])
    assert hull_eer_rows(pm[None], pfa[None])[0] == pytest.approx(expected, abs=1e-14)


def test_silverman_bandwidth_and_the_smoothed_population():
    x = np.array([0.0, 1.0, 2.0, 3.0, 10.0])  # sd 3.96, IQR 2: 0.9 * (2 / 1.34) * 5**-0.2
    assert silverman_bandwidth(x) == pytest.approx(0.9 * 2 / 1.34 * 5**-0.2)
    assert silverman_bandwidth(np.array([1.0, 1.0, np.inf])) == 0.0
    rng = np.random.default_rng(2)
    y = np.concatenate((rng.normal(0, 1, 5000), [-np.inf, np.inf]))
    t = np.linspace(-4, 4, 9)
    direct = (1 + stats.norm.cdf((t[:, None] - y[:-2][None]) / 0.3).sum(axis=1)) / y.size
    np.testing.assert_allclose(_smoothed_cdf(y, 0.3, t), direct, atol=1e-5)  # binned, FFT
    np.testing.assert_array_equal(
        _smoothed_cdf(y, 0.0, t), (1 + (y[:-2, None] < t).sum(0)) / y.size
    )


def test_infinite_llrs_and_a_missing_class_in_a_replicate():
    tar, non = np.array([np.inf, 1.0, 2.0]), np.array([-np.inf, 0.0, 3.0])
    evaluator = _BinaryMeasures(tar, non, [("cllr", (0.5, 1, 1))])
    got = evaluator.values(np.array([[1, 1, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1], [1, 0, 0, 0, 0, 1]]))
    assert got[0, 0] == pytest.approx(cllr(tar, non))
    assert np.isnan(got[1, 0])  # no target drawn: no value
    assert got[2, 0] == pytest.approx(cllr([np.inf], [3.0]))
    assert np.isinf(
        _BinaryMeasures(np.array([-np.inf]), np.array([0.0]), [("cllr", (0.5, 1, 1))]).values(
            np.ones((1, 2), int)
        )[0, 0]
    )


def test_multiclass_replicate_weights_match_the_plain_functions():
    rng = np.random.default_rng(3)
    L = rng.normal(size=(120, 4))
    y = np.repeat(np.arange(4), 30)
    L[np.arange(120), y] += 1.5
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    evaluator = _MulticlassMeasures(L, y, prior, [("c_mce", 0.5), ("multiclass_cllr", 0.5)])
    flat = _MulticlassMeasures(L, y, np.full(4, 0.25), [("cavg", 0.5), ("cavg", 0.2)])
    w = rng.integers(0, 3, size=(3, 120))
    w[:, ::30] += 1  # every class keeps a trial
    got, got_flat = evaluator.values(w), flat.values(w)
    for r in range(3):
        Lr, yr = np.repeat(L, w[r], axis=0), np.repeat(y, w[r])
        np.testing.assert_allclose(
            got[r],
            [multiclass_cross_entropy(Lr, yr, prior), multiclass_cllr(Lr, yr, prior)],
            rtol=1e-12,
        )
        np.testing.assert_allclose(
            got_flat[r], [cavg(Lr, yr), cavg(Lr, yr, p_target=0.2)], rtol=1e-12
        )


def test_resampling_schemes():
    rng = np.random.default_rng(0)
    strata = np.array([1] * 5 + [0] * 7)
    w = _Resampler(strata, None).draw(rng, 50)
    assert (w[:, :5].sum(axis=1) == 5).all() and (w[:, 5:].sum(axis=1) == 7).all()
    speaker = np.array([0, 0, 1, 2, 2, 0, 1, 1, 2, 2, 0, 1])
    w = _Resampler(strata, [speaker]).draw(rng, 50)
    for s in range(3):  # every trial of a speaker has the same weight
        assert (w[:, speaker == s] == w[:, [np.flatnonzero(speaker == s)[0]]]).all()
    test = np.arange(12) % 4
    w2 = _Resampler(strata, [speaker, test]).draw(rng, 200)
    # two-way: the weight factorizes; a trial's mean weight is 1 (independent multinomials)
    assert abs(w2.mean() - 1.0) < 0.1
    assert set(np.unique(w2)) <= {a * b for a in range(4) for b in range(5)}


def test_reproducible_and_independent_of_n_jobs():
    rng = np.random.default_rng(1)
    tar, non = rng.normal(1, 1, 200), rng.normal(-1, 1, 300)
    a = bootstrap_ci(["cllr", "eer"], tar, non, n_bootstrap=64, random_state=7)
    b = bootstrap_ci(["cllr", "eer"], tar, non, n_bootstrap=64, random_state=7, n_jobs=2)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.replicates, y.replicates)
        assert (x.low, x.high) == (y.low, y.high)
    c = bootstrap_ci("cllr", tar, non, n_bootstrap=64, random_state=8)
    assert not np.array_equal(c.replicates, a[0].replicates)
    assert a[0].estimate == pytest.approx(cllr(tar, non), rel=1e-14)
    assert a[1].estimate == eer(tar, non)
    assert a[0].low < a[0].estimate < a[0].high


def test_operating_points_and_labels():
    tar, non = [1.0, 2.0, 0.5, 3.0], [-1.0, 0.0, 1.5, -2.0]
    one = bootstrap_ci("min_dcf", tar, non, p_target=0.1, c_fa=2, n_bootstrap=20, random_state=0)
    assert one.measure == "min_dcf(0.1:1:2)" and one.estimate == min_dcf(tar, non, 0.1, 1, 2)
    many = bootstrap_ci(
        ["cllr", ("dcf", 0.2, 1, 5), ("cllr", 0.1)], tar, non, n_bootstrap=20, random_state=0
    )
    assert [m.measure for m in many] == ["cllr", "dcf(0.2:1:5)", "cllr(0.1)"]
    assert many[1].estimate == dcf(tar, non, 0.2, 1, 5)
    assert many[2].estimate == pytest.approx(cllr(tar, non, 0.1), rel=1e-14)
    assert set(one.to_dict()) >= {"estimate", "low", "high", "confidence", "resampling"}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(measure="auc"), "measure must be one of"),
        (dict(measure="dcf"), "needs p_target"),
        (dict(measure="cllr", n_bootstrap=0), "n_bootstrap"),
        (dict(measure="cllr", confidence=1.5), "confidence"),
        (dict(measure="cllr", tar_clusters=[0, 1]), "both tar_clusters and non_clusters"),
        (
            dict(measure="cllr", tar_clusters=[0, 1], non_clusters=[0, 1, 2, 3]),
            "one label per trial",
        ),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bootstrap_ci(tar=[1.0, 2.0], non=[0.0, -1.0, 0.5], **kwargs)


def test_multiclass_intervals():
    rng = np.random.default_rng(2)
    L = rng.normal(size=(300, 3))
    y = rng.integers(0, 3, 300)
    L[np.arange(300), y] += 2
    res = bootstrap_ci_multiclass(["c_mce", "cavg"], L, y, n_bootstrap=100, random_state=0)
    assert res[0].estimate == pytest.approx(multiclass_cross_entropy(L, y))
    assert res[1].estimate == pytest.approx(cavg(L, y))
    assert all(r.low < r.estimate < r.high for r in res)
    speakers = rng.integers(0, 20, 300)
    clustered = bootstrap_ci_multiclass(
        "c_mce", L, y, clusters=speakers, n_bootstrap=100, random_state=0
    )
    assert clustered.resampling == "cluster"
    with pytest.raises(ValueError, match="measure must be one of"):
        bootstrap_ci_multiclass("eer", L, y)


def speaker_trials(rng, n_speakers=40, per_speaker=30, effect=1.0):
    """Verification-like trials whose scores share a per-speaker offset (a speaker effect)."""
    spk = np.repeat(np.arange(n_speakers), per_speaker)
    is_tar = rng.random(spk.size) < 0.3
    offset = rng.normal(0, effect, n_speakers)[spk]
    s = np.where(is_tar, 2.0, -2.0) + offset + rng.normal(0, 1.0, spk.size)
    return s[is_tar], s[~is_tar], spk[is_tar], spk[~is_tar]


def test_clustered_intervals_are_wider_with_speaker_effects():
    rng = np.random.default_rng(5)
    wider = 0
    for _ in range(5):
        tar, non, st, sn = speaker_trials(rng)
        trial = bootstrap_ci(["cllr", "eer"], tar, non, n_bootstrap=200, random_state=0)
        clus = bootstrap_ci(
            ["cllr", "eer"],
            tar,
            non,
            tar_clusters=st,
            non_clusters=sn,
            n_bootstrap=200,
            random_state=0,
        )
        wider += sum((c.high - c.low) > (t.high - t.low) for t, c in zip(trial, clus))
    assert wider == 10


@pytest.mark.slow
def test_coverage_of_the_95_percent_interval():
    # calibrated Gaussian LLRs: targets N(mu, 2 mu), non-targets N(-mu, 2 mu) (thesis 7.2.6);
    # true Cllr by quadrature, true EER = Phi(-sqrt(mu / 2)), the ROCCH-EER and the
    # conventional EER alike (the model's ROC is convex). A coverage measured on 400 sets has a
    # standard error of about 1.1 points. Measured: 93.75 / 94.5 / 94.5 %; the plain BCa
    # intervals (smoothing=None, method="bca") cover the ROCCH-EER 92.75 % here, their
    # replicates seeing half its downward bias
    mu, n, n_sets = 2.0, 500, 400
    sd = np.sqrt(2 * mu)
    true_cllr = integrate.quad(lambda x: stats.norm.pdf(x, mu, sd) * np.logaddexp(0, -x), -80, 80)[
        0
    ] / np.log(2)
    true_eer = stats.norm.cdf(-np.sqrt(mu / 2))
    truth = [true_cllr, true_eer, true_eer]
    rng = np.random.default_rng(7)
    hits = np.zeros(3)
    for r in range(n_sets):
        tar, non = rng.normal(mu, sd, n), rng.normal(-mu, sd, n)
        res = bootstrap_ci(
            ["cllr", "eer", "conventional_eer"], tar, non, n_bootstrap=200, random_state=r
        )
        hits += [iv.low <= v <= iv.high for iv, v in zip(res, truth)]
    coverage = hits / n_sets
    assert ((0.93 <= coverage) & (coverage <= 0.97)).all(), coverage


def test_calibration_report_intervals():
    from focal.metrics import calibration_report

    rng = np.random.default_rng(4)
    tar, non, st, sn = speaker_trials(rng)
    rep = calibration_report(
        tar,
        non,
        operating_points=[(0.05, 1, 2)],
        confidence=0.9,
        n_bootstrap=100,
        tar_clusters=st,
        non_clusters=sn,
        random_state=3,
    )
    direct = bootstrap_ci(
        ["cllr", "min_cllr", "eer", ("dcf", 0.05, 1, 2), ("min_dcf", 0.05, 1, 2)],
        tar,
        non,
        confidence=0.9,
        n_bootstrap=100,
        tar_clusters=st,
        non_clusters=sn,
        random_state=3,
    )
    assert [(iv.measure, iv.low, iv.high) for iv in rep.intervals] == [
        (iv.measure, iv.low, iv.high) for iv in direct
    ]
    assert [iv["measure"] for iv in rep.to_dict()["intervals"]][-1] == "min_dcf(0.05:1:2)"
    assert "90 % confidence intervals (cluster bootstrap, 100 replicates)" in str(rep)
    assert "intervals" not in calibration_report(tar, non).to_dict()


def test_progress_reports_every_replicate():
    tar, non = [1.0, 2.0, 0.5, 3.0], [-1.0, 0.0, 1.5, -2.0]
    seen = []
    bootstrap_ci("cllr", tar, non, n_bootstrap=50, random_state=0, progress=seen.append)
    assert seen[-1] == 50 and seen == sorted(seen)
    with pytest.raises(ValueError, match="progress must be"):
        bootstrap_ci("cllr", tar, non, n_bootstrap=5, progress="yes")
    pytest.importorskip("tqdm")
    bootstrap_ci("cllr", tar, non, n_bootstrap=5, random_state=0, progress=True)


def test_bca_reduces_to_the_percentile_interval_without_bias_or_skew():
    from focal.metrics._intervals import _intervals

    v = np.linspace(-1, 1, 2001)[:, None]  # median = estimate: z0 = 0
    (pct,) = _intervals(["m"], [0.0], v, 0.9, "trial")
    (bca,) = _intervals(["m"], [0.0], v, 0.9, "trial", acceleration=np.array([0.0]))
    assert (bca.low, bca.high) == pytest.approx((pct.low, pct.high))
    (shifted,) = _intervals(["m"], [0.5], v, 0.9, "trial", acceleration=np.array([0.0]))
    assert shifted.low > pct.low and shifted.high > pct.high  # replicates mostly below: z0 > 0
    with pytest.raises(ValueError, match="method must be"):
        bootstrap_ci("cllr", [1.0, 2.0], [0.0], method="studentized")


def test_basic_interval_reflects_the_replicates_about_the_estimate():
    from focal.metrics._intervals import _intervals

    v = np.linspace(0.0, 1.0, 1001)[:, None] ** 2  # skewed: quantiles 0.000625 and 0.950625
    (basic,) = _intervals(["m"], [0.5], v, 0.95, "trial", basic=[0])
    q = np.quantile(v, [0.025, 0.975])
    assert (basic.low, basic.high) == pytest.approx((max(1.0 - q[1], 0.0), 1.0 - q[0]))
    (clipped,) = _intervals(["m"], [0.1], v, 0.95, "trial", basic=[0])
    assert clipped.low == 0.0  # a measure >= 0


def test_smoothing_jitters_only_the_threshold_measures():
    rng = np.random.default_rng(6)
    tar, non = rng.normal(1, 1, 150), rng.normal(-1, 1, 200)
    kw = dict(n_bootstrap=64, random_state=3)
    plain = bootstrap_ci(["cllr", "eer"], tar, non, smoothing=None, **kw)
    zero = bootstrap_ci(["cllr", "eer"], tar, non, smoothing=0.0, **kw)
    smooth = bootstrap_ci(["cllr", "eer"], tar, non, **kw)
    for a, b in zip(plain, zero):
        np.testing.assert_array_equal(a.replicates, b.replicates)
    np.testing.assert_array_equal(smooth[0].replicates, plain[0].replicates)  # same draws
    assert not np.array_equal(smooth[1].replicates, plain[1].replicates)
    assert smooth[1].estimate == plain[1].estimate == eer(tar, non)
    with pytest.raises(ValueError, match="smoothing must be"):
        bootstrap_ci("eer", tar, non, smoothing=-1.0)


def test_smoothed_population_of_a_large_sample_has_the_true_measures():
    # oracle: the Gaussian model itself; targets N(1, 2), non-targets N(-1, 2) (calibrated
    # LLRs): EER = Phi(-1 / sqrt(2)), minDCF(0.1) at the Bayes threshold log(9)
    rng = np.random.default_rng(8)
    sd = np.sqrt(2.0)
    smoother = _Smoother(rng.normal(1, sd, 40000), rng.normal(-1, sd, 40000), 1.0)
    t = np.log(9.0)
    true_dcf = (0.1 * stats.norm.cdf((t - 1) / sd) + 0.9 * stats.norm.sf((t + 1) / sd)) / 0.1
    got = smoother.population(THRESHOLD_SPECS[:2] + [("min_dcf", (0.1, 1.0, 1.0))])
    expected = [stats.norm.cdf(-1 / sd)] * 2 + [true_dcf]
    # sampling noise (sd about 0.002 and 0.006) and the kernel's added variance (h**2, 1 %)
    np.testing.assert_allclose(got, expected, rtol=0.02)


def test_subset_analysis_reports_progress_of_a_callable_measure():
    from focal.metrics import cavg, subset_analysis

    rng = np.random.default_rng(0)
    L, y = rng.normal(size=(60, 4)), np.arange(60) % 4
    seen = []
    res = subset_analysis(L, y, measure=lambda a, b: cavg(a, b), progress=seen.append)
    assert seen == list(range(1, res.values.size + 1)) and res.values.size == 11

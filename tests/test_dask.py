"""focal.dask on a dask.distributed LocalCluster (2 workers): identical to the in-memory functions."""

import subprocess
import sys

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import focal.dask as fd  # noqa: E402
from focal import metrics  # noqa: E402
from focal.core.pav import pav  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  memory_limit="400MiB", dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        yield c


def _trials(seed=0, n=30000, p=0.15):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < p
    s = np.round(rng.normal(size=n) + 1.7 * y, 1)            # heavy ties
    s[:8] = np.where(y[:8], np.inf, 2.5)                     # +/-inf LLRs
    s[8:16] = np.where(y[8:16], -2.5, -np.inf)
    return s, y


def _layouts(s, y):
    """(name, scores, labels) with awkward partitions."""
    n = s.size
    order = np.argsort(y, kind="stable")                     # non-targets first: one-class parts
    ys, ss = y[order], s[order]
    n_non = int((~y).sum())
    return [
        ("single", da.from_array(s, chunks=n), da.from_array(y, chunks=n)),
        ("many", da.from_array(s, chunks=2999), da.from_array(y, chunks=2999)),
        ("empty", da.from_array(s, chunks=((0, 5000, 0, n - 5000, 0),)),
         da.from_array(y, chunks=((0, 5000, 0, n - 5000, 0),))),
        ("one_class", da.from_array(ss, chunks=((n_non // 2, n_non - n_non // 2, n - n_non),)),
         da.from_array(ys, chunks=((n_non // 2, n_non - n_non // 2, n - n_non),))),
    ]


def test_import_focal_does_not_import_dask():
    code = "import sys, focal, focal.metrics; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_dask_focal_dask_says_how_to_install():
    code = ("import sys; sys.modules['dask'] = None\n"
            "try:\n    import focal.dask\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'focal-calibration[dask]'" in out.stdout


def test_measures_identical_to_in_memory(client):
    s, y = _trials()
    ref = metrics.BinaryScores(s[y], s[~y])
    ref_pav = pav(s[y], s[~y])
    h = np.linspace(-5, 5, 11)
    for name, ds, dy in _layouts(s, y):
        got = fd.summarize(ds, dy, p_targets=[0.5, 0.01], thresholds=np.r_[-h, 4.59511985013459],
                           keep_runs=True, n_ranges=7)
        for f in ("score_lo", "score_hi", "n_tar", "n_non", "runs_n_tar", "runs_n_non",
                  "runs_score_lo"):
            np.testing.assert_array_equal(getattr(got.summary, f), getattr(ref_pav, f),
                                          err_msg=f"{name}: {f}")
        assert got.eer == ref.eer, name
        assert got.prbep == ref.hull.prbep and got.auc == ref.hull.auc, name
        assert got.min_dcf(0.01) == ref.min_dcf(0.01), name
        assert got.min_cllr() == ref.min_cllr(), name
        assert got.dcf(0.01) == ref.dcf(0.01), name
        for p in (0.5, 0.01):
            assert got.cllr(p) == pytest.approx(ref.cllr(p), rel=1e-12, abs=0), name
        a, b = got.bayes_error_rates(h), ref.bayes_error_rates(h)
        for f in ("actual", "minimum", "min_n_misses", "min_n_false_alarms"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=name)


def test_named_functions(client):
    s, y = _trials(1)
    ds, dy = da.from_array(s, chunks=4000), da.from_array(y, chunks=4000)
    t, n = s[y], s[~y]
    assert fd.eer(ds, dy) == metrics.eer(t, n)
    assert fd.min_dcf(ds, dy, 0.05, 2.0, 1.0) == metrics.min_dcf(t, n, 0.05, 2.0, 1.0)
    assert fd.dcf(ds, dy, 0.05, 2.0, 1.0) == metrics.dcf(t, n, 0.05, 2.0, 1.0)
    assert fd.min_cllr(ds, dy, 0.2) == metrics.min_cllr(t, n, 0.2)
    assert fd.cllr(ds, dy, 0.2) == pytest.approx(metrics.cllr(t, n, 0.2), rel=1e-12, abs=0)
    assert fd.cross_entropy(ds, dy) == pytest.approx(metrics.cross_entropy(t, n), rel=1e-12)
    hull, ref = fd.rocch(ds, dy), metrics.rocch(t, n)
    np.testing.assert_array_equal(hull.pmiss, ref.pmiss)
    np.testing.assert_array_equal(hull.thresholds, ref.thresholds)
    for convex in (False, True):
        a, b = fd.det_curve(ds, dy, convex), metrics.det_curve(t, n, convex)
        np.testing.assert_array_equal(a.pfa, b.pfa)
        np.testing.assert_array_equal(a.pmiss, b.pmiss)
    a = fd.bayes_error_rates(ds, dy, [-np.inf, -2.0, 0.0, 3.0, np.inf])
    b = metrics.bayes_error_rates(t, n, [-np.inf, -2.0, 0.0, 3.0, np.inf])
    np.testing.assert_array_equal(a.actual, b.actual)
    np.testing.assert_array_equal(a.minimum, b.minimum)


def test_weights(client):
    s, y = _trials(2, n=12000)
    w = np.random.default_rng(2).integers(0, 4, s.size)
    t, n = np.repeat(s[y], w[y]), np.repeat(s[~y], w[~y])
    ref, ref_pav = metrics.BinaryScores(t, n), pav(t, n)
    got = fd.summarize(da.from_array(s, chunks=2500), da.from_array(y, chunks=2500),
                       da.from_array(w, chunks=2500), p_targets=[0.3], thresholds=[0.0])
    for f in ("score_lo", "score_hi", "n_tar", "n_non"):
        np.testing.assert_array_equal(getattr(got.summary, f), getattr(ref_pav, f))
    assert got.eer == ref.eer and got.min_dcf(0.3) == ref.min_dcf(0.3)
    assert got.dcf(0.5) == ref.dcf(0.5)
    assert got.cllr(0.3) == pytest.approx(ref.cllr(0.3), rel=1e-12, abs=0)


def test_bad_input_names_the_partition(client):
    s, y = _trials(3, n=1000)
    s[700] = np.nan
    with pytest.raises(ValueError, match="partition 2: scores contains 1 NaN"):
        fd.eer(da.from_array(s, chunks=300), da.from_array(y, chunks=300))
    with pytest.raises(ValueError, match="labels must contain only 0/1"):
        fd.eer(da.from_array(np.zeros(10), chunks=5), da.from_array(np.arange(10), chunks=5))
    with pytest.raises(ValueError, match="both classes"):
        fd.eer(da.from_array(np.zeros(10), chunks=5), da.from_array(np.ones(10), chunks=5))
    with pytest.raises(ValueError, match="p_target"):
        fd.cllr(da.zeros(4, chunks=2), da.ones(4, chunks=2), p_target=1.5)

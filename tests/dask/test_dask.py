"""focal.dask on a dask.distributed LocalCluster (2 workers): equal to the in-memory functions."""

import json
import subprocess
import sys

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import focal.dask as fd  # noqa: E402
from focal import bayes_threshold, metrics  # noqa: E402
from focal import io as focal_io  # noqa: E402
from focal.core.pav import pav  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit="400MiB",
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=50,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _trials(seed=0, n=12000, p=0.15):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < p
    s = np.round(rng.normal(size=n) + 1.7 * y, 1)  # heavy ties
    s[:8] = np.where(y[:8], np.inf, 2.5)  # +/-inf LLRs
    s[8:16] = np.where(y[8:16], -2.5, -np.inf)
    return s, y


def _layouts(s, y):
    """(name, scores, labels) with awkward partitions."""
    n = s.size
    order = np.argsort(y, kind="stable")  # non-targets first: one-class parts
    ys, ss = y[order], s[order]
    n_non = int((~y).sum())
    return [
        ("single", da.from_array(s, chunks=n), da.from_array(y, chunks=n)),
        ("many", da.from_array(s, chunks=2999), da.from_array(y, chunks=2999)),
        (
            "empty",
            da.from_array(s, chunks=((0, 5000, 0, n - 5000, 0),)),
            da.from_array(y, chunks=((0, 5000, 0, n - 5000, 0),)),
        ),
        (
            "one_class",
            da.from_array(ss, chunks=((n_non // 2, n_non - n_non // 2, n - n_non),)),
            da.from_array(ys, chunks=((n_non // 2, n_non - n_non // 2, n - n_non),)),
        ),
    ]


def test_import_focal_does_not_import_dask():
    code = "import sys, focal, focal.metrics; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_dask_focal_dask_says_how_to_install():
    code = (
        "import sys; sys.modules['dask'] = None\n"
        "try:\n    import focal.dask\nexcept ImportError as e:\n    print(e)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'dask[distributed]'" in out.stdout


def test_measures_identical_to_in_memory(client):
    s, y = _trials()
    ref = metrics.BinaryScores(s[y], s[~y])
    ref_pav = pav(s[y], s[~y])
    h = np.linspace(-5, 5, 11)
    for name, ds, dy in _layouts(s, y):
        got = fd.summarize(
            ds,
            dy,
            p_targets=[0.5, 0.01],
            thresholds=np.r_[-h, 4.59511985013459],
            keep_runs=True,
            n_ranges=7,
        )
        for f in (
            "score_lo",
            "score_hi",
            "n_tar",
            "n_non",
            "runs_n_tar",
            "runs_n_non",
            "runs_score_lo",
        ):
            np.testing.assert_array_equal(
                getattr(got.summary, f), getattr(ref_pav, f), err_msg=f"{name}: {f}"
            )
        # the one definition of each measure, given the summary in place of (tar, non)
        for measure in (
            metrics.eer,
            metrics.conventional_eer,
            metrics.prbep,
            metrics.rocch_auc,
            metrics.min_cllr,
            lambda x: metrics.min_dcf(x, p_target=0.01),
            lambda x: metrics.dcf(x, p_target=0.01),
        ):
            assert measure(got) == measure(ref), name
        for p in (0.5, 0.01):
            assert metrics.cllr(got, p_target=p) == pytest.approx(
                metrics.cllr(ref, p_target=p), rel=1e-12, abs=0
            ), name
        a = metrics.bayes_error_rates(got, prior_log_odds=h)
        b = metrics.bayes_error_rates(ref, prior_log_odds=h)
        for f in ("actual", "minimum", "min_n_misses", "min_n_false_alarms"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=name)


def test_the_metrics_functions_take_the_summary(client):
    s, y = _trials(1)
    ds, dy = da.from_array(s, chunks=4000), da.from_array(y, chunks=4000)
    t, n = s[y], s[~y]
    h = np.array([-np.inf, -2.0, 0.0, 3.0, np.inf])
    thr = np.r_[-h, bayes_threshold(0.05, 2.0, 1.0)]
    got = fd.summarize(ds, dy, p_targets=[0.5, 0.2], thresholds=thr, keep_runs=True)
    assert metrics.eer(got) == metrics.eer(t, n)
    assert metrics.min_dcf(got, p_target=0.05, c_miss=2.0) == metrics.min_dcf(t, n, 0.05, 2.0)
    assert metrics.dcf(got, p_target=0.05, c_miss=2.0) == metrics.dcf(t, n, 0.05, 2.0)
    assert metrics.min_cllr(got, p_target=0.2) == metrics.min_cllr(t, n, 0.2)
    assert metrics.cllr(got, p_target=0.2) == pytest.approx(
        metrics.cllr(t, n, 0.2), rel=1e-12, abs=0
    )
    assert metrics.cross_entropy(got) == pytest.approx(metrics.cross_entropy(t, n), rel=1e-12)
    hull, ref = metrics.rocch(got), metrics.rocch(t, n)
    np.testing.assert_array_equal(hull.p_miss, ref.p_miss)
    np.testing.assert_array_equal(hull.thresholds, ref.thresholds)
    for convex in (False, True):
        a, b = metrics.det_curve(got, convex_hull=convex), metrics.det_curve(t, n, convex)
        np.testing.assert_array_equal(a.p_fa, b.p_fa)
        np.testing.assert_array_equal(a.p_miss, b.p_miss)
    np.testing.assert_array_equal(fd.pav_llr(ds, dy).compute(), metrics.pav_llr(s, y))
    a = metrics.bayes_error_rates(got, prior_log_odds=h)
    b = metrics.bayes_error_rates(t, n, h)
    np.testing.assert_array_equal(a.actual, b.actual)
    np.testing.assert_array_equal(a.minimum, b.minimum)
    # what a pass did not sum is refused, saying what to sum
    with pytest.raises(ValueError, match="not among the priors.*p_targets"):
        metrics.cllr(got, p_target=0.1)
    with pytest.raises(ValueError, match="not among the thresholds.*bayes_threshold"):
        metrics.dcf(got, p_target=0.1)
    # focal.dask declares no measure of its own: one definition each, in focal.metrics
    for name in ("eer", "min_dcf", "min_cllr", "dcf", "cllr", "det_curve", "rocch"):
        assert not hasattr(fd, name)


def test_weights(client):
    s, y = _trials(2, n=12000)
    w = np.random.default_rng(2).integers(0, 4, s.size)
    t, n = np.repeat(s[y], w[y]), np.repeat(s[~y], w[~y])
    ref, ref_pav = metrics.BinaryScores(t, n), pav(t, n)
    got = fd.summarize(
        da.from_array(s, chunks=2500),
        da.from_array(y, chunks=2500),
        da.from_array(w, chunks=2500),
        p_targets=[0.3],
        thresholds=[0.0],
    )
    for f in ("score_lo", "score_hi", "n_tar", "n_non"):
        np.testing.assert_array_equal(getattr(got.summary, f), getattr(ref_pav, f))
    assert metrics.eer(got) == metrics.eer(ref)
    assert metrics.min_dcf(got, p_target=0.3) == metrics.min_dcf(ref, p_target=0.3)
    assert metrics.dcf(got, p_target=0.5) == metrics.dcf(ref, p_target=0.5)
    assert metrics.cllr(got, p_target=0.3) == pytest.approx(
        metrics.cllr(ref, p_target=0.3), rel=1e-12, abs=0
    )


def test_bad_input_names_the_partition(client):
    s, y = _trials(3, n=1000)
    s[700] = np.nan
    with pytest.raises(ValueError, match="partition 2: scores contains 1 NaN"):
        fd.summarize(da.from_array(s, chunks=300), da.from_array(y, chunks=300))
    with pytest.raises(ValueError, match="labels must contain only 0/1"):
        fd.summarize(da.from_array(np.zeros(10), chunks=5), da.from_array(np.arange(10), chunks=5))
    one_class = fd.summarize(da.from_array(np.zeros(10), chunks=5), da.ones(10, chunks=5))
    with pytest.raises(ValueError, match="both classes"):
        metrics.eer(one_class)
    with pytest.raises(ValueError, match="p_target"):
        fd.summarize(da.zeros(4, chunks=2), da.ones(4, chunks=2), p_targets=[1.5])


def _fusion_data(seed=0, n=20000):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.2
    X = rng.normal(size=(n, 3)) * [1.0, 30.0, 0.01] + np.outer(y, [1.0, 25.0, 0.01]) + [0, 900, 3]
    return X, y


@pytest.mark.parametrize("chunks", [20000, ((0, 7000, 0, 13000),), 3001])
def test_fit_fusion_equals_in_memory(client, chunks):
    from focal import LogisticFusion

    X, y = _fusion_data()
    order = np.argsort(y, kind="stable")  # non-targets first: one-class partitions
    X, y = X[order], y[order]
    w = np.random.default_rng(5).integers(0, 4, y.size).astype(float)
    ref = LogisticFusion(p_target=0.05).fit(X, y, sample_weight=w)
    got = fd.fit(
        LogisticFusion(p_target=0.05),
        da.from_array(X, chunks=(chunks, 3) if isinstance(chunks, int) else (chunks[0], (3,))),
        da.from_array(y, chunks=chunks),
        da.from_array(w, chunks=chunks),
    )
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9, atol=0)
    # the intercept absorbs coef @ offsets of ~1e3: compare the LLRs it gives
    np.testing.assert_allclose(
        got.decision_function(X), ref.decision_function(X), rtol=0, atol=1e-9
    )
    np.testing.assert_array_equal(got.classes_, ref.classes_)
    assert got.objective_ == pytest.approx(ref.objective_, rel=1e-12)
    assert set(vars(got)) == set(vars(ref))  # the same fitted state, nothing missing


def test_fit_calibrator_labels_apply_and_save(client, tmp_path):
    import focal
    from focal import LinearCalibrator

    X, y = _fusion_data(1)
    s = X[:, 1]
    labels = np.where(y, "tar", "non")  # the target named by pos_label
    ref = LinearCalibrator(p_target=0.3, pos_label="tar").fit(s, labels)
    got = fd.fit(
        LinearCalibrator(p_target=0.3, pos_label="tar"),
        da.from_array(s, chunks=6000),
        da.from_array(labels, chunks=6000),
    )
    assert list(got.classes_) == ["non", "tar"]
    assert got.scale_ == pytest.approx(ref.scale_, rel=1e-9)
    np.testing.assert_allclose(got.decision_function(s), ref.decision_function(s), atol=1e-9)
    llr = fd.apply(got, da.from_array(s, chunks=5000))
    assert isinstance(llr, da.Array)
    np.testing.assert_array_equal(llr.compute(), got.decision_function(s))
    focal.save(got, tmp_path / "cal.json")
    back = focal.load(tmp_path / "cal.json")
    np.testing.assert_array_equal(back.decision_function(s), got.decision_function(s))


def test_fit_from_dataframe_keeps_names(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    from focal import LogisticFusion

    X, y = _fusion_data(2, n=8000)
    frame = pd.DataFrame(X, columns=["sysA", "sysB", "sysC"])
    ref = LogisticFusion().fit(frame, y)
    ddf = dd.from_pandas(frame, npartitions=3)
    dy = dd.from_pandas(pd.Series(y), npartitions=3)
    got = fd.fit(LogisticFusion(), ddf, dy)
    assert list(got.feature_names_in_) == ["sysA", "sysB", "sysC"]
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9)
    trials = dd.from_pandas(pd.DataFrame({"s": X[:, 0], "y": y}), npartitions=4)
    assert metrics.eer(fd.summarize(trials["s"], trials["y"])) == metrics.eer(X[y, 0], X[~y, 0])
    with pytest.raises(ValueError, match="one column"):
        fd.summarize(trials, trials["y"])
    out = fd.apply(got, ddf).compute()
    np.testing.assert_allclose(out, got.decision_function(frame), rtol=0, atol=1e-12)


def test_fit_refuses_what_it_cannot_train(client):
    from focal import LogisticFusion, PAVCalibrator

    X, y = _fusion_data(3, n=2000)
    dX, dy = da.from_array(X, chunks=(500, 3)), da.from_array(y, chunks=500)
    with pytest.raises(TypeError, match="LogisticFusion"):
        fd.fit(PAVCalibrator(), dX[:, 0], dy)
    with pytest.raises(ValueError, match="logarithmic"):
        fd.fit(LogisticFusion(scoring_rule="brier"), dX, dy)
    with pytest.raises(ValueError, match="cannot take bounds='elub'"):
        fd.fit(LogisticFusion(bounds="elub"), dX, dy)  # its probe's limits would be wrong
    given = fd.fit(LogisticFusion(bounds=(-1.0, 2.0)), dX, dy)
    np.testing.assert_array_equal(given.bounds_, [-1.0, 2.0])
    assert given.decision_function(X * 100).max() == 2.0
    with pytest.raises(ValueError, match="only one class"):
        fd.fit(LogisticFusion(), dX, da.ones(2000, chunks=500))
    with pytest.raises(ValueError, match="3 classes"):
        fd.fit(LogisticFusion(), dX, da.from_array(np.arange(2000) % 3, chunks=500))
    bad = X.copy()
    bad[1200, 1] = np.nan
    with pytest.raises(ValueError, match="partition 2: X contains NaN"):
        fd.fit(LogisticFusion(), da.from_array(bad, chunks=(500, 3)), dy)


def _write_trials(directory, n_files_key=2, n_files_scores=3, seed=0):
    """A key and two systems' scores, each split over several files in shuffled orders."""
    rng = np.random.default_rng(seed)
    n = 3000
    models = np.array([f"spk{i % 97:03d}" for i in range(n)])
    tests = np.array([f"seg{i:05d}_{'x' * (i % 13)}" for i in range(n)])  # ids of many widths
    y = rng.random(n) < 0.2
    s = np.round(rng.normal(size=(n, 2)) + 2 * y[:, None], 2)
    for name, col in (("key", np.where(y, "target", "nontarget")), ("a", s[:, 0]), ("b", s[:, 1])):
        order = rng.permutation(n)
        k = n_files_key if name == "key" else n_files_scores
        for f in range(k):
            rows = order[f::k]
            with open(directory / f"{name}{f}.txt", "w") as out:
                out.writelines(f"{models[i]} {tests[i]} {col[i]}\n" for i in rows)
    return models, tests, y, s


def test_read_trials_aligns_files_by_trial_id(client, tmp_path):
    _, _, y, s = _write_trials(tmp_path)
    X, yd = fd.read_trials(
        str(tmp_path / "key*.txt"), [str(tmp_path / "a*.txt"), str(tmp_path / "b*.txt")]
    )
    Xc, yc = X.compute(), yd.compute()
    assert Xc.shape == (3000, 2)
    # same multiset of (score a, score b, label) rows as the truth
    got = np.lexsort((Xc[:, 1], Xc[:, 0], yc))
    ref = np.lexsort((s[:, 1], s[:, 0], y))
    np.testing.assert_array_equal(Xc[got], s[ref])
    np.testing.assert_array_equal(yc[got], y[ref])
    report = fd.calibration_report(X[:, 1], yd, operating_points=[0.01, (0.1, 2.0, 1.0)])
    ref_report = metrics.calibration_report(
        s[y, 1], s[~y, 1], operating_points=[0.01, (0.1, 2.0, 1.0)]
    )
    assert report.eer == ref_report.eer and report.prbep == ref_report.prbep
    assert [o.min_dcf for o in report.operating_points] == [
        o.min_dcf for o in ref_report.operating_points
    ]
    assert [o.act_dcf for o in report.operating_points] == [
        o.act_dcf for o in ref_report.operating_points
    ]


def test_read_trials_missing_trials(client, tmp_path):
    _write_trials(tmp_path)
    lines = (tmp_path / "a0.txt").read_text().splitlines(True)
    (tmp_path / "a0.txt").write_text("".join(lines[5:]))  # 5 key trials lose their score
    with pytest.raises(ValueError, match="trial"):
        fd.read_trials(str(tmp_path / "key*.txt"), [str(tmp_path / "a*.txt")])[1].compute()
    X, y = fd.read_trials(str(tmp_path / "key*.txt"), [str(tmp_path / "a*.txt")], missing="drop")
    assert y.compute().size == 2995
    with pytest.raises(ValueError, match="no file matches"):
        fd.read_trials(str(tmp_path / "nothing*.key"), [str(tmp_path / "a*.txt")])


def test_fit_on_files(client, tmp_path):
    from focal import LogisticFusion

    _, _, y, s = _write_trials(tmp_path)
    X, yd = fd.read_trials(
        str(tmp_path / "key*.txt"), [str(tmp_path / "a*.txt"), str(tmp_path / "b*.txt")]
    )
    got = fd.fit(LogisticFusion(p_target=0.1), X, yd)
    ref = LogisticFusion(p_target=0.1).fit(s, y)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9)
    assert got.intercept_ == pytest.approx(ref.intercept_, rel=1e-9)


def _multiclass_data(seed=0, n=9000, N=4, K=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N, n)
    X = rng.normal(size=(n, K * N)) * np.repeat([1.0, 5.0], N)[: K * N]
    for k in range(K):
        X[np.arange(n), k * N + y] += 1.5 * (k + 1)
    X[:, N:] += 100.0  # a system with a large offset
    return X, y


@pytest.mark.parametrize(
    "prior, mode", [(None, "scalar"), ([0.5, 0.2, 0.3, 0.0], "scalar"), (None, "calibration")]
)
def test_fit_multiclass_equals_in_memory(client, prior, mode):
    from focal import MulticlassFusion

    X, y = _multiclass_data()
    order = np.argsort(y, kind="stable")  # partitions holding one class
    X, y = X[order], y[order]
    X = X if mode == "scalar" else X[:, :4]
    w = np.random.default_rng(1).integers(0, 3, y.size).astype(float)
    names = np.array(["eng", "fre", "ger", "spa"])
    labels = y if prior is not None else names[y]  # class names when no prior is given
    kw = {} if prior is not None else {"class_names": list(names)}
    ref = MulticlassFusion(prior=prior, mode=mode, **kw).fit(X, labels, sample_weight=w)
    chunks = ((0, 2000, 0, 3000, 4000),)
    got = fd.fit(
        MulticlassFusion(prior=prior, mode=mode, **kw),
        da.from_array(X, chunks=(chunks[0], (X.shape[1],))),
        da.from_array(labels, chunks=chunks),
        da.from_array(w, chunks=chunks),
    )
    np.testing.assert_array_equal(got.classes_, ref.classes_)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9, atol=0)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=0, atol=1e-9)
    assert got.loss_ == pytest.approx(ref.loss_, rel=1e-12)
    assert set(vars(got)) == set(vars(ref))
    out = fd.apply(got, da.from_array(X, chunks=(4000, X.shape[1]))).compute()
    np.testing.assert_allclose(out, ref.transform(X), rtol=0, atol=1e-9)


def test_fit_multiclass_refusals(client):
    from focal import MulticlassFusion

    X, y = _multiclass_data(n=1000)
    dX, dy = da.from_array(X, chunks=(500, 8)), da.from_array(y, chunks=500)
    with pytest.raises(ValueError, match="'scalar' or 'calibration'"):
        fd.fit(MulticlassFusion(mode="full"), dX, dy)
    with pytest.raises(ValueError, match="not a multiple"):
        fd.fit(MulticlassFusion(), dX[:, :7], dy)
    with pytest.raises(ValueError, match="class indices 0..3; found 9"):  # the estimator's
        fd.fit(
            MulticlassFusion(prior=[0.25] * 4),
            dX,
            da.from_array(np.r_[y[:500], y[500:] + 9], chunks=500),
        )


def _cli(capsys, *args):
    from focal.cli import main

    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_cli_evaluate_on_a_scheduler_equals_in_memory(client, tmp_path, capsys):
    _write_trials(tmp_path)
    whole = tmp_path / "a.scores"
    whole.write_text("".join((tmp_path / f"a{i}.txt").read_text() for i in range(3)))
    key = tmp_path / "key.key"
    key.write_text("".join((tmp_path / f"key{i}.txt").read_text() for i in range(2)))
    args = ["evaluate", str(whole), "--key", str(key), "--p-target", "0.01", "0.1", "--json"]
    status, ref, _ = _cli(capsys, *args)
    assert status == 0
    status, got, err = _cli(capsys, *args, "--dask", client.scheduler.address)
    assert status == 0, err
    a, b = json.loads(got)[0], json.loads(ref)[0]
    # every measure identical; the score thresholds of hard decisions at the EER are searched
    # among the PAV block boundaries on a cluster, among all the scores in memory
    for k in ("n_targets", "n_nontargets", "cllr", "min_cllr", "eer", "prbep"):
        assert a[k] == b[k], k
    for x, y in zip(a["operating_points"], b["operating_points"]):
        assert (x["act_dcf"], x["min_dcf"]) == (y["act_dcf"], y["min_dcf"])
    # files split over several partitions, given as glob patterns
    status, split, err = _cli(
        capsys,
        "evaluate",
        str(tmp_path / "a*.txt"),
        "--key",
        str(tmp_path / "key*.txt"),
        "--p-target",
        "0.01",
        "0.1",
        "--json",
        "--dask",
        client.scheduler.address,
    )
    assert status == 0, err
    a, b = json.loads(split)[0], json.loads(ref)[0]
    for k in ("n_targets", "n_nontargets", "min_cllr", "eer", "prbep"):
        assert a[k] == b[k], k
    for x, y in zip(a["operating_points"], b["operating_points"]):
        assert (x["act_dcf"], x["min_dcf"]) == (y["act_dcf"], y["min_dcf"])
    assert a["cllr"] == pytest.approx(b["cllr"], rel=1e-12)  # sums in another order


def test_cli_evaluate_dask_errors(client, tmp_path, capsys):
    _write_trials(tmp_path)
    with open(tmp_path / "a1.txt", "a") as f:
        f.write("spk1 seg2 notanumber\n")
    lines = len((tmp_path / "a1.txt").read_text().splitlines())
    status, _, err = _cli(
        capsys,
        "evaluate",
        str(tmp_path / "a*.txt"),
        "--key",
        str(tmp_path / "key*.txt"),
        "--dask",
        client.scheduler.address,
    )
    assert status == 1 and f"a1.txt:{lines}: score 'notanumber' is not a number" in err
    status, _, err = _cli(
        capsys,
        "evaluate",
        str(tmp_path / "a0.txt"),
        "--key",
        str(tmp_path / "key*.txt"),
        "--plot",
        str(tmp_path / "p"),
        "--dask",
    )
    assert status == 1 and "--plot is not available with --dask" in err


@pytest.mark.slow
def test_cli_evaluate_dask_local_cluster(tmp_path, capsys):
    _write_trials(tmp_path)
    args = [
        "evaluate",
        str(tmp_path / "a0.txt"),
        "--key",
        str(tmp_path / "key*.txt"),
        "--missing",
        "drop",
        "--json",
    ]
    status, got, err = _cli(capsys, *args, "--dask")
    assert status == 0, err
    assert json.loads(got)[0]["n_targets"] + json.loads(got)[0]["n_nontargets"] == 1000


def test_fit_warm_start_from_a_sample_reaches_the_same_fit(client, monkeypatch):
    import importlib

    from focal import LogisticFusion

    fit_module = importlib.import_module("focal.dask.fit")  # the module, not the function
    monkeypatch.setattr(fit_module, "_WARM_ROWS", 2000)  # 20000 trials count as large
    calls = []
    real = fit_module.fit_logistic
    monkeypatch.setattr(
        fit_module, "fit_logistic", lambda X, *a, **k: calls.append(X.shape) or real(X, *a, **k)
    )
    X, y = _fusion_data(4)
    ref = LogisticFusion(p_target=0.2).fit(X, y)
    got = fd.fit(
        LogisticFusion(p_target=0.2),
        da.from_array(X, chunks=(3000, 3)),
        da.from_array(y, chunks=3000),
    )
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9)
    np.testing.assert_allclose(got.decision_function(X), ref.decision_function(X), atol=1e-9)
    assert calls == [(2000, 3)]  # the start came from an in-memory fit on the sample


def test_fit_scores_of_magnitude_1e6(client):
    from focal import LinearCalibrator

    rng = np.random.default_rng(7)
    y = rng.random(6000) < 0.3
    s = 1e6 + 1e3 * (rng.normal(size=6000) + 1.2 * y)  # LLR slope ~1e-3, offset ~-1e3
    ref = LinearCalibrator().fit(s, y)
    got = fd.fit(LinearCalibrator(), da.from_array(s, chunks=1000), da.from_array(y, chunks=1000))
    assert got.scale_ == pytest.approx(ref.scale_, rel=1e-9)
    np.testing.assert_allclose(got.decision_function(s), ref.decision_function(s), atol=1e-9)


@pytest.mark.parametrize("p_target", [1e-8, 1e-12])
def test_fit_extreme_priors(client, p_target):
    from focal import LogisticFusion

    rng = np.random.default_rng(8)
    y = rng.random(20000) < 0.2
    X = rng.normal(size=(20000, 2)) + np.outer(y, [1.0, 2.0])
    ref = LogisticFusion(p_target=p_target).fit(X, y)
    got = fd.fit(
        LogisticFusion(p_target=p_target),
        da.from_array(X, chunks=(5000, 2)),
        da.from_array(y, chunks=5000),
    )
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9)
    assert got.intercept_ == pytest.approx(ref.intercept_, rel=1e-9)


def test_fit_multiclass_extreme_prior(client):
    from focal import MulticlassFusion

    X, y = _multiclass_data(3, n=8000, N=3)
    prior = [1 - 2e-8, 1e-8, 1e-8]
    ref = MulticlassFusion(prior=prior).fit(X, y)
    got = fd.fit(
        MulticlassFusion(prior=prior),
        da.from_array(X, chunks=(2000, 6)),
        da.from_array(y, chunks=2000),
    )
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=1e-9, atol=1e-9)


# ------------------------------------------------- focal evaluate --dask: the in-memory rules


def _lines(path):
    return path.read_text().splitlines(True)


def test_cli_evaluate_dask_gives_every_number_of_the_single_process_path(client, tmp_path, capsys):
    """With intervals refused, every other option gives the in-memory JSON exactly, the score
    threshold at the EER included (files split over partitions, heavy ties: the EER crossing
    falls between two hull vertices, where the threshold is chosen among every distinct score).
    """
    _write_trials(tmp_path)
    whole = tmp_path / "a.scores"
    whole.write_text("".join((tmp_path / f"a{i}.txt").read_text() for i in range(3)))
    key = tmp_path / "key.key"
    key.write_text("".join((tmp_path / f"key{i}.txt").read_text() for i in range(2)))
    options = ["--p-target", "0.01", "0.1", "--cost", "0.05:1:10", "--conventional-eer"]
    options += ["--c-primary", "sre16", "--json"]
    status, ref, err = _cli(capsys, "evaluate", str(whole), "--key", str(key), *options)
    assert status == 0, err
    (expected,) = json.loads(ref)
    assert expected["eer_threshold_interval"][0] < expected["eer_threshold_interval"][1]
    status, got, err = _cli(
        capsys,
        "evaluate",
        str(tmp_path / "a*.txt"),
        "--key",
        str(tmp_path / "key*.txt"),
        *options,
        "--dask",
        client.scheduler.address,
    )
    assert status == 0, err
    (report,) = json.loads(got)
    assert report["cllr"] == pytest.approx(expected["cllr"], rel=1e-12)  # sums in another order
    report["cllr"] = expected["cllr"]
    report["calibration_loss"] = pytest.approx(expected["calibration_loss"], rel=1e-9)
    expected["name"] = report["name"]
    assert report == expected


def test_dask_eer_threshold_is_the_in_memory_one(client):
    """Crossings between two hull vertices, with ties (one decimal) and with nearly distinct
    scores, where the nearest hard decision lies inside a run of one label (not at a corner of
    the steppy ROC): the same point of the same tie interval as in memory.
    """
    from focal.dask.workflows import _eer_threshold

    inside_a_run = 0
    for seed, n, decimals, shift in [(s, 4000, 1 + s % 2, 0.8) for s in range(4)] + [
        (s, 300, 3, 1.5) for s in (1, 3, 5, 6, 7)
    ]:
        rng = np.random.default_rng(seed)
        y = rng.random(n) < (0.3 if n > 300 else 0.5)
        s = np.round(rng.normal(size=n) + shift * y, decimals)
        ref = metrics.rocch(s[y], s[~y]).eer_threshold
        x, labels = da.from_array(s, chunks=n // 5), da.from_array(y, chunks=n // 5)
        summary = fd.summarize(x, labels, keep_runs=True)
        assert ref.low < ref.high, seed  # between two vertices
        assert _eer_threshold(summary.hull, x, labels) == ref, seed
        inside_a_run += summary.hull.eer_threshold != ref  # the corners of the ROC only
    assert inside_a_run >= 5


def _split_key(tmp_path):
    """The key of _write_trials in two files, and a trial of the first file (line, ids)."""
    _write_trials(tmp_path)
    first = _lines(tmp_path / "key0.txt")
    return first, first[4].split()


def _dask_evaluate(capsys, client, tmp_path, *extra):
    return _cli(
        capsys,
        "evaluate",
        str(tmp_path / "a*.txt"),
        "--key",
        str(tmp_path / "key*.txt"),
        *extra,
        "--dask",
        client.scheduler.address,
    )


@pytest.mark.parametrize("label", ["same", "other"])
def test_dask_refuses_a_key_trial_in_two_partitions(client, tmp_path, capsys, label):
    """A key trial in two key files is refused as a repeated trial (with the other label too:
    it would count as a target and as a non-target), naming both files and lines.
    """
    _, (m, t, lab) = _split_key(tmp_path)
    if label == "other":
        lab = "nontarget" if lab == "target" else "target"
    second = tmp_path / "key1.txt"
    second.write_text(second.read_text() + f"{m} {t} {lab}\n")
    n = len(_lines(second))
    status, out, err = _dask_evaluate(capsys, client, tmp_path)
    assert status == 1 and out == ""
    assert f"key1.txt:{n}: duplicate trial ({m}, {t}), first seen on line 5 of " in err
    assert err.rstrip().endswith("key0.txt")


@pytest.mark.parametrize("missing", ["error", "drop"])
def test_dask_refuses_a_scored_trial_in_two_partitions(client, tmp_path, capsys, missing):
    """A trial scored in two files of one system is refused (not resolved to one of the scores,
    not reported as absent from the key), with or without --missing drop.
    """
    _write_trials(tmp_path)
    m, t, _ = _lines(tmp_path / "a0.txt")[9].split()
    last = tmp_path / "a2.txt"
    last.write_text(last.read_text() + f"{m} {t} 123.5\n")
    n = len(_lines(last))
    status, _, err = _dask_evaluate(capsys, client, tmp_path, "--missing", missing)
    assert status == 1
    assert f"a2.txt:{n}: duplicate trial ({m}, {t}), first seen on line 10 of " in err
    assert "a0.txt" in err


def test_dask_repeated_trial_within_a_file_is_the_readers_error(client, tmp_path, capsys):
    _write_trials(tmp_path)
    path = tmp_path / "a1.txt"
    lines = _lines(path)
    path.write_text("".join(lines) + lines[2])
    status, _, err = _dask_evaluate(capsys, client, tmp_path)
    with pytest.raises(ValueError) as reader:
        focal_io.read_scores(path)
    assert status == 1 and err.strip() == f"focal: error: {reader.value}"


def test_dask_missing_trials_give_the_single_process_messages(client, tmp_path):
    """Counts and first trials over every bucket, as the single-process join says them."""
    from focal.workflows import evaluate_binary

    _write_trials(tmp_path)
    key = tmp_path / "key0.txt"
    scores = tmp_path / "a0.txt"
    lines = _lines(scores)
    scores.write_text("".join(lines[7:]) + "nobody nothing 1.0\nnobody else 2.0\n")
    with pytest.raises(ValueError, match="not in the key") as memory:
        evaluate_binary([scores], key)
    with pytest.raises(ValueError) as on_dask:
        fd.read_trials(str(key), [str(scores)], n_buckets=5)[1].compute()
    assert str(on_dask.value) == str(memory.value)
    whole = tmp_path / "key.key"  # every scored trial in the key, 7 + 2000 key trials unscored
    whole.write_text("".join((tmp_path / f"key{i}.txt").read_text() for i in range(2)))
    scores.write_text("".join(lines[7:]))
    with pytest.raises(ValueError, match="have no score") as memory:
        evaluate_binary([scores], whole)
    with pytest.raises(ValueError) as on_dask:
        fd.read_trials(str(whole), [str(scores)], n_buckets=5)[1].compute()
    assert str(on_dask.value) == str(memory.value)
    _, y = fd.read_trials(str(tmp_path / "key*.txt"), [str(scores)], missing="drop", n_buckets=5)
    ref = evaluate_binary([scores], whole, missing="drop").reports[0]
    y = y.compute()
    assert (y.sum(), (~y).sum()) == (ref.n_targets, ref.n_nontargets) and y.size == 993
    other = tmp_path / "other.txt"  # no trial in common: the wrong key
    other.write_text("nobody nothing 1.0\nnobody else 2.0\n")
    with pytest.raises(ValueError, match="is it the key of these scores") as memory:
        evaluate_binary([other], whole, missing="drop")
    with pytest.raises(ValueError) as on_dask:
        fd.read_trials(str(whole), [str(other)], missing="drop", n_buckets=5)[1].compute()
    assert str(on_dask.value) == str(memory.value)


def test_dask_refuses_each_option_it_cannot_do_by_name(tmp_path, capsys):
    """Before any work (no cluster is started, no file read): each by its option's name."""
    import inspect

    from focal.dask.workflows import EVALUATE_ARGUMENTS
    from focal.workflows import evaluate_binary

    for option, value, name in [
        ("--ci", "0.9", "confidence"),
        ("--bootstrap", "50", "n_bootstrap"),
        ("--cluster", "model", "cluster"),
        ("--seed", "3", "random_state"),
        ("--jobs", "2", "n_jobs"),
        ("--plot", str(tmp_path / "p"), "plot"),
        ("--progress", None, "progress"),
    ]:
        extra = [option] + ([value] if value is not None else [])
        status, _, err = _cli(
            capsys, "evaluate", "nothing.scores", "--key", "nothing.key", *extra, "--dask", "x:1"
        )
        assert status == 1, option
        assert err.startswith(f"focal: error: {option} is not available with --dask ({name}=)")
    # every other argument of the workflow is either done on a cluster or refused
    given = {
        "confidence": 0.9,
        "n_bootstrap": 5,
        "cluster": "test",
        "random_state": 1,
        "n_jobs": 2,
        "progress": True,
        "plot": "p",
        "plot_size": (200, 200),
        "plot_formats": ("pdf",),
        "partition": "parts.txt",
        "partition_columns": ("gender",),
        "log10": True,
    }
    parameters = inspect.signature(evaluate_binary).parameters
    assert set(parameters) == EVALUATE_ARGUMENTS | set(given)
    for name, value in given.items():
        with pytest.raises(ValueError, match=rf"\({name}=\)"):
            evaluate_binary(["nothing.scores"], "nothing.key", dask="x:1", **{name: value})
    assert not (tmp_path / "p").exists()


def test_dask_reads_the_formats_and_distances(client, tmp_path, capsys):
    """--format / --key-format and --scores-are distance give the in-memory numbers."""
    _write_trials(tmp_path, n_files_key=1, n_files_scores=1)
    key_lines = _lines(tmp_path / "key0.txt")
    (tmp_path / "trials.txt").write_text(
        "".join(
            f"{'1' if lab == 'target' else '0'} {m} {t}\n"
            for m, t, lab in (line.split() for line in key_lines)
        )
    )
    (tmp_path / "d.csv").write_text(
        "model,test,score\n"
        + "".join(
            f"{m},{t},{-float(v)!r}\n" for m, t, v in map(str.split, _lines(tmp_path / "a0.txt"))
        )
    )
    args = ["evaluate", str(tmp_path / "d.csv"), "--key", str(tmp_path / "trials.txt")]
    args += ["--key-format", "voxceleb", "--scores-are", "distance", "--json"]
    status, ref, err = _cli(capsys, *args)
    assert status == 0, err
    status, got, err = _cli(capsys, *args, "--dask", client.scheduler.address)
    assert status == 0, err
    a, b = json.loads(got)[0], json.loads(ref)[0]
    for k in ("n_targets", "n_nontargets", "eer", "eer_threshold", "prbep", "min_cllr"):
        assert a[k] == b[k], k


def test_dask_says_when_missing_drop_keeps_other_trials(client, tmp_path, capsys):
    _write_trials(tmp_path)
    status, _, err = _cli(
        capsys, "evaluate", str(tmp_path / "a*.txt"), str(tmp_path / "b*.txt"), "--key",
        str(tmp_path / "key*.txt"), "--missing", "drop", "--dask", client.scheduler.address,
    )  # fmt: skip
    assert status == 0 and "different trial sets" not in err
    b0 = tmp_path / "b0.txt"
    b0.write_text("".join(_lines(b0)[4:]))
    status, _, err = _cli(
        capsys, "evaluate", str(tmp_path / "a*.txt"), str(tmp_path / "b*.txt"), "--key",
        str(tmp_path / "key*.txt"), "--missing", "drop", "--dask", client.scheduler.address,
    )  # fmt: skip
    assert status == 0
    assert "compared on different trial sets" in err and "b*.txt 2,996" in err

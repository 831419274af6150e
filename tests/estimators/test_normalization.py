"""Cohort score normalization against a direct implementation written here, trial by trial."""

import numpy as np
import pytest

import focal.core.normalization as core
from focal.estimators.normalization import ScoreNormalizer


def direct(method, s, e_rows, t_rows, E, T, top_n=None):
    """One trial at a time, straight from the definitions (population std)."""
    out = []
    for score, e, t in zip(s, e_rows, t_rows):
        ce = np.sort(E[e])[::-1][:top_n] if top_n else E[e]
        ct = np.sort(T[t])[::-1][:top_n] if top_n else T[t]
        z = (score - np.mean(ce)) / np.sqrt(np.mean((ce - np.mean(ce)) ** 2))
        tn = (score - np.mean(ct)) / np.sqrt(np.mean((ct - np.mean(ct)) ** 2))
        out.append({"z-norm": z, "t-norm": tn}.get(method, 0.5 * (z + tn)))
    return np.array(out)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    E = rng.normal(size=(7, 40)) * rng.uniform(0.5, 2, (7, 1)) + rng.normal(size=(7, 1))
    T = rng.normal(size=(9, 30)) * rng.uniform(0.5, 2, (9, 1)) + rng.normal(size=(9, 1))
    e_rows, t_rows = rng.integers(0, 7, 100), rng.integers(0, 9, 100)
    s = rng.normal(size=100)
    return s, e_rows, t_rows, E, T


@pytest.mark.parametrize(
    "method, top_n",
    [("z-norm", None), ("t-norm", None), ("s-norm", None), ("as-norm", 5), ("as-norm", 29)],
)
def test_equals_the_direct_implementation(data, method, top_n, monkeypatch):
    s, e_rows, t_rows, E, T = data
    monkeypatch.setattr(core, "_BLOCK_VALUES", 64)  # several row blocks
    e_names = np.array([f"spk{i}" for i in range(7)])
    t_names = np.array([f"seg{i}.wav" for i in range(9)])
    norm = ScoreNormalizer(method, top_n=top_n).fit(E, T, enrol_ids=e_names, test_ids=t_names)
    got = norm.transform(s, e_names[e_rows], t_names[t_rows])
    np.testing.assert_allclose(got, direct(method, s, e_rows, t_rows, E, T, top_n), rtol=1e-12)


def test_adaptive_with_the_whole_cohort_is_s_norm(data):
    s, e_rows, t_rows, E, T = data
    snorm = ScoreNormalizer("s-norm").fit(E, T).transform(s, e_rows, t_rows)
    for top in (40, 1000):  # the larger cohort has 40 members; more is capped at each side's
        adaptive = ScoreNormalizer("as-norm", top_n=top).fit(E, T).transform(s, e_rows, t_rows)
        np.testing.assert_allclose(adaptive, snorm, rtol=1e-13)


def test_identity_by_name_not_position(data):
    s, e_rows, t_rows, E, T = data
    names = np.array(list("abcdefg"))
    shuffled = np.random.default_rng(1).permutation(7)
    a = ScoreNormalizer("z-norm").fit(E, enrol_ids=names).transform(s, names[e_rows])
    b = (
        ScoreNormalizer("z-norm")
        .fit(E[shuffled], enrol_ids=names[shuffled])
        .transform(s, names[e_rows])
    )
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "kwargs, fit, match",
    [
        (dict(method="x-norm"), {}, "method must be one of"),
        (dict(method="as-norm"), {}, "needs top_n"),
        (dict(method="as-norm", top_n=1), {}, "top_n must be an integer >= 2"),
        (dict(method="t-norm"), dict(test_cohort=None), "needs test_cohort"),
        (dict(), dict(enrol_ids=["a"] * 7), "distinct"),
        (dict(), dict(enrol_ids=["a", "b"]), "one name per row"),
    ],
)
def test_bad_fit_arguments(data, kwargs, fit, match):
    _, _, _, E, T = data
    args = dict(enrol_cohort=E, test_cohort=T)
    args.update(fit)
    with pytest.raises(ValueError, match=match):
        ScoreNormalizer(**kwargs).fit(args.pop("enrol_cohort"), args.pop("test_cohort"), **args)


def test_bad_transform_input(data):
    s, e_rows, t_rows, E, T = data
    norm = ScoreNormalizer().fit(E, T)
    with pytest.raises(ValueError, match=r"enrol_ids \[99\] not among the cohort rows"):
        norm.transform([1.0], [99], [0])
    with pytest.raises(ValueError, match="needs test_ids"):
        norm.transform([1.0], [0])
    E2 = E.copy()
    E2[3] = 1.0
    with pytest.raises(ValueError, match="zero spread"):
        ScoreNormalizer("z-norm").fit(E2).transform([1.0], [3])
    E2[3, 0] = np.nan
    with pytest.raises(ValueError, match="enrol_cohort row 3 holds a NaN"):
        ScoreNormalizer("z-norm").fit(E2)


def write(path, rows):
    path.write_text("".join(f"{a} {b} {float(s)!r}\n" for a, b, s in rows))
    return path


def test_normalize_files(tmp_path, data):
    from focal.io import read_scores
    from focal.workflows.normalize import normalize_files

    s, e_rows, t_rows, E, T = data
    keep = np.unique(np.column_stack([e_rows, t_rows]), axis=0, return_index=True)[1]
    s, e_rows, t_rows = s[keep], e_rows[keep], t_rows[keep]
    trials = write(
        tmp_path / "trials.scores",
        [(f"spk{e}", f"seg{t}", x) for x, e, t in zip(s, e_rows, t_rows)],
    )
    enrol = write(
        tmp_path / "enrol_cohort.scores",
        [(f"spk{i}", f"coh{j}", E[i, j]) for i in range(7) for j in range(40)][::-1],
    )
    test = write(
        tmp_path / "test_cohort.scores",
        [(f"cm{j}", f"seg{i}", T[i, j]) for i in range(9) for j in range(30)],
    )
    out = tmp_path / "norm.scores"
    normalize_files(
        trials, out, method="as-norm", top_n=10, enrol_cohort=enrol, test_cohort=test, chunk_size=7
    )
    got = read_scores(out)
    # cohort members are ordered by name in the file ("coh10" < "coh2"): statistics do not care
    np.testing.assert_allclose(
        got.scores, direct("as-norm", s, e_rows, t_rows, E, T, 10), rtol=1e-12
    )
    assert got.models.tolist() == [f"spk{e}".encode() for e in e_rows]

    write(tmp_path / "holes.scores", [("spk0", "coh0", 1.0), ("spk1", "coh1", 2.0)])
    with pytest.raises(ValueError, match="holes.scores: cohort scores must cover every"):
        normalize_files(trials, out, method="z-norm", enrol_cohort=tmp_path / "holes.scores")
    small = write(
        tmp_path / "small.scores",
        [(f"spk{i}", f"coh{j}", E[i, j]) for i in range(2) for j in range(40)],
    )
    with pytest.raises(ValueError, match=r"trials.scores:\d+: model 'spk[2-6]' has no scores"):
        normalize_files(trials, out, method="z-norm", enrol_cohort=small)
    with pytest.raises(ValueError, match="needs test_cohort"):
        normalize_files(trials, out, method="t-norm", enrol_cohort=enrol)
    with pytest.raises(ValueError, match="overwrite an input"):
        normalize_files(trials, trials, method="z-norm", enrol_cohort=enrol)


def test_scikit_learn_check_estimator_passes(data):
    """Issue 29: check_estimator failed outright ("seems to be a Transformer, but the
    transformer_tags tag is not set"). The tags now say what it is: a transformer whose input
    is 1-D scores and names (so the generic checks on one numeric array are skipped, by the
    tags); the API checks that make no such array run here, and the fitted-state contract
    (fit returns self, leaves the parameters, is idempotent, pickles) is checked on its data.
    """
    import pickle
    import warnings

    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError
    from sklearn.utils import get_tags
    from sklearn.utils.estimator_checks import (
        check_do_not_raise_errors_in_init_or_set_params,
        check_estimator,
        check_estimator_repr,
        check_estimator_tags_renamed,
        check_get_params_invariance,
        check_mixin_order,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_set_params,
        check_valid_tag_types,
    )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the SkipTestWarning of the generic checks
        results = check_estimator(ScoreNormalizer(), on_fail=None)
    assert results and all(r["status"] != "failed" for r in results)
    tags = get_tags(ScoreNormalizer())
    assert tags.transformer_tags is not None and not tags.input_tags.two_d_array
    name = "ScoreNormalizer"
    for check in (
        check_estimator_tags_renamed,
        check_valid_tag_types,
        check_estimator_repr,
        check_no_attributes_set_in_init,
        check_do_not_raise_errors_in_init_or_set_params,
        check_mixin_order,
        check_parameters_default_constructible,
        check_get_params_invariance,
        check_set_params,
    ):
        check(name, ScoreNormalizer("as-norm", top_n=5))
    s, e_rows, t_rows, E, T = data
    with pytest.raises(NotFittedError):
        ScoreNormalizer().transform(s, e_rows, t_rows)
    est = ScoreNormalizer("as-norm", top_n=5)
    params = est.get_params()
    assert est.fit(E, T) is est and est.get_params() == params
    first = est.transform(s, e_rows, t_rows)
    np.testing.assert_array_equal(est.fit(E, T).transform(s, e_rows, t_rows), first)
    np.testing.assert_array_equal(
        pickle.loads(pickle.dumps(est)).transform(s, e_rows, t_rows), first
    )
    np.testing.assert_array_equal(clone(est).fit(E, T).transform(s, e_rows, t_rows), first)

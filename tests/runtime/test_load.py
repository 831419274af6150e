"""focal.runtime.load: the NumPy-only runtime of saved models.

Every loadable estimator (and pipelines of them) gives bit-identical outputs through the runtime
and through ``focal.load(...).transform``; files that ``focal.load`` refuses, the runtime
refuses too (edited numbers with recomputed checksums, broken invariants, damage, signatures,
size cap).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

import focal
import focal.runtime
from focal import (
    ROCCH,
    GaussianBackend,
    LinearCalibrator,
    LogisticFusion,
    MulticlassFusion,
    PAVCalibrator,
    QualityFusion,
)
from focal.core.maps import affine_llr

RNG = np.random.default_rng(7)
Y = np.r_[np.ones(150), np.zeros(250)].astype(int)
X = RNG.normal(size=(400, 3)) + 1.2 * Y[:, None]
X_NEW = RNG.normal(size=(257, 3)) * 3.0
YC = RNG.integers(0, 3, 400)
V = RNG.normal(size=(400, 4)) + 2.0 * np.eye(3, 4)[YC]  # back-end score vectors
L = RNG.normal(size=(400, 6)) + 2.0 * np.tile(np.eye(3)[YC], 2)  # 2 systems x 3 classes
Q = np.exp(RNG.normal(size=(400, 2)))
Q[::9, 1] = np.nan
Q_NEW = np.exp(RNG.normal(size=(257, 2)))
Q_NEW[::4, 0] = np.nan


def _models():
    """(name, fitted model, input) of every loadable class and a few pipelines."""
    one = X[:, :1]
    yield "logistic", LogisticFusion(p_target=0.1).fit(X, Y), X_NEW
    yield "linear", LinearCalibrator().fit(one, Y), X_NEW[:, 0]
    yield "logistic-elub", LogisticFusion(p_target=0.1, bounds="elub").fit(X, Y), X_NEW
    yield "linear-bounds", LinearCalibrator(bounds=(-1.0, 1.5)).fit(one, Y), X_NEW[:, 0]
    yield (
        "linear-elub+pav",
        make_pipeline(LinearCalibrator(bounds="elub"), PAVCalibrator(bounds="elub")).fit(one, Y),
        X_NEW[:, :1],
    )
    yield "pav", PAVCalibrator().fit(one, Y), X_NEW[:, :1]
    yield "pav-unbounded-linear", PAVCalibrator(0, "linear").fit(one, Y), X_NEW[:, :1]
    yield "rocch", ROCCH().fit(one, Y), X_NEW[:, :1]
    yield "fusion+pav", make_pipeline(LogisticFusion(), PAVCalibrator()).fit(X, Y), X_NEW
    yield "multiclass-scalar", MulticlassFusion().fit(L, YC), L[::2] * 1.7
    yield "multiclass-full", MulticlassFusion(mode="full").fit(L, YC), L[::2] * 1.7
    yield "gaussian-shared", GaussianBackend().fit(V, YC), V[::3] * 2
    yield "gaussian-per-class", GaussianBackend(covariance="per_class").fit(V, YC), V[::3] * 2
    yield (
        "backend+fusion",
        make_pipeline(GaussianBackend(), "passthrough", MulticlassFusion(mode="calibration")).fit(
            V, YC
        ),
        V[::3],
    )
    yield (
        "nested",
        make_pipeline(make_pipeline(LogisticFusion()), PAVCalibrator()).fit(X, Y),
        X_NEW,
    )


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    out = {}
    for name, model, data in _models():
        path = folder / f"{name}.json"
        focal.save(model, path)
        out[name] = (path, data)
    return out


@pytest.mark.parametrize("name", [name for name, _, _ in _models()])
def test_outputs_are_bit_identical_to_the_estimators(saved, name):
    path, data = saved[name]
    estimator = focal.load(path)
    model = focal.runtime.load(path)
    expected = np.asarray(estimator.transform(data))
    got = model.transform(data)
    assert type(got) is np.ndarray and got.dtype == np.float64
    assert got.shape == expected.shape
    assert np.array_equal(got, expected)  # +/-inf of an unbounded map included
    if hasattr(estimator, "decision_function") and not hasattr(estimator, "steps"):
        assert np.array_equal(model.decision_function(data), estimator.decision_function(data))
    assert model.input_schema_ == estimator.input_schema_


@pytest.mark.parametrize("name", ["logistic-elub", "linear-bounds"])
def test_both_readers_clip_to_the_saved_bounds(saved, name):
    path, data = saved[name]
    fitted = dict((n, m) for n, m, _ in _models())[name]  # refitted: the fits are deterministic
    lower, upper = fitted.bounds_
    raw = affine_llr(
        np.asarray(data, dtype=float).reshape(len(data), -1), fitted.coef_, fitted.intercept_
    )
    expected = np.clip(raw, lower, upper)
    assert (expected == lower).any() and (expected == upper).any()  # the clip is at work
    for read in (focal.load, focal.runtime.load):
        model = read(path)
        np.testing.assert_array_equal(model.bounds_, fitted.bounds_)
        np.testing.assert_array_equal(model.decision_function(data), expected)


@pytest.mark.parametrize(
    "name,step", [("logistic", 0), ("linear", 0), ("fusion+pav", 0), ("pav", 0), ("fusion+pav", 1)]
)
def test_a_file_written_before_bounds_loads_with_the_same_outputs(saved, tmp_path, name, step):
    """Files of LogisticFusion / LinearCalibrator / PAVCalibrator saved before they had
    ``bounds`` lack the parameter and ``bounds_``: both readers load them unclipped, with the
    same outputs.
    """
    path, data = saved[name]
    doc = json.loads(path.read_text())
    doc.pop("integrity")
    node = doc["model"]["steps"][step]["estimator"] if "steps" in doc["model"] else doc["model"]
    del node["params"]["bounds"], node["fitted"]["bounds_"]
    old = _write(tmp_path / "old.json", doc)
    expected = focal.load(path).transform(data)
    for read in (focal.load, focal.runtime.load):
        model = read(old)
        np.testing.assert_array_equal(model.transform(data), expected)
        first = model[step] if hasattr(model, "steps") else model
        assert first.get_params()["bounds"] is None
        np.testing.assert_array_equal(first.bounds_, [-np.inf, np.inf])


def test_quality_fusion_with_missing_measures(tmp_path):
    fusion = QualityFusion(quality_transform="log").fit(X, Y, quality=Q)
    qf = make_pipeline(fusion, PAVCalibrator().fit(fusion.transform(X, quality=Q), Y))
    focal.save(qf, tmp_path / "q.json")
    model = focal.runtime.load(tmp_path / "q.json")
    expected = qf[1:].transform(qf[0].transform(X_NEW, quality=Q_NEW))
    got = model[1:].transform(model[0].transform(X_NEW, quality=Q_NEW))
    assert np.array_equal(got, expected)
    assert np.array_equal(model.transform(X_NEW, quality=Q_NEW), expected)
    # the trials with a missing measure get the affine back-off, exactly as an affine fusion
    # with its weights computes it
    back_off = affine_llr(X_NEW, qf[0].linear_coef_, qf[0].linear_intercept_)
    rows = np.isnan(Q_NEW).any(axis=1)
    assert np.array_equal(model[0].decision_function(X_NEW, Q_NEW)[rows], back_off[rows])


def test_quality_fusion_bounds_and_a_file_written_before_them(tmp_path):
    """A bounded QualityFusion clips in both readers; a file saved before QualityFusion had
    ``bounds`` (no parameter, no ``bounds_``) loads unclipped, with the same outputs.
    """
    bounded = QualityFusion(quality_transform="log", bounds=(-0.5, 0.5)).fit(X, Y, quality=Q)
    free = QualityFusion(quality_transform="log").fit(X, Y, quality=Q)
    raw = free.decision_function(X_NEW, quality=Q_NEW)
    focal.save(bounded, tmp_path / "bounded.json")
    focal.save(free, tmp_path / "free.json")
    doc = json.loads((tmp_path / "free.json").read_text())
    doc.pop("integrity")
    del doc["model"]["params"]["bounds"], doc["model"]["fitted"]["bounds_"]
    old = _write(tmp_path / "old.json", doc)
    for read in (focal.load, focal.runtime.load):
        got = read(tmp_path / "bounded.json").decision_function(X_NEW, quality=Q_NEW)
        assert (got == -0.5).any() and (got == 0.5).any()  # the clip is at work
        np.testing.assert_array_equal(got, np.clip(raw, -0.5, 0.5))
        model = read(old)
        np.testing.assert_array_equal(model.bounds_, [-np.inf, np.inf])
        np.testing.assert_array_equal(model.decision_function(X_NEW, quality=Q_NEW), raw)


def test_a_pav_map_by_hand(tmp_path):
    # blocks [-2, -1] (2 non-targets), [0, 0.5] (1 target, 1 non-target), [1, 3] (2 targets):
    # PAV-LLRs log((n_t/3) / (n_n/3)) = -inf, 0, +inf
    cal = PAVCalibrator(pseudo_count=0).fit([-2.0, -1.0, 0.5, 0.0, 1.0, 3.0], [0, 0, 0, 1, 1, 1])
    focal.save(cal, tmp_path / "pav.json")
    model = focal.runtime.load(tmp_path / "pav.json")
    assert model.transform([-5.0, -1.5, 0.2, 0.7, 9.0]).ravel().tolist() == [
        -np.inf,
        -np.inf,
        0.0,
        0.0,
        np.inf,
    ]


def test_a_signed_model_needs_its_key(saved, tmp_path):
    est = focal.load(saved["fusion+pav"][0])
    focal.save(est, tmp_path / "s.json", key=b"secret")
    assert focal.runtime.load(tmp_path / "s.json", key=b"secret").transform(X_NEW).shape == (257, 1)
    with pytest.raises(ValueError, match="signature does not match"):
        focal.runtime.load(tmp_path / "s.json", key=b"other")
    with pytest.raises(ValueError, match="no signature"):
        focal.runtime.load(saved["logistic"][0], key=b"secret")


def test_the_size_cap_and_damage(saved, tmp_path):
    path = saved["pav"][0]
    with pytest.raises(ValueError, match="max_bytes"):
        focal.runtime.load(path, max_bytes=100)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    (tmp_path / "d.json").write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"d\.json: .*(checksum|JSON|UTF-8)"):
        focal.runtime.load(tmp_path / "d.json")


def _write(path, doc):
    """Write a document with a correct checksum (as an attacker can)."""
    payload = {k: v for k, v in doc.items() if k != "sha256"}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    doc["sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    path.write_text(json.dumps(doc, indent=1))
    return path


def _fitted(doc):
    return doc["model"]["fitted"]


EDITS = {
    "logistic": [
        ("a NaN-producing weight", lambda d: _fitted(d).update(coef_=[1e308, 1e308, 1e308])),
        ("a weight written as a string", lambda d: _fitted(d).update(coef_=["1", 1.0, 1.0])),
        ("one weight too few", lambda d: _fitted(d)["coef_"].pop()),
        ("an unknown field", lambda d: _fitted(d).update(extra=1)),
        ("a missing field", lambda d: _fitted(d).pop("intercept_")),
        ("a bad prior", lambda d: d["model"]["params"].update(p_target=1.5)),
        ("a class that is not loadable", lambda d: d["model"].update({"class": "os.system"})),
        ("targets first", lambda d: _fitted(d)["classes_"].update(values=[1, 0])),
        ("another format", lambda d: d.update(format="pickle")),
        ("a newer version", lambda d: d.update(version=3)),
        ("other system names", lambda d: d["input"].update(systems=["a", "b", "c", "d"])),
    ],
    "logistic-elub": [
        ("bounds the wrong way round", lambda d: _fitted(d).update(bounds_=[1.0, -1.0])),
        ("a NaN bound", lambda d: _fitted(d).update(bounds_=["nan", 1.0])),
        ("one bound", lambda d: _fitted(d).update(bounds_=[1.0])),
        ("a bad bounds parameter", lambda d: d["model"]["params"].update(bounds="elb")),
    ],
    "pav": [
        ("decreasing LLRs", lambda d: _fitted(d).update(llr_=_fitted(d)["llr_"][::-1])),
        ("LLRs beyond the bounds", lambda d: _fitted(d)["llr_"].__setitem__(-1, 50.0)),
        (
            "overlapping blocks",
            lambda d: _fitted(d)["score_hi_"].__setitem__(0, _fitted(d)["score_lo_"][1]),
        ),
        ("counts that do not add up", lambda d: _fitted(d).update(n_targets_=1)),
        ("an unknown interpolation", lambda d: d["model"]["params"].update(interpolation="cubic")),
        (
            "an empty block",
            lambda d: (
                _fitted(d)["block_n_tar_"].__setitem__(0, 0),
                _fitted(d)["block_n_non_"].__setitem__(0, 0),
            ),
        ),
    ],
    "pav-unbounded-linear": [
        (
            "LLRs that are not the blocks' PAV-LLRs",
            lambda d: _fitted(d)["llr_"].__setitem__(1, _fitted(d)["llr_"][1] + 1e-9),
        ),
    ],
    "rocch": [
        (
            "fractions that do not increase",
            lambda d: _fitted(d).update(block_n_tar_=_fitted(d)["block_n_tar_"][::-1]),
        ),
    ],
    "gaussian-shared": [
        (
            "an upper-triangular factor",
            lambda d: _fitted(d)["model_"]["cholesky"][0].__setitem__(1, 0.5),
        ),
        ("a zero pivot", lambda d: _fitted(d)["model_"]["cholesky"][0].__setitem__(0, 0.0)),
        (
            "means of 1e200",
            lambda d: _fitted(d)["model_"].update(means=[[1e200] * 4 for _ in range(3)]),
        ),
    ],
    "multiclass-scalar": [
        ("a width that is not systems x classes", lambda d: _fitted(d).update(n_systems_=3)),
        ("an offset of the wrong length", lambda d: _fitted(d)["intercept_"].pop()),
    ],
    "fusion+pav": [
        ("two steps of one name", lambda d: d["model"]["steps"][1].update(name="logisticfusion")),
        (
            "no estimator",
            lambda d: [s.update(estimator="passthrough") for s in d["model"]["steps"]],
        ),
    ],
}


@pytest.mark.parametrize(
    "name, what, edit", [(n, w, e) for n, edits in EDITS.items() for w, e in edits]
)
def test_what_focal_load_refuses_the_runtime_refuses(saved, tmp_path, name, what, edit):
    doc = json.loads(saved[name][0].read_text())
    doc.pop("integrity")
    edit(doc)
    path = _write(tmp_path / "edited.json", doc)
    with pytest.raises(ValueError) as loaded:
        focal.load(path)
    with pytest.raises(ValueError) as applied:
        focal.runtime.load(path)
    assert str(applied.value).startswith(f"{path}: ")
    # the same place in the file is named (the text after it may be worded differently)
    place = str(loaded.value).split(": ")[1]
    assert str(applied.value).split(": ")[1] == place, (str(loaded.value), str(applied.value))


PARAMETER_EDITS = [
    ("logistic", {"p_target": 1.5}),
    ("logistic", {"max_iter": 0}),
    ("pav", {"interpolation": "cubic"}),
    ("pav", {"pseudo_count": -1.0}),
    ("multiclass-scalar", {"mode": "rotation"}),
    ("multiclass-scalar", {"class_names": ["a", "a", "b"]}),
    ("gaussian-shared", {"covariance": "diagonal"}),
    # issue 30: the runtime accepted a scoring rule that focal.load refuses
    ("logistic", {"scoring_rule": "cubic"}),
    ("logistic", {"scoring_rule": [0, 1]}),
    ("linear", {"scoring_rule": {"tuple": [2.0, "a"]}}),
]


@pytest.mark.parametrize("name, params", PARAMETER_EDITS)
def test_a_bad_parameter_gets_one_message_from_both_readers(saved, tmp_path, name, params):
    """The estimators and the runtime check parameters with the same function, so a bad
    parameter in a file is refused in the same words by ``focal.load`` and the runtime.
    """
    doc = json.loads(saved[name][0].read_text())
    doc.pop("integrity")
    doc["model"]["params"].update(params)
    path = _write(tmp_path / "edited.json", doc)
    with pytest.raises(ValueError) as loaded:
        focal.load(path)
    with pytest.raises(ValueError) as applied:
        focal.runtime.load(path)
    assert str(applied.value) == str(loaded.value)
    assert next(iter(params)) in str(loaded.value)


ODD_VALUES = [
    "cubic",
    "",
    -1,
    0,
    1.5,
    1e300,
    True,
    None,
    [0, 1],
    [1, 2, 3],
    ["a", "a"],
    [0.5, 0.5],
    {"tuple": [0.5, 2.0]},
    {"tuple": []},
    "brier",
    2,
]


@pytest.mark.parametrize(
    "name", ["logistic", "linear", "linear-bounds", "pav", "rocch", "multiclass-full"]
)
def test_every_parameter_is_refused_by_both_readers_or_by_neither(saved, tmp_path, name):
    """Whatever value a file gives any parameter, focal.load and the runtime agree: both load
    it, or both refuse it in the same words.
    """
    doc = json.loads(saved[name][0].read_text())
    doc.pop("integrity")
    disagree = []
    for param in doc["model"]["params"]:
        for value in ODD_VALUES:
            edited = json.loads(json.dumps(doc))
            edited["model"]["params"][param] = value
            path = _write(tmp_path / "edited.json", edited)
            outcomes = []
            for read in (focal.load, focal.runtime.load):
                try:
                    read(path)
                    outcomes.append("loads")
                except ValueError as exc:
                    outcomes.append(str(exc))
            if outcomes[0] != outcomes[1]:
                disagree.append((param, value, *outcomes))
    assert not disagree


def test_bad_input_is_refused_with_a_clear_error(saved):
    model = focal.runtime.load(saved["logistic"][0])
    with pytest.raises(ValueError, match=r"shape \(n_trials, 3\)"):
        model.transform(X_NEW[:, :2])
    with pytest.raises(ValueError, match="Input X contains NaN"):
        model.transform(np.full((2, 3), np.nan))
    pav = focal.runtime.load(saved["pav"][0])
    with pytest.raises(ValueError, match="Input X contains NaN"):
        pav.transform([[np.nan]])


def test_the_registry_states_each_class_parameters_and_saved_fields():
    """The runtime class decoded for each registry entry takes the estimator's parameters, and
    the estimator saves the fields the entry names.
    """
    from focal.models import fitted_state
    from focal.models.registry import REGISTRY, loadable_classes
    from focal.runtime._decode import runtime_class

    classes = loadable_classes()
    runtime = {entry.name: (runtime_class(entry), entry.node) for entry in REGISTRY}
    for entry in REGISTRY:
        cls, node = classes[entry.name]
        made = cls([("only", None)]) if node == "steps" else cls()
        assert list(made.get_params(deep=False)) == sorted(entry.params)
        if node == "state":
            assert getattr(fitted_state, entry.fields) is cls._state_fields
            assert list(runtime[entry.name][0]().get_params()) == sorted(entry.params)

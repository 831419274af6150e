"""focal.save / focal.load: bit-identical round trips, and every kind of bad file refused with a
ValueError.
"""

import copy
import dataclasses
import hashlib
import io
import json
import os
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline

import focal
import focal.models.schema
from focal import (
    ROCCH,
    GaussianBackend,
    LinearCalibrator,
    LogisticFusion,
    MulticlassFusion,
    PAVCalibrator,
)

# ------------------------------------------------------------------------------ data and models


def binary_data(n=400, seed=0, separable=False):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    y[:2] = [0, 1]
    shift = 20.0 if separable else 1.5
    X = np.column_stack(
        [
            shift * y + rng.normal(size=n),
            0.3 + 0.05 * (y + rng.normal(size=n)),
            np.round(np.tanh(y + rng.normal(size=n)), 2),
        ]
    )  # ties
    return X, y


def multiclass_data(n=300, K=2, N=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N, n)
    y[:N] = np.arange(N)
    blocks = [2.0 * (k + 1) * (np.eye(N)[y] + rng.normal(size=(n, N))) + k for k in range(K)]
    return np.concatenate(blocks, axis=1), y


def _fit(est, X, y):
    return est.fit(X, y)


X2, Y2 = binary_data()
XS, YS = binary_data(seed=1, separable=True)
XM, YM = multiclass_data()
X1M, Y1M = multiclass_data(K=1, seed=2)
XG, YG = multiclass_data(K=2, N=3, seed=3)


def fitted_models():
    """(id, fitted estimator, X to transform): every estimator, several settings each."""
    frame = pd.DataFrame(X2, columns=["sys_a", "sys_b", "sys_c"])
    cases = [
        ("fusion-default", LogisticFusion(), X2, Y2),
        ("fusion-p0.01", LogisticFusion(p_target=0.01, reg=0.0), X2, Y2),
        ("fusion-brier", LogisticFusion(scoring_rule="brier", max_iter=50), X2, Y2),
        ("fusion-beta-tuple", LogisticFusion(p_target=0.2, scoring_rule=(2.0, 1.0)), X2, Y2),
        ("fusion-dataframe", LogisticFusion(), frame, Y2),
        ("fusion-bool-labels", LogisticFusion(), X2, Y2.astype(bool)),
        ("fusion-str-labels", LogisticFusion(pos_label="tar"), X2, np.where(Y2 == 1, "tar", "non")),
        (
            "fusion-str-labels-first",
            LogisticFusion(pos_label="genuine"),
            X2,
            np.where(Y2 == 1, "genuine", "impostor"),
        ),
        ("fusion-float-labels", LogisticFusion(pos_label=1.0), X2, Y2 * 2.0 - 1.0),
        ("linear", LinearCalibrator(p_target=0.05), X2[:, 0], Y2),
        ("pav-bounded", PAVCalibrator(), X2[:, 2], Y2),
        (
            "pav-bounded-0.3-linear",
            PAVCalibrator(pseudo_count=0.3, interpolation="linear"),
            X2[:, 0],
            Y2,
        ),
        ("pav-unbounded", PAVCalibrator(pseudo_count=0), X2[:, 2], Y2),
        (
            "pav-unbounded-separable-linear",
            PAVCalibrator(pseudo_count=0.0, interpolation="linear"),
            XS[:, 0],
            YS,
        ),
        ("rocch", ROCCH(), X2[:, 2], Y2),
        ("rocch-separable", ROCCH(), XS[:, 0], YS),
        ("multiclass-scalar", MulticlassFusion(), XM, YM),
        ("multiclass-full", MulticlassFusion(mode="full", reg=1e-4), XM, YM),
        ("multiclass-calibration", MulticlassFusion(mode="calibration"), X1M, Y1M),
        ("multiclass-prior-zero", MulticlassFusion(prior=[0.5, 0.5, 0.0]), XM, YM),
        (
            "multiclass-full-prior",
            MulticlassFusion(mode="full", prior=np.array([0.2, 0.3, 0.5])),
            XM,
            YM,
        ),
        (
            "multiclass-str-classes",
            MulticlassFusion(class_names=["en", "fr", "de"]),
            XM,
            np.array(["en", "fr", "de"])[YM],
        ),
        ("gaussian-shared", GaussianBackend(), XG, YG),
        ("gaussian-per-class", GaussianBackend(covariance="per_class", reg=0.0), XG, YG),
        ("gaussian-prior", GaussianBackend(prior=(0.25, 0.25, 0.5), reg=1e-3), XG, YG),
        (
            "pipeline-fusion-pav",
            make_pipeline(LogisticFusion(p_target=0.01), PAVCalibrator()),
            X2,
            Y2,
        ),
        (
            "pipeline-passthrough",
            Pipeline([("skip", "passthrough"), ("fuse", LogisticFusion()), ("none", None)]),
            X2,
            Y2,
        ),
        (
            "pipeline-backend-calibration",
            make_pipeline(GaussianBackend(), MulticlassFusion(mode="calibration")),
            XG,
            YG,
        ),
        (
            "pipeline-nested",
            Pipeline(
                [
                    ("inner", make_pipeline(LogisticFusion(), PAVCalibrator())),
                    ("outer", PAVCalibrator(pseudo_count=0)),
                ]
            ),
            X2,
            Y2,
        ),
    ]
    return [(name, est, X, y) for name, est, X, y in cases]


CASES = fitted_models()
FITTED = {name: _fit(est, X, y) for name, est, X, y in CASES}
INPUTS = {name: X for name, _, X, _ in CASES}


def saved_text(est) -> str:
    buffer = io.StringIO()
    focal.save(est, buffer)
    return buffer.getvalue()


def load_text(text):
    return focal.load(io.StringIO(text))


# ------------------------------------------------------------------------- exact equality


def assert_same(a, b, where="estimator"):
    """Same type and the same value, bit for bit, recursively (estimators by their __dict__)."""
    assert type(a) is type(b) or (
        isinstance(a, (int, float, bool, np.generic))
        and isinstance(b, (int, float, bool, np.generic))
    ), where
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype == object:
            assert a.tolist() == b.tolist(), where
        else:
            # bit patterns: -0.0 != 0.0, every NaN payload, inf
            assert a.tobytes() == b.tobytes(), where
    elif isinstance(a, float):
        assert np.float64(a).tobytes() == np.float64(b).tobytes(), where
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b)):
            assert_same(u, v, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert set(a) == set(b), (where, set(a) ^ set(b))
        for k in a:
            assert_same(a[k], b[k], f"{where}.{k}")
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            if f.name.startswith("runs_"):  # ROCCH keeps the blocks, not the ROC steps inside
                continue
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif hasattr(a, "__dict__"):
        # the input schema that load attaches is compared by test_input_schema_round_trip
        assert_same(
            {k: v for k, v in vars(a).items() if k != "input_schema_"},
            {k: v for k, v in vars(b).items() if k != "input_schema_"},
            where,
        )
    else:
        assert a == b, where


def outputs(est, X):
    """Every output method of the estimator on X."""
    out = {"transform": est.transform(X)}
    for method in ("decision_function", "predict", "predict_proba", "predict_log_proba"):
        if hasattr(est, method):
            out[method] = getattr(est, method)(X)
    return out


# ------------------------------------------------------------------------------ round trips


@pytest.mark.parametrize("name", list(FITTED))
def test_round_trip_is_bit_identical(name, tmp_path):
    est = FITTED[name]
    path = tmp_path / "model.json"
    focal.save(est, path)
    loaded = focal.load(path)
    assert_same(est, loaded)
    X = INPUTS[name]
    rng = np.random.default_rng(7)
    X_new = np.asarray(X, dtype=float) + rng.normal(scale=0.5, size=np.shape(X))
    if isinstance(X, pd.DataFrame):
        X_new = pd.DataFrame(X_new, columns=X.columns)
    for data in (X, X_new):
        assert_same(outputs(est, data), outputs(loaded, data))
    # saving the loaded model gives the same bytes: nothing is lost or added
    again = tmp_path / "again.json"
    focal.save(loaded, again)
    assert again.read_bytes() == path.read_bytes()


def test_rocch_measures_are_rebuilt_from_the_blocks():
    est = FITTED["rocch"]
    loaded = load_text(saved_text(est))
    for attr in ("eer_", "prbep_", "auc_", "p_miss_", "p_fa_", "thresholds_", "llr_"):
        assert_same(getattr(est, attr), getattr(loaded, attr), attr)
    from focal.metrics import min_cllr, min_dcf

    for p in (0.001, 0.01, 0.5):
        assert min_dcf(loaded.hull_, p_target=p) == min_dcf(est.hull_, p_target=p)
        assert min_cllr(loaded.hull_, p_target=p) == min_cllr(est.hull_, p_target=p)
    text = saved_text(est)
    assert "eer_" not in text and "p_miss_" not in text  # derived, not stored


def test_pickle_and_joblib_keep_working():
    import joblib

    for name in (
        "fusion-default",
        "pav-bounded",
        "multiclass-full",
        "gaussian-per-class",
        "pipeline-fusion-pav",
    ):
        est = FITTED[name]
        buffer = io.BytesIO()
        joblib.dump(est, buffer)
        buffer.seek(0)
        for copy_ in (pickle.loads(pickle.dumps(est)), joblib.load(buffer)):
            assert_same(outputs(est, INPUTS[name]), outputs(copy_, INPUTS[name]))


def test_the_output_container_is_kept():
    est = copy.deepcopy(FITTED["fusion-dataframe"]).set_output(transform="pandas")
    loaded = load_text(saved_text(est))
    assert_same(est, loaded)
    frame = INPUTS["fusion-dataframe"]
    out, again = est.transform(frame), loaded.transform(frame)
    assert isinstance(again, pd.DataFrame) and list(again.columns) == list(out.columns)
    assert again.to_numpy().tobytes() == out.to_numpy().tobytes()
    doc = document("fusion-default")
    doc["model"]["set_output"] = "excel"
    refused(signed(doc), "set_output: must be null or one of")


def test_awkward_floats_round_trip_exactly():
    est = copy.deepcopy(FITTED["fusion-default"])
    est.coef_ = np.array([5e-324, -0.0, 0.1 + 0.2])
    est.intercept_ = -1.7976931348623157e308
    loaded = load_text(saved_text(est))
    assert_same(est, loaded)
    assert np.signbit(loaded.coef_[1])


def test_unbounded_pav_writes_infinities_as_strings():
    est = FITTED["pav-unbounded-separable-linear"]
    assert np.isinf(est.llr_).any()
    text = saved_text(est)
    assert '"-inf"' in text or '"inf"' in text
    assert "Infinity" not in text and "NaN" not in text
    assert_same(est, load_text(text))


def test_file_objects_text_and_binary(tmp_path):
    est = FITTED["pav-bounded"]
    binary = io.BytesIO()
    focal.save(est, binary)
    text = saved_text(est)
    assert binary.getvalue().decode("utf-8") == text
    assert_same(est, focal.load(io.BytesIO(binary.getvalue())))
    path = tmp_path / "m.json"
    with open(path, "w") as handle:
        focal.save(est, handle)
    with open(path, "rb") as handle:
        assert_same(est, focal.load(handle))


def test_the_file_is_the_documented_json():
    est = FITTED["pipeline-fusion-pav"]
    text = saved_text(est)
    doc = json.loads(text)
    assert list(doc) == [
        "format",
        "version",
        "focal_version",
        "input",
        "model",
        "sha256",
        "integrity",
    ]
    # the last line: the SHA-256 of the file's bytes before it (before its leading comma)
    body, last = text.rsplit(",\n", 1)
    assert (
        last == f'  "integrity": {{"sha256": "{hashlib.sha256(body.encode()).hexdigest()}"}}\n}}\n'
    )
    assert doc["format"] == "focal-model" and doc["version"] == 2
    assert doc["input"] == {
        "kind": "binary",
        "n_systems": 3,
        "systems": None,
        "classes": None,
        "format": None,
        "task": None,
        "condition": None,
    }
    assert doc["focal_version"] == focal.__version__
    # the checksum is the SHA-256 of the canonical JSON of the other fields (module docstring)
    assert doc["sha256"] == checksum(doc)
    model = doc["model"]
    assert model["class"] == "Pipeline"
    assert [s["name"] for s in model["steps"]] == ["logisticfusion", "pavcalibrator"]
    fusion = model["steps"][0]["estimator"]
    assert fusion["params"]["p_target"] == 0.01
    assert fusion["fitted"]["coef_"] == est[0].coef_.tolist()
    assert fusion["fitted"]["intercept_"] == est[0].intercept_


def test_saving_is_atomic_and_keeps_permissions(tmp_path):
    path = tmp_path / "m.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    focal.save(FITTED["linear"], path)
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


# ------------------------------------------------------------------------ what save refuses


class MyFusion(LogisticFusion):
    pass


def test_save_refuses_what_it_cannot_write_faithfully(tmp_path):
    path = tmp_path / "m.json"
    with pytest.raises(NotFittedError, match="unfitted LogisticFusion"):
        focal.save(LogisticFusion(), path)
    with pytest.raises(ValueError, match="cannot save"):
        focal.save(MyFusion().fit(X2, Y2), path)
    with pytest.raises(ValueError, match="LogisticRegression"):
        focal.save(make_pipeline(LogisticFusion(), LogisticRegression()).fit(X2, Y2), path)
    with pytest.raises(ValueError, match="memory"):
        focal.save(make_pipeline(LogisticFusion(), memory=str(tmp_path)).fit(X2, Y2), path)
    bad = copy.deepcopy(FITTED["fusion-default"]).set_params(p_target=1.5)
    with pytest.raises(ValueError, match="p_target"):
        focal.save(bad, path)
    bad = copy.deepcopy(FITTED["fusion-default"])
    bad.coef_ = np.array([1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        focal.save(bad, path)
    with pytest.raises(ValueError, match="cannot write"):
        focal.save(FITTED["linear"], tmp_path / "no" / "such" / "dir.json")
    assert not path.exists()


# ------------------------------------------------------------------------- what load refuses


def checksum(doc) -> str:
    """The documented checksum, computed here independently of focal's code."""
    payload = {k: v for k, v in doc.items() if k not in ("sha256", "integrity")}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def signed(doc) -> str:
    """The document with a correct checksum: only the semantic checks can refuse it."""
    doc = dict(doc)
    doc["sha256"] = checksum(doc)
    return json.dumps(doc)


def document(name):
    return json.loads(saved_text(FITTED[name]))


def refused(text, match):
    with pytest.raises(ValueError, match=match) as info:
        load_text(text)
    return str(info.value)


@pytest.mark.parametrize("version", [3, 1, 0, "2", 2.0, None])
def test_changed_schema_version_is_refused(version):
    doc = document("fusion-default")
    doc["version"] = version
    message = refused(signed(doc), "schema version")
    assert "reads versions 2" in message
    if version == 3:
        assert "upgrade focal" in message


@pytest.mark.parametrize(
    "path",
    [
        ("sha256",),
        ("format",),
        ("model",),
        ("model", "class"),
        ("model", "params"),
        ("model", "params", "p_target"),
        ("model", "fitted"),
        ("model", "fitted", "coef_"),
        ("model", "fitted", "feature_names_in_"),
        ("model", "fitted", "classes_", "dtype"),
    ],
)
def test_missing_field_is_refused(path):
    doc = document("fusion-default")
    node = doc
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    text = json.dumps(doc) if path == ("sha256",) else signed(doc)
    refused(text, f"missing field '{path[-1]}'")


@pytest.mark.parametrize(
    "path, value, match",
    [
        (("model", "fitted", "coef_"), "1.0 2.0 3.0", "must be a list"),
        (("model", "fitted", "coef_"), [1.0, "2.0", 3.0], r"coef_ \(item 1\): must be a finite"),
        (("model", "fitted", "coef_"), [1.0, 2, 3.0], "item 1"),
        (("model", "fitted", "coef_"), [1.0, 2.0], "list of 3 items"),
        (("model", "fitted", "coef_"), [[1.0, 2.0, 3.0]], "list of 3 items"),
        (("model", "fitted", "coef_"), [1.0, [2.0], 3.0], "must be a finite number"),
        (("model", "fitted", "intercept_"), "-1.5", "intercept_: must be a finite number"),
        (("model", "fitted", "intercept_"), None, "intercept_"),
        (("model", "fitted", "n_features_in_"), 3.0, "must be an integer"),
        (("model", "fitted", "n_features_in_"), True, "must be an integer"),
        (("model", "fitted", "n_iter_"), -1, "n_iter_"),
        (("model", "fitted", "classes_"), [0, 1], "must be an object"),
        (("model", "fitted", "classes_", "dtype"), "complex128", "dtype"),
        (("model", "fitted", "classes_", "values"), [0.0, 1.0], "dtype int64"),
        (
            ("model", "fitted", "classes_", "values"),
            [1, 0],
            r"\[non-target, target\] with target 1",
        ),
        (("model", "fitted", "feature_names_in_"), ["a", "b"], "3 strings"),
        (("model", "params", "p_target"), "0.5", "p_target"),
        (("model", "params", "p_target"), 1.5, "p_target"),
        (("model", "params", "max_iter"), {"tuple": [1]}, "max_iter"),
        (("model", "params", "reg"), {"float": "inf"}, r"\{\"tuple\""),
        (("model", "class"), "LogisticRegression", "must be one of"),
        (("model",), [], "must be an object"),
        (("focal_version",), 1, "must be a string"),
        (("format",), "focal-modell", "not a focal model file"),
    ],
)
def test_wrong_type_or_value_is_refused(path, value, match):
    doc = document("fusion-default")
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    refused(signed(doc), match)


@pytest.mark.parametrize(
    "where, key, value",
    [
        ((), "__reduce__", "os.system('touch /tmp/pwned')"),
        ((), "pickle", "gASVKAAAAAAAAACMBXBvc2l4lIwGc3lzdGVtlJOUjAV0b3VjaJSFlFKULg=="),
        (("model",), "py/object", "os.system"),
        (("model", "params"), "__class__", "subprocess.Popen"),
        (("model", "fitted"), "transform", "lambda X: __import__('os').system('x')"),
    ],
)
def test_extra_content_is_refused(where, key, value, tmp_path):
    doc = document("fusion-default")
    node = doc
    for k in where:
        node = node[k]
    node[key] = value
    refused(signed(doc), "unexpected field")
    assert not os.path.exists("/tmp/pwned")


@pytest.mark.parametrize(
    "cls",
    [
        "os.system",
        "builtins.eval",
        "sklearn.pipeline.Pipeline",
        "focal.LogisticFusion",
        "__main__.MyFusion",
        "MyFusion",
    ],
)
def test_only_whitelisted_classes_are_instantiated(cls):
    doc = document("fusion-default")
    doc["model"]["class"] = cls
    refused(signed(doc), "must be one of")


def test_tampering_without_updating_the_checksum_is_refused():
    text = saved_text(FITTED["fusion-default"])
    doc = json.loads(text)
    doc["model"]["fitted"]["coef_"][0] *= 2
    refused(json.dumps(doc), "checksum does not match")
    # a change of layout only (indentation, key order) is not a change of content
    reordered = json.loads(text)
    reordered = {k: reordered[k] for k in reversed(list(reordered))}
    assert_same(FITTED["fusion-default"], load_text(json.dumps(reordered, indent=7)))


@pytest.mark.parametrize(
    "text, match",
    [
        ("", "not a valid JSON"),
        ('{"format": "focal-model", "format": "focal-model"}', "duplicate key"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": -Infinity}', "Infinity is not a JSON number"),
        ('{"a": 1e999}', "overflows"),
        ("[" * 100000, "not a focal model file"),
        ('{"a":' * 100000, "nested too deeply|not a valid JSON"),
        ('{"a":' * 300 + "1" + "}" * 300, "nested more than 64 levels"),
        ('"focal-model"', "not a focal model file"),
        ("\udcff", "not UTF-8 text"),
    ],
)
def test_malformed_json_is_refused(text, match):
    refused(text, match)
    with pytest.raises(ValueError, match="not UTF-8"):
        focal.load(io.BytesIO(b'{"a": "\xff"}'))


def test_errors_name_the_file(tmp_path):
    path = tmp_path / "fuser.json"
    path.write_text(saved_text(FITTED["linear"])[:200])
    with pytest.raises(ValueError, match="fuser.json: not a valid JSON"):
        focal.load(path)
    with pytest.raises(ValueError, match="missing.json: cannot open"):
        focal.load(tmp_path / "missing.json")


# ------------------------------------------------------------------ the estimators' invariants


def modified(name, change):
    doc = document(name)
    change(doc["model"])
    return signed(doc)


def _set(path, value):
    def change(node):
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def test_pav_invariants_are_checked():
    doc = document("pav-bounded")["model"]["fitted"]
    lo, llr = doc["score_lo_"], doc["llr_"]
    assert len(lo) >= 3
    refused(modified("pav-bounded", _set(("fitted", "llr_"), llr[::-1])), "non-decreasing")
    swapped = lo[:]
    swapped[0], swapped[1] = swapped[1], swapped[0]
    refused(modified("pav-bounded", _set(("fitted", "score_lo_"), swapped)), "score_hi_|overlap")
    refused(
        modified("pav-bounded", _set(("fitted", "llr_"), ["-inf"] + llr[1:])),
        "finite when pseudo_count > 0",
    )
    refused(modified("pav-bounded", _set(("fitted", "llr_"), [-1e3] + llr[1:])), "bounds")
    counts = doc["block_n_tar_"][:]
    counts[0] += 1
    refused(modified("pav-bounded", _set(("fitted", "block_n_tar_"), counts)), "add up")
    refused(
        modified("pav-bounded", _set(("fitted", "block_n_tar_"), [-1] + counts[1:])), "block_n_tar_"
    )
    refused(modified("pav-bounded", _set(("fitted", "llr_"), llr[:-1] + ["nan"])), "llr_")
    # unbounded: the LLRs must be the PAV-LLRs of the counts, exactly
    unbounded = document("pav-unbounded")["model"]["fitted"]["llr_"]
    nudged = [unbounded[0]] + [np.nextafter(unbounded[1], np.inf)] + unbounded[2:]
    refused(modified("pav-unbounded", _set(("fitted", "llr_"), nudged)), "PAV-LLR")


def test_rocch_invariants_are_checked():
    fitted = document("rocch")["model"]["fitted"]
    n_tar, n_non = fitted["block_n_tar_"], fitted["block_n_non_"]

    def reversed_blocks(model):
        model["fitted"]["block_n_tar_"] = n_tar[::-1]
        model["fitted"]["block_n_non_"] = n_non[::-1]

    refused(modified("rocch", reversed_blocks), "fractions must increase")

    def no_nontargets(model):
        model["fitted"]["block_n_tar_"] = [1] * len(n_tar)
        model["fitted"]["block_n_non_"] = [0] * len(n_tar)

    refused(modified("rocch", no_nontargets), "target and non-target")
    refused(modified("rocch", _set(("fitted", "n_features_in_"), 2)), r"\[1, 1\]")


def test_fusion_and_multiclass_invariants_are_checked():
    refused(modified("linear", _set(("fitted", "n_features_in_"), 2)), "one input column")
    refused(modified("multiclass-scalar", _set(("fitted", "n_systems_"), 3)), "n_systems_")
    full = document("multiclass-full")["model"]["fitted"]["coef_"]
    refused(modified("multiclass-full", _set(("fitted", "coef_"), full[:1])), "list of 2")
    refused(
        modified("multiclass-prior-zero", _set(("params", "prior"), [0.5, 0.6, 0.0])), "sum to 1"
    )
    refused(modified("multiclass-prior-zero", _set(("params", "mode"), "rotation")), "mode")
    chol = document("gaussian-shared")["model"]["fitted"]["model_"]["cholesky"]
    upper = copy.deepcopy(chol)
    upper[0][1] = 0.5
    refused(
        modified("gaussian-shared", _set(("fitted", "model_", "cholesky"), upper)),
        "lower triangular",
    )
    negative = copy.deepcopy(chol)
    negative[0][0] = -negative[0][0]
    refused(
        modified("gaussian-shared", _set(("fitted", "model_", "cholesky"), negative)),
        "positive diagonal",
    )
    refused(
        modified("gaussian-shared", _set(("fitted", "model_", "covariance"), "per_class")),
        "list of 3 items",
    )


def test_pipeline_structure_is_checked():
    def steps(change):
        return modified("pipeline-fusion-pav", change)

    refused(steps(_set(("params", "memory"), "/tmp/cache")), "memory: must be null")
    refused(steps(_set(("steps",), [])), "non-empty list")
    doc = document("pipeline-fusion-pav")["model"]
    doc["steps"][1]["name"] = doc["steps"][0]["name"]
    refused(signed({**document("pipeline-fusion-pav"), "model": doc}), "distinct")
    refused(steps(lambda m: m["steps"][0].update(name="a__b")), "invalid step name")
    refused(steps(lambda m: m["steps"][0].update(estimator="drop")), "must be an object")
    refused(
        steps(_set(("steps",), [{"name": "p", "estimator": "passthrough"}])),
        "at least one estimator",
    )
    nested = {
        "class": "Pipeline",
        "params": {"memory": None, "transform_input": None, "verbose": False},
        "steps": [],
    }
    node = nested
    for _ in range(12):
        child = copy.deepcopy(nested)
        node["steps"] = [{"name": "p", "estimator": child}]
        node = child
    node["steps"] = [{"name": "f", "estimator": document("linear")["model"]}]
    refused(signed({**document("linear"), "model": nested}), "nested too deeply")


# ------------------------------------------------------------------------------------ fuzzing

FUZZ_MODELS = [
    "fusion-dataframe",
    "pav-unbounded-separable-linear",
    "rocch",
    "multiclass-full",
    "gaussian-prior",
    "pipeline-fusion-pav",
]
FUZZ_TEXT = {name: saved_text(FITTED[name]) for name in FUZZ_MODELS}
INTERESTING = [
    "0",
    "1",
    "9",
    "-",
    ".",
    "e",
    ",",
    ":",
    "[",
    "]",
    "{",
    "}",
    '"',
    " ",
    "\n",
    "null",
    "true",
    "inf",
    "\\",
    "\x00",
    "\u00e9",
]


@st.composite
def mutated_files(draw):
    name = draw(st.sampled_from(FUZZ_MODELS))
    text = FUZZ_TEXT[name]
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["replace", "insert", "delete", "truncate"]))
        i = draw(st.integers(0, max(len(text) - 1, 0)))
        if op == "replace":
            text = text[:i] + draw(st.sampled_from(INTERESTING)) + text[i + 1 :]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(INTERESTING)) + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 20)) :]
        else:
            text = text[:i]
    return name, text


@given(mutated_files())
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_mutated_files_raise_only_value_error_or_load_the_same_model(case):
    name, text = case
    try:
        loaded = load_text(text)
    except ValueError:
        return
    # a mutation that leaves the content intact (e.g. in white space) loads the same model
    assert_same(FITTED[name], loaded)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)


def _places(node, path=()):
    """Every (path, value) in a JSON tree."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _places(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _places(v, path + (i,))


@st.composite
def resigned_documents(draw):
    """Structural changes with a valid checksum: only the semantic checks stand in the way."""
    name = draw(st.sampled_from(FUZZ_MODELS))
    doc = json.loads(FUZZ_TEXT[name])
    places = [p for p, _ in _places(doc["model"]) if p]
    for _ in range(draw(st.integers(1, 2))):
        path = ("model",) + draw(st.sampled_from(places))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        node = parent[path[-1]]
        op = draw(st.sampled_from(["replace", "delete", "add", "number"]))
        if op == "replace":
            parent[path[-1]] = draw(JSON_VALUES)
        elif op == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif op == "add" and isinstance(node, dict):
            node[draw(st.text(max_size=6))] = draw(JSON_VALUES)
        elif op == "number" and isinstance(node, (int, float)) and not isinstance(node, bool):
            parent[path[-1]] = draw(
                st.sampled_from(
                    [
                        0,
                        -1,
                        0.0,
                        -node,
                        node * 1e300,
                        1e-320,
                        float(node) if isinstance(node, int) else int(node),
                    ]
                )
            )
        places = [p for p, _ in _places(doc["model"]) if p]
    return signed(doc)


@given(resigned_documents())
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_resigned_documents_raise_only_value_error(text):
    try:
        loaded = load_text(text)
    except ValueError:
        return
    # whatever load accepts is a consistent model: save accepts it too
    focal.save(loaded, io.StringIO())


def test_the_docstring_examples_run():
    import doctest

    import focal.models.persistence

    result = doctest.testmod(focal.models.persistence)
    assert result.attempted > 0 and result.failed == 0


def test_input_schema_round_trip_and_checks(tmp_path):
    from focal.models.schema import input_schema, set_input_schema

    est = set_input_schema(
        clone(FITTED["multiclass-str-classes"]).fit(XM, np.array(["en", "fr", "de"])[YM]),
        systems=["sysA", "sysB"],
        format="multiclass",
    )
    assert list(est.feature_names_in_) == [
        "sysA:en",
        "sysA:fr",
        "sysA:de",
        "sysB:en",
        "sysB:fr",
        "sysB:de",
    ]
    path = tmp_path / "m.json"
    focal.save(est, path)
    doc = json.loads(path.read_text())
    assert doc["input"] == {
        "kind": "multiclass",
        "n_systems": 2,
        "systems": ["sysA", "sysB"],
        "classes": ["en", "fr", "de"],
        "format": "multiclass",
        "task": None,
        "condition": None,
    }
    loaded = focal.load(path)
    assert input_schema(loaded) == input_schema(est)
    assert input_schema(loaded).notes == ()
    # a schema that contradicts the model is refused
    doc.pop("sha256")
    doc["input"]["classes"] = ["fr", "en", "de"]
    with pytest.raises(ValueError, match=r"input.classes: \('fr', 'en', 'de'\) does not match"):
        load_text(signed(doc))
    with pytest.raises(ValueError, match="3 system names for a model of 2"):
        set_input_schema(est, systems=["a", "b", "c"])


def test_the_model_file_shown_in_the_docs_has_the_fields_of_a_saved_one(tmp_path):
    """docs/reference/file_formats.rst shows a LogisticFusion file: its fields, parameters and
    fitted attributes are those focal.save writes (the fitted ones a subset: the page elides
    the rest with "...").
    """
    import pathlib
    import re

    from focal import LogisticFusion, save

    page = pathlib.Path(__file__).parent.parent / "docs" / "reference" / "file_formats.rst"
    block = re.search(r"\.\. code-block:: json\n\n(.*?)\n\n(?=\S)", page.read_text(), re.S)
    shown = json.loads(block.group(1))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    save(LogisticFusion(p_target=0.01).fit(X, np.arange(60) % 2), tmp_path / "m.json")
    saved = json.loads((tmp_path / "m.json").read_text())
    assert shown.keys() == saved.keys()
    assert shown["input"].keys() == saved["input"].keys()
    assert shown["model"].keys() == saved["model"].keys()
    assert shown["model"]["params"] == saved["model"]["params"]
    fitted = shown["model"]["fitted"].keys() - {"..."}
    assert fitted <= saved["model"]["fitted"].keys()

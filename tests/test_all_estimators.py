"""Common tests over every estimator a model file may hold (the registry of focal.models.registry)
and
every public estimator: save / load round trips, the saved-state protocol, documented defaults
against the signatures, and scikit-learn's API checks.
"""

from __future__ import annotations

import ast
import inspect
import io
import pathlib
import re
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils.estimator_checks import estimator_checks_generator

import focal
import focal.estimators
from focal import (
    ROCCH,
    GaussianBackend,
    KDECalibrator,
    LinearCalibrator,
    LogisticFusion,
    MulticlassFusion,
    PAVCalibrator,
    QualityFusion,
)
from focal.models.codec import Field
from focal.models.registry import LOADABLE, REGISTRY, loadable_classes
from tests._support.sklearn_contract import run_check

# ------------------------------------------------------------------------------ small valid data

_RNG = np.random.default_rng(12)
_N = 240
_Y = (np.arange(_N) % 3 == 0).astype(int)  # 80 targets, 160 non-targets
_X = np.column_stack(
    [1.5 * _Y + _RNG.normal(size=_N), np.round(_Y + _RNG.normal(size=_N), 1)]
)  # ties in the second column
_YM = np.arange(_N) % 3
_XM = np.concatenate(
    [2.0 * (np.eye(3)[_YM] + _RNG.normal(size=(_N, 3))) + k for k in range(2)], axis=1
)
_Q = _RNG.uniform(3.0, 60.0, size=(_N, 2))  # model and test durations


CASES = [
    (LogisticFusion(p_target=0.2), _X, _Y, {}),
    (LogisticFusion(pos_label="tar"), _X, np.where(_Y == 1, "tar", "non"), {}),
    (LinearCalibrator(), _X[:, 0], _Y, {}),
    (PAVCalibrator(), _X[:, 1], _Y, {}),
    (PAVCalibrator(pseudo_count=0, interpolation="linear"), _X[:, 1], _Y, {}),
    (ROCCH(), _X[:, 1], _Y, {}),
    (KDECalibrator(), _X[:, 1], _Y, {}),
    (KDECalibrator(bandwidth="cv", bounds=(-3.0, 4.0)), _X[:, 0], _Y, {}),
    (MulticlassFusion(), _XM, _YM, {}),
    (
        MulticlassFusion(mode="full", class_names=["a", "b", "c"]),
        _XM,
        np.array(["a", "b", "c"])[_YM],
        {},
    ),
    (GaussianBackend(covariance="per_class", prior=[0.2, 0.3, 0.5]), _XM[:, :3], _YM, {}),
    (
        QualityFusion(form="scale", measures=["duration"], quality_transform="log"),
        _X,
        _Y,
        {"quality": _Q},
    ),
    (make_pipeline(LogisticFusion(), PAVCalibrator()), _X, _Y, {}),
]
IDS = [f"{type(est).__name__}-{i}" for i, (est, *_) in enumerate(CASES)]


def _fitted(i):
    est, X, y, extra = CASES[i]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(est).fit(X, y, **extra)


_OUTPUTS = ("transform", "decision_function", "predict", "predict_proba", "predict_log_proba")


def _outputs(est, X, extra):
    return {m: np.asarray(getattr(est, m)(X, **extra)) for m in _OUTPUTS if hasattr(est, m)}


def test_every_registered_class_has_a_case():
    assert set(LOADABLE) == {entry.name for entry in REGISTRY}
    assert len(LOADABLE) == len(set(LOADABLE))
    assert {type(est).__name__ for est, *_ in CASES} == set(LOADABLE)


@pytest.mark.parametrize("i", range(len(CASES)), ids=IDS)
def test_save_load_round_trip_gives_identical_outputs(i):
    est = _fitted(i)
    _, X, _, extra = CASES[i]
    text = io.StringIO()
    focal.save(est, text)
    loaded = focal.load(io.StringIO(text.getvalue()))
    assert type(loaded) is type(est)
    rng = np.random.default_rng(i)
    X_new = np.asarray(X, dtype=float) + rng.normal(scale=0.7, size=np.shape(X))
    for data in (X, X_new):
        want, got = _outputs(est, data, extra), _outputs(loaded, data, extra)
        assert set(want) == set(got) and "transform" in want
        for method in want:
            assert want[method].dtype == got[method].dtype, method
            assert want[method].shape == got[method].shape, method
            assert want[method].tobytes() == got[method].tobytes(), method
    again = io.StringIO()
    focal.save(loaded, again)
    assert again.getvalue() == text.getvalue()


# ------------------------------------------------------------------------ the saved-state protocol

STATE_CLASSES = [cls for cls, node in loadable_classes().values() if node == "state"]


@pytest.mark.parametrize("cls", STATE_CLASSES, ids=lambda c: c.__name__)
def test_saved_state_protocol(cls):
    """Each registered estimator describes its saved fields as plain data, and its fitted state
    has exactly those fields.
    """
    fields = cls._state_fields
    assert fields and all(isinstance(f, Field) for f in fields)
    names = [f.name for f in fields]
    assert len(names) == len(set(names)) and {"n_features_in_", "feature_names_in_"} <= set(names)
    for i, (est, *_) in enumerate(CASES):
        if type(est) is cls:
            assert list(_fitted(i)._get_state()) == names


def test_the_saved_fields_import_numpy_only_and_agree_with_core():
    """The field descriptions, the codec and the registry import NumPy and each other only (at
    module level), so a reader without scikit-learn or SciPy can use them.
    """
    allowed = {
        "__future__",
        "collections.abc",
        "numpy",
        "typing",
        "importlib",
        "focal.models.codec",
    }
    for name in ("models/fitted_state.py", "models/codec.py", "models/registry.py"):
        tree = ast.parse((pathlib.Path(focal.__file__).parent / name).read_text())
        top = set()
        for node in tree.body:
            if isinstance(node, ast.Import):
                top |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                top.add(("focal.models." if node.level else "") + (node.module or ""))
        assert top <= allowed, (name, top - allowed)
    from focal.core.maps import COVARIANCE_TYPES
    from focal.models import fitted_state as _fitted_state

    assert _fitted_state.COVARIANCE_TYPES == COVARIANCE_TYPES


def _private_names(path):
    """Attributes named ``_x`` (not dunder) that a module's code uses, and its string
    constants outside docstrings.
    """
    tree = ast.parse(pathlib.Path(path).read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    private = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__")
    }
    strings = {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    }
    return private, strings


@pytest.mark.parametrize(
    "module",
    ["models/persistence.py", "models/nodes.py", "models/codec.py", "models/integrity.py"],
)
def test_the_serializer_knows_no_estimator_class(module):
    """The serializer names no loadable class and calls no private estimator method other than
    the saved-state protocol (focal/estimators/_state.py).
    """
    private, strings = _private_names(pathlib.Path(focal.__file__).parent / module)
    protocol = {
        "_state_fields",
        "_get_state",
        "_validate_state",
        "_set_state",
        "_check_params",
        "_sklearn_output_config",
    }  # the last: scikit-learn's record of set_output
    assert private <= protocol, private - protocol
    assert not strings & set(LOADABLE)


# ------------------------------------------------------------- documented defaults = signatures

PUBLIC = [
    getattr(focal.estimators, name)
    for name in focal.estimators.__all__
    if isinstance(getattr(focal.estimators, name), type)
    and issubclass(getattr(focal.estimators, name), BaseEstimator)
]
_SECTION = re.compile(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", re.S | re.M)
_DEFAULT = re.compile(r"\bdefault(?:\s*[=:]\s*|\s+is\s+|\s+)(.+)$")


def _documented(cls):
    """``{name: spec}`` of the numpydoc Parameters section of ``cls`` and, for parameters it
    documents without a type or not at all, of its bases' (e.g. "As in LogisticFusion").
    """
    found = {}
    for klass in cls.__mro__:
        match = _SECTION.search(inspect.getdoc(klass) or "") if klass.__doc__ else None
        if match is None:
            continue
        for line in match.group(1).splitlines():
            if not line or line[0].isspace():
                continue
            names, _, spec = line.partition(" : ")
            for name in names.split(","):
                if found.get(name.strip()) is None:
                    found[name.strip()] = spec.strip() or None
    return found


def _default_text(spec):
    """The default a spec states (text), or None."""
    match = _DEFAULT.search(spec)
    return None if match is None else match.group(1).strip().rstrip(".")


def _same_default(text, value):
    if text.startswith("``") and text.endswith("``"):
        return value is None  # an object built when fitting (e.g. ``LogisticRegression()``)
    try:
        stated = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False
    if isinstance(stated, (int, float)) and not isinstance(stated, bool):
        return type(value) in (int, float) and stated == value
    return stated == value and type(stated) is type(value)


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_documented_defaults_match_the_signature(cls):
    """Every constructor parameter is documented; a stated default (``default X``) is the
    signature's; ``optional`` without a default means None; a default other than None is
    stated.
    """
    documented = _documented(cls)
    signature = inspect.signature(cls.__init__).parameters
    problems = []
    for name, param in list(signature.items())[1:]:
        spec = documented.get(name)
        if spec is None:
            problems.append(f"{name}: not documented with a type")
            continue
        text = _default_text(spec)
        if text is not None:
            if not _same_default(text, param.default):
                problems.append(f"{name}: documented default {text}, signature {param.default!r}")
        elif param.default is not None:
            problems.append(f"{name}: default {param.default!r} not stated ({spec!r})")
        elif not spec.endswith("optional"):
            problems.append(f"{name}: default None, but not marked optional ({spec!r})")
    assert not problems, problems


def test_the_default_parser_finds_disagreements():
    class Documented(BaseEstimator):
        """Toy.

        Parameters
        ----------
        reg : float, default 1e-6
            Penalty.
        mode : {"a", "b"}, default="a"
        """

        def __init__(self, reg=1e-9, mode="a"):
            self.reg = reg
            self.mode = mode

    documented = _documented(Documented)
    assert documented == {"reg": "float, default 1e-6", "mode": '{"a", "b"}, default="a"'}
    assert not _same_default(_default_text(documented["reg"]), 1e-9)
    assert _same_default(_default_text(documented["mode"]), "a")
    assert not _same_default("1", True) and not _same_default("'1'", 1)


# --------------------------------------------------------------- scikit-learn's API checks

#: Checks of the estimator API (parameters, fitted state, unfitted errors, pickling) that every
#: registered estimator must pass or refuse only by a documented refusal (e.g. a QualityFusion
#: without quality); the numerical checks run in each estimator's own tests.
API_CHECKS = (
    "check_no_attributes_set_in_init",
    "check_parameters_default_constructible",
    "check_get_params_invariance",
    "check_set_params",
    "check_estimators_unfitted",
    "check_n_features_in",
    "check_fit_check_is_fitted",
    "check_dont_overwrite_parameters",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_fit_idempotent",
)


def _api_checks():
    for cls in STATE_CLASSES:
        for est, check in estimator_checks_generator(cls(), legacy=True, mark=None):
            name = getattr(check, "func", check).__name__
            if name in API_CHECKS:
                yield pytest.param(est, check, id=f"{cls.__name__}-{name}")


@pytest.mark.parametrize("estimator, check", list(_api_checks()))
def test_sklearn_api_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_check(estimator, check, set(API_CHECKS))


def test_pipelines_of_registered_estimators_are_registered():
    assert loadable_classes()["Pipeline"] == (Pipeline, "steps")

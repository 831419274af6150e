"""Decoding the ``params`` and ``fitted`` fields of each saved estimator for the runtime.

What :func:`focal.load` checks of each class (types, shapes, the parameters that bear on the
map, the invariants of the fitted numbers), read straight from the model file (schema versions
1 and 2), giving the runtime's models (:mod:`focal.runtime._models`).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..core import maps
from ..core.validation import check_int, check_non_negative, check_probability
from ._document import MAX_COUNT, invalid, param
from ._models import AffineMap, BlockMap, GaussianMap, MulticlassMap, QualityMap

__all__ = ["decode", "PARAMS"]

#: Constructor parameters of each loadable estimator, as its ``get_params()`` lists them.
PARAMS = {
    "LogisticFusion": ("p_target", "reg", "tol", "max_iter", "scoring_rule", "pos_label"),
    "PAVCalibrator": ("pseudo_count", "interpolation", "pos_label"),
    "ROCCH": ("pos_label",),
    "MulticlassFusion": ("prior", "mode", "reg", "tol", "max_iter", "class_names"),
    "GaussianBackend": ("covariance", "prior", "reg", "class_names"),
    "QualityFusion": (
        "form",
        "measures",
        "quality_transform",
        "features",
        "p_target",
        "reg",
        "tol",
        "max_iter",
        "pos_label",
    ),
}
PARAMS["LinearCalibrator"] = PARAMS["LogisticFusion"]
_NEW_IN_VERSION_2 = ("pos_label", "class_names")
_OUTPUTS = (None, "default", "pandas", "polars")
_COVARIANCE_TYPES = ("shared", "per_class")
_QUALITY_FORMS = ("bilinear", "linear", "scale")
_QUALITY_FEATURES = ("minmax", "sides")
_QUALITY_TRANSFORMS = ("log", "logit")
_MODES = ("scalar", "calibration", "full")


# -- decoding ----------------------------------------------------------------------------------


def _params(name, obj, version):
    """The constructor parameters of a node: exactly those of the class, JSON values."""
    names = [p for p in PARAMS[name] if not (version == 1 and p in _NEW_IN_VERSION_2)]
    values = {p: param(*obj.take(p)) for p in names}
    obj.done()
    values.setdefault("pos_label", None)
    values.setdefault("class_names", None)
    return values


def _checked(where, check, *args):
    try:
        return check(*args)
    except (TypeError, ValueError, OverflowError) as exc:
        raise invalid(where, str(exc)) from None


def _binary_labels(params, f, version):
    classes = f.labels("classes_", 2, ordered=version == 1)
    if version == 1:
        return classes
    pos_label = params["pos_label"]
    target = 1 if pos_label is None else pos_label
    if classes.tolist()[1] != target or (pos_label is None and classes.tolist()[0] != 0):
        raise invalid(
            f"{f.where}.classes_",
            f"must be [non-target, target] with target {target!r} (pos_label)",
        )
    return classes


def _check_prior(prior, n):
    """A prior parameter over n classes: non-negative, summing to 1, two classes or more."""
    p = np.asarray(prior, dtype=np.float64)
    if (
        p.shape != (n,)
        or not np.isfinite(p).all()
        or (p < 0).any()
        or abs(float(p.sum()) - 1.0) > 1e-6
        or np.count_nonzero(p) < 2
    ):
        raise ValueError(
            f"prior must be {n} non-negative probabilities summing to 1, two of "
            f"them non-zero, got {prior!r}"
        )


def _multiclass_labels(params, f, version):
    names = params["class_names"]
    classes = f.labels("classes_", ordered=names is None and version == 1)
    where = f"{f.where}.classes_"
    if names is not None:
        if classes.tolist() != list(names):
            raise invalid(where, "must be the class_names parameter")
        return classes
    if classes.dtype.kind in "OU" and version > 1:
        return classes
    if any(a >= b for a, b in zip(classes.tolist(), classes.tolist()[1:])):
        raise invalid(where, "class labels must be distinct and sorted")
    if params["prior"] is not None:
        n = classes.shape[0]
        _checked(where, _check_prior, params["prior"], n)
        if classes.dtype.kind not in "iu" or not np.array_equal(classes, np.arange(n)):
            raise invalid(where, "with a prior parameter, the classes must be 0 .. len(prior) - 1")
    return classes


def _check_blocks(f):
    n_features = f.int("n_features_in_", 1, 1)
    names = f.names("feature_names_in_", n_features)
    lo = f.floats("score_lo_", (None,))
    hi = f.floats("score_hi_", lo.shape)
    n_tar = f.counts("block_n_tar_", lo.shape)
    n_non = f.counts("block_n_non_", lo.shape)
    where = f.where
    if (hi < lo).any():
        raise invalid(
            where, f"block {int(np.argmax(hi < lo))} ends (score_hi_) below its start (score_lo_)"
        )
    if lo.size > 1 and not (hi[:-1] < lo[1:]).all():
        i = int(np.argmax(~(hi[:-1] < lo[1:])))
        raise invalid(where, f"blocks {i} and {i + 1} overlap (score_hi_ >= next score_lo_)")
    if ((n_tar + n_non) == 0).any():
        raise invalid(where, f"block {int(np.argmax((n_tar + n_non) == 0))} holds no trials")
    return {
        "n_features_in_": n_features,
        "feature_names_in_": names,
        "score_lo_": lo,
        "score_hi_": hi,
        "block_n_tar_": n_tar,
        "block_n_non_": n_non,
    }


def _fractions_increase(n_tar, n_non) -> bool:
    t = n_tar.astype(object)
    w = (n_tar + n_non).astype(object)
    return bool((t[:-1] * w[1:] < t[1:] * w[:-1]).all())


def _check_params(name, p):
    """The parameters' own checks (those of the estimators' ``_check_params``) that bear on
    applying the model or on the checks of its fitted numbers.
    """
    if "p_target" in p:
        check_probability(p["p_target"], "p_target")
    if "reg" in p:
        check_non_negative(p["reg"], "reg")
    if "tol" in p:
        check_non_negative(p["tol"], "tol", strict=True)
    if "max_iter" in p:
        check_int(p["max_iter"], "max_iter")
    choices = {
        "interpolation": maps.INTERPOLATIONS,
        "mode": _MODES,
        "covariance": _COVARIANCE_TYPES,
        "form": _QUALITY_FORMS,
        "features": _QUALITY_FEATURES,
    }
    for key, allowed in choices.items():
        if key in p and not (isinstance(p[key], str) and p[key] in allowed):
            raise ValueError(f"{key} must be one of {allowed}, got {p[key]!r}")
    if "pseudo_count" in p:
        check_non_negative(p["pseudo_count"], "pseudo_count (0 turns bounding off)")
    names = p.get("class_names")
    if names is not None and (
        type(names) is not list
        or len(names) < 2
        or len(set(names)) != len(names)
        or any(type(c) is not str or not c for c in names)
    ):
        raise ValueError(
            f"class_names must hold at least 2 distinct non-empty strings, got {names!r}"
        )


def _affine(name, params, f, version):
    n = f.int("n_features_in_", 1)
    if name == "LinearCalibrator" and n != 1:
        raise invalid(f.where, f"a LinearCalibrator has one input column, got {n}")
    return AffineMap, {
        "n_features_in_": n,
        "feature_names_in_": f.names("feature_names_in_", n),
        "classes_": _binary_labels(params, f, version),
        "coef_": f.floats("coef_", (n,)),
        "intercept_": f.float("intercept_"),
        "n_iter_": f.int("n_iter_"),
        "n_passes_": f.int("n_passes_"),
        "objective_": f.float("objective_", minimum=0.0),
        "rule_objective_": f.float("rule_objective_", minimum=0.0),
    }


def _pav(name, params, f, version):
    a = float(params["pseudo_count"])
    out = _check_blocks(f)
    lo, n_tar, n_non = out["score_lo_"], out["block_n_tar_"], out["block_n_non_"]
    llr = f.floats("llr_", lo.shape, allow_inf=True)
    total_tar = f.int("n_targets_", 1, MAX_COUNT)
    total_non = f.int("n_nontargets_", 1, MAX_COUNT)
    where = f.where
    if int(n_tar.sum()) != total_tar or int(n_non.sum()) != total_non:
        raise invalid(where, "the block counts do not add up to n_targets_ and n_nontargets_")
    if a > 0:
        if not np.isfinite(llr).all():
            raise invalid(where, "llr_ must be finite when pseudo_count > 0")
        bad = ~(np.diff(llr) >= 0)
        if bad.any():
            i = int(np.argmax(bad))
            raise invalid(
                f"{where}.llr_",
                f"block LLRs must be non-decreasing (items {i} and "
                f"{i + 1}: {llr[i]!r}, {llr[i + 1]!r})",
            )
        if not (-np.log1p(total_tar / a) < llr[0] and llr[-1] < np.log1p(total_non / a)):
            raise invalid(
                where, "llr_ exceeds the bounds set by pseudo_count and the training counts"
            )
    else:
        if not np.array_equal(llr, maps.block_llr(n_tar, n_non)):
            raise invalid(where, "llr_ is not the PAV-LLR of the block counts")
        if lo.size > 1 and not _fractions_increase(n_tar, n_non):
            raise invalid(where, "the blocks' target fractions must increase strictly")
    out.update(
        llr_=llr,
        n_targets_=total_tar,
        n_nontargets_=total_non,
        interpolation=params["interpolation"],
    )
    return BlockMap, out


def _rocch(name, params, f, version):
    out = _check_blocks(f)
    n_tar, n_non = out["block_n_tar_"], out["block_n_non_"]
    if n_tar.sum() == 0 or n_non.sum() == 0:
        raise invalid(f.where, "the blocks must hold target and non-target trials")
    if n_tar.size > 1 and not _fractions_increase(n_tar, n_non):
        raise invalid(
            f.where, "the blocks' target fractions must increase strictly (a convex hull)"
        )
    out.update(
        llr_=maps.block_llr(n_tar, n_non),
        interpolation="step",
        n_targets_=int(n_tar.sum()),
        n_nontargets_=int(n_non.sum()),
    )
    return BlockMap, out


def _multiclass(name, params, f, version):
    n_features = f.int("n_features_in_", 2)
    names = f.names("feature_names_in_", n_features)
    classes = _multiclass_labels(params, f, version)
    n = classes.shape[0]
    k = f.int("n_systems_", 1)
    if k * n != n_features:
        raise invalid(
            f.where, f"n_features_in_ = {n_features} is not n_systems_ x n_classes ({k} x {n})"
        )
    coef_value = f.value.get("coef_")
    full = type(coef_value) is list and bool(coef_value) and type(coef_value[0]) is list
    return MulticlassMap, {
        "n_features_in_": n_features,
        "feature_names_in_": names,
        "classes_": classes,
        "n_classes_": n,
        "n_systems_": k,
        "coef_": f.floats("coef_", (k, n, n) if full else (k,)),
        "intercept_": f.floats("intercept_", (n,)),
        "loss_": f.float("loss_", minimum=0.0),
        "n_iter_": f.int("n_iter_"),
        "converged_": f.bool("converged_"),
    }


def _gaussian(name, params, f, version):
    d = f.int("n_features_in_", 1)
    names = f.names("feature_names_in_", d)
    classes = _multiclass_labels(params, f, version)
    n = classes.shape[0]
    m = f.object("model_")
    covariance = m.str("covariance", _COVARIANCE_TYPES)
    center = m.floats("center", (d,))
    means = m.floats("means", (n, d))
    chol = m.floats("cholesky", (d, d) if covariance == "shared" else (n, d, d))
    m.done()
    if np.triu(chol, 1).any():
        raise invalid(f"{m.where}.cholesky", "must be lower triangular")
    if not (np.diagonal(chol, axis1=-2, axis2=-1) > 0).all():
        raise invalid(f"{m.where}.cholesky", "must have a positive diagonal")
    with np.errstate(over="ignore", invalid="ignore"):
        finite = (
            np.isfinite(means + center).all()
            and np.isfinite(chol @ np.swapaxes(chol, -1, -2)).all()
        )
    if not finite:
        raise invalid(f.where, "the class means or covariances overflow")
    model = SimpleNamespace(center=center, means=means, cholesky=chol, covariance=covariance)
    return GaussianMap, {
        "n_features_in_": d,
        "feature_names_in_": names,
        "classes_": classes,
        "n_classes_": n,
        "model_": model,
    }


def _quality(name, params, f, version):
    form, features, t = params["form"], params["features"], params["quality_transform"]
    n = f.int("n_features_in_", 1)
    measures, where = f.take("measures_")
    if (
        type(measures) is not list
        or not measures
        or len(set(measures)) != len(measures)
        or any(type(m) is not str or not m for m in measures)
    ):
        raise invalid(where, "must be a list of distinct non-empty names")
    if params["measures"] is not None and list(params["measures"]) != measures:
        raise invalid(where, f"must equal the parameter measures={params['measures']!r}")
    items = [t] if t is None or isinstance(t, str) else list(t)
    if any(v is not None and v not in _QUALITY_TRANSFORMS for v in items) or (
        not (t is None or isinstance(t, str)) and len(items) != len(measures)
    ):
        raise invalid(where, f"quality_transform {t!r} does not fit {len(measures)} measures")
    empty = np.empty((0, len(measures)))
    feature_names = maps.quality_features(empty, empty, form, features)[1]
    P = len(feature_names)
    value, at = f.take("quality_feature_names_")
    if value != feature_names:
        raise invalid(at, f"must be {feature_names!r} for form={form!r}")
    scale = f.floats("scale_coef_", (n, P))
    if form != "scale" and scale.any():
        raise invalid(f.where, "scale_coef_ must be zero unless form='scale'")
    return QualityMap, {
        "n_features_in_": n,
        "feature_names_in_": f.names("feature_names_in_", n),
        "classes_": f.labels("classes_", 2),
        "measures_": np.array(measures, dtype=object),
        "quality_feature_names_": np.array(feature_names, dtype=object),
        "coef_": f.floats("coef_", (n,)),
        "intercept_": f.float("intercept_"),
        "quality_coef_": f.floats("quality_coef_", (P,)),
        "scale_coef_": scale,
        "linear_coef_": f.floats("linear_coef_", (n,)),
        "linear_intercept_": f.float("linear_intercept_"),
        "linear_objective_": f.float("linear_objective_", minimum=0.0),
        "n_quality_trials_": f.int("n_quality_trials_", 1),
        "n_iter_": f.int("n_iter_"),
        "n_passes_": f.int("n_passes_"),
        "objective_": f.float("objective_", minimum=0.0),
    }


_DECODERS = {
    "LogisticFusion": _affine,
    "LinearCalibrator": _affine,
    "PAVCalibrator": _pav,
    "ROCCH": _rocch,
    "MulticlassFusion": _multiclass,
    "GaussianBackend": _gaussian,
    "QualityFusion": _quality,
}


def decode(name, obj, version):
    """The runtime model of an estimator node (``class`` already read as ``name``)."""
    params_obj = obj.object("params")
    params = _params(name, params_obj, version)
    _checked(params_obj.where, _check_params, name, params)
    output, where = obj.take("set_output")
    if type(output) not in (str, type(None)) or output not in _OUTPUTS:
        raise invalid(where, "must be null or one of 'default', 'pandas', 'polars'")
    fitted = obj.object("fitted")
    cls, attrs = _DECODERS[name](name, params, fitted, version)
    fitted.done()
    obj.done()
    return cls(name, params, attrs)

"""What each focal estimator saves of its fitted state, the invariants of those numbers, and the
checks of the constructor parameters that go with them.

Plain data and pure checks on plain arrays (NumPy and the NumPy-only parts of focal.core:
no scikit-learn, no SciPy), so that
anything reading a model file, the estimators' own state hooks
(:mod:`focal.estimators._state`) or a NumPy-only runtime, reads and checks the same fields the
same way. The fields are :class:`focal.models.codec.Field` tuples, in the order they are
written; the checks raise :class:`focal.models.codec.StateError` naming the field.
:func:`check_params` is the one check of the parameters that the estimators' ``_check_params``
and the runtime share (an :class:`focal.exceptions.InvalidParameterError` names a bad one).
"""

from __future__ import annotations

import numpy as np

from .codec import MAX_COUNT, Field, StateError

#: The covariance models of a Gaussian back-end (:data:`focal.core.maps.COVARIANCE_TYPES`,
#: restated so that this module imports NumPy only at module level; a test keeps them equal)
COVARIANCE_TYPES = ("shared", "per_class")

__all__ = [
    "LOGISTIC_FIELDS",
    "LINEAR_FIELDS",
    "PAV_FIELDS",
    "BLOCK_FIELDS",
    "MULTICLASS_FIELDS",
    "GAUSSIAN_FIELDS",
    "QUALITY_FIELDS",
    "KDE_FIELDS",
    "check_binary_classes",
    "check_multiclass_classes",
    "check_blocks",
    "check_pav_llr",
    "check_hull",
    "check_hull_blocks",
    "check_multiclass_weights",
    "check_cholesky",
    "check_quality_measures",
    "check_params",
    "check_kde",
    "check_bandwidth",
    "check_bounds",
    "check_fitted_bounds",
    "check_class_names",
    "check_measures",
    "quality_transforms",
]

# -- fields ------------------------------------------------------------------------------------

_FEATURES = (
    Field("n_features_in_", "int", minimum=1),
    Field("feature_names_in_", "names", ("n_features_in_",)),
)
_ONE_COLUMN = (
    Field("n_features_in_", "int", minimum=1, maximum=1),
    Field("feature_names_in_", "names", ("n_features_in_",)),
)
_BINARY_CLASSES = Field("classes_", "labels", (2,))
#: The clip of an estimator's output LLRs, nats (:func:`check_fitted_bounds`)
_BOUNDS = Field("bounds_", "floats", (2,), allow_inf=True)
_CLASSES = Field("classes_", "labels", ("n_classes",))

#: LogisticFusion: ``llr = intercept_ + X @ coef_``
LOGISTIC_FIELDS = (
    *_FEATURES,
    _BINARY_CLASSES,
    Field("coef_", "floats", ("n_features_in_",)),
    Field("intercept_", "float"),
    Field("n_iter_", "int"),
    Field("n_passes_", "int"),
    Field("objective_", "float", minimum=0.0),
    Field("rule_objective_", "float", minimum=0.0),
    # added with the bounds parameter: a file written before has no clip
    _BOUNDS._replace(default=(-np.inf, np.inf)),
)
#: LinearCalibrator: LogisticFusion of one column
LINEAR_FIELDS = tuple(f._replace(shape=(1,)) if f.name == "coef_" else f for f in LOGISTIC_FIELDS)
#: The PAV blocks of one column of scores (ROCCH keeps these only)
BLOCK_FIELDS = (
    *_ONE_COLUMN,
    _BINARY_CLASSES,
    Field("score_lo_", "floats", ("n_blocks",)),
    Field("score_hi_", "floats", ("n_blocks",)),
    Field("block_n_tar_", "counts", ("n_blocks",)),
    Field("block_n_non_", "counts", ("n_blocks",)),
)
#: PAVCalibrator: the (bounded) blocks, their weights (their counts unless fitted with
#: sample_weight), their LLRs and the training counts
PAV_FIELDS = (
    *BLOCK_FIELDS,
    Field("block_w_tar_", "floats", ("n_blocks",)),
    Field("block_w_non_", "floats", ("n_blocks",)),
    Field("llr_", "floats", ("n_blocks",), allow_inf=True),
    _BOUNDS._replace(default=(-np.inf, np.inf)),  # as LOGISTIC_FIELDS (added with bounds)
    Field("n_targets_", "int", minimum=1, maximum=MAX_COUNT),
    Field("n_nontargets_", "int", minimum=1, maximum=MAX_COUNT),
)
#: KDECalibrator: each class's training scores (sorted), the two bandwidths and the clip
KDE_FIELDS = (
    *_ONE_COLUMN,
    _BINARY_CLASSES,
    Field("tar_scores_", "floats", ("n_tar",)),
    Field("non_scores_", "floats", ("n_non",)),
    Field("bandwidth_", "floats", (2,)),
    _BOUNDS,
)
#: MulticlassFusion: a weight (or a matrix) per system and an offset vector
MULTICLASS_FIELDS = (
    Field("n_features_in_", "int", minimum=2),
    Field("feature_names_in_", "names", ("n_features_in_",)),
    _CLASSES,
    Field("n_systems_", "int", minimum=1),
    Field("coef_", "floats", [("n_coef",), ("n_coef", "n_classes", "n_classes")]),
    Field("intercept_", "floats", ("n_classes",)),
    Field("loss_", "float", minimum=0.0),
    Field("n_iter_", "int"),
    Field("converged_", "bool"),
)
#: GaussianBackend: the centred Gaussian class models (``means_``, ``covariance_`` derived)
GAUSSIAN_FIELDS = (
    *_FEATURES,
    _CLASSES,
    Field(
        "model_",
        "object",
        fields=(
            Field("covariance", "str", choices=COVARIANCE_TYPES),
            Field("center", "floats", ("n_features_in_",)),
            Field("means", "floats", ("n_classes", "n_features_in_")),
            Field(
                "cholesky",
                "floats",
                {
                    "shared": ("n_features_in_", "n_features_in_"),
                    "per_class": ("n_classes", "n_features_in_", "n_features_in_"),
                },
                shape_by="covariance",
            ),
        ),
    ),
)
#: QualityFusion: the affine back-off, the quality weights and the measures' names
QUALITY_FIELDS = (
    *_FEATURES,
    _BINARY_CLASSES,
    Field("measures_", "strings", ("n_measures",)),
    Field("quality_feature_names_", "strings", ("n_quality_features",)),
    Field("coef_", "floats", ("n_features_in_",)),
    Field("intercept_", "float"),
    Field("quality_coef_", "floats", ("n_quality_features",)),
    Field("scale_coef_", "floats", ("n_features_in_", "n_quality_features")),
    Field("linear_coef_", "floats", ("n_features_in_",)),
    Field("linear_intercept_", "float"),
    Field("linear_objective_", "float", minimum=0.0),
    Field("n_quality_trials_", "int", minimum=1),
    Field("n_iter_", "int"),
    Field("n_passes_", "int"),
    Field("objective_", "float", minimum=0.0),
    _BOUNDS._replace(default=(-np.inf, np.inf)),  # as LOGISTIC_FIELDS (added with bounds)
)


# -- constructor parameters --------------------------------------------------------------------


_RULES: list = []  # filled on first use (this module imports NumPy only at module level)


def _rules():
    """(checks of the numbers, values of the string choices, the check of ``pos_label``, the
    transforms of a quality measure).
    """
    if not _RULES:
        from ..core import maps
        from ..core.validation import (
            check_int,
            check_non_negative,
            check_pos_label,
            check_probability,
            check_scoring_rule,
        )

        checks = {
            "p_target": lambda v: check_probability(v, "p_target"),
            "reg": lambda v: check_non_negative(v, "reg"),
            "tol": lambda v: check_non_negative(v, "tol", strict=True),
            "max_iter": lambda v: check_int(v, "max_iter"),
            "pseudo_count": lambda v: check_non_negative(v, "pseudo_count (0 turns bounding off)"),
            "bandwidth": check_bandwidth,
            "bounds": check_bounds,
            "scoring_rule": check_scoring_rule,
        }
        choices = {
            "interpolation": maps.INTERPOLATIONS,
            "mode": maps.MULTICLASS_MODES,
            "covariance": maps.COVARIANCE_TYPES,
            "form": maps.QUALITY_FORMS,
            "features": maps.QUALITY_FEATURES,
        }
        _RULES.extend((checks, choices, check_pos_label, maps.QUALITY_TRANSFORMS))
    return _RULES


def _invalid(message):
    from ..exceptions import InvalidParameterError

    return InvalidParameterError(message)


def check_params(params) -> dict:
    """Check the constructor parameters ``params`` (by name: an estimator's ``vars``, or a
    model file's) before any work; returns the numbers by name, as floats and ints.

    Checked when present: the numbers (``p_target``, ``reg``, ``tol``, ``max_iter``,
    ``pseudo_count``), the proper scoring rule (``scoring_rule``, its Beta(a, b) parameters:
    :func:`focal.core.validation.check_scoring_rule`), the string choices (``interpolation``,
    ``mode``, ``covariance``, ``form``, ``features``: the vocabularies of
    :mod:`focal.core.maps`), ``pos_label``, ``class_names``, ``measures`` and
    ``quality_transform`` (against ``measures`` when given); the others are the estimator's
    business. This is the one check of a model file's parameters for :func:`focal.load` and
    the NumPy-only runtime alike: what one refuses, the other refuses in the same words.
    """
    checks, choices, check_pos_label, _ = _rules()
    numbers = {name: check(params[name]) for name, check in checks.items() if name in params}
    for name, allowed in choices.items():
        value = params.get(name, allowed[0])
        if not (isinstance(value, str) and value in allowed):
            raise _invalid(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    check_pos_label(params.get("pos_label"))
    check_class_names(params.get("class_names"))
    measures = check_measures(params.get("measures"))
    if "quality_transform" in params:
        n = None if measures is None else len(measures)
        quality_transforms(params["quality_transform"], n)
    return numbers


def _pair(value):
    """``value`` as two floats when it is a sequence of two real numbers, else None."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        return None
    if not all(isinstance(v, (int, float, np.integer, np.floating)) for v in value):
        return None
    if any(isinstance(v, (bool, np.bool_)) for v in value):
        return None
    return float(value[0]), float(value[1])


def check_bandwidth(bandwidth):
    """The ``bandwidth`` of a kernel-density calibrator: ``"silverman"``, ``"cv"``, a number
    > 0 (both classes) or a pair of them (targets, non-targets).
    """
    if isinstance(bandwidth, str) and bandwidth in ("silverman", "cv"):
        return bandwidth
    pair = _pair(bandwidth)
    if pair is None and isinstance(bandwidth, (int, float, np.integer, np.floating)):
        if not isinstance(bandwidth, (bool, np.bool_)):
            pair = (float(bandwidth), float(bandwidth))
    if pair is None or not all(np.isfinite(h) and h > 0 for h in pair):
        raise _invalid(
            "bandwidth must be 'silverman', 'cv', a number > 0 or a pair of them (targets, "
            f"non-targets); got {bandwidth!r}"
        )
    return pair


def check_bounds(bounds):
    """The ``bounds`` of an LLR clip: ``"elub"``, None (no clip) or finite ``(lower, upper)``
    with ``lower <= upper``.
    """
    if bounds is None or (isinstance(bounds, str) and bounds == "elub"):
        return bounds
    pair = _pair(bounds)
    if pair is None or not all(np.isfinite(b) for b in pair) or pair[0] > pair[1]:
        raise _invalid(
            f"bounds must be 'elub', None or finite (lower, upper) LLRs with lower <= upper; "
            f"got {bounds!r}"
        )
    return pair


def check_fitted_bounds(state):
    """``bounds_``, the clip of an estimator's output LLRs: ``(lower, upper)`` with ``lower <=
    upper`` (nats, +/-inf allowed); returns them.
    """
    lower, upper = state["bounds_"]
    if not lower <= upper:
        raise StateError("must be (lower, upper) with lower <= upper", "bounds_")
    return lower, upper


def check_kde(state) -> None:
    """The fitted state of a kernel-density calibrator: each class's training scores sorted
    (at least two), bandwidths > 0, ``bounds_`` a non-empty interval.
    """
    for name in ("tar_scores_", "non_scores_"):
        scores = state[name]
        if scores.size < 2:
            raise StateError(f"{name} must hold at least 2 scores")
        _check_non_decreasing(scores, name, "training scores")
    if not (state["bandwidth_"] > 0).all():
        raise StateError("bandwidth_ must be > 0")
    check_fitted_bounds(state)


def check_class_names(class_names, name="class_names"):
    """``class_names`` (the class of each column, in order) as a list of distinct non-empty
    strings; None stays None.
    """
    if class_names is None:
        return None
    if isinstance(class_names, (str, dict)) or not hasattr(class_names, "__len__"):
        raise _invalid(f"{name} must be a sequence of class names, got {class_names!r}")
    names = list(class_names)
    if len(names) < 2 or any(not isinstance(c, str) or not c for c in names):
        raise _invalid(f"{name} must hold at least 2 non-empty strings, got {names!r}")
    if len(set(names)) != len(names):
        raise _invalid(f"{name} names a class twice: {names!r}")
    return names


def check_measures(measures):
    """The ``measures`` of a quality fusion as a list of distinct non-empty names (or None)."""
    if measures is None:
        return None
    if isinstance(measures, str) or not all(isinstance(m, str) and m for m in measures):
        raise _invalid(f"measures must be a list of non-empty names, got {measures!r}")
    if len(set(measures)) != len(measures) or not len(measures):
        raise _invalid(f"measures must be distinct and at least one, got {list(measures)!r}")
    return list(measures)


def quality_transforms(transform, n_measures):
    """The transform (None, "log" or "logit") of each of ``n_measures`` quality measures from
    the ``quality_transform`` parameter: one value for all, or a list of one per measure
    (``n_measures=None``: check the values only).
    """
    allowed = _rules()[3]
    single = transform is None or isinstance(transform, str)
    items = [transform] if single else list(transform)
    if any(v is not None and v not in allowed for v in items):
        raise _invalid(
            f"quality_transform must be None, 'log', 'logit' or a list of them, got {transform!r}"
        )
    if single:
        return [transform] * (n_measures or 0)
    if n_measures is not None and len(items) != n_measures:
        raise _invalid(f"quality_transform has {len(items)} entries for {n_measures} measures")
    return items


# -- class labels ------------------------------------------------------------------------------


def _sorted(values) -> bool:
    return all(values[i] < values[i + 1] for i in range(len(values) - 1))


def check_binary_classes(classes, pos_label, version):
    """``classes_`` of a binary estimator is ``[non-target, target]``: the target is
    ``pos_label`` when one is set, else 1 / True (focal's label rule). Returns ``pos_label``.
    """
    values = classes.tolist()
    target = 1 if pos_label is None else pos_label
    if values[1] != target or (pos_label is None and values[0] != 0):
        raise StateError(
            f"must be [non-target, target] with target {target!r} (pos_label)", "classes_"
        )
    return pos_label


def check_multiclass_classes(classes, class_names, prior, version) -> None:
    """``classes_`` of a multiclass estimator: the ``class_names`` parameter when given; names
    in column order (from a DataFrame's columns); else sorted labels, ``0..N-1`` when a prior
    fixes N.
    """
    from ..core.validation import check_prior

    if class_names is not None:
        if classes.tolist() != list(class_names):
            raise StateError("must be the class_names parameter", "classes_")
        return
    if classes.dtype.kind in "OU":
        return  # names in column order (from a DataFrame's columns)
    if not _sorted(classes.tolist()):
        raise StateError("class labels must be distinct and sorted", "classes_")
    if prior is not None:
        n = classes.shape[0]
        try:
            check_prior(prior, n)
        except ValueError as exc:
            raise StateError(str(exc), "classes_") from None
        if classes.dtype.kind not in "iu" or not np.array_equal(classes, np.arange(n)):
            raise StateError(
                "with a prior parameter, the classes must be 0 .. len(prior) - 1", "classes_"
            )


# -- PAV blocks and the hull -------------------------------------------------------------------


def check_blocks(lo, hi, n_tar, n_non) -> None:
    """Score ranges of PAV blocks: ``lo[k] <= hi[k] < lo[k + 1]``; blocks not empty."""
    if (hi < lo).any():
        i = int(np.argmax(hi < lo))
        raise StateError(f"block {i} ends (score_hi_) below its start (score_lo_)")
    if lo.size > 1 and not (hi[:-1] < lo[1:]).all():
        i = int(np.argmax(~(hi[:-1] < lo[1:])))
        raise StateError(f"blocks {i} and {i + 1} overlap (score_hi_ >= next score_lo_)")
    empty = (n_tar + n_non) == 0
    if empty.any():
        raise StateError(f"block {int(np.argmax(empty))} holds no trials")


def _fractions_increase(n_tar, n_non) -> bool:
    """Exact test that the blocks' target fractions n_tar / (n_tar + n_non) strictly increase."""
    t = n_tar.astype(object)
    w = (n_tar + n_non).astype(object)
    return bool((t[:-1] * w[1:] < t[1:] * w[:-1]).all())


def _check_non_decreasing(values, field, what) -> None:
    bad = ~(np.diff(values) >= 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise StateError(
            f"{what} must be non-decreasing (items {i} and {i + 1}: "
            f"{values[i]!r}, {values[i + 1]!r})",
            field,
        )


def check_pav_llr(state, pseudo_count) -> None:
    """The block LLRs of a PAV calibration, from the blocks' weights (their trial counts when
    fitted without ``sample_weight``): with ``pseudo_count`` a > 0 finite, non-decreasing and
    within ``-log(1 + W_tar / a) < llr < log(1 + W_non / a)`` (:func:`focal.core.pav.
    bounded_pav_blocks`, W the class weights); with a = 0 exactly the PAV-LLRs of the blocks
    (thesis eq. C.20), whose target fractions increase strictly. A block has a class's weight
    iff it has trials of that class. Either is then clipped to ``bounds_`` (``lower <=
    upper``): a block LLR beyond a bound above is that bound.
    """
    from ..core.maps import block_llr

    lo, hi = state["score_lo_"], state["score_hi_"]
    n_tar, n_non, llr = state["block_n_tar_"], state["block_n_non_"], state["llr_"]
    w_tar, w_non = state["block_w_tar_"], state["block_w_non_"]
    check_blocks(lo, hi, n_tar, n_non)
    total_tar, total_non = state["n_targets_"], state["n_nontargets_"]
    if int(n_tar.sum()) != total_tar or int(n_non.sum()) != total_non:
        raise StateError("the block counts do not add up to n_targets_ and n_nontargets_")
    for w, n, field in ((w_tar, n_tar, "block_w_tar_"), (w_non, n_non, "block_w_non_")):
        if not ((w >= 0).all() and np.isfinite(w.sum())):
            raise StateError("must be finite weights >= 0 with a finite total", field)
        if ((w > 0) != (n > 0)).any():
            raise StateError("a block has weight of a class iff it has trials of it", field)
    weighted = not (np.array_equal(w_tar, n_tar) and np.array_equal(w_non, n_non))
    lower, upper = check_fitted_bounds(state)
    if not ((llr >= lower) & (llr <= upper)).all():
        raise StateError("llr_ exceeds bounds_")
    a = pseudo_count
    if a > 0:
        if not np.isfinite(llr).all():
            raise StateError("llr_ must be finite when pseudo_count > 0")
        _check_non_decreasing(llr, "llr_", "block LLRs")
        low_ok = -np.log1p(w_tar.sum() / a) < llr[0] or llr[0] == lower
        high_ok = llr[-1] < np.log1p(w_non.sum() / a) or llr[-1] == upper
        if not (low_ok and high_ok):
            raise StateError("llr_ exceeds the bounds set by pseudo_count and the training weights")
    else:
        expected = block_llr(w_tar, w_non) if weighted else block_llr(n_tar, n_non)
        if not np.array_equal(llr, np.clip(expected, lower, upper)):
            raise StateError("llr_ is not the PAV-LLR of the block weights")
        if lo.size > 1:
            if weighted:  # the float test the weighted PAV pools by
                mass = w_tar + w_non
                increase = bool((w_tar[:-1] * mass[1:] < w_tar[1:] * mass[:-1]).all())
            else:
                increase = _fractions_increase(n_tar, n_non)
            if not increase:
                raise StateError("the blocks' target fractions must increase strictly")


def check_hull(state) -> None:
    """The blocks of a ROC convex hull: both classes present, target fractions strictly
    increasing.
    """
    lo, hi = state["score_lo_"], state["score_hi_"]
    n_tar, n_non = state["block_n_tar_"], state["block_n_non_"]
    check_blocks(lo, hi, n_tar, n_non)
    if n_tar.sum() == 0 or n_non.sum() == 0:
        raise StateError("the blocks must hold target and non-target trials")
    if lo.size > 1 and not _fractions_increase(n_tar, n_non):
        raise StateError("the blocks' target fractions must increase strictly (a convex hull)")


def check_hull_blocks(state):
    """:func:`check_hull`, then the blocks as a :class:`focal.core.PAVResult` (the steps of the
    empirical ROC inside the blocks are not kept: ``has_runs`` is False; imports SciPy).
    """
    from ..core.pav import PAVResult

    check_hull(state)
    return PAVResult(
        state["score_lo_"], state["score_hi_"], state["block_n_tar_"], state["block_n_non_"]
    )


# -- multiclass --------------------------------------------------------------------------------


def check_multiclass_weights(state) -> None:
    """``n_features_in_ = n_systems_ x n_classes`` and a weight (or an N x N matrix) per
    system; which of the two the weights are is their own (``transform`` applies them as
    fitted, whatever ``set_params(mode=...)`` did since).
    """
    n_features, k = state["n_features_in_"], state["n_systems_"]
    n = state["classes_"].shape[0]
    if k * n != n_features:
        raise StateError(f"n_features_in_ = {n_features} is not n_systems_ x n_classes ({k} x {n})")
    if state["coef_"].shape[0] != k:
        raise StateError(
            f"must be a list of {k} items (one per system, n_systems_), got "
            f"{state['coef_'].shape[0]}",
            "coef_",
        )


def check_cholesky(chol) -> None:
    """Lower-triangular Cholesky factor(s) with a positive diagonal."""
    if np.triu(chol, 1).any():
        raise StateError("must be lower triangular", "model_.cholesky")
    if not (np.diagonal(chol, axis1=-2, axis2=-1) > 0).all():
        raise StateError("must have a positive diagonal", "model_.cholesky")


# -- quality -----------------------------------------------------------------------------------


def check_quality_measures(state, measures, form, features, quality_transform) -> None:
    """The measures' names (distinct, non-empty, the ``measures`` parameter if set), a
    ``quality_transform`` that fits them, the quality features they give for ``form`` and
    ``features`` (:func:`focal.core.quality.quality_features`), and ``scale_coef_`` zero unless
    ``form="scale"``.
    """
    from ..core.maps import quality_features

    names = state["measures_"]
    if len(set(names)) != len(names) or not all(names):
        raise StateError("must be a list of distinct non-empty names", "measures_")
    if measures is not None and list(measures) != names:
        raise StateError(f"must equal the parameter measures={measures!r}", "measures_")
    try:
        quality_transforms(quality_transform, len(names))
    except ValueError as exc:
        raise StateError(str(exc), "measures_") from None
    empty = np.empty((0, len(names)))
    expected = quality_features(empty, empty, form, features)[1]
    if state["quality_feature_names_"] != expected:
        raise StateError(f"must be {expected!r} for form={form!r}", "quality_feature_names_")
    if form != "scale" and state["scale_coef_"].any():
        raise StateError("scale_coef_ must be zero unless form='scale'")

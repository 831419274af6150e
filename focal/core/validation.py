"""Input checks shared by every focal function: clear errors before any work starts.

Every check returns a *new* float64 array (or a Python float) and never modifies what the
caller passed in. Errors are ``ValueError`` whose message names the argument and the problem;
a bad parameter (a prior, a cost, a count) raises :class:`focal.exceptions.InvalidParameterError`,
which is both a ``ValueError`` and a ``TypeError``.
"""

from __future__ import annotations

import numbers
import os
import sys
import types
import warnings

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = [
    "as_score_array",
    "as_binary_labels",
    "binary_classes",
    "check_pos_label",
    "check_binary_trials",
    "check_not_labels",
    "check_probability",
    "check_positive",
    "check_non_negative",
    "check_int",
    "as_sample_weight",
    "split_by_labels",
    "classes_of_feature_names",
    "SCORING_RULE_NAMES",
    "check_scoring_rule",
]


def _describe_bad(values: np.ndarray, limit: int = 5) -> str:
    shown = ", ".join(repr(v) for v in values[:limit].tolist())
    return shown + (", ..." if values.size > limit else "")


def as_score_array(
    x, name: str, *, allow_inf: bool = True, allow_empty: bool = False
) -> np.ndarray:
    """Return ``x`` as a new 1-D float64 array, or raise a ``ValueError`` naming ``name``.

    Parameters
    ----------
    x : array_like
        Scores or natural-log likelihood-ratios.
    name : str
        Argument name used in error messages.
    allow_inf : bool
        Whether +/-inf are legal (they are for LLRs given to Cllr / DCF).
    allow_empty : bool
        Whether an empty array is legal.
    """
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    out = np.array(arr, dtype=np.float64, copy=True)
    if out.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty: need at least one trial")
    bad = np.isnan(out) if allow_inf else ~np.isfinite(out)
    if bad.any():
        idx = np.flatnonzero(bad)
        kind = "NaN" if allow_inf else "non-finite (NaN or inf)"
        raise ValueError(f"{name} contains {idx.size} {kind} value(s), first at index {idx[0]}")
    return out


def check_binary_trials(
    tar, non, *, tar_name: str = "tar", non_name: str = "non", from_labels: bool = False
):
    """Validate a pair of target / non-target score arrays (BOSARIS calling convention).

    Returns new float64 arrays. Raises ``ValueError`` for NaN, empty sets or wrong shapes;
    +/-inf are accepted (legal LLRs). Labels given in place of scores are refused
    (:func:`check_not_labels`), unless the caller split the pair by labels itself
    (``from_labels=True``).
    """
    if not from_labels:
        check_not_labels(tar, non, tar_name=tar_name, non_name=non_name)
    t = as_score_array(tar, tar_name)
    n = as_score_array(non, non_name)
    return t, n


def _zeros_and_ones(x: np.ndarray) -> bool:
    """Whether ``x`` holds only the values 0 and 1, and both of them (the labels of a set)."""
    ones, zeros = x == 1, x == 0
    return bool((ones | zeros).all() and ones.any() and zeros.any())


def check_not_labels(tar, non, *, tar_name: str = "tar", non_name: str = "non") -> None:
    """Refuse labels passed as the scores of a ``(tar, non)`` pair: the one check of the binary
    measures against scikit-learn's argument order.

    ``eer(y_true, y_score)`` reads the labels as target scores and the scores as non-target
    scores, and returns a number with no error. Before any work this refuses a boolean array
    (booleans are labels, never scores) and a pair of equal lengths where one array is of
    integers holding only the values 0 and 1 (both present) and the other is of floats
    holding anything else: labels and scores, unambiguously. When both are floats (or both
    integers), such a pair may also be a small hand-made set of scores: it is accepted with a
    ``UserWarning``. Linear time only when the lengths are equal.

    Parameters
    ----------
    tar, non : array_like
        The pair as given.
    tar_name, non_name : str
        Their names in the message.

    Raises
    ------
    ValueError
        Naming the argument and saying what to pass instead.
    """
    t, n = np.asarray(tar), np.asarray(non)
    hint = (
        "Binary measures take (tar, non), the scores of the target and of the non-target "
        "trials; with (scores, labels) call them as measure(*from_labels(scores, labels)) "
        "(focal.metrics.from_labels)"
    )
    for name, x in ((tar_name, t), (non_name, n)):
        if x.dtype.kind == "b":
            raise ValueError(f"{name} holds booleans, which are labels, not scores. {hint}")
    if not (t.ndim == n.ndim == 1 and t.size == n.size > 1):
        return
    if t.dtype.kind not in "iuf" or n.dtype.kind not in "iuf":
        return  # as_score_array names the bad type
    if _zeros_and_ones(t) and not _zeros_and_ones(n):
        looks = "(labels, scores), scikit-learn's argument order"
        a_name, b_name = tar_name, non_name
    elif _zeros_and_ones(n) and not _zeros_and_ones(t):
        looks = "(scores, labels)"
        a_name, b_name = non_name, tar_name
    else:
        return
    message = (
        f"{a_name} holds only the values 0 and 1, as many as {b_name}, which holds other "
        f"values: this looks like {looks}, not the scores of two classes. {hint}"
    )
    labels, scores = (t, n) if a_name == tar_name else (n, t)
    if labels.dtype.kind in "iu" and scores.dtype.kind == "f":
        raise ValueError(message)
    warnings.warn(message, UserWarning, stacklevel=_outside_focal())


def _outside_focal() -> int:
    """The ``stacklevel`` of a warning raised here that names the first caller outside focal."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    level, frame = 1, sys._getframe(1)
    caller: types.FrameType | None = frame
    while caller is not None and caller.f_code.co_filename.startswith(package):
        level, caller = level + 1, caller.f_back
    return level


def _distinct(arr: np.ndarray, limit: int = 5) -> str:
    """Up to ``limit`` distinct values of ``arr`` (for messages; sorted when comparable)."""
    try:
        values = np.unique(arr)
    except TypeError:
        values = np.array(list(dict.fromkeys(arr.tolist())), dtype=object)
    return _describe_bad(values, limit)


def as_binary_labels(labels, name: str = "labels", pos_label=None) -> np.ndarray:
    """Return binary labels as a new bool array (True = target): focal's one rule for them.

    Labels 0/1 and False/True need nothing more (1 / True = target). Any other pair of
    labels (``"genuine"`` / ``"impostor"``, 1 / 2, -1 / 1, ...) needs ``pos_label``, the label of
    the target class, as in scikit-learn; the target is never inferred from sort order.

    Parameters
    ----------
    labels : array_like, shape (n_trials,)
    name : str
        Argument name used in error messages.
    pos_label : scalar, optional
        The target label. Every other trial must carry one other label (the non-target one).

    Raises
    ------
    ValueError
        Labels other than 0/1 or False/True without ``pos_label`` (naming the labels found), a
        ``pos_label`` that is not among the labels, or more than two distinct labels.
    """
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    if pos_label is not None:
        return _labels_equal_to(arr, name, pos_label)
    if arr.dtype.kind == "b":
        return arr.astype(bool, copy=True)
    ok = (arr == 0) | (arr == 1) if arr.dtype.kind in "iuf" else np.zeros(arr.shape, bool)
    if not ok.all():
        bad = arr[~ok] if arr.dtype.kind in "iuf" else arr
        raise ValueError(
            f"{name} must contain only 0/1 or False/True (1 = target); found "
            f"{_distinct(bad)}: pass pos_label=<the target label> for other labels"
        )
    return arr == 1


def _labels_equal_to(arr, name, pos_label) -> np.ndarray:
    """``arr == pos_label``, checked: pos_label present, one other label at most."""
    text_label, text_array = isinstance(pos_label, str), arr.dtype.kind in "US"
    if arr.dtype.kind != "O" and text_label != text_array:  # a word among numbers, or back
        is_target = np.zeros(arr.shape, dtype=bool)
    else:
        is_target = np.asarray(arr == pos_label, dtype=bool)
        if is_target.shape != arr.shape:
            is_target = np.zeros(arr.shape, dtype=bool)
    if arr.size and not is_target.any():
        raise ValueError(f"pos_label={pos_label!r} is not among the {name} found: {_distinct(arr)}")
    others = arr[~is_target]
    if others.size and not (others == others[0]).all():
        raise ValueError(
            f"{name} must hold two labels, the target pos_label={pos_label!r} "
            f"and one non-target label; found {_distinct(arr)}"
        )
    return is_target


def check_pos_label(pos_label, name: str = "pos_label"):
    """Return ``pos_label`` if it is None or one label (a string, number or boolean)."""
    if pos_label is None or isinstance(pos_label, (str, numbers.Number, np.bool_, bool)):
        return pos_label
    raise ValueError(f"{name} must be one label (a string, number or boolean), got {pos_label!r}")


def binary_classes(labels, is_target) -> np.ndarray:
    """``[non-target label, target label]`` of labels checked by :func:`as_binary_labels`, both
    classes present (``classes_`` of focal's binary estimators: ``classes_[1]`` is the target).
    """
    arr = np.asarray(labels)
    return np.concatenate([arr[~is_target][:1], arr[is_target][:1]])


def split_by_labels(
    scores, labels, *, scores_name: str = "scores", labels_name: str = "labels", pos_label=None
):
    """Split ``(scores, labels)`` into ``(tar, non)`` float64 arrays, in input order.

    Labels follow :func:`as_binary_labels` (0/1, False/True, or any two labels with
    ``pos_label``). Raises ``ValueError`` for mismatched lengths, bad labels, NaN scores or a
    missing class.
    """
    s = as_score_array(scores, scores_name)
    y = as_binary_labels(labels, labels_name, pos_label)
    if s.shape[0] != y.shape[0]:
        raise ValueError(
            f"{scores_name} and {labels_name} have different lengths "
            f"({s.shape[0]} and {y.shape[0]})"
        )
    tar, non = s[y], s[~y]
    target = "label 1" if pos_label is None else f"label {pos_label!r}"
    if tar.size == 0:
        raise ValueError(f"{labels_name} contain no target trials ({target})")
    if non.size == 0:
        raise ValueError(f"{labels_name} contain no non-target trials")
    return tar, non


def _as_real_scalar(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        arr = np.asarray(value)
        if arr.ndim == 0 and arr.dtype.kind in "iuf":
            value = arr.item()
        else:
            raise InvalidParameterError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if np.isnan(v):
        raise InvalidParameterError(f"{name} must be a number, got NaN")
    return v


def check_probability(p, name: str = "p_target") -> float:
    """Return ``p`` as a float strictly inside (0, 1), else raise an InvalidParameterError."""
    v = _as_real_scalar(p, name)
    if not 0.0 < v < 1.0:
        raise InvalidParameterError(f"{name} must be strictly between 0 and 1, got {v!r}")
    return v


def check_positive(c, name: str) -> float:
    """Return ``c`` as a finite float > 0 (e.g. a cost), else raise an InvalidParameterError."""
    v = _as_real_scalar(c, name)
    if not (np.isfinite(v) and v > 0.0):
        raise InvalidParameterError(f"{name} must be a finite number > 0, got {v!r}")
    return v


def check_non_negative(value, name: str, *, strict: bool = False) -> float:
    """Return an estimator parameter as a finite float >= 0 (> 0 if ``strict``).

    Booleans, strings and other non-numbers raise
    :class:`~focal.exceptions.InvalidParameterError` (a ``ValueError`` and a ``TypeError``, as
    scikit-learn reports bad parameters), so ``reg="0.5"`` is refused rather than silently
    converted.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not np.isfinite(v) or v < 0 or (strict and v == 0):
        bound = "> 0" if strict else ">= 0"
        raise InvalidParameterError(f"{name} must be a finite number {bound}, got {value!r}")
    return v


def check_int(value, name: str, minimum: int = 1) -> int:
    """Return an estimator parameter as an int >= ``minimum``; floats and booleans are refused."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, numbers.Integral)
        or value < minimum
    ):
        raise InvalidParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def as_sample_weight(sample_weight, n_trials: int, name: str = "sample_weight") -> np.ndarray:
    """Return trial weights as a new 1-D float64 array of ``n_trials`` finite values >= 0.

    A trial of weight k counts as k trials (a zero weight drops it). Whether every class keeps
    a positive total is the caller's check, since it depends on the classes in play.
    """
    w = as_score_array(sample_weight, name, allow_inf=False, allow_empty=True)
    if w.shape[0] != n_trials:
        raise ValueError(f"{name} has {w.shape[0]} entries for {n_trials} trials")
    if (w < 0).any():
        raise ValueError(f"{name} contains negative values; weights must be >= 0")
    return w


def classes_of_feature_names(feature_names):
    """The class order that feature names ``"system:class"`` (or, for one system, plain class
    names) give, or None when they do not name classes that way.
    """
    names = [str(n) for n in feature_names]
    if not all(":" in n for n in names):
        return None if any(":" in n for n in names) else names
    pairs = [n.rsplit(":", 1) for n in names]
    systems = list(dict.fromkeys(p[0] for p in pairs))
    order = [c for s, c in pairs if s == systems[0]]
    for system in systems:
        block = [c for s, c in pairs if s == system]
        if block != order:
            raise ValueError(
                f"the columns of system {system!r} name the classes {block}, those "
                f"of {systems[0]!r} {order}: every system needs the same classes "
                "in the same order"
            )
    if [s for s, _ in pairs] != [s for s in systems for _ in order]:
        raise ValueError(
            "X's columns must hold each system's classes side by side "
            "('system:class', system-major)"
        )
    return order


PRIOR_SUM_TOL = 1e-6  # a prior may sum to 1 within this tolerance (then it is renormalized)


def check_prior(prior, n_classes: int, name: str = "prior") -> np.ndarray:
    """Return a validated prior over ``n_classes`` classes as a new float64 array.

    ``None`` means the flat prior ``1/N`` (Brümmer & van Leeuwen sec. 3.2). Otherwise the prior
    must be 1-D of length ``n_classes``, finite, non-negative, sum to 1 (within 1e-6, then it is
    renormalized) and give non-zero probability to at least two classes. Zeros are allowed:
    that class is ignored (Albayzin footnote 8).
    """
    if prior is None:
        return np.full(n_classes, 1.0 / n_classes)
    arr = np.asarray(prior)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be an array of probabilities, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != n_classes:
        raise ValueError(
            f"{name} must be a 1-D array of {n_classes} probabilities (one per class), "
            f"got shape {arr.shape}"
        )
    p = arr.astype(np.float64)
    if not np.isfinite(p).all():
        raise ValueError(f"{name} contains NaN or inf")
    if (p < 0).any():
        raise ValueError(f"{name} contains negative values: {_describe_bad(p[p < 0])}")
    total = float(p.sum())
    if abs(total - 1.0) > PRIOR_SUM_TOL:
        raise ValueError(f"{name} must sum to 1, sums to {total!r}")
    if np.count_nonzero(p) < 2:
        raise ValueError(
            f"{name} must give non-zero probability to at least two classes, got {p.tolist()}"
        )
    return p / total


#: The named proper scoring rules and their Beta(a, b) weighting parameters (thesis sec. 7.4;
#: "low_false_alarm" is the keynote's Beta(10, 1)); :mod:`focal.core.scoring_rules` computes them
SCORING_RULE_NAMES = {
    "logarithmic": (1.0, 1.0),
    "log": (1.0, 1.0),
    "brier": (2.0, 2.0),
    "boosting": (0.5, 0.5),
    "low_false_alarm": (10.0, 1.0),
}
_MAX_BETA = 1000.0


def check_scoring_rule(spec, name: str = "scoring_rule") -> tuple[float, float]:
    """The Beta(a, b) parameters of the proper scoring rule ``spec``: one of the names of
    :data:`SCORING_RULE_NAMES` (any case), a pair ``(a, b)`` of real numbers in (0, 1000], or an
    object with such ``a`` and ``b`` (a :class:`focal.core.scoring_rules.BetaRule`). Anything
    else raises :class:`~focal.exceptions.InvalidParameterError` naming ``name``.

    NumPy only, so that the NumPy-only runtime refuses a model file's bad rule as the
    estimators do (:func:`focal.models.fitted_state.check_params`).
    """
    if isinstance(spec, str):
        try:
            return SCORING_RULE_NAMES[spec.lower()]
        except KeyError:
            pass
    else:
        if hasattr(spec, "a") and hasattr(spec, "b"):
            spec = (spec.a, spec.b)
        if isinstance(spec, (tuple, list)) and len(spec) == 2:
            return _beta_parameter(spec[0], name, "a"), _beta_parameter(spec[1], name, "b")
    raise InvalidParameterError(
        f"{name} must be one of {', '.join(SCORING_RULE_NAMES)} or a pair (a, b) of beta "
        f"parameters in (0, {_MAX_BETA:g}]; got {spec!r}"
    )


def _beta_parameter(raw, name: str, which: str) -> float:
    """One parameter of a Beta(a, b) rule as a float in (0, 1000]."""
    if isinstance(raw, (bool, np.bool_)) or not isinstance(raw, numbers.Real):
        raise InvalidParameterError(
            f"{name}: beta parameter {which} must be a real number, got {raw!r}"
        )
    v = float(raw)
    if not (np.isfinite(v) and 0.0 < v <= _MAX_BETA):
        raise InvalidParameterError(
            f"{name}: beta parameter {which} must be in (0, {_MAX_BETA:g}], got {raw!r}"
        )
    return v

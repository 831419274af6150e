"""Multiclass fusion and calibration of log-likelihood vectors, as a scikit-learn transformer.

Input layout. ``X`` has shape ``(n_trials, n_systems * n_classes)``: the log-likelihood blocks of
the systems side by side, system-major::

    X[:, k * n_classes + j] = log-likelihood of class j from system k

(each block may carry its own per-trial constant: Albayzin plan eq. 1). Use
:func:`stack_systems` to build it from a list (or dict) of per-system ``(n, n_classes)`` arrays or
DataFrames, or from a DataFrame with ``(system, class)`` MultiIndex columns. Labels are class
indices ``0..n_classes-1``. Output: ``(n_trials, n_classes)`` natural-log likelihoods.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
.. [3] :cite:t:`brummer2006calibration`.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core.logistic import DEFAULT_REG
from ..core.maps import apply_multiclass
from ..core.multiclass_logistic import fit_multiclass
from ..models.fitted_state import (
    MULTICLASS_FIELDS,
    check_multiclass_weights,
    check_params,
)
from ._input import validate_input
from ._llh_output import LogLikelihoodOutputMixin
from ._state import MulticlassStateMixin

__all__ = [
    "MulticlassFusion",
    "stack_systems",
]


def stack_systems(systems, classes=None) -> np.ndarray:
    """Build the ``(n_trials, n_systems * n_classes)`` input of :class:`MulticlassFusion`.

    Parameters
    ----------
    systems : list / tuple / dict of array_like, or DataFrame
        One ``(n_trials, n_classes)`` log-likelihood matrix per system (arrays or DataFrames; a
        dict's values in insertion order), or a single DataFrame whose columns are a 2-level
        MultiIndex ``(system, class)``.
    classes : sequence, optional
        Column order of the classes when the systems are DataFrames (or for the MultiIndex
        frame). Default: the column order of the first system. Every system must have exactly
        these class columns; they are reordered to match.

    Returns
    -------
    ndarray of float64
        ``X[:, k * N + j]`` = system k, class j.

    Examples
    --------
    >>> import pandas as pd
    >>> from focal import stack_systems
    >>> a = pd.DataFrame({"eng": [0.1, 0.2], "spa": [0.3, 0.4]})
    >>> b = pd.DataFrame({"spa": [1.0, 2.0], "eng": [3.0, 4.0]})   # other column order
    >>> stack_systems([a, b])
    array([[0.1, 0.3, 3. , 1. ],
           [0.2, 0.4, 4. , 2. ]])
    """
    columns = getattr(systems, "columns", None)
    if columns is not None:
        if getattr(columns, "nlevels", 1) != 2:
            raise ValueError(
                "a DataFrame given as systems must have 2-level (system, class) MultiIndex "
                "columns; pass a list of per-system frames otherwise"
            )
        names = list(dict.fromkeys(columns.get_level_values(0)))
        systems = [systems[name] for name in names]
    elif isinstance(systems, dict):
        systems = list(systems.values())
    elif not isinstance(systems, (list, tuple)):
        raise ValueError(
            "systems must be a list, tuple or dict of (n_trials, n_classes) arrays, or a "
            f"DataFrame with (system, class) columns; got {type(systems).__name__}"
        )
    if len(systems) == 0:
        raise ValueError("systems is empty: need at least one system")
    blocks = []
    order = None if classes is None else list(classes)
    for k, sysk in enumerate(systems):
        cols = getattr(sysk, "columns", None)
        if cols is not None:
            cols = list(cols)
            if order is None:
                order = cols
            if sorted(map(str, cols)) != sorted(map(str, order)) or len(cols) != len(order):
                raise ValueError(
                    f"system {k} has class columns {cols}, expected the classes {order}"
                )
            sysk = sysk[order]
        arr = np.asarray(sysk)
        if arr.ndim != 2 or arr.dtype.kind not in "biuf":
            raise ValueError(
                f"system {k} must be a 2-D numeric (n_trials, n_classes) array, got dtype "
                f"{arr.dtype} and shape {arr.shape}"
            )
        blocks.append(arr.astype(np.float64))
    n, N = blocks[0].shape
    for k, b in enumerate(blocks):
        if b.shape != (n, N):
            raise ValueError(
                f"system {k} has shape {b.shape}, system 0 has {(n, N)}: all systems need the "
                "same trials and classes"
            )
    return np.concatenate(blocks, axis=1)


class MulticlassFusion(
    ClassNamePrefixFeaturesOutMixin,
    LogLikelihoodOutputMixin,
    TransformerMixin,
    MulticlassStateMixin,
    BaseEstimator,
):
    """Fusion and calibration of multiclass log-likelihoods by prior-weighted logistic regression.

    Minimizes the prior-weighted multiclass logarithmic cost (thesis eq. 8.17, in nats) of an
    affine function of the systems' log-likelihood vectors (thesis eq. 8.16) by Newton's method
    with exact derivatives (:func:`focal.core.multiclass_logistic.fit_multiclass`). The prior
    is an application parameter, not learned: classes are weighted by prior / count, so class
    proportions in the training data do not matter.

    Parameters
    ----------
    prior : array_like of shape (n_classes,), optional
        Prior at which the cost is weighted and the default of ``predict_proba``; flat if None
        (thesis sec. 8.3.3). Zero entries drop that class and its trials from training (its
        output is then not calibrated: offset 0; in ``"full"`` mode its output is 0).
    mode : {"scalar", "calibration", "full"}, default "scalar"
        ``"scalar"``: ``sum_k alpha_k l_k + beta``, one weight per system and an offset vector
        (FoCal Multiclass, eq. 8.16). ``"calibration"``: one system, ``alpha l + beta`` (Albayzin
        eq. 11; Brümmer & van Leeuwen eq. 18). ``"full"``: ``sum_k A_k l_k + b``, a matrix per
        system (fusion with rotation, thesis 8.4.1); ``A_k`` ignores per-trial constants.
    reg : float, default 1e-9
        L2 penalty on the weights, in standardized units and relative to the size of the
        objective: each system is scaled by its prior-weighted spread of pairwise
        log-likelihood differences and the penalty is multiplied by the prior's entropy over
        ``log N``, so it depends neither on the scale or offset of the scores nor on the prior
        (see :mod:`focal.core.multiclass_logistic`). Offsets are not penalized. It keeps
        perfectly separable data finite.
    tol : float, default 1e-10
        Gradient-norm tolerance (standardized coordinates, nats), relative to the size of the
        objective: the threshold is ``tol`` times the prior's entropy over ``log N``.
    max_iter : int, default 100
        Newton iterations.
    class_names : sequence of str, optional
        The class of each column of a system's block, in order (e.g. a score file's header).
        Labels are then matched to the columns by name and ``classes_`` holds the names. Without
        it, a DataFrame's column names ``"system:class"`` (or, for one system, the class names)
        give the order; class-name labels with neither are refused: the column order is never
        guessed from the names' sort order.

    Attributes
    ----------
    n_classes_, n_systems_ : int
    prior_ : ndarray, shape (n_classes,)
    coef_ : ndarray
        ``(n_systems,)`` weights, or ``(n_systems, n_classes, n_classes)`` matrices in ``"full"``
        mode: output ``sum_k coef_[k] * l_k + intercept_`` resp. ``sum_k l_k @ coef_[k].T +
        intercept_``.
    intercept_ : ndarray, shape (n_classes,)
        Offset vector (zero mean over the trained classes).
    loss_ : float
        Training cost (eq. 8.17) at the solution, nats, without the penalty.
    n_iter_ : int
    converged_ : bool
    n_features_in_, feature_names_in_
        As in scikit-learn.

    Examples
    --------
    >>> import numpy as np
    >>> from focal import MulticlassFusion
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 3, 600)
    >>> llh = 3.0 * (np.eye(3)[y] + rng.normal(size=(600, 3)))   # overconfident scores
    >>> cal = MulticlassFusion(mode="calibration").fit(llh, y)
    >>> bool(0 < cal.coef_[0] < 1)
    True
    """

    _columns_are_classes = True

    def __init__(
        self, prior=None, mode="scalar", reg=DEFAULT_REG, tol=1e-10, max_iter=100, class_names=None
    ):
        self.prior = prior
        self.mode = mode
        self.reg = reg
        self.tol = tol
        self.max_iter = max_iter
        self.class_names = class_names

    def _check_params(self):
        check_params(vars(self))

    def fit(self, X, y, sample_weight=None):
        """Fit on training log-likelihoods ``X`` (layout in the module docstring) and labels.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems * n_classes)
            The systems' log-likelihood blocks side by side (see :func:`stack_systems`).
        y : array-like of shape (n_trials,)
            Class labels (indices ``0..N-1``; see :class:`LogLikelihoodOutputMixin`).
        sample_weight : array-like of shape (n_trials,), optional
            Non-negative trial weights (a trial of weight k counts as k trials; class totals
            replace counts in the prior weighting).

        Returns
        -------
        self
            The fitted estimator.
        """
        self._check_params()
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        classes, labels, prior, w = self._validate_targets(X, y, sample_weight)
        n_classes = classes.shape[0]
        if X.shape[1] % n_classes:
            raise ValueError(_width_message(X.shape[1], classes, self.prior, self.class_names))
        K = X.shape[1] // n_classes
        if self.mode == "calibration" and K != 1:
            raise ValueError(
                f"mode='calibration' takes one system: X must have n_classes = {n_classes} "
                f"columns, got {X.shape[1]} ({K} systems)"
            )
        sol = fit_multiclass(
            X.reshape(X.shape[0], K, n_classes),
            labels,
            prior,
            self.mode,
            sample_weight=w,
            reg=float(self.reg),
            tol=float(self.tol),
            max_iter=int(self.max_iter),
        )
        if not sol.converged:
            hint = (
                "increase max_iter" if self.reg > 0 else "the classes may be separable: use reg > 0"
            )
            warnings.warn(
                f"MulticlassFusion did not converge in {self.max_iter} iterations (gradient norm "
                f"{sol.grad_norm:.3g}); {hint}",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._set_classes(classes, prior)
        self.n_systems_ = K
        self.coef_ = sol.coef
        self.intercept_ = sol.offset
        self.loss_ = sol.loss
        self.n_iter_ = sol.n_iter
        self.converged_ = sol.converged
        return self

    def transform(self, X):
        """Fused, calibrated log-likelihoods ``(n_trials, n_classes)``, natural log.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems * n_classes)
            The systems' log-likelihood blocks, laid out as in ``fit``.

        Returns
        -------
        ndarray of shape (n_trials, n_classes)
            Natural-log likelihood of each class for each trial.
        """
        check_is_fitted(self)
        X = validate_input(self, X, dtype=np.float64)
        L = X.reshape(X.shape[0], self.n_systems_, self.n_classes_)
        mode = "full" if self.coef_.ndim == 3 else "scalar"  # as fitted, whatever set_params did
        return apply_multiclass(L, mode, self.coef_, self.intercept_)

    # -- saved state (focal.estimators._state) --------------------------------------------------

    _state_fields = MULTICLASS_FIELDS

    def _validate_state(self, state, version):
        """The class labels, then ``n_systems_ x n_classes`` inputs and a weight (matrix) per
        system.
        """
        state = super()._validate_state(state, version)
        check_multiclass_weights(state)
        return state


def _width_message(width, classes, prior, class_names) -> str:
    """Why ``width`` columns do not hold blocks of ``classes``; when the classes came from the
    labels alone, the likely cause: classes of X without trials in y, named by index.
    """
    n = classes.shape[0]
    message = (
        f"X has n_features = {width}, not a multiple of n_classes = {n}: X must hold the "
        "systems' log-likelihood blocks side by side (see stack_systems)"
    )
    if prior is not None or class_names is not None or classes.dtype.kind not in "iu":
        return message
    counts = [N for N in range(n + 1, width + 1) if width % N == 0]
    if not counts:
        return message
    N = counts[0]
    missing = ", ".join(str(c) for c in range(n, N))
    return (
        f"y has trials of {n} classes (0..{n - 1}) but X has {width} columns, not a multiple "
        f"of n_classes = {n}: if X holds the log-likelihoods of {N} classes ({width // N} "
        f"system(s)), class(es) {missing} have no trials in y. The number of classes comes "
        "from y's labels unless you give it: pass prior=[...] with one entry per class (0 "
        "drops a class from training), or class_names=[...] in X's column order"
    )

"""Quality-measure fusion and calibration: fusion weights that depend on trial quality.

:class:`QualityFusion` extends :class:`~focal.estimators.fusion.LogisticFusion` (thesis
sec. 8.3.1, eq. 8.16) with terms in quality measures of the model side and the test side of each
trial (durations, SNR, ...), trained by the same prior-weighted logistic regression (eq. 8.17).
The forms and their features are in :mod:`focal.core.quality`. Trials with a missing quality
value (NaN) get the affine fusion's LLRs, fitted on all trials ("back-off").

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core.logistic import DEFAULT_REG
from ..core.logistic_objective import class_relative_weights
from ..core.maps import (
    check_finite_llr,
    clip_llr,
    complete_quality,
    llr_with_quality,
    quality_features,
)
from ..core.quality import bilinear_matrix, fit_quality
from ..core.scoring import normalized_cross_entropy
from ..core.validation import as_sample_weight
from ..models.fitted_state import (
    QUALITY_FIELDS,
    check_params,
    check_quality_measures,
    quality_transforms,
)
from ._fit_report import training_cllr, warn_not_converged
from ._input import validate_input
from ._llr_output import fitted_bounds, refuse_elub_weights
from ._quality_input import SIDES, Trials, split_quality
from .fusion import LogisticFusion, _by_class

__all__ = ["QualityFusion"]


class QualityFusion(LogisticFusion):
    """Fuse and calibrate scores with weights that depend on quality measures of the trial.

    Learns a natural-log LLR that is affine in the K systems' scores (thesis eq. 8.16) plus terms
    in the quality vectors ``q_m`` (model / enrolment side) and ``q_t`` (test side) of each trial,
    by minimizing the prior-weighted logarithmic cost at ``p_target`` (thesis eq. 8.17), from
    the affine fusion as a start (:func:`focal.core.quality.fit_quality`):

    - ``form="bilinear"``: ``llr = b + sum_k a_k s_k + [1, q_m]^T W [1, q_t]`` with W symmetric,
      the quality fusion of the BOSARIS toolkit (Brümmer & de Villiers, "The BOSARIS toolkit",
      2011);
    - ``form="linear"``: ``llr = b + a^T s + c^T f(q_m, q_t)``, with ``f`` the per-measure min
      and max of the two sides (or the sides themselves, ``features="sides"``);
    - ``form="scale"``: ``llr = b(f) + sum_k a_k(f) s_k`` with b and every a_k affine in the same
      features ``f``: quality moves both the offset and the slopes (short segments need a
      smaller slope and a different offset).

    Quality is passed as ``quality=`` (an array or a DataFrame), or as columns of a DataFrame
    ``X``: measure ``m`` of the model side in column ``model_m``, of the test side in ``test_m``;
    the other columns of ``X`` are the systems' scores. A quality array has shape
    (n_trials, 2 M): the M model-side measures, then the M test-side measures, in the order of
    ``measures``. NaN marks a missing value: such trials get the affine fusion's LLRs exactly
    (:attr:`linear_coef_`, :attr:`linear_intercept_`, trained on all trials), as BOSARIS's
    back-off does. Without any quality the model is not defined and ``fit`` refuses.

    Parameters
    ----------
    form : {"bilinear", "linear", "scale"}, default "bilinear"
        Which quality terms (above and :mod:`focal.core.quality`).
    measures : list of str, optional
        Names of the M quality measures (e.g. ``["duration"]``): the DataFrame columns are
        ``model_<name>`` and ``test_<name>``. Default: every ``model_*`` column with a ``test_*``
        partner (DataFrames), or ``q0, q1, ...`` (arrays).
    quality_transform : None, "log", "logit" or a list of them, default None
        Monotone transform of each measure before the features are formed: ``"log"`` for
        durations or other positive ratio-scale measures (in any unit: a change of unit is
        absorbed by the weights), ``"logit"`` for probabilities such as language or channel
        posteriors. One value applies to every measure.
    features : {"minmax", "sides"}, default "minmax"
        Quality features ``f`` of the "linear" and "scale" forms: per measure ``min`` and
        ``max`` of the two sides (symmetric: swapping model and test changes nothing), or the
        model side and the test side.
    p_target : float, default 0.5
        Effective target prior of the training cost, as in
        :class:`~focal.estimators.fusion.LogisticFusion`.
    reg : float, default 1e-9
        Relative L2 penalty, as in :class:`~focal.estimators.fusion.LogisticFusion`; it acts on
        every weight, the quality ones included, in standardized units (its scale does not
        matter).
    tol : float, default 1e-10
        Relative convergence threshold, as in :class:`~focal.estimators.fusion.LogisticFusion`.
    max_iter : int, default 100
        Maximum number of Newton iterations.
    bounds : "elub", (float, float) or None, default None
        Clip the output LLRs, as :class:`~focal.estimators.fusion.LogisticFusion` does: to the
        ELUB limits (:func:`focal.metrics.elub_bounds`, :cite:t:`vergeer2016elub`) of the
        fitted LLRs of the training trials (the back-off trials' included), to given
        ``(lower, upper)`` LLRs (nats), or not at all. ``"elub"`` counts trials: not with
        ``sample_weight``.
    pos_label : int, float, bool or str, optional
        The label of the target class in ``y`` (required for labels other than 0/1 and
        False/True).

    Attributes
    ----------
    coef_ : ndarray of shape ``(n_features_in_,)``
        Weights ``a_k`` of the systems where the quality features are zero.
    intercept_ : float
        Offset ``b`` (nats), with ``logit(p_target)`` removed.
    quality_coef_ : ndarray of shape ``(n_quality_features_,)``
        Weights of the quality features in the offset (``c``; for "bilinear" the entries of W).
    scale_coef_ : ndarray of shape ``(n_features_in_, n_quality_features_)``
        Weights of the quality features in each system's slope (all zero unless "scale").
    quality_matrix_ : ndarray of shape (M + 1, M + 1)
        The symmetric W of the "bilinear" form (``W[0, 0] = 0``: absorbed into ``intercept_``).
    quality_feature_names_ : ndarray of str
        Names of the quality features (:func:`focal.core.quality.quality_features`).
    measures_ : ndarray of str
        Names of the M quality measures.
    linear_coef_, linear_intercept_
        The affine fusion of all training trials (:class:`LogisticFusion` with the same
        parameters): the back-off for trials with missing quality, and the start of the fit.
    linear_objective_ : float
        Its Cllr on the training trials (bits, at ``p_target``).
    objective_ : float
        Cllr at ``p_target`` of the fitted LLRs on all training trials (bits; the back-off
        trials with the affine fusion's LLRs), without the penalty and the clip.
    bounds_ : ndarray of shape (2,)
        The clip ``(lower, upper)`` of the LLRs, nats (``(-inf, inf)`` without ``bounds``).
    n_quality_trials_ : int
        Training trials with complete quality (those that trained the quality terms).
    n_iter_, n_passes_, classes_, n_features_in_, feature_names_in_
        As in :class:`LogisticFusion`; ``feature_names_in_`` names the score columns only.

    Examples
    --------
    >>> import numpy as np
    >>> from focal import QualityFusion
    >>> rng = np.random.default_rng(0)
    >>> n = 4000
    >>> y = rng.random(n) < 0.5
    >>> dur = rng.uniform(3, 60, size=(n, 2))            # model and test durations (s)
    >>> sep = 3 * np.log(dur.min(axis=1)) / np.log(60)  # shorter trials separate less
    >>> X = (sep * np.where(y, 1, -1) + rng.normal(size=n))[:, None]
    >>> qf = QualityFusion(form="scale", measures=["duration"], quality_transform="log")
    >>> llr = qf.fit(X, y, quality=dur).decision_function(X, quality=dur)
    >>> bool(qf.objective_ < qf.linear_objective_)
    True
    """

    def __init__(
        self,
        form="bilinear",
        measures=None,
        quality_transform=None,
        features="minmax",
        p_target=0.5,
        reg=DEFAULT_REG,
        tol=1e-10,
        max_iter=100,
        bounds=None,
        pos_label=None,
    ):
        self.form = form
        self.measures = measures
        self.quality_transform = quality_transform
        self.features = features
        self.p_target = p_target
        self.reg = reg
        self.tol = tol
        self.max_iter = max_iter
        self.bounds = bounds
        self.pos_label = pos_label

    # -- parameters and input -------------------------------------------------------------------

    def _check_params(self):
        """Validated (p_target, reg, tol, max_iter); ``form``, ``features``, ``measures`` and
        ``quality_transform`` are checked too (the last against the data's measures in ``fit``).
        A ValueError names a bad one.
        """
        v = check_params(vars(self))
        return v["p_target"], v["reg"], v["tol"], v["max_iter"]

    def _transforms(self, M):
        """The transform of each of M measures
        (:func:`focal.models.fitted_state.quality_transforms`).
        """
        return quality_transforms(self.quality_transform, M)

    def _split(self, X, quality, fitting):
        """(scores, q_model, q_test, measure names) from X and quality, checked by name."""
        if not fitting:
            measures = list(self.measures_)
        else:
            measures = None if self.measures is None else list(self.measures)
        return split_quality(type(self).__name__, X, quality, measures, self._transforms)

    def _check_rows(self, X, qm):
        if qm.shape[0] != X.shape[0]:
            raise ValueError(f"quality has {qm.shape[0]} trials, X has {X.shape[0]}")

    # -- fitting --------------------------------------------------------------------------------

    def fit(self, X, y, sample_weight=None, quality=None):
        """Train the quality fusion on development scores and quality.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_trials, n_systems [+ 2 M quality columns])
            Scores of each system for each trial (finite); a DataFrame may also hold the quality
            columns ``model_<m>`` and ``test_<m>``.
        y : array-like of shape (n_trials,)
            Two class labels; ``classes_[1]`` (1 / True) marks target trials.
        sample_weight : array-like of shape (n_trials,), optional
            Non-negative trial weights: a trial of weight k counts as k trials.
        quality : array-like of shape (n_trials, 2 M) or DataFrame, optional
            Model-side then test-side quality measures (NaN: missing), unless in ``X``.

        Returns
        -------
        self
            The fitted estimator.
        """
        p, reg, tol, max_iter = self._check_params()
        refuse_elub_weights(self.bounds, sample_weight)
        X, qm, qt, measures = self._split(X, quality, fitting=True)
        X, y = validate_data(self, X, y, dtype=np.float64)
        self._check_rows(X, qm)
        linear = LogisticFusion(
            p_target=p, reg=reg, tol=tol, max_iter=max_iter, pos_label=self.pos_label
        )
        linear.fit(X, y, sample_weight)
        is_target = y == linear.classes_[1]
        weights = None
        if sample_weight is not None:  # as LogisticFusion: exact, ratios within a class kept
            weights = class_relative_weights(as_sample_weight(sample_weight, X.shape[0]), is_target)
        has_q = complete_quality(qm, qt)
        present = has_q if weights is None else has_q & (weights > 0)
        if not (present & is_target).any() or not (present & ~is_target).any():
            raise ValueError(
                "quality is missing (NaN) for every target or every non-target "
                "trial: the quality terms cannot be trained"
            )
        rows = slice(None) if has_q.all() else has_q  # no copies in the common case
        model = fit_quality(
            X[rows],
            qm[rows],
            qt[rows],
            is_target[rows],
            self.form,
            (linear.coef_, linear.intercept_),
            self.features,
            p,
            None if weights is None else weights[rows],
            reg,
            tol,
            max_iter,
        )
        empty = np.empty((0, len(measures)))
        names = quality_features(empty, empty, self.form, self.features)[1]
        self.classes_ = linear.classes_
        self.linear_coef_ = linear.coef_
        self.linear_intercept_ = linear.intercept_
        self.linear_objective_ = linear.objective_
        self.coef_ = model.coef
        self.intercept_ = model.intercept
        self.quality_coef_ = model.quality_coef
        self.scale_coef_ = model.scale_coef
        self.measures_ = np.asarray(measures, dtype=object)
        self.quality_feature_names_ = np.asarray(names, dtype=object)
        self.n_quality_trials_ = int(np.count_nonzero(has_q))
        self.n_iter_ = int(model.n_iter)
        self.n_passes_ = int(model.n_passes)
        llr = None  # the training trials' LLRs, made once if needed
        if has_q.all():  # the training cost is that of every trial
            self.objective_ = float(normalized_cross_entropy(model.loss, p))
        else:
            llr = self._llr_with_quality(X, qm, qt)
            self.objective_ = training_cllr(llr, is_target, weights, p)
        self.rule_objective_ = self.objective_
        self.bounds_ = fitted_bounds(  # "elub": the limits of the training trials' LLRs
            self.bounds,
            lambda: _by_class(self._llr_with_quality(X, qm, qt) if llr is None else llr, is_target),
        )
        if not model.converged:
            warn_not_converged(self, max_iter, model.grad_norm, tol)
        return self

    # -- outputs --------------------------------------------------------------------------------

    @property
    def quality_matrix_(self):
        """Symmetric W of the "bilinear" form, shape (M + 1, M + 1), ``W[0, 0] = 0``."""
        check_is_fitted(self)
        if self.form != "bilinear":
            raise AttributeError(f"quality_matrix_ exists for form='bilinear', not {self.form!r}")
        return bilinear_matrix(self.quality_coef_, len(self.measures_))

    def _llr_with_quality(self, X, qm, qt):
        """The affine fusion's LLRs (back-off), replaced by the quality fusion where the quality
        is complete.
        """
        return llr_with_quality(X, qm, qt, self.form, self.features, self)

    def decision_function(self, X, quality=None):
        """Calibrated natural-log LLRs of the trials, shape (n_trials,).

        Trials with a missing (NaN) quality value get the affine fusion's LLRs
        (``X @ linear_coef_ + linear_intercept_``, exactly as :class:`LogisticFusion` computes
        them). ``quality`` and the DataFrame columns are read as in :meth:`fit`.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems) or DataFrame
            Scores of each system (a DataFrame may carry the quality columns too).
        quality : array-like of shape (n_trials, 2 * n_measures), optional
            Quality measures of each trial, read as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_trials,)
            The LLRs in nats, clipped to ``bounds_``.
        """
        check_is_fitted(self)
        X, qm, qt, _ = self._split(X, quality, fitting=False)
        X = validate_input(self, X, dtype=np.float64, ensure_all_finite=False)
        self._check_rows(X, qm)
        with np.errstate(over="ignore", invalid="ignore"):
            llr = self._llr_with_quality(X, qm, qt)
            finite = np.isfinite(llr.sum())
        if not finite:
            check_finite_llr(X, llr)
        return clip_llr(llr, self.bounds_)

    def transform(self, X, quality=None):
        """Calibrated natural-log LLRs as a column, shape (n_trials, 1), for pipelines.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems) or DataFrame
            Scores of each system (a DataFrame may carry the quality columns too).
        quality : array-like of shape (n_trials, 2 * n_measures), optional
            Quality measures of each trial, read as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_trials, 1)
            The LLRs in nats, clipped to ``bounds_``.
        """
        return self.decision_function(X, quality)[:, None]

    def predict_log_proba(self, X, p_target=None, quality=None):
        """Log posteriors of ``classes_`` at ``p_target`` (see :class:`LogisticFusion`).

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems) or DataFrame
            Scores of each system (a DataFrame may carry the quality columns too).
        p_target : float, optional
            Effective target prior (default: the one of the fit).
        quality : array-like of shape (n_trials, 2 * n_measures), optional
            Quality measures of each trial, read as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_trials, 2)
            Natural-log posteriors of ``classes_``.
        """
        return super().predict_log_proba(Trials(X, quality), p_target)

    def predict_proba(self, X, p_target=None, quality=None):
        """Posteriors of ``classes_`` at ``p_target`` (see :class:`LogisticFusion`).

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems) or DataFrame
            Scores of each system (a DataFrame may carry the quality columns too).
        p_target : float, optional
            Effective target prior (default: the one of the fit).
        quality : array-like of shape (n_trials, 2 * n_measures), optional
            Quality measures of each trial, read as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_trials, 2)
            Posteriors of ``classes_``.
        """
        return super().predict_proba(Trials(X, quality), p_target)

    def predict(self, X, p_target=None, c_miss=1.0, c_fa=1.0, quality=None):
        """Bayes decisions for the application (see :meth:`LogisticFusion.predict`).

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems) or DataFrame
            Scores of each system (a DataFrame may carry the quality columns too).
        p_target : float, optional
            Effective target prior (default: the one of the fit).
        c_miss, c_fa : float, default 1.0
            Costs of a miss and of a false alarm.
        quality : array-like of shape (n_trials, 2 * n_measures), optional
            Quality measures of each trial, read as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_trials,)
            The decided label of each trial.
        """
        return super().predict(Trials(X, quality), p_target, c_miss, c_fa)

    def score(self, X, y, sample_weight=None, quality=None):
        """Minus Cllr at ``p_target`` (bits), greater is better (see :class:`LogisticFusion`).

        Parameters
        ----------
        X : array-like of shape (n_trials, n_systems) or DataFrame
            Scores of each system (a DataFrame may carry the quality columns too).
        y : array-like of shape (n_trials,)
            True labels.
        sample_weight : array-like of shape (n_trials,), optional
            Trial weights.
        quality : array-like of shape (n_trials, 2 * n_measures), optional
            Quality measures of each trial, read as in :meth:`fit`.

        Returns
        -------
        float
            Minus Cllr in bits per bit.
        """
        return super().score(Trials(X, quality), y, sample_weight)

    def get_feature_names_out(self, input_features=None):
        """The one output feature: ``["llr"]``.

        Parameters
        ----------
        input_features : array-like of str, optional
            The systems seen in ``fit``, and possibly the quality columns ``model_<m>`` /
            ``test_<m>``.

        Returns
        -------
        ndarray of str
            ``["llr"]``.
        """
        check_is_fitted(self)
        if input_features is not None:
            quality = {f"{s}{m}" for s in SIDES for m in self.measures_}
            input_features = [f for f in input_features if str(f) not in quality]
        return super().get_feature_names_out(input_features)

    # -- saved state (focal.estimators._state) --------------------------------------------------

    _state_fields = QUALITY_FIELDS

    def _validate_state(self, state, version):
        """The measures and quality features against the parameters, then the class labels as
        :class:`LogisticFusion`.
        """
        check_quality_measures(
            state, self.measures, self.form, self.features, self.quality_transform
        )
        state = super()._validate_state(state, version)
        return {
            **state,
            "measures_": np.array(state["measures_"], dtype=object),
            "quality_feature_names_": np.array(state["quality_feature_names_"], dtype=object),
        }

    def _set_state(self, state):
        super()._set_state(state)
        self.rule_objective_ = self.objective_

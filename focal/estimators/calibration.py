"""Non-parametric calibration: the PAV map and the ROC convex hull as scikit-learn estimators.

Both estimators learn, from one column of scores and binary labels (1 / True = target), the
optimal monotone score -> natural-log LLR map of thesis sec. 7.7.3 and appendix C. Fitting sorts
each class once and runs PAV once (``focal.core.pav``); the ROCCH vertices are read off those
blocks (thesis 7.3.6, 7.7.3) by the same core code that ``focal.metrics`` uses, so nothing is
computed twice.

* :class:`PAVCalibrator`: a production calibrator. Finite output by default (bounded extreme
  blocks), step or linear map for unseen scores, constant beyond the training range.
* :class:`ROCCH`: the hull as a fitted object: vertices, ROCCH-EER, PRBEP, AUC, its hull
  ``hull_`` for every threshold measure of :mod:`focal.metrics`, and ``transform`` giving the
  LLR of the hull segment a score falls on.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core.maps import block_llr_map
from ..core.pav import PAVResult, bounded_pav_blocks, pav_from_sorted, pav_from_weights
from ..core.rocch import RocHull
from ..core.sorted_trials import sort_trials
from ..core.validation import (
    as_binary_labels,
    as_sample_weight,
    binary_classes,
    split_by_labels,
)
from ..metrics.binary import eer, prbep, rocch_auc
from ..models.fitted_state import (
    BLOCK_FIELDS,
    PAV_FIELDS,
    check_binary_classes,
    check_hull_blocks,
    check_params,
    check_pav_llr,
)
from ._input import validate_input
from ._llr_output import BinaryLLROutputMixin, fitted_bounds, refuse_elub_weights
from ._state import SavedStateMixin

__all__ = ["PAVCalibrator", "ROCCH"]


def _weighted_pav(scores, is_target, sample_weight):
    """The weighted PAV of the trials and the trial counts (of positive weight) of its blocks."""
    w = as_sample_weight(sample_weight, scores.shape[0])
    keep = w > 0
    for mask, what in ((is_target, "target"), (~is_target, "non-target")):
        if not keep[mask].any():
            raise ValueError(f"sample_weight gives the {what} trials zero total weight")
    tar, non = scores[keep & is_target], scores[keep & ~is_target]
    result = pav_from_weights(tar, non, w[keep & is_target], w[keep & ~is_target])
    tar.sort()
    non.sort()
    counts = []
    for sorted_scores in (tar, non):  # trials between each block's lowest and highest score
        upper = np.searchsorted(sorted_scores, result.score_hi, side="right")
        counts.append(np.diff(upper, prepend=0))
    return result, (counts[0], counts[1])


class _ScoreToLLR(BinaryLLROutputMixin, TransformerMixin, SavedStateMixin, BaseEstimator):
    """Shared input handling of the one-column score -> LLR estimators.

    Their output is an LLR, so they also give posteriors, Bayes decisions and minus Cllr
    (``predict_proba(X, p_target=0.5)``, ``predict``, ``score``) of ``classes_``, the labels of
    ``y`` as ``[non-target, target]`` (``pos_label`` names the target): a pipeline ending in one
    (``make_pipeline(LogisticFusion(pos_label="genuine"),
    PAVCalibrator(pos_label="genuine"))``) can be used by ``GridSearchCV`` without
    ``scoring=`` and by ``cross_val_predict``, with the user's labels.

    ``fit`` validates, sorts each class once and runs PAV once; subclasses validate their
    parameters in ``_check_params``, store what they need of the PAV result in
    ``_set_fitted(result, counts)`` (at least the block map ``score_lo_``, ``score_hi_``,
    ``llr_``) and apply it to validated 1-D scores in ``_map(scores)``.
    """

    def _scores(self, X, *, reset: bool, y=None):
        """Validate X (shape (n,) or (n, 1), finite) and, when fitting, y; return the 1-D scores
        (and, when fitting, the target mask and the validated labels).
        """
        if y is None and reset:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None "
                "(give binary labels: 1 / True for target trials, 0 / False for non-targets)"
            )
        if not sparse.issparse(X):
            if not hasattr(X, "shape"):  # lists and other array-likes; DataFrames keep names
                X = np.asarray(X)
            if len(X.shape) == 1:
                X = np.asarray(X).reshape(-1, 1)
            elif len(X.shape) == 2 and X.shape[1] != 1:
                raise ValueError(
                    f"X must hold one column of scores, shape (n,) or (n, 1); got {X.shape[1]} "
                    "columns. Fuse several systems first (e.g. LogisticFusion) and calibrate its "
                    "output."
                )
        if reset:
            X, y = validate_data(self, X, y, reset=True, dtype=np.float64, y_numeric=False)
            return X[:, 0], as_binary_labels(y, "y", self.pos_label), y
        X = validate_input(self, X, dtype=np.float64)
        return X[:, 0]

    def fit(self, X, y):
        """Fit on scores ``X`` (shape (n,) or (n, 1)) and labels ``y`` (1 / True = target, or
        the two labels of ``pos_label``).

        Sorts each class once and runs PAV once over the trials (``focal.core.pav``). If
        anything is wrong with the parameters or the data, raises ``ValueError`` and leaves the
        estimator unfitted (never half-fitted, never with a previous fit's state).

        Returns
        -------
        self
            The fitted estimator.
        """
        return self._fit(X, y, None)

    def _fit(self, X, y, sample_weight):
        try:
            self._check_params()
            scores, is_target, y = self._scores(X, reset=True, y=y)
            tar, non = split_by_labels(scores, is_target, scores_name="X", labels_name="y")
            if sample_weight is None:
                result = pav_from_sorted(sort_trials(tar, non))
                counts = result.n_tar, result.n_non
            else:
                result, counts = _weighted_pav(scores, is_target, sample_weight)
            self.classes_ = binary_classes(y, is_target)
            self._set_fitted(result, counts)
        except BaseException:
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)
            raise
        return self

    def _check_params(self):
        """Validate the constructor parameters (:func:`focal.models.fitted_state.check_params`)."""
        check_params(vars(self))

    def transform(self, X):
        """Natural-log LLRs of the scores ``X`` (shape (n,) or (n, 1)), as an (n, 1) array."""
        return self.decision_function(X).reshape(-1, 1)

    def decision_function(self, X):
        """Natural-log LLRs of the scores ``X`` (shape (n,) or (n, 1)), as a 1-D array."""
        check_is_fitted(self, "llr_")
        return self._map(self._scores(X, reset=False))

    def get_feature_names_out(self, input_features=None):
        """The single output column: ``["llr"]``."""
        check_is_fitted(self, "llr_")
        return np.asarray(["llr"], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


class PAVCalibrator(_ScoreToLLR):
    """Optimal monotone score -> LLR calibration by pool-adjacent-violators (PAV).

    ``fit`` finds the non-decreasing map from scores to natural-log LLRs that minimizes every
    proper scoring rule at every prior simultaneously on the training trials (thesis sec. 7.7.3,
    eqs. 7.46-7.51; appendix C, theorem 5 and eq. C.20): the trials are sorted and partitioned
    into blocks, and each block gets ``log((n_tar/N_tar) / (n_non/N_non))``. Tied scores always
    share a block. The map is independent of the target prior, so there is no prior parameter.

    Parameters
    ----------
    pseudo_count : float, default=1.0
        Bounding of the extreme blocks. Without it, a lowest block of only non-targets gets LLR
        -inf and a highest block of only targets +inf: one unlucky evaluation trial then costs an
        infinite Cllr. With ``pseudo_count = a > 0`` the map is the PAV solution of the training
        trials plus ``a`` virtual target trials below every score and ``a`` virtual non-target
        trials above every score (:func:`focal.core.pav.bounded_pav_blocks`), which keeps every
        LLR finite and bounded by the data size:
        ``-log(1 + N_tar/a) < llr < log(1 + N_non/a)``. Larger ``a`` bounds harder. ``0`` turns
        bounding off: on the training scores the output is then exactly
        :func:`focal.metrics.pav_llr` and its Cllr equals :func:`focal.metrics.min_cllr`.
    interpolation : {"step", "linear"}, default="step"
        Map for scores not seen in training. ``"step"``: the LLR of the block the score falls
        into, a score between two blocks getting the lower one (the grouping the ROC thresholds
        make). ``"linear"``: piecewise-linear between the block centres (midpoints of each
        block's score range), a continuous map. Both are non-decreasing and constant beyond the
        first and last block (centre); only ``"step"`` reproduces the PAV-LLR on the training
        scores.
    bounds : "elub", (float, float) or None, default None
        Clip the output LLRs: to the ELUB limits (:func:`focal.metrics.elub_bounds`,
        :cite:t:`vergeer2016elub`) of the training trials' calibrated LLRs, the forensic rule for
        how strong an LR the calibration data support (as NFI lir's ``ELUBbounder`` bounds the
        calibrator it wraps, here with the exact limits); to given ``(lower, upper)`` LLRs
        (nats); or not at all (None). The map stays monotone: the extreme blocks take the
        limits. ``"elub"`` counts trials, so it is refused with ``sample_weight``.
    pos_label : int, float, bool or str, optional
        The target label of ``y``; needed for labels other than 0/1 and False/True (focal's
        label rule, :func:`focal.core.validation.as_binary_labels`).

    Attributes
    ----------
    score_lo_, score_hi_ : ndarray of shape (n_blocks,)
        Lowest and highest training score of each block, increasing; ``score_lo_`` are the
        block thresholds of the step map.
    llr_ : ndarray of shape (n_blocks,)
        Natural-log LLR of each block, non-decreasing (strictly increasing when unbounded),
        within ``bounds_``.
    bounds_ : ndarray of shape (2,)
        The clip ``(lower, upper)`` of the LLRs, nats (``(-inf, inf)`` without ``bounds``).
    block_n_tar_, block_n_non_ : ndarray of int64, shape (n_blocks,)
        Training target and non-target trials in each block (virtual trials and trials of zero
        weight not included).
    block_w_tar_, block_w_non_ : ndarray of float64, shape (n_blocks,)
        Their total ``sample_weight`` (the counts, as floats, when fitted without weights):
        what the LLRs are computed from.
    n_targets_, n_nontargets_ : int
        Training trials of each class.
    classes_ : ndarray of shape (2,)
        ``[non-target label, target label]`` of ``y``: the labels of ``predict`` and of the
        columns of ``predict_proba``, which ``score`` takes.
    n_features_in_ : int
        Always 1.
    feature_names_in_ : ndarray of str
        The column name, when fitted on a DataFrame.

    See Also
    --------
    ROCCH : the same blocks read as the ROC convex hull, with EER, minDCF and hull slopes.
    focal.metrics.pav_llr, focal.metrics.min_cllr

    Examples
    --------
    >>> import numpy as np
    >>> from focal import PAVCalibrator
    >>> scores = np.array([-2.0, -1.0, 0.5, 0.0, 1.0, 3.0])
    >>> labels = np.array([0, 0, 0, 1, 1, 1])
    >>> cal = PAVCalibrator(pseudo_count=0).fit(scores, labels)
    >>> cal.decision_function([-5.0, 0.2, 0.7, 9.0])
    array([-inf,   0.,   0.,  inf])
    >>> PAVCalibrator().fit(scores, labels).decision_function([-5.0, 9.0])  # log(1/2), log(2)
    array([-0.69314718,  0.69314718])
    """

    def __init__(self, pseudo_count=1.0, interpolation="step", bounds=None, pos_label=None):
        self.pseudo_count = pseudo_count
        self.interpolation = interpolation
        self.bounds = bounds
        self.pos_label = pos_label

    def fit(self, X, y, sample_weight=None):
        """Fit on scores ``X`` (shape (n,) or (n, 1)) and labels ``y`` (1 / True = target, or
        the two labels of ``pos_label``), optionally weighted.

        Sorts each class once and runs PAV once over the trials (``focal.core.pav``); with
        ``sample_weight``, the weighted PAV (:func:`focal.core.pav.pav_from_weights`). If
        anything is wrong with the parameters or the data, raises ``ValueError`` and leaves the
        estimator unfitted (never half-fitted, never with a previous fit's state).

        Parameters
        ----------
        X : array_like, shape (n_trials,) or (n_trials, 1)
            Scores of one system.
        y : array_like, shape (n_trials,)
            Labels.
        sample_weight : array_like, shape (n_trials,), optional
            Non-negative trial weights: a trial of weight k counts as k trials (the PAV-LLR of
            a block is ``log((w_tar_k / W_tar) / (w_non_k / W_non))`` with weights in place of
            counts, and ``pseudo_count`` is a virtual trial of that weight). Trials of zero
            weight are left out; each class needs a positive total.

        Returns
        -------
        self
            The fitted estimator.
        """
        refuse_elub_weights(self.bounds, sample_weight)
        return self._fit(X, y, sample_weight)

    def _set_fitted(self, result, counts):
        """Store the (bounded) blocks of the PAV solution ``result`` (its ``n_tar`` / ``n_non``
        the blocks' trial counts, or their weights with ``counts`` the trial counts).
        """
        if self.pseudo_count > 0:
            starts, llr = bounded_pav_blocks(result, self.pseudo_count)
        else:
            starts, llr = np.arange(result.n_tar.size), result.llr
        ends = np.append(starts[1:], result.n_tar.size) - 1
        self.score_lo_ = result.score_lo[starts]
        self.score_hi_ = result.score_hi[ends]
        self.llr_ = np.array(llr, dtype=float)
        self.block_n_tar_ = np.add.reduceat(counts[0], starts)
        self.block_n_non_ = np.add.reduceat(counts[1], starts)
        self.block_w_tar_ = np.add.reduceat(result.n_tar, starts).astype(float)
        self.block_w_non_ = np.add.reduceat(result.n_non, starts).astype(float)
        self.n_targets_ = int(self.block_n_tar_.sum())
        self.n_nontargets_ = int(self.block_n_non_.sum())
        self.bounds_ = fitted_bounds(  # "elub": the limits of the training trials' LLRs
            self.bounds,
            lambda: (
                np.repeat(self.llr_, self.block_n_tar_),
                np.repeat(self.llr_, self.block_n_non_),
            ),
        )
        self.llr_ = np.clip(self.llr_, *self.bounds_)

    def _map(self, scores):
        return block_llr_map(self.score_lo_, self.score_hi_, self.llr_, scores, self.interpolation)

    # -- saved state (focal.estimators._state) --------------------------------------------------

    _state_fields = PAV_FIELDS

    def _validate_state(self, state, version):
        """The labels, the blocks and their (bounded or exact PAV) LLRs
        (:func:`check_pav_llr`).
        """
        check_binary_classes(state["classes_"], self.pos_label, version)
        check_pav_llr(state, self.pseudo_count)
        return state


class ROCCH(_ScoreToLLR):
    """The ROC convex hull of binary scores as a fitted estimator (thesis sec. 7.3.6-7.3.8).

    ``fit`` sorts each class once and runs PAV once; the hull vertices are the PAV block
    boundaries and the LLR of each hull segment is its block's PAV-LLR (thesis 7.7.3). All
    threshold-optimized measures are then read off the few vertices, exactly as
    :func:`focal.metrics.rocch` does (the same core code).

    The hull itself is a :class:`focal.core.RocHull` (what :func:`focal.metrics.rocch`
    returns), kept as ``hull_``: every threshold measure of :mod:`focal.metrics` takes it, e.g.
    ``min_dcf(est.hull_, p_target=0.01)``.

    ``transform`` maps a score to the LLR given by the slope of the hull segment it falls on:
    the segment of its PAV block, ``log(delta P_miss / delta P_fa)``, a score between two blocks
    getting the lower one. These are the unbounded PAV-LLRs: the end segments of a hull that
    runs along an axis have slope 0 or infinity, i.e. LLR -inf / +inf. Use
    :class:`PAVCalibrator` (bounded by default) for a calibrator to deploy.

    Parameters
    ----------
    pos_label : int, float, bool or str, optional
        The target label of ``y``; needed for labels other than 0/1 and False/True (focal's
        label rule, :func:`focal.core.validation.as_binary_labels`).

    Attributes
    ----------
    p_miss_, p_fa_ : ndarray of shape (n_blocks + 1,)
        Hull vertices (fractions), from (P_miss, P_fa) = (0, 1) to (1, 0).
    thresholds_ : ndarray of shape (n_blocks + 1,)
        Vertex k is "accept iff score >= thresholds_[k]"; the last is +inf.
    n_misses_, n_false_alarms_ : ndarray of int64, shape (n_blocks + 1,)
        Absolute error counts at each vertex.
    llr_ : ndarray of shape (n_blocks,)
        Natural-log LLR of each hull segment (= PAV block LLR), strictly increasing.
    score_lo_, score_hi_ : ndarray of shape (n_blocks,)
        Training score range of each segment's block.
    eer_ : float
        ROCCH-EER (fraction), where the hull crosses P_miss = P_fa (7.3.7).
    prbep_ : float
        Precision-recall break-even point: precision = recall where the hull has as many
        misses as false alarms, a fraction (7.3.8, :func:`focal.metrics.prbep`).
    auc_ : float
        Area under the hull, P_detect against P_fa (:func:`focal.metrics.rocch_auc`).
    n_targets_, n_nontargets_ : int
        Training trials of each class.
    classes_ : ndarray of shape (2,)
        ``[non-target label, target label]`` of ``y``.
    hull_ : focal.core.RocHull
        The hull these attributes come from; pass it to :mod:`focal.metrics` for any other
        threshold measure.
    n_features_in_ : int
        Always 1.
    feature_names_in_ : ndarray of str
        The column name, when fitted on a DataFrame.

    Examples
    --------
    >>> from focal import ROCCH
    >>> hull = ROCCH().fit([0.0, 1.0, 2.0, 3.0], [0, 1, 0, 1])
    >>> hull.p_miss_, hull.p_fa_
    (array([0. , 0. , 0.5, 1. ]), array([1. , 0.5, 0. , 0. ]))
    >>> hull.llr_, hull.eer_
    (array([-inf,   0.,  inf]), 0.25)
    >>> from focal.metrics import min_dcf
    >>> min_dcf(hull.hull_, p_target=0.5)
    0.5
    """

    def __init__(self, pos_label=None):
        self.pos_label = pos_label

    def _set_fitted(self, result, counts=None):
        """Build the hull of the PAV solution ``result`` and read its measures once."""
        # the blocks only, as saved: a loaded ROCCH is the one fitted (no steppy ROC in either)
        hull = RocHull(PAVResult(result.score_lo, result.score_hi, result.n_tar, result.n_non))
        self.hull_ = hull
        self.p_miss_, self.p_fa_, self.thresholds_ = hull.p_miss, hull.p_fa, hull.thresholds
        self.n_misses_, self.n_false_alarms_ = hull.n_misses, hull.n_false_alarms
        self.llr_ = hull.llr
        self.score_lo_, self.score_hi_ = hull.pav.score_lo, hull.pav.score_hi
        self.eer_, self.prbep_, self.auc_ = eer(hull), prbep(hull), rocch_auc(hull)
        self.n_targets_, self.n_nontargets_ = hull.n_targets, hull.n_nontargets

    def _map(self, scores):
        return block_llr_map(self.score_lo_, self.score_hi_, self.llr_, scores, "step")

    # -- saved state (focal.estimators._state): the PAV blocks; the hull and every measure
    # are rebuilt from them by _set_fitted

    _state_fields = BLOCK_FIELDS

    def _get_state(self):
        pav = self.hull_.pav
        return {
            "n_features_in_": self.n_features_in_,
            "feature_names_in_": getattr(self, "feature_names_in_", None),
            "classes_": self.classes_,
            "score_lo_": pav.score_lo,
            "score_hi_": pav.score_hi,
            "block_n_tar_": pav.n_tar,
            "block_n_non_": pav.n_non,
        }

    def _validate_state(self, state, version):
        check_binary_classes(state["classes_"], self.pos_label, version)
        return {
            "n_features_in_": state["n_features_in_"],
            "feature_names_in_": state["feature_names_in_"],
            "classes_": state["classes_"],
            "blocks": check_hull_blocks(state),
        }

    def _set_state(self, state):
        state = dict(state)
        blocks = state.pop("blocks")
        super()._set_state(state)
        self._set_fitted(blocks)

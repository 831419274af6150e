"""Cohort score normalization (z-, t-, s- and adaptive s-norm) as a fitted scikit-learn object.

``fit`` reduces the enrolment-vs-cohort and test-vs-cohort score matrices to one mean and
standard deviation per enrolment model and per test segment (:mod:`focal.core.normalization`);
``transform`` normalizes trial scores, finding each trial's model and segment *by name*.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import TransformerTags
from sklearn.utils.validation import check_is_fitted

from ..core.normalization import METHODS, cohort_statistics, normalize_scores

__all__ = ["ScoreNormalizer"]


class ScoreNormalizer(BaseEstimator):
    """Normalize verification scores by cohort statistics of their model and test segment.

    Parameters
    ----------
    method : {"s-norm", "z-norm", "t-norm", "as-norm"}, default "s-norm"
        z-norm uses the enrolment side, t-norm the test side, s-norm the mean of both, as-norm
        (adaptive s-norm) both sides' ``top_n`` closest cohort members
        (:mod:`focal.core.normalization` for the formulas and references).
    top_n : int, optional
        Cohort members per side for ``"as-norm"`` (required there; 200-400 is usual); with the
        cohort size it equals s-norm. Not used by the other methods.

    Attributes
    ----------
    enrol_ids_, test_ids_ : ndarray or None
        Names of the enrolment models / test segments, one per cohort-matrix row (None for a
        side the method does not use).
    enrol_mean_, enrol_std_, test_mean_, test_std_ : ndarray or None
        Their cohort statistics.

    Examples
    --------
    >>> import numpy as np
    >>> from focal.estimators.normalization import ScoreNormalizer
    >>> rng = np.random.default_rng(0)
    >>> E, T = rng.normal(size=(2, 50)), rng.normal(size=(3, 50))   # vs 50 cohort segments
    >>> norm = ScoreNormalizer("s-norm").fit(E, T, enrol_ids=["spk1", "spk2"],
    ...                                      test_ids=["a.wav", "b.wav", "c.wav"])
    >>> norm.transform([2.5, -0.3], ["spk1", "spk2"], ["c.wav", "a.wav"]).shape
    (2,)
    """

    def __init__(self, method="s-norm", top_n=None):
        self.method = method
        self.top_n = top_n

    def __sklearn_tags__(self):
        """A transformer of trials, not of a samples x features array: ``fit`` takes cohort
        score matrices and names, ``transform`` 1-D scores and each trial's model and segment
        names, so scikit-learn's generic checks (which feed ``fit(X, y)`` and ``transform(X)``
        one numeric array) do not apply and ``check_estimator`` skips them.
        """
        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64"])
        tags.input_tags.two_d_array = False
        tags.input_tags.one_d_array = True
        tags.input_tags.string = True
        tags.target_tags.required = False
        return tags

    def _sides(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.method == "as-norm" and self.top_n is None:
            raise ValueError("method 'as-norm' needs top_n (cohort members per side)")
        return self.method != "t-norm", self.method != "z-norm"

    def fit(self, enrol_cohort=None, test_cohort=None, *, enrol_ids=None, test_ids=None):
        """Reduce the cohort score matrices to per-model and per-segment statistics.

        Parameters
        ----------
        enrol_cohort : array_like, shape (n_models, n_cohort)
            Each enrolment model against each cohort segment (needed by z-, s-, as-norm).
        test_cohort : array_like, shape (n_tests, n_cohort_t)
            Each test segment against each cohort model (needed by t-, s-, as-norm).
        enrol_ids, test_ids : array_like, optional
            The names of the rows (default ``0..n-1``); names must be distinct.

        Returns
        -------
        self
            The fitted estimator.
        """
        use_enrol, use_test = self._sides()
        top = self.top_n if self.method == "as-norm" else None
        fitted = {}
        for use, cohort, ids, side in (
            (use_enrol, enrol_cohort, enrol_ids, "enrol"),
            (use_test, test_cohort, test_ids, "test"),
        ):
            if not use:
                fitted.update({f"{side}_ids_": None, f"{side}_mean_": None, f"{side}_std_": None})
                continue
            if cohort is None:
                raise ValueError(f"method {self.method!r} needs {side}_cohort")
            mean, std = cohort_statistics(cohort, top, f"{side}_cohort")
            names = np.arange(mean.size) if ids is None else np.asarray(ids)
            if names.shape != mean.shape:
                raise ValueError(
                    f"{side}_ids needs one name per row of {side}_cohort "
                    f"({mean.size}), got shape {names.shape}"
                )
            if np.unique(names).size != names.size:
                raise ValueError(f"{side}_ids must be distinct")
            fitted.update({f"{side}_ids_": names, f"{side}_mean_": mean, f"{side}_std_": std})
        for key, value in fitted.items():
            setattr(self, key, value)
        return self

    @staticmethod
    def _lookup(names, ids, side):
        """Row of each trial's model / segment, by name; unknown names are a ValueError."""
        ids = np.asarray(ids)
        order = np.argsort(names, kind="stable")
        pos = np.searchsorted(names, ids, sorter=order)
        pos = np.minimum(pos, names.size - 1)
        rows = order[pos]
        missing = names[rows] != ids
        if missing.any():
            raise ValueError(
                f"{side} {ids[missing][:3].tolist()!r} not among the cohort rows "
                f"given to fit ({int(missing.sum())} trial(s))"
            )
        return rows

    def transform(self, scores, enrol_ids=None, test_ids=None):
        """Normalized scores of trials ``(scores[i], enrol_ids[i], test_ids[i])``.

        Parameters
        ----------
        scores : array_like
            Raw scores of the trials.
        enrol_ids, test_ids : array_like, optional
            Each trial's model and test segment, named as in ``fit`` (only the sides the method
            uses are needed); shaped like ``scores``.

        Returns
        -------
        ndarray
            The normalized scores, shaped like ``scores``.
        """
        check_is_fitted(self, "enrol_mean_")
        s = np.asarray(scores, dtype=float)
        stats = {}
        for side, ids in (("enrol", enrol_ids), ("test", test_ids)):
            names = getattr(self, f"{side}_ids_")
            if names is None:
                continue
            if ids is None:
                raise ValueError(f"method {self.method!r} needs {side}_ids for the trials")
            ids = np.asarray(ids)
            if ids.shape != s.shape:
                raise ValueError(
                    f"{side}_ids must have the shape of scores {s.shape}, got {ids.shape}"
                )
            rows = self._lookup(names, ids, f"{side}_ids")
            stats[f"{side}_mean"] = getattr(self, f"{side}_mean_")[rows]
            stats[f"{side}_std"] = getattr(self, f"{side}_std_")[rows]
        return normalize_scores(s, **stats)

    def fit_transform(
        self,
        scores,
        enrol_ids,
        test_ids,
        enrol_cohort=None,
        test_cohort=None,
        *,
        enrol_cohort_ids=None,
        test_cohort_ids=None,
    ):
        """``fit`` on the cohorts, then ``transform`` the trials.

        Parameters
        ----------
        scores : array_like
            Raw scores of the trials.
        enrol_ids, test_ids : array_like
            Each trial's model and test segment.
        enrol_cohort, test_cohort : array_like, optional
            The cohort score matrices, as in ``fit``.
        enrol_cohort_ids, test_cohort_ids : array_like, optional
            The names of the cohort matrices' rows (``fit``'s ``enrol_ids`` / ``test_ids``).

        Returns
        -------
        ndarray
            The normalized scores, shaped like ``scores``.
        """
        return self.fit(
            enrol_cohort, test_cohort, enrol_ids=enrol_cohort_ids, test_ids=test_cohort_ids
        ).transform(scores, enrol_ids, test_ids)

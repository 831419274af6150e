"""Estimators whose output is class log-likelihoods: their labels, prior and Bayes decisions.

:class:`LogLikelihoodOutputMixin` is shared by :class:`focal.estimators.MulticlassFusion` and
:class:`focal.estimators.GaussianBackend`: it encodes the labels (class names in column order,
or class indices, never guessed from a sort order), checks the prior and the weights before any
work, and gives posteriors and decisions by Bayes' rule at a prior (Albayzin plan eq. 3) and
minus the normalized multiclass cross-entropy as the score (eqs. 6-7). It is the multiclass
twin of :class:`focal.estimators._llr_output.BinaryLLROutputMixin`.

References
----------
.. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..core.multiclass import as_class_labels, class_totals, log_posteriors
from ..core.validation import as_sample_weight, check_prior, classes_of_feature_names
from ..models.fitted_state import check_class_names

__all__ = ["LogLikelihoodOutputMixin"]


def _shown(values, limit=6) -> str:
    items = ", ".join(repr(v) for v in values[:limit].tolist())
    return f"[{items}{', ...' if len(values) > limit else ''}]"


def _numeric(y) -> bool:
    """Whether an object array holds numbers only (labels that are class indices)."""
    try:
        y.astype(np.float64)
    except (TypeError, ValueError):
        return False
    return not any(isinstance(v, str) for v in y[:1].tolist())


def _labels_by_name(y, classes):
    """Class indices of labels that are class names (exact match) or indices 0..N-1."""
    n = classes.shape[0]
    if y.dtype.kind in "biuf" or (y.dtype.kind == "O" and _numeric(y)):
        return as_class_labels(np.asarray(y.tolist()) if y.dtype.kind == "O" else y, n, "y")
    y = y.astype(str) if y.dtype.kind != "U" else y
    order = np.argsort(classes)
    pos = np.searchsorted(classes[order], y)
    pos = np.minimum(pos, n - 1)
    found = classes[order][pos] == y
    if not found.all():
        i = int(np.argmin(found))
        raise ValueError(f"y[{i}] = {str(y[i])!r} is not one of the classes ({', '.join(classes)})")
    return order[pos].astype(np.int64)


class LogLikelihoodOutputMixin:
    """Shared by estimators whose ``transform`` gives class log-likelihoods: target validation
    and ``predict_proba`` / ``predict`` by Bayes' rule at a prior (Albayzin eq. 3), by default
    the fitted ``prior_``.

    Labels. With ``class_names`` (or, for estimators whose input columns are classes, a
    DataFrame whose columns name them), the classes are those names in column order: labels
    may be the names (matched exactly) or their indices ``0..N-1``, and ``classes_`` holds the
    names. With a ``prior`` parameter, labels are the class indices ``0..len(prior)-1`` (a
    class may then have zero prior and no trials). Otherwise the classes are the sorted
    distinct labels (``classes_``, as in scikit-learn) and the prior is flat; class names are
    then refused (their sort order is no column order), and where the input columns are
    classes, the labels must be the column numbers ``0..N-1`` (1-based ones are refused).
    Output column j belongs to class ``classes_[j]``.
    """

    #: What ``transform`` gives (:func:`focal.models.schema.model_kind` reads it, as it reads
    #: the runtime's models): class log-likelihoods
    output_kind = "multiclass"
    #: Whether the input's columns are the classes (blocks of them): class names must then be
    #: matched to columns by name, never by sort order.
    _columns_are_classes = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _validate_targets(self, X, y, sample_weight):
        """Encode ``y`` and validate the prior and the weights, before any work.

        Returns ``(classes, labels, prior, weights)``: the class values, the labels as class
        indices, the prior and the trial weights (None if not given). Every class with non-zero
        prior needs trials of positive weight.
        """
        name = type(self).__name__
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        y_arr = np.asarray(y)
        if y_arr.ndim != 1 or y_arr.shape[0] != X.shape[0]:
            raise ValueError(
                f"y must be 1-D with one label per trial ({X.shape[0]}), got shape {y_arr.shape}"
            )
        names = self._class_names(y_arr)
        if names is not None:
            classes = np.array(names)
            labels = _labels_by_name(y_arr, classes)
            n_classes = classes.shape[0]
        elif self.prior is not None:
            n_classes = np.asarray(self.prior).shape[0]
            if y_arr.dtype == object:
                y_arr = np.asarray(y_arr.tolist())
            labels = as_class_labels(y_arr, n_classes, "y")
            classes = np.arange(n_classes)
        else:
            try:
                classes, labels = np.unique(y_arr, return_inverse=True)
            except TypeError as err:
                raise ValueError(
                    f"Unknown label type: y mixes incomparable values ({err})"
                ) from err
            n_classes = classes.shape[0]
            if self._columns_are_classes and not np.array_equal(classes, np.arange(n_classes)):
                raise ValueError(
                    f"y holds the labels {_shown(classes)}, not the class indices "
                    f"0..{n_classes - 1}"
                    ": labels are column numbers, or class names with class_names=[...] in X's "
                    "column order (a class without trials needs a prior or class_names)"
                )
        if n_classes < 2:
            raise ValueError(f"{name} needs at least 2 classes, got {n_classes} class")
        prior = check_prior(self.prior, n_classes)
        w = None
        if sample_weight is not None:
            w = as_sample_weight(sample_weight, X.shape[0])
            if not w.any():
                raise ValueError("sample_weight is zero for every trial")
        class_totals(labels, prior, w, labels_name="y", class_names=classes)
        return classes, labels, prior, w

    def _class_names(self, y):
        """The class names in column order (``class_names``, else the feature names), or None;
        class-name labels without them are refused where columns are classes.
        """
        names = check_class_names(self.class_names)
        named_labels = y.dtype.kind in "US" or (y.dtype.kind == "O" and not _numeric(y))
        seen = getattr(self, "feature_names_in_", None)
        if self._columns_are_classes and seen is not None and (named_labels or names):
            from_columns = classes_of_feature_names(seen)
            if names is None:
                names = from_columns
            elif from_columns is not None and list(from_columns) != list(names):
                raise ValueError(
                    f"class_names {list(names)} differ from the class order of X's "
                    f"columns {list(from_columns)}"
                )
        if names is None and named_labels:
            found = ", ".join(repr(v) for v in list(dict.fromkeys(y[:10000].tolist()))[:6])
            if self._columns_are_classes:
                raise ValueError(
                    f"y holds class names ({found}, ...) but nothing says which columns of X "
                    "hold which class: pass class_names=[...] in X's column order, or fit on a "
                    "DataFrame whose columns name the classes ('system:class')"
                )
            raise ValueError(
                f"y holds class names ({found}, ...): pass class_names=[...], the order of the "
                "output columns (a later step, e.g. a MulticlassFusion, takes them in that "
                "order; never the names' sort order)"
            )
        if (
            names is not None
            and self.prior is not None
            and np.asarray(self.prior).shape[0] != len(names)
        ):
            raise ValueError(
                f"prior has {np.asarray(self.prior).shape[0]} entries for "
                f"{len(names)} classes ({', '.join(names)})"
            )
        return names

    def _set_classes(self, classes, prior):
        self.classes_ = classes
        self.n_classes_ = classes.shape[0]
        self.prior_ = prior
        self._n_features_out = classes.shape[0]

    def _prior_for(self, prior):
        return self.prior_ if prior is None else check_prior(prior, self.n_classes_)

    def predict_log_proba(self, X, prior=None):
        """Log posteriors ``(n_trials, n_classes)`` at ``prior`` (default ``prior_``); ``-inf``
        for zero-prior classes.
        """
        check_is_fitted(self)
        return log_posteriors(self.transform(X), self._prior_for(prior))

    def predict_proba(self, X, prior=None):
        """Posterior probabilities ``(n_trials, n_classes)`` at ``prior`` (default ``prior_``)."""
        return np.exp(self.predict_log_proba(X, prior))

    def predict(self, X, prior=None, cost=None):
        """Bayes decisions under 0-1 cost: the class (from ``classes_``) of largest posterior
        at ``prior`` (MAP).

        With ``cost``, a matrix ``cost[d, j]`` of decisions d by classes ``classes_[j]`` (the
        decisions may differ from the classes: refer, compound accept/reject, ...), the result
        is instead the index of each trial's Bayes decision at ``prior``
        (:func:`focal.metrics.bayes_decisions`).
        """
        if cost is not None:
            check_is_fitted(self)
            from ..metrics.decisions import bayes_decisions

            return bayes_decisions(self.transform(X), self._prior_for(prior), cost)
        best = np.argmax(self.predict_log_proba(X, prior), axis=1)
        return self.classes_[best]

    def score(self, X, y, sample_weight=None, prior=None):
        """Minus the normalized multiclass cross-entropy at ``prior`` (default ``prior_``):
        C_mce / C_def (Albayzin eqs. 6-7; :func:`focal.metrics.multiclass_cllr` with
        ``normalize=True``), 0 for perfect log-likelihoods, -1 for uninformative ones; greater
        is better. ``y`` holds labels of ``classes_``; every class of non-zero prior needs trials.
        """
        from ..core.multiclass import MulticlassTrials, cross_entropy_nats, prior_entropy_nats

        check_is_fitted(self)
        y = np.asarray(y)
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise ValueError(f"y contains labels not seen in fit: {np.unique(y[unknown])!r}")
        t = MulticlassTrials(
            self.transform(X),
            np.searchsorted(self.classes_, y),
            self._prior_for(prior),
            sample_weight,
            llh_name="X",
            labels_name="y",
        ).active()
        return -float(
            cross_entropy_nats(t.llh, t.labels, t.prior, t.sample_weight)
            / prior_entropy_nats(t.prior)
        )

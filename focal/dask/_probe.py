"""The in-memory estimator's own rules for a distributed fit.

A distributed fit (:mod:`focal.dask.fit`, :mod:`focal.dask.multiclass`) does not re-implement
the label and parameter rules of the estimator it fits: it fits a clone in memory on one trial
per distinct label (:func:`probe_fit`), which raises the estimator's own refusals and sets every
fitted attribute that does not depend on the scores, and hands that state to the estimator it
returns (:func:`adopt_state`).
"""

from __future__ import annotations

import warnings

import numpy as np


def probe_fit(estimator, labels, width, names=None):
    """A clone of ``estimator`` fitted in memory on one trial per distinct label (constant
    scores, one iteration): it applies the estimator's own label and parameter rules (which
    label is the target, class names, refusals with their messages) and sets every fitted
    attribute that does not depend on the scores, so the distributed fit never re-implements
    them.
    """
    from sklearn.base import clone

    X = np.zeros((labels.shape[0], width))
    if names is not None:
        import pandas as pd

        X = pd.DataFrame(X, columns=list(names))
    probe = clone(estimator).set_params(max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probe.fit(X, labels)
    return probe


def adopt_state(estimator, probe):
    """Give ``estimator`` the fitted state of ``probe`` (everything but the parameters)."""
    params = set(probe.get_params(deep=False))
    for name, value in vars(probe).items():
        if name not in params:
            setattr(estimator, name, value)

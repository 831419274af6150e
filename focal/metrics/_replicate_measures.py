"""Measures of bootstrap replicates given as integer weights over the trials.

A replicate is a vector of non-negative integer weights over the trials: how often each trial
(or each cluster of trials) was drawn. Every measure is computed on the weighted trials without
copying them:

- Cllr, C_mce and the actual DCF / CAVG are weighted means of per-trial costs or decisions,
  computed for a block of replicates at once as one matrix product;
- minCllr, the ROCCH-EER, the conventional EER and minDCF come from the weighted PAV of the
  replicate (:func:`focal.core.pav.pav_from_counts` on the per-score weight sums), which gives
  exactly the measures of the resampled trials;
- with a smoother and a random generator, the ROCCH-EER, the conventional EER and minDCF come
  instead from the replicate's trials jittered by kernel noise (:mod:`focal.metrics._smoothed`).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

import numpy as np
from scipy.special import logit

from ..core.multiclass import log_costs
from ..core.pav import pav_from_counts
from ..core.priors import detection_cost, effective_log_odds, prior_entropy
from ..core.rocch import RocHull
from ..core.scoring import nontarget_cost, target_cost
from ._smoothed import SMOOTHED, threshold_measures
from .binary import cllr, conventional_eer, dcf, eer, min_cllr, min_dcf

__all__ = []

_LOG2 = float(np.log(2.0))
_HULL = ("min_cllr", "eer", "conventional_eer", "min_dcf")  # measures of the weighted PAV


def _weighted_mean(w, values):
    """Row-wise weighted means of ``values`` (+inf where an infinite value has weight > 0)."""
    finite = np.isfinite(values)
    total = w.sum(axis=1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        if finite.all():  # the usual case: no copy of the weights
            return (w @ values) / total
        mean = (w[:, finite] @ values[finite]) / total
    mean[(w[:, ~finite] > 0).any(axis=1)] = np.inf
    return mean


class _BinaryMeasures:
    """Evaluates named binary measures on blocks of replicate weights.

    With ``smoother`` (a :class:`focal.metrics._smoothed._Smoother`), :meth:`values` takes the
    measures in :data:`focal.metrics._smoothed.SMOOTHED` from the ROC of each replicate's
    trials, jittered when given a random generator (plain without, e.g. for the jackknife).
    """

    def __init__(self, tar, non, specs, smoother=None):
        self.tar, self.non = tar, non
        self.nt = tar.size
        self.specs = specs
        self.smoother = smoother
        self.memory_factor = 1 if smoother is None else 8  # arrays per weight of a block
        scores = np.concatenate((tar, non))
        self.unique, self.group = np.unique(scores, return_inverse=True)
        self.group = self.group.ravel()

    def values(self, w, rng=None):
        wt, wn = w[:, : self.nt], w[:, self.nt :]
        out = np.full((w.shape[0], len(self.specs)), np.nan)
        ok = (wt.sum(axis=1) > 0) & (wn.sum(axis=1) > 0)
        if not ok.all():
            w, wt, wn = w[ok], wt[ok], wn[ok]
        smoothed = [None] * len(self.specs)
        if self.smoother is not None and any(name in SMOOTHED for name, _ in self.specs):
            smoothed = threshold_measures(*self.smoother.roc_rows(w, rng), self.specs)
        hull_names = [name for (name, _), c in zip(self.specs, smoothed) if c is None]
        cols = []
        for (name, (p, cm, cf)), c in zip(self.specs, smoothed):
            if c is not None:
                cols.append(c)
            elif name == "cllr":
                plo = float(logit(p))
                xe = p * _weighted_mean(wt, target_cost(self.tar, plo)) + (1 - p) * _weighted_mean(
                    wn, nontarget_cost(self.non, plo)
                )
                cols.append(xe / _LOG2 / prior_entropy(p))
            elif name == "dcf":
                thr = -effective_log_odds(p, cm, cf)
                pmiss = _weighted_mean(wt, (self.tar < thr).astype(float))
                pfa = _weighted_mean(wn, (self.non >= thr).astype(float))
                cols.append(detection_cost(pmiss, pfa, p, cm, cf, True))
            else:
                cols.append(None)
        if any(name in _HULL for name in hull_names):
            g = self.unique.size
            ct = _group_sums(wt, self.group[: self.nt], g)
            cn = _group_sums(wn, self.group[self.nt :], g)
            hull_cols = np.empty((wt.shape[0], len(self.specs)))
            for r in range(wt.shape[0]):
                hull = RocHull(pav_from_counts(self.unique, ct[r], cn[r]))
                for j, spec in enumerate(self.specs):
                    if cols[j] is None:
                        hull_cols[r, j] = _measure(hull, *spec)
            cols = [hull_cols[:, j] if c is None else c for j, c in enumerate(cols)]
        out[ok] = np.column_stack(cols) if cols else out[ok]
        return out


def _measure(scores, name, params) -> float:
    """The measure ``name`` of :mod:`focal.metrics.binary` at ``(p, c_miss, c_fa)``."""
    p, cm, cf = params
    if name in ("cllr", "min_cllr"):
        return (cllr if name == "cllr" else min_cllr)(scores, p_target=p)
    if name in ("eer", "conventional_eer"):
        return (eer if name == "eer" else conventional_eer)(scores)
    return (dcf if name == "dcf" else min_dcf)(scores, p_target=p, c_miss=cm, c_fa=cf)


def _binary_estimates(scores, specs):
    """The measures on the data themselves, exactly as the plain functions give them."""
    return [_measure(scores, *spec) for spec in specs]


def _group_sums(w, group, n_groups):
    """``out[r, g] = sum of w[r, i] over trials i of group g`` for every replicate row r."""
    rows = w.shape[0]
    flat = (np.arange(rows)[:, None] * n_groups + group[None, :]).ravel()
    return (
        np.bincount(flat, weights=w.ravel(), minlength=rows * n_groups)
        .reshape(rows, n_groups)
        .astype(np.int64)
    )


class _MulticlassMeasures:
    """Evaluates C_mce / multiclass Cllr / CAVG on blocks of replicate weights."""

    def __init__(self, llh, labels, prior, specs):
        self.labels = labels
        self.n_classes = prior.size
        self.onehot = np.eye(self.n_classes)[labels]
        self.specs = specs
        self.prior = prior
        self.ref = -np.log(prior)
        self.dev = log_costs(llh, labels, prior) - self.ref[labels]  # exactly 0: constant rows
        from .multiclass_detection import detection_llrs

        self.lam = detection_llrs(llh) if any(n == "cavg" for n, _ in specs) else None

    def values(self, w, rng=None):  # rng: unused (no smoothed multiclass measure)
        wf = w.astype(float)
        counts = wf @ self.onehot  # (B, N) weighted trials per class
        ok = (counts > 0).all(axis=1)
        out = np.full((w.shape[0], len(self.specs)), np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_dev = (wf @ (self.onehot * self.dev[:, None])) / counts
            for j, (name, p_target) in enumerate(self.specs):
                if name in ("c_mce", "multiclass_cllr"):
                    xe = (mean_dev + self.ref) @ self.prior  # Albayzin eq. 6
                    out[:, j] = xe if name == "c_mce" else xe / _LOG2
                else:  # CAVG, thesis eq. 8.3, from weighted acceptance rates
                    accept = (self.lam >= -logit(p_target)).astype(float)
                    n = self.n_classes
                    rates = (
                        np.stack([(wf * self.onehot[:, i]) @ accept for i in range(n)], axis=1)
                        / counts[:, :, None]
                    )  # (B, i, k)
                    diag = np.diagonal(rates, axis1=1, axis2=2)
                    p_fa = (rates.sum(axis=1) - diag) / (n - 1)
                    out[:, j] = np.mean(p_target * (1 - diag) + (1 - p_target) * p_fa, axis=1)
        out[~ok] = np.nan
        return out

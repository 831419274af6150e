"""NIST LRE's CAVG, its operating-point sweep, and evaluation over every subset of the classes.

CAVG (thesis sec. 8.1, eqs. 8.1-8.3) averages N detection applications: for target class k the
prior gives the target probability ``P_target`` (1/2 in NIST LREs) and the non-targets share
the rest equally; misses and false alarms cost 1::

    CAVG = 1/N sum_k [ P_target P_miss(k) + (1 - P_target)/(N-1) sum_{i != k} P_fa(k | i) ]

``P_miss(k)`` is the fraction of class-k trials that reject k and ``P_fa(k | i)`` the fraction of
class-i trials that accept k. From log-likelihoods, the Bayes decision of application k accepts
k iff its detection LLR (flat non-target prior, Brümmer & van Leeuwen eq. 9) is at least
``-logit(P_target)``; at ``P_target = 1/2`` that is "posterior of k at the flat prior >= 1/N"
(thesis sec. 8.1.1). CAVG is a fraction in [0, 1].

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
.. [2] L. J. Rodríguez-Fuentes, N. Brümmer, M. Penagarikano, A. Varona, M. Diez and
   G. Bordel, "The Albayzin 2012 Language Recognition Evaluation Plan", evaluation plan,
   GTTS, UPV/EHU, 2012 ("Albayzin plan").
.. [3] N. Brümmer and D. A. van Leeuwen, "On calibration of language recognition scores",
   Proc. IEEE Odyssey 2006: The Speaker and Language Recognition Workshop, 2006.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy.special import logit

from ..core.multiclass import MulticlassTrials, as_class_labels, as_llh_matrix, class_totals
from ..core.validation import check_probability
from .multiclass import affine_calibration_of_trials, detection_llrs

__all__ = ["cavg", "cavg_sweep", "CavgSweep", "subset_analysis", "SubsetAnalysis"]

_SUBSET_MEASURES = ("cavg", "multiclass_cross_entropy", "multiclass_cllr")
_WIDE = 600.0  # rows whose log-likelihoods span more than this many nats take the exact path
_MAX_SUBSET_CLASSES = 20


def _check_trials(llh, labels, decisions=None):
    """Validated ``(llh or None, labels, decisions or None, n_classes, class counts)``; every
    class needs trials (the flat prior of CAVG).
    """
    if decisions is None:
        if llh is None:
            raise ValueError("give llh (log-likelihoods) or decisions")
        t = MulticlassTrials(llh, labels)
        return t.llh, t.labels, None, t.n_classes, t.counts
    L = None if llh is None else as_llh_matrix(llh)
    D = np.asarray(decisions)
    if D.ndim != 2 or D.dtype.kind not in "biuf":
        raise ValueError(
            f"decisions must be a 2-D (n_trials, n_classes) array of accept (1 / True) and "
            f"reject (0 / False), got dtype {D.dtype} and shape {D.shape}"
        )
    if D.dtype.kind != "b":
        if not np.isin(D, (0, 1)).all():
            raise ValueError("decisions must contain only 0/1 or False/True")
    D = D.astype(bool)
    if L is not None and D.shape != L.shape:
        raise ValueError(f"decisions has shape {D.shape} but llh has shape {L.shape}")
    N = D.shape[1]
    if N < 2:
        raise ValueError(f"CAVG needs at least 2 classes, got {N}")
    y = as_class_labels(labels, N)
    if y.shape[0] != D.shape[0]:
        raise ValueError(
            f"decisions and labels have different numbers of trials ({D.shape[0]} and {y.shape[0]})"
        )
    return L, y, D, N, class_totals(y, np.full(N, 1.0 / N))


def _acceptance_rates(decisions, y, counts):
    """``A[i, k]``: fraction of class-i trials that accept class k."""
    N = counts.shape[0]
    A = np.empty((N, N))
    for k in range(N):
        A[:, k] = np.bincount(y, weights=decisions[:, k], minlength=N)
    return A / counts[:, None]


def _cavg_from_rates(A, p_target):
    """Eq. 8.3 from the acceptance-rate matrix (target prior ``p_target``)."""
    N = A.shape[0]
    p_miss = 1.0 - np.diag(A)
    p_fa = (A.sum(axis=0) - np.diag(A)) / (N - 1)  # mean over non-target classes i != k
    return float(np.mean(p_target * p_miss + (1.0 - p_target) * p_fa))


def cavg(llh, labels, decisions=None, p_target=0.5) -> float:
    """NIST LRE CAVG (thesis eq. 8.3): average detection cost over the N target languages.

    Parameters
    ----------
    llh : array_like of shape (n_trials, N), or None
        Natural-log likelihoods; the decisions are their Bayes decisions: accept target k iff
        its detection LLR (flat non-target prior) ``>= -logit(p_target)``, i.e. at
        ``p_target = 1/2`` iff its posterior at the flat prior is ``>= 1/N`` (thesis 8.1.1).
        May be None when ``decisions`` are given.
    labels : array_like of int, shape (n_trials,)
        True class ``0..N-1``; every class needs trials.
    decisions : array_like of bool, shape (n_trials, N), optional
        Hard accept (True / 1) / reject decisions, one per trial and target, used instead of
        the Bayes decisions of ``llh``.
    p_target : float
        Target prior of each detection application (1/2 in NIST LREs; thesis eq. 8.28 sweeps it).

    Returns
    -------
    float
        Fraction in [0, 1] (multiply by 100 for NIST's percent).

    Notes
    -----
    CAVG is defined over target classes only (thesis sec. 8.1; NIST LRE). No paper defines an
    open-set CAVG: given an out-of-set class as one more column and class, this function treats
    it as one more *target* (N + 1 detection applications, its trials non-targets of the
    others). That open-set value is focal's own extension, not comparable with published
    CAVGs; Albayzin's open-set criterion is C_mce at the prior of its eq. 2
    (:func:`focal.metrics.albayzin_measures`). For other priors over the classes see
    :func:`focal.metrics.e_lre` (thesis eq. 8.11).

    Examples
    --------
    Uninformative log-likelihoods accept every target (posterior 1/N >= 1/N): no misses,
    every false alarm, CAVG = 1/2. Perfect hard decisions cost 0.

    >>> import numpy as np
    >>> from focal.metrics import cavg
    >>> cavg(np.zeros((4, 3)), [0, 1, 2, 2])
    0.5
    >>> cavg(None, [0, 1, 2, 2], decisions=np.eye(3, dtype=bool)[[0, 1, 2, 2]])
    0.0
    """
    L, y, D, N, counts = _check_trials(llh, labels, decisions)
    p = check_probability(p_target)
    if D is None:
        D = detection_llrs(L) >= -logit(p)
    return _cavg_from_rates(_acceptance_rates(D, y, counts), p)


@dataclass(frozen=True)
class CavgSweep:
    """CAVG as a function of the target prior (thesis sec. 8.5.1, eq. 8.28), for a plot.

    Attributes
    ----------
    p_target : ndarray
        Target priors alpha in (0, 1).
    actual : ndarray
        CAVG of the Bayes decisions of the log-likelihoods at each prior (fraction).
    p_miss, p_fa : ndarray
        Their averages over targets (and non-target classes).
    recalibrated : ndarray or None
        CAVG after the optimal affine recalibration at the flat prior, thesis eq. 8.24
        (E_lre^opt), a contrast that shows the calibration loss at every operating point.
    alpha, beta : float, ndarray or None
        That recalibration ``alpha * l + beta``, with ``alpha >= 0`` as the thesis defines
        E_lre^opt (sec. 8.4.2): a sign-inverted system gets the default system (alpha = 0).
    prior : ndarray or None
        The evaluation prior over the target classes when not flat (then ``actual`` is E_lre,
        thesis eq. 8.11, and ``p_miss`` / ``p_fa`` are prior-weighted averages); None: flat.
    """

    p_target: np.ndarray
    actual: np.ndarray
    p_miss: np.ndarray
    p_fa: np.ndarray
    recalibrated: np.ndarray | None
    alpha: float | None
    beta: np.ndarray | None
    prior: np.ndarray | None = None

    @property
    def default(self) -> np.ndarray:
        """CAVG of the best fixed decision (reject all or accept all): ``min(p, 1 - p)``; at a
        non-flat prior, each target accepted or rejected by the prior alone:
        ``sum_k min(pi_k p, (1 - pi_k)(1 - p)/(N - 1))``.
        """
        if self.prior is None:
            return np.minimum(self.p_target, 1.0 - self.p_target)
        p, pr = self.p_target[:, None], self.prior[None, :]
        return np.minimum(pr * p, (1.0 - pr) * (1.0 - p) / (pr.size - 1)).sum(axis=1)

    @property
    def actual_normalized(self) -> np.ndarray:
        """``actual / default``: 1 = no better than ignoring the scores."""
        return self.actual / self.default

    @property
    def recalibrated_normalized(self) -> np.ndarray | None:
        """``recalibrated / default`` (dimensionless), or None without a recalibration."""
        return None if self.recalibrated is None else self.recalibrated / self.default


def _sweep_rates(lam, y, counts, thresholds, shift=None, weights=None):
    """Miss / false-alarm rates of every target at every threshold on the detection LLRs.

    Returns ``P_miss`` (n_thr, N) and ``P_fa`` (n_thr, N): the latter averaged over the
    non-target classes (or, with ``weights``, summed with weight ``weights[i]`` for the trials
    of class i). Target k's threshold is ``thresholds + shift[k]``. One sort per (class,
    target) column, then binary search.
    """
    N = counts.shape[0]
    p_miss = np.empty((thresholds.size, N))
    p_fa = np.zeros((thresholds.size, N))
    for i in range(N):
        block = np.sort(lam[y == i], axis=0)
        for k in range(N):
            thr = thresholds if shift is None else thresholds + shift[k]
            rejected = np.searchsorted(block[:, k], thr, side="left") / counts[i]
            if i == k:
                p_miss[:, k] = rejected
            elif weights is None:
                p_fa[:, k] += (1.0 - rejected) / (N - 1)
            else:
                p_fa[:, k] += weights[i] * (1.0 - rejected) / (N - 1)
    return p_miss, p_fa


def _prior_sweep(llh, labels, prior, pt, recalibrated):
    """:func:`cavg_sweep` at a non-flat evaluation prior (E_lre, thesis eq. 8.11)."""
    t = MulticlassTrials(llh, labels, prior).active()
    L, y, p = t.llh, t.labels, t.prior
    N = p.size
    if N < 2:
        raise ValueError("the prior must give non-zero probability to at least two classes")
    counts = np.bincount(y, minlength=N)
    # accept k iff P(k | l, pi) >= (1 - a)/((N - 1) a + 1 - a), i.e. iff the detection LLR
    # with the prior's non-target mixture (2006 paper eq. 9) >= -logit(a) + shift_k
    shift = -logit(p) - np.log(N - 1.0)
    thr = -logit(pt)

    def sweep(W):
        miss, fa = _sweep_rates(detection_llrs(W, p), y, counts, thr, shift, p)
        return miss @ p, fa.sum(axis=1)

    p_miss, p_fa = sweep(L)
    rec = alpha = beta = None
    if recalibrated:
        alpha, beta, _ = affine_calibration_of_trials(t, nonnegative_alpha=True)
        r_miss, r_fa = sweep(alpha * L + beta)
        rec = pt * r_miss + (1 - pt) * r_fa
    return CavgSweep(
        p_target=pt,
        actual=pt * p_miss + (1 - pt) * p_fa,
        p_miss=p_miss,
        p_fa=p_fa,
        recalibrated=rec,
        alpha=alpha,
        beta=beta,
        prior=p,
    )


def cavg_sweep(llh, labels, p_targets=None, recalibrated: bool = True, prior=None) -> CavgSweep:
    """CAVG swept over the target prior alpha (thesis sec. 8.5.1, eq. 8.28), as plot data.

    Application k has target prior alpha and non-target priors ``(1 - alpha)/(N - 1)``; its
    Bayes decision accepts k iff the detection LLR ``>= -logit(alpha)``. All decisions are read
    off one sort of the detection LLRs per (class, target).

    Parameters
    ----------
    llh : array_like, shape (n_trials, N)
        Natural-log likelihoods (finite).
    labels : array_like of int, shape (n_trials,)
        True class ``0..N-1``.
    p_targets : array_like, optional
        Target priors in (0, 1); default 201 points evenly spaced in logit from -7 to 7.
    recalibrated : bool, default True
        Also sweep the optimally affine-recalibrated log-likelihoods (thesis eqs. 8.22-8.24;
        calibration at the flat prior), as a contrast for calibration analysis.
    prior : array_like, shape (N,), optional
        A non-flat evaluation prior over the classes: the sweep is then of E_lre (thesis eq.
        8.11, :func:`focal.metrics.e_lre`), the posteriors and the class weights at that prior
        and the recalibration fitted at it. Zero entries drop a class (no target) and its
        trials.

    Returns
    -------
    CavgSweep
        CAVG (or E_lre) and its miss / false-alarm parts at each target prior.

    References
    ----------
    .. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
       extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
    """
    if p_targets is None:
        pt = 1.0 / (1.0 + np.exp(-np.linspace(-7.0, 7.0, 201)))
    else:
        pt = np.asarray(p_targets, dtype=float).ravel()
        if pt.size == 0 or not ((pt > 0) & (pt < 1)).all():
            raise ValueError("p_targets must be probabilities strictly between 0 and 1")
    if prior is not None:
        return _prior_sweep(llh, labels, prior, pt, recalibrated)
    trials = MulticlassTrials(llh, labels)
    L, y, counts = trials.llh, trials.labels, trials.counts
    thr = -logit(pt)
    p_miss, p_fa = _sweep_rates(detection_llrs(L), y, counts, thr)
    actual = (pt[:, None] * p_miss + (1 - pt[:, None]) * p_fa).mean(axis=1)
    rec = alpha = beta = None
    if recalibrated:
        alpha, beta, _ = affine_calibration_of_trials(trials, nonnegative_alpha=True)  # 8.4.2
        r_miss, r_fa = _sweep_rates(detection_llrs(alpha * L + beta), y, counts, thr)
        rec = (pt[:, None] * r_miss + (1 - pt[:, None]) * r_fa).mean(axis=1)
    return CavgSweep(
        p_target=pt,
        actual=actual,
        p_miss=p_miss.mean(axis=1),
        p_fa=p_fa.mean(axis=1),
        recalibrated=rec,
        alpha=alpha,
        beta=beta,
    )


# ---------------------------------------------------------------------------------------------
# every subset of the classes (thesis sec. 8.3.3, fig. 8.3)


@dataclass(frozen=True)
class SubsetAnalysis:
    """A measure evaluated on every subset of at least two classes (thesis fig. 8.3).

    Subset ``s`` is the LRE restricted to the classes in ``masks[s]`` with a flat prior over
    them (the other prior components zeroed and the rest renormalized), using only the trials
    of those classes.

    Attributes
    ----------
    masks : ndarray of bool, shape (n_subsets, N)
    sizes : ndarray of int, shape (n_subsets,)
    values : ndarray, shape (n_subsets,)
    measure : str
    """

    masks: np.ndarray
    sizes: np.ndarray
    values: np.ndarray
    measure: str


def _count_rows(flags: np.ndarray) -> np.ndarray:
    """Column counts of a 2-D boolean array (fast: byte view, int32 accumulator)."""
    return np.add.reduce(flags.view(np.uint8), axis=0, dtype=np.int32)


def _subset_stats(L, y, want_xe):
    """Sufficient statistics of every subset (bitmask ``g`` over the N classes) and class i:
    ``miss[g, i]`` trials of i rejecting i, ``fa[g, i]`` false accepts of other classes of g by
    trials of i, ``xe[g, i]`` sum of -log posterior of i (flat prior over g), nats.
    """
    n, N = L.shape
    size = 1 << N
    miss = np.zeros((size, N))
    fa = np.zeros((size, N))
    xe = np.zeros((size, N)) if want_xe else None
    top = L.max(axis=1)
    wide = (top - L.min(axis=1)) > _WIDE
    E = np.exp(L - top[:, None])  # in [e^-600, 1] on the fast rows: no underflow
    per_chunk = max(1, (1 << 21) >> (N - 1))
    for i in range(N):
        others = np.delete(np.arange(N), i)
        n_local = 1 << (N - 1)
        # local subset s (all contain i) has bit p set when it contains others[p]
        bits = (np.arange(n_local)[None, :] >> np.arange(N - 1)[:, None]) & 1  # (N-1, n_local)
        glob = (1 << i) | ((1 << others) @ bits)
        m = 1.0 + bits.sum(axis=0)
        rows = np.flatnonzero((y == i) & ~wide)
        miss_i = np.zeros(n_local)
        fa_i = np.zeros(n_local)
        xe_i = np.zeros(n_local)
        for lo in range(0, rows.size, per_chunk):
            Ec = E[rows[lo : lo + per_chunk]]
            # sum of E over every subset, by doubling: subsets with bit p = those without + E_p
            sums = np.empty((Ec.shape[0], n_local))
            sums[:, 0] = Ec[:, i]
            for p, k in enumerate(others):
                h = 1 << p
                np.add(sums[:, :h], Ec[:, k : k + 1], out=sums[:, h : 2 * h])
            R = sums / m  # accept k iff E_k >= mean of E over the subset
            miss_i += _count_rows(Ec[:, i : i + 1] < R)
            for p, k in enumerate(others):
                fa_i += _count_rows(Ec[:, k : k + 1] >= R) * bits[p]
            if want_xe:
                xe_i += np.log(sums).sum(axis=0) - np.log(Ec[:, i]).sum()
        miss[glob, i] += miss_i
        fa[glob, i] += fa_i
        if want_xe:
            xe[glob, i] += xe_i
    if wide.any():
        _subset_stats_exact(L[wide], y[wide], miss, fa, xe)
    return miss, fa, xe


def _subset_stats_exact(L, y, miss, fa, xe):
    """The same statistics for rows of very wide dynamic range, one subset at a time, each
    shifted by its own maximum (exact for log-likelihoods of any magnitude).
    """
    N = L.shape[1]
    for size in range(2, N + 1):
        for combo in combinations(range(N), size):
            cols = np.array(combo)
            rows = np.isin(y, cols)
            if not rows.any():
                continue
            g = int(np.sum(1 << cols))
            sub = L[rows][:, cols]
            own = np.searchsorted(cols, y[rows])
            shift = sub.max(axis=1)
            E = np.exp(sub - shift[:, None])
            total = E.sum(axis=1)
            accept = size * E >= total[:, None]
            r = np.arange(own.size)
            own_acc = accept[r, own]
            miss[g, cols] += np.bincount(own, weights=~own_acc, minlength=size)
            fa[g, cols] += np.bincount(own, weights=accept.sum(axis=1) - own_acc, minlength=size)
            if xe is not None:
                cost = np.log(total) + shift - sub[r, own]
                xe[g, cols] += np.bincount(own, weights=cost, minlength=size)


def subset_analysis(llh, labels, measure="cavg", progress=False) -> SubsetAnalysis:
    """Evaluate ``measure`` on every subset of two or more classes (thesis sec. 8.3.3, fig. 8.3).

    Each subset defines an LRE of its own: the prior is flat over its classes (zero elsewhere)
    and only the trials of those classes count. For N = 14 there are 16369 such subsets
    (``2^N - N - 1``; one class alone is no recognition problem).

    Parameters
    ----------
    llh : array_like, shape (n_trials, N)
        Natural-log likelihoods; N at most 20.
    labels : array_like of int, shape (n_trials,)
        True class ``0..N-1``; every class needs trials.
    measure : {"cavg", "multiclass_cross_entropy", "multiclass_cllr"} or callable
        ``"cavg"``: CAVG of the Bayes decisions at P_target = 1/2 (thesis eqs. 8.3, 8.11);
        ``"multiclass_cross_entropy"``: C_mce in nats; ``"multiclass_cllr"``: the same in bits.
        The built-in measures are computed for all subsets at once from per-(subset, class)
        decision counts (one matrix product per class and chunk of trials). A callable
        ``measure(llh_subset, labels_subset) -> float`` is called once per subset, with the
        columns of the subset and labels renumbered ``0..m-1`` (slow for large N).
    progress : bool or callable, default False
        With a callable ``measure``: a tqdm bar over the subsets (the ``progress`` extra), or a
        callable given the number of subsets done.

    Returns
    -------
    SubsetAnalysis
        The measure of every subset of two or more classes.

    Examples
    --------
    >>> import numpy as np
    >>> from focal.metrics import subset_analysis
    >>> res = subset_analysis(np.zeros((6, 3)), [0, 1, 2, 0, 1, 2])
    >>> res.sizes, res.values        # 3 pairs and the triple; useless scores: CAVG 1/2
    (array([2, 2, 2, 3]), array([0.5, 0.5, 0.5, 0.5]))
    """
    L, y, _, N, counts = _check_trials(llh, labels)
    if N > _MAX_SUBSET_CLASSES:
        raise ValueError(
            f"subset_analysis enumerates 2^N subsets; N = {N} is more than {_MAX_SUBSET_CLASSES}"
        )
    g = np.arange(1 << N)
    member = ((g[:, None] >> np.arange(N)) & 1).astype(bool)
    sizes = member.sum(axis=1)
    keep = sizes >= 2
    masks, sizes, g = member[keep], sizes[keep], g[keep]
    if callable(measure):
        from .._progress import Progress

        values = np.empty(g.size)
        with Progress(progress, g.size, "subsets") as bar:
            for s, mask in enumerate(masks):
                cols = np.flatnonzero(mask)
                rows = mask[y]
                values[s] = measure(L[rows][:, cols], np.searchsorted(cols, y[rows]))
                bar.update()
        name = getattr(measure, "__name__", "callable")
        return SubsetAnalysis(masks=masks, sizes=sizes, values=values, measure=name)
    if measure not in _SUBSET_MEASURES:
        raise ValueError(
            f"measure must be one of {_SUBSET_MEASURES} or a callable, got {measure!r}"
        )
    miss, fa, xe = _subset_stats(L, y, want_xe=measure != "cavg")
    miss, fa = miss[g], fa[g]
    m = sizes.astype(float)
    if measure == "cavg":
        per_class = 0.5 * miss / counts + 0.5 * fa / counts / np.maximum(m - 1, 1)[:, None]
    else:
        per_class = xe[g] / counts
    values = np.where(masks, per_class, 0.0).sum(axis=1) / m
    if measure == "multiclass_cllr":
        values = values / np.log(2.0)
    return SubsetAnalysis(masks=masks, sizes=sizes, values=values, measure=measure)

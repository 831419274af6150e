"""Bootstrap confidence intervals for binary and multiclass measures, trial-level or clustered.

A bootstrap replicate is a vector of non-negative integer weights over the trials: how often each
trial (or each cluster of trials) was drawn. Every measure is then computed on the weighted
trials without copying them (:mod:`focal.metrics._replicate_measures`):

- Cllr, C_mce and the actual DCF / CAVG are weighted means of per-trial costs or decisions,
  computed for a block of replicates at once as one matrix product;
- minCllr comes from the weighted PAV of the replicate (:func:`focal.core.pav.pav_from_counts`
  on the per-score weight sums), which gives exactly the measure of the resampled trial list;
- the ROCCH-EER, the conventional EER and minDCF, minima or crossings over thresholds, come by
  default from a smoothed bootstrap (:mod:`focal.metrics._smoothed`): every drawn copy of a
  trial is jittered by Gaussian kernel noise of its class's Silverman bandwidth, and the
  interval pivots on the smoothed population's value. Without smoothing they come from the
  weighted PAV, like minCllr.

Intervals are BCa (bias-corrected and accelerated) or percentile intervals (Efron & Tibshirani,
*An Introduction to the Bootstrap*, 1993, ch. 13-14). Resampling schemes
(:class:`_Resampler` below; Davison & Hinkley, *Bootstrap Methods and their
Application*, 1997, sec. 3.8 for clustered data; Owen, "The pigeonhole bootstrap", Ann. Appl.
Stat. 1(2), 2007, for two-way crossed data):

- trial-level: targets and non-targets are resampled separately, each class keeping its size
  (the measures weight the classes by prior / count, so class sizes are design constants);
- one-way clustered: whole clusters (e.g. speakers, models or test segments) are drawn with
  replacement, every trial of a cluster weighted by its draw count;
- two-way (crossed) clustered, for verification trials that share both an enrolment model and a
  test segment: models and test segments are drawn independently and a trial's weight is the
  product of its model's and its segment's draw counts (the pigeonhole bootstrap).

Replicates are processed in blocks whose size bounds memory (about 2**22 weights per block),
each block drawing from its own child of one ``numpy.random.SeedSequence``, so the result depends
on ``random_state`` but not on ``n_jobs``. Blocks run in parallel with joblib.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
.. [3] B. W. Silverman, *Density Estimation for Statistics and Data Analysis*, Chapman & Hall,
   1986.
.. [4] A. C. Davison and D. V. Hinkley, *Bootstrap Methods and their Application*, Cambridge
   University Press, 1997.
"""

from __future__ import annotations

import numpy as np

from ..core.multiclass import check_multiclass_trials, cross_entropy_nats
from ..core.validation import check_binary_trials, check_positive, check_probability
from ._intervals import _acceleration, _intervals
from ._replicate_measures import _LOG2, _binary_estimates, _BinaryMeasures, _MulticlassMeasures
from ._smoothed import SMOOTHED, _Smoother
from .binary_scores import BinaryScores
from .lre import cavg as _cavg

# -- resampling: replicates as integer weights over the trials, per class, by clusters or two-way


class _Resampler:
    """Draws blocks of replicate weights over the trials.

    Without clusters, the trials of each stratum (class) are resampled alone, keeping its size;
    with one or two label arrays, clusters are drawn (two-way: independently, weights multiply).
    """

    def __init__(self, strata, ways):
        self.n = strata.size
        if ways is None:
            self.kind = "trial"
            self.strata = [np.flatnonzero(strata == c) for c in np.unique(strata)]
            self.ways = None
            return
        self.kind = "cluster" if len(ways) == 1 else "two-way"
        self.ways = [np.unique(w, return_inverse=True)[1].ravel() for w in ways]

    def draw(self, rng, size):
        if self.ways is None:
            w = np.zeros((size, self.n), dtype=np.int64)
            for idx in self.strata:
                w[:, idx] = _draw_counts(rng, idx.size, size)
            return w
        w = np.ones((size, self.n), dtype=np.int64)
        for codes in self.ways:
            w *= _draw_counts(rng, int(codes.max()) + 1, size)[:, codes]
        return w


def _draw_counts(rng, n, size):
    """``size`` rows of how often each of ``n`` units is drawn in ``n`` draws with replacement
    (multinomial counts), from uniform indices and one bincount: much faster than
    ``rng.multinomial`` over many categories.
    """
    idx = rng.integers(0, n, size=(size, n))
    idx += (np.arange(size) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=size * n).reshape(size, n)


def _as_ways(clusters, n, where):
    """Cluster labels as a list of one or two label arrays of length ``n``."""
    if isinstance(clusters, tuple) and len(clusters) == 2:
        ways = [np.asarray(c) for c in clusters]
    else:
        arr = np.asarray(clusters)
        ways = (
            [arr]
            if arr.ndim == 1
            else [arr[:, j] for j in range(arr.shape[1])]
            if arr.ndim == 2 and arr.shape[1] == 2
            else None
        )
        if ways is None:
            raise ValueError(
                f"{where} must be one label per trial, or two (model, test) label "
                f"arrays for two-way resampling, got shape {arr.shape}"
            )
    for w in ways:
        if w.ndim != 1 or w.shape[0] != n:
            raise ValueError(f"{where} needs one label per trial ({n}), got shape {w.shape}")
    return ways


def _joined_clusters(tar_clusters, non_clusters, n_tar, n_non):
    """The cluster labels of targets and non-targets concatenated (or None for trial-level)."""
    if (tar_clusters is None) != (non_clusters is None):
        raise ValueError("give both tar_clusters and non_clusters, or neither")
    if tar_clusters is None:
        return None
    t = _as_ways(tar_clusters, n_tar, "tar_clusters")
    n = _as_ways(non_clusters, n_non, "non_clusters")
    if len(t) != len(n):
        raise ValueError("tar_clusters and non_clusters must both be one-way or both two-way")
    return [np.concatenate((a, b)) for a, b in zip(t, n)]


__all__ = [
    "bootstrap_ci",
    "bootstrap_ci_multiclass",
    "BINARY_MEASURES",
    "MULTICLASS_MEASURES",
]

BINARY_MEASURES = ("cllr", "min_cllr", "eer", "conventional_eer", "dcf", "min_dcf")
MULTICLASS_MEASURES = ("c_mce", "multiclass_cllr", "cavg")
_BLOCK_WEIGHTS = 1 << 22  # weights held per block of replicates (32 MB of float64)
_BLOCK_REPLICATES = 64  # at most, so that blocks spread over workers (fixed: seeds match)


def _run(evaluator, resampler, n_bootstrap, random_state, n_jobs, progress=False):
    from joblib import Parallel, delayed, effective_n_jobs
    from sklearn.utils import check_random_state

    from .._progress import Progress, logger

    per_block = _BLOCK_WEIGHTS // getattr(evaluator, "memory_factor", 1)
    block = int(max(1, min(n_bootstrap, _BLOCK_REPLICATES, per_block // max(resampler.n, 1))))
    sizes = [min(block, n_bootstrap - s) for s in range(0, n_bootstrap, block)]
    seed = check_random_state(random_state).randint(0, 2**31 - 1, size=4)
    children = np.random.SeedSequence(seed.tolist()).spawn(len(sizes))
    logger.info(
        "bootstrap (%s resampling): %d replicates of %d trials in %d block(s)",
        resampler.kind,
        n_bootstrap,
        resampler.n,
        len(sizes),
    )

    def one(child, size):
        rng = np.random.default_rng(child)  # the weights first, then any jitter
        return evaluator.values(resampler.draw(rng, size), rng)

    blocks = []
    batch = max(1, 2 * effective_n_jobs(n_jobs))  # blocks per round (progress between rounds)
    with (
        Progress(progress, n_bootstrap, "bootstrap") as bar,
        Parallel(n_jobs=n_jobs, prefer="processes") as parallel,
    ):
        for start in range(0, len(sizes), batch):
            part = list(zip(children[start : start + batch], sizes[start : start + batch]))
            blocks += parallel(delayed(one)(c, s) for c, s in part)
            bar.update(sum(s for _, s in part))
    return np.concatenate(blocks, axis=0)


def _check_run_params(n_bootstrap, confidence, method, methods=("bca", "percentile")):
    if method not in methods:
        raise ValueError(f"method must be one of {methods}, got {method!r}")
    if not (isinstance(n_bootstrap, (int, np.integer)) and n_bootstrap >= 1):
        raise ValueError(f"n_bootstrap must be an integer >= 1, got {n_bootstrap!r}")
    return check_probability(confidence, "confidence")


def _binary_specs(measure, p_target, c_miss, c_fa):
    """``[(name, (p, c_miss, c_fa)), ...]`` and display labels of the requested measures."""
    items = [measure] if isinstance(measure, (str, tuple)) else list(measure)
    specs, labels = [], []
    for i, item in enumerate(items):
        name, *args = (item,) if isinstance(item, str) else item
        if name not in BINARY_MEASURES:
            raise ValueError(
                f"measure must be one of {BINARY_MEASURES}, a tuple (name, "
                f"p_target[, c_miss, c_fa]) or a list of them, got {item!r}"
            )
        where = f"measure[{i}]" if len(items) > 1 else "measure"
        pt, cm, cf = (
            (list(args) + [None, c_miss, c_fa][len(args) :]) if args else (p_target, c_miss, c_fa)
        )
        if name in ("dcf", "min_dcf"):
            if pt is None:
                raise ValueError(f"{where} {name!r} needs p_target")
            op = (
                check_probability(pt, f"{where} p_target"),
                check_positive(cm, f"{where} c_miss"),
                check_positive(cf, f"{where} c_fa"),
            )
            labels.append(f"{name}({op[0]:g}:{op[1]:g}:{op[2]:g})")
        else:
            p = 0.5 if pt is None or name == "eer" else check_probability(pt, f"{where} p_target")
            op = (p, 1.0, 1.0)
            labels.append(name if p == 0.5 or name == "eer" else f"{name}({p:g})")
        specs.append((name, op))
    return specs, labels


def bootstrap_ci(
    measure,
    tar,
    non,
    *,
    p_target=None,
    c_miss=1.0,
    c_fa=1.0,
    n_bootstrap=1000,
    confidence=0.95,
    tar_clusters=None,
    non_clusters=None,
    random_state=None,
    n_jobs=None,
    progress=False,
    method="auto",
    smoothing=1.0,
):
    """Bootstrap confidence interval of a binary measure (see the module docstring).

    Parameters
    ----------
    measure : str, tuple or list of them
        ``"cllr"``, ``"min_cllr"`` (bits, at ``p_target``, default 0.5), ``"eer"`` (ROCCH-EER,
        a fraction), ``"conventional_eer"`` (of the empirical ROC, a fraction), ``"dcf"`` or
        ``"min_dcf"`` (normalized, at ``(p_target, c_miss, c_fa)``).
        A tuple ``(name, p_target[, c_miss, c_fa])`` gives a measure its own operating point.
        A list gives one interval per measure, all from the same replicates.
    tar, non : array_like
        Natural-log LLRs (or scores, for the threshold-free measures) of target and non-target
        trials.
    p_target, c_miss, c_fa : float
        The operating point of measures named without one: of the DCFs, and the prior of the
        Cllrs (default 0.5 for them).
    n_bootstrap : int, default 1000
        Number of replicates.
    confidence : float, default 0.95
        Nominal coverage of the interval.
    tar_clusters, non_clusters : array_like, optional
        Cluster label of every trial (e.g. the speaker or enrolment model): whole clusters are
        resampled. A pair ``(model_labels, test_labels)`` (or an ``(n, 2)`` array) resamples
        models and test segments independently (two-way). Labels are shared between the two
        classes (a speaker has target and non-target trials). Default: trial-level.
    random_state : int, RandomState or None
        Seed: equal seeds give equal intervals whatever ``n_jobs``.
    n_jobs : int, optional
        Parallel workers (joblib processes) over blocks of replicates.
    progress : bool or callable, default False
        True: a tqdm progress bar over the replicates (the ``progress`` extra); a callable is
        called with the number of replicates done.
    method : {"auto", "bca", "basic", "percentile"}, default "auto"
        Bias-corrected and accelerated percentile interval (``"bca"``; Efron & Tibshirani
        1993, ch. 14; the acceleration from a delete-a-group jackknife of 50 groups), the
        basic (pivotal) interval (``"basic"``: the estimate minus the quantiles of
        ``replicate - estimate``, clipped at 0; Davison & Hinkley 1997, eq. 5.6), or the plain
        percentile interval (sec. 13.3). ``"auto"``: basic intervals for the smoothed
        measures, BCa for the others (see the Notes).
    smoothing : float or None, default 1.0
        Bandwidth of the smoothed bootstrap of the ROCCH-EER, the conventional EER and minDCF,
        as a multiple of each class's Silverman bandwidth (Silverman 1986, eq. 3.31); 0 or None
        gives the plain bootstrap of the weighted PAV. See the Notes.

    Returns
    -------
    BootstrapInterval or list of BootstrapInterval
        The point estimate and its interval; a list when ``measure`` is a list.

    Notes
    -----
    The threshold measures (ROCCH-EER, minDCF, and to a lesser degree minCllr) are minima over
    thresholds, biased low on finite data by the optimization itself, a bias that shrinks
    slowly (like ``n**(-1/6)`` relative to the standard error). The plain bootstrap reproduces
    only about half of it: a replicate is drawn from the empirical distribution, whose ROC is
    already a staircase optimized over, not from a smooth population. On 1000 + 1000 calibrated
    Gaussian LLRs (targets N(2, 4), non-targets N(-2, 4), true EER 15.87 %) the ROCCH-EER is
    0.22 points low on average (standard deviation 0.79 points), its plain replicates 0.14
    points below the estimate, and the plain BCa intervals covered 91.5-93 % (percentile
    89-90 %).

    The default therefore takes the ROCCH-EER, the conventional EER and minDCF from a smoothed
    bootstrap: each drawn copy of a trial gets Gaussian jitter of its class's Silverman
    bandwidth (``smoothing=1.0``; Silverman 1986, eq. 3.31), a draw from the kernel density
    estimate (Silverman & Young, "The bootstrap: to smooth or not to smooth?", Biometrika
    74(3), 1987; Davison & Hinkley 1997, sec. 3.4; Hall, DiCiccio & Romano, "On smoothing and
    the bootstrap", Ann. Statist. 17(2), 1989, for quantile-like statistics). Its replicates
    are pivoted on the smoothed population's own value, so ``replicate - population value``
    estimates ``estimate - true value``: on the sets above its mean is -0.25 points for the
    EER (plain: -0.14; real: -0.22) and -0.025 for minDCF at P_target 0.1 (plain: -0.015;
    real: -0.026), with the right spread, for bandwidth factors 0.5, 1 and 2 alike. The
    interval is then the basic one (``method="auto"``), because BCa's bias correction of a
    bias this large (``z0`` about 0.3 for the EER, 0.7 for minDCF) moves its levels into the
    tails (0.996, 0.9995), where a few hundred replicates cannot place a quantile.

    Measured coverage of the default 95 % intervals (``n_bootstrap=200``, 400 sets each,
    standard error about 1.1 points), Cllr / ROCCH-EER / conventional EER / minDCF(0.1):

    - 1000 + 1000 trials, N(+-2, 4): 92.75 / 94.5 / 94.5 / 91 % (smoothed replicates but
      BCa intervals: 92.75 / 92.75 / 92 / 84 %);
    - 500 + 500 trials, N(+-2, 4): 93.75 / 94.5 / 94.5 / 90.25 % (plain BCa:
      93.75 / 92.75 / 94.5 / 88 %);
    - 300 + 3000 trials, N(+-2, 4): 94.25 / 96.25 / 96.5 / 95 %;
    - 700 + 700 trials, N(+-4.5, 9) (true EER 6.68 %): 91.5 / 93.75 / 94 / 92 %.

    minDCF's intervals still cover a little less than nominal on balanced sets (its
    distribution is skewed, which the basic interval reflects the wrong way), and so do
    Cllr's BCa intervals on well-separated trials, whose rare confident errors make the
    per-trial costs heavy-tailed.

    minCllr keeps the plain bootstrap (its pivot, the PAV of a smoothed population, is not
    implemented). ``smoothing=None, method="bca"`` gives the plain BCa intervals of earlier
    versions.
    """
    t, n = check_binary_trials(tar, non)
    conf = _check_run_params(
        n_bootstrap, confidence, method, ("auto", "bca", "basic", "percentile")
    )
    if smoothing is not None and not (np.isfinite(smoothing) and smoothing >= 0):
        raise ValueError(f"smoothing must be a number >= 0 or None, got {smoothing!r}")
    specs, labels = _binary_specs(measure, p_target, c_miss, c_fa)
    clusters = _joined_clusters(tar_clusters, non_clusters, t.size, n.size)
    is_target = np.concatenate((np.ones(t.size, np.int64), np.zeros(n.size, np.int64)))
    resampler = _Resampler(is_target, clusters)
    smoother = None
    if smoothing and any(name in SMOOTHED for name, _ in specs):
        smoother = _Smoother(t, n, float(smoothing))
        if smoother.h_tar == smoother.h_non == 0:  # no spread to smooth: the plain bootstrap
            smoother = None
    evaluator = _BinaryMeasures(t, n, specs, smoother)
    estimates = _binary_estimates(BinaryScores(t, n), specs)
    values = _run(evaluator, resampler, n_bootstrap, random_state, n_jobs, progress)
    if smoother is not None:  # pivot: replicate - smoothed population's value + estimate
        for j, pop in enumerate(smoother.population(specs)):
            if specs[j][0] in SMOOTHED:
                values[:, j] += estimates[j] - pop
    smoothed = [j for j, (name, _) in enumerate(specs) if smoother and name in SMOOTHED]
    basic = range(len(specs)) if method == "basic" else smoothed if method == "auto" else ()
    bca = method == "bca" or (method == "auto" and len(basic) < len(specs))
    accel = _acceleration(evaluator, resampler) if bca else None
    out = _intervals(labels, estimates, values, conf, resampler.kind, accel, basic)
    return out[0] if isinstance(measure, (str, tuple)) else out


def bootstrap_ci_multiclass(
    measure,
    llh,
    labels,
    *,
    prior=None,
    p_target=0.5,
    clusters=None,
    n_bootstrap=1000,
    confidence=0.95,
    random_state=None,
    n_jobs=None,
    progress=False,
    method="bca",
):
    """Percentile bootstrap confidence interval of a multiclass measure.

    Parameters
    ----------
    measure : str or list of str
        ``"c_mce"`` (nats, Albayzin eq. 6), ``"multiclass_cllr"`` (bits) at ``prior``, or
        ``"cavg"`` (NIST LRE CAVG of the Bayes decisions at ``p_target``, thesis eq. 8.3).
    llh : array_like, shape (n_trials, N)
        Natural-log likelihoods.
    labels : array_like of int, shape (n_trials,)
        True classes.
    prior : array_like, optional
        Class prior of C_mce (default flat). Zero entries drop a class and its trials from
        every measure (CAVG then runs over the remaining classes).
    p_target : float, default 0.5
        Target prior of CAVG.
    clusters : array_like, optional
        Cluster label of every trial (e.g. the speaker), or a pair of label arrays for two-way
        resampling; default trial-level, which resamples each class keeping its size.
    n_bootstrap : int, default 1000
        Number of replicates.
    confidence : float, default 0.95
        Nominal coverage of the interval.
    random_state : int, RandomState or None
        Seed: equal seeds give equal intervals whatever ``n_jobs``.
    n_jobs : int, optional
        Parallel workers (joblib processes) over blocks of replicates.
    progress : bool or callable, default False
        A tqdm progress bar (True) or a callable told the number of replicates done.
    method : {"bca", "percentile"}, default "bca"
        The interval, as in :func:`bootstrap_ci`.

    Returns
    -------
    BootstrapInterval or list of BootstrapInterval
        The point estimate and its interval; a list when ``measure`` is a list.
    """
    names = [measure] if isinstance(measure, str) else list(measure)
    for name in names:
        if name not in MULTICLASS_MEASURES:
            raise ValueError(f"measure must be one of {MULTICLASS_MEASURES}, got {name!r}")
    conf = _check_run_params(n_bootstrap, confidence, method)
    pt = check_probability(p_target, "p_target")
    L, y, p, _, _ = check_multiclass_trials(llh, labels, prior)
    resampler = _Resampler(y, None if clusters is None else _as_ways(clusters, y.size, "clusters"))
    evaluator = _MulticlassMeasures(L, y, p, [(n, pt) for n in names])
    estimates = [
        cross_entropy_nats(L, y, p)
        if name == "c_mce"
        else cross_entropy_nats(L, y, p) / _LOG2
        if name == "multiclass_cllr"
        else _cavg(L, y, p_target=pt)
        for name in names
    ]
    values = _run(evaluator, resampler, n_bootstrap, random_state, n_jobs, progress)
    accel = _acceleration(evaluator, resampler) if method == "bca" else None
    out = _intervals(names, estimates, values, conf, resampler.kind, accel)
    return out[0] if isinstance(measure, str) else out

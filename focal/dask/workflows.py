"""File workflows on a dask cluster: what ``focal evaluate --dask`` runs.

:func:`evaluate_files` is :func:`focal.workflows.evaluate_binary` on a cluster, with its rules:
the files are aligned with the key as in memory (:mod:`focal.dask.io`: repeated and missing
trials refused or dropped, with the same messages), every number of the report is the in-memory
one (the measures are read off the same PAV blocks; the score threshold at the EER is chosen by
the same rule, :meth:`focal.core.RocHull.threshold_near_eer`, among the same candidates), and what
cannot be done on a cluster (bootstrap intervals, figures) is refused by name before any work
(:data:`EVALUATE_ARGUMENTS`, :data:`NOT_ON_DASK`).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

import numpy as np
from dask import delayed

from .._progress import logger, step
from ..core.priors import bayes_threshold
from ..io.alignment import warn_different_trial_sets
from ._partitions import compute
from .io import aligned_parts

__all__ = ["cluster_client", "evaluate_files", "EVALUATE_ARGUMENTS", "NOT_ON_DASK"]

#: The arguments of :func:`focal.workflows.evaluate_binary` that :func:`evaluate_files` honours;
#: any other, given a value other than its default, is refused by the workflow before any work.
EVALUATE_ARGUMENTS = frozenset(
    {
        "score_paths",
        "key_path",
        "operating_points",
        "missing",
        "pos_label",
        "format",
        "key_format",
        "scores_are",
        "conventional_eer",
        "c_primary",
        "dask",
    }
)

#: Why the other arguments of :func:`focal.workflows.evaluate_binary` are refused with Dask.
NOT_ON_DASK = {
    "partition": "partitioned scoring keeps every trial's labels in memory",
    "partition_columns": "partitioned scoring keeps every trial's labels in memory",
    "confidence": "bootstrap intervals resample the trials in memory",
    "n_bootstrap": "bootstrap intervals resample the trials in memory",
    "cluster": "bootstrap intervals resample the trials in memory",
    "random_state": "bootstrap intervals resample the trials in memory",
    "n_jobs": "bootstrap intervals resample the trials in memory",
    "plot": "the figures need the scores in memory",
    "plot_size": "the figures need the scores in memory",
    "plot_formats": "the figures need the scores in memory",
    "progress": "follow the work on the dask dashboard (its address is logged with -v)",
}


@contextlib.contextmanager
def cluster_client(address=None, n_workers=None, memory_limit="2GiB"):
    """A ``distributed.Client`` of the scheduler at ``address``, or of a new local cluster.

    ``address`` None or ``"local"``: a ``LocalCluster`` of ``n_workers`` single-threaded worker
    processes (default: one per core) with ``memory_limit`` each, closed on exit.

    Parameters
    ----------
    address : str, optional
        Scheduler address; None, ``""`` or ``"local"`` starts a local cluster.
    n_workers : int, optional
        Worker processes of the local cluster (default: one per core).
    memory_limit : str, default "2GiB"
        Memory limit of each local worker.

    Yields
    ------
    distributed.Client
        The client, closed (with its local cluster) when the block exits.
    """
    from distributed import Client, LocalCluster

    if address in (None, "", "local"):
        with (
            LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=True,
                memory_limit=memory_limit,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                silence_logs=50,
            ) as cluster,
            Client(cluster) as client,
        ):
            logger.info("dask dashboard: %s", client.dashboard_link)
            yield client
    else:
        with Client(address) as client:
            logger.info("dask dashboard: %s", client.dashboard_link)
            yield client


def evaluate_files(
    score_files,
    key,
    operating_points=((0.01, 1.0, 1.0),),
    *,
    missing="error",
    pos_label=None,
    format=None,
    key_format=None,
    scores_are="llr",
    conventional_eer=False,
    c_primary=None,
    address=None,
):
    """:class:`focal.metrics.CalibrationReport` of each system's score files against the key,
    equal to :func:`focal.workflows.evaluate_binary`'s.

    Parameters
    ----------
    score_files : list
        One entry per system: a path, a glob pattern or a list of them (each file one
        partition).
    key : path, glob pattern or list of them, or None
        Key files; None when the score files carry the labels (``format="wespeaker"``, ...).
    operating_points : sequence
        Priors or ``(p_target, c_miss, c_fa)``, as in :func:`focal.metrics.calibration_report`.
    missing : {"error", "drop"}
        As in :func:`focal.io.align_trials`, per system against the key.
    pos_label : str, optional
        Target label of the keys, as in :func:`focal.io.read_key`.
    format, key_format : str or Layout, optional
        Columns of the score and key files (:func:`focal.io.read_scores`).
    scores_are : {"llr", "distance"}, default "llr"
        ``"distance"``: lower scores mean target (negated before they are measured).
    conventional_eer : bool, default False
        Also the conventional EER of the empirical ROC (the summary then keeps the runs of one
        label: their number can approach the number of trials).
    c_primary : str or sequence, optional
        Also NIST SRE C_primary (:func:`focal.metrics.sre.c_primary`).
    address : str, optional
        Scheduler address; None or ``"local"`` starts a local cluster for the call.

    Returns
    -------
    list of focal.metrics.CalibrationReport
        One report per system, in the order of ``score_files``.

    Notes
    -----
    Each system's aligned trials are kept on the workers (``persist``) while its report is
    computed: one pass for the PAV block summary and the sums, and, when the hull crosses the
    EER line between two vertices, a second one that gathers the distinct scores between them
    (with their counts of each class) to place the score threshold at the EER.
    """
    from ..core.operating_point import as_operating_points
    from ..metrics.sre import resolve_points

    points = as_operating_points(operating_points)
    primary = None if c_primary is None else resolve_points(c_primary)
    if scores_are not in ("llr", "distance"):
        raise ValueError(f"scores_are must be 'llr' or 'distance', got {scores_are!r}")
    reports, sets = [], {}
    with cluster_client(address):
        for system in score_files:
            name = system if isinstance(system, str) else ", ".join(map(str, system))
            with step(f"read, align and measure {name} on dask"):
                reports.append(
                    _evaluate_system(
                        system,
                        key,
                        points,
                        primary,
                        str(name),
                        missing=missing,
                        pos_label=pos_label,
                        format=format,
                        key_format=key_format,
                        negate=scores_are == "distance",
                        conventional_eer=conventional_eer,
                        trial_sets=sets,
                    )
                )
    if missing == "drop":
        warn_different_trial_sets(sets, stacklevel=2)
    return reports


def _evaluate_system(
    system, key, points, primary, name, *, negate, conventional_eer, trial_sets, **read_options
):
    import dask
    import dask.array as da

    from ..io.alignment import check_both_classes
    from ..metrics.binary import conventional_eer as conventional
    from ..metrics.report import calibration_report
    from ..metrics.sre import c_primary_of
    from .metrics import summarize

    parts, check = aligned_parts(key, [system], **read_options)
    parts, check = dask.persist(parts, check)  # read and aligned once, kept for two passes
    n_kept, n_targets, fingerprint = compute(check)[0]
    trial_sets[name] = (n_kept, fingerprint)
    key_name = name if key is None else key if isinstance(key, str) else ", ".join(map(str, key))
    check_both_classes(n_targets, n_kept, key_name, name, read_options["missing"])
    x = da.concatenate([da.from_delayed(X, (np.nan, 1), dtype=float)[:, 0] for X, _ in parts])
    y = da.concatenate([da.from_delayed(y, (np.nan,), dtype=bool) for _, y in parts])
    if negate:
        x = -x
    cp_points = [] if primary is None else primary[1]
    thresholds = [bayes_threshold(*p) for p in list(points) + list(cp_points)]
    summary = summarize(x, y, p_targets=[0.5], thresholds=thresholds, keep_runs=conventional_eer)
    report = calibration_report(summary, operating_points=points, name=name)
    extra = {"eer_threshold": _eer_threshold(summary.hull, x, y)}
    if conventional_eer:
        extra["eer_conventional"] = conventional(summary)
    if primary is not None:
        extra["c_primary"] = c_primary_of(summary, primary[1], primary[0])
    return replace(report, **extra)


def _segment_counts(x, y, low, high):
    """Distinct scores in ``[low, high)`` of one partition, with their target and non-target
    counts.
    """
    x, y = np.asarray(x), np.asarray(y, dtype=bool)
    inside = (x >= low) & (x < high)
    values, inverse = np.unique(x[inside], return_inverse=True)
    n_tar = np.bincount(inverse, weights=y[inside], minlength=values.size).astype(np.int64)
    n_all = np.bincount(inverse, minlength=values.size).astype(np.int64)
    return values, n_tar, n_all - n_tar


def _eer_threshold(hull, x, y):
    """:attr:`focal.core.RocHull.eer_threshold` as in memory: between the two hull vertices
    around the EER, the rule is applied to every distinct score there (a second pass).
    """
    segment = hull.eer_segment
    if segment is None:
        return hull.eer_threshold  # at a vertex: the hull alone decides
    low, high = segment
    counts = delayed(_segment_counts, pure=True)
    parts = [
        counts(a, b, low, high) for a, b in zip(x.to_delayed().ravel(), y.to_delayed().ravel())
    ]
    found = compute(*parts)
    values = np.concatenate([v for v, _, _ in found])
    values, inverse = np.unique(values, return_inverse=True)
    n_tar, n_non = (
        np.bincount(inverse, np.concatenate([f[i] for f in found]), values.size)
        .round()
        .astype(np.int64)
        for i in (1, 2)
    )
    k = int(np.searchsorted(hull.thresholds, low))  # the vertex of threshold `low`
    misses = hull.n_misses[k] + np.concatenate(([0], np.cumsum(n_tar, dtype=np.int64)))
    false_alarms = hull.n_false_alarms[k] - np.concatenate(([0], np.cumsum(n_non, dtype=np.int64)))
    return hull.threshold_near_eer(np.append(values, high), misses, false_alarms)

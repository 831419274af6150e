"""File workflows on a dask cluster: what ``focal evaluate --dask`` runs."""

from __future__ import annotations

import contextlib

from .io import read_trials
from .metrics import calibration_report

__all__ = ["cluster_client", "evaluate_files"]


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
            yield client
    else:
        with Client(address) as client:
            yield client


def evaluate_files(
    score_files,
    key,
    operating_points=((0.01, 1.0, 1.0),),
    p_target=0.5,
    missing="error",
    pos_label=None,
    address=None,
):
    """:class:`focal.metrics.CalibrationReport` of each system's score files against the key.

    Parameters
    ----------
    score_files : list
        One entry per system: a path, a glob pattern or a list of them (each file one
        partition).
    key : path, glob pattern or list of them
        Key files.
    operating_points : sequence of (p_target, c_miss, c_fa)
        The applications of the DCFs, as in :func:`focal.metrics.calibration_report`.
    p_target : float, default 0.5
        Prior of Cllr / minCllr, as in :func:`focal.metrics.calibration_report`.
    missing : {"error", "drop"}
        As in :func:`focal.io.align_trials`, per system against the key.
    pos_label : str, optional
        Target label of the keys, as in :func:`focal.io.read_key`.
    address : str, optional
        Scheduler address; None or ``"local"`` starts a local cluster for the call.

    Returns
    -------
    list of focal.metrics.CalibrationReport
        One report per system, in the order of ``score_files``.
    """
    reports = []
    with cluster_client(address):
        for system in score_files:
            X, y = read_trials(key, [system], missing=missing, pos_label=pos_label)
            name = system if isinstance(system, str) else ", ".join(map(str, system))
            reports.append(
                calibration_report(X[:, 0], y, operating_points, p_target, name=str(name))
            )
    return reports

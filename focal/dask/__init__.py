"""focal on Dask: exact evaluation and fusion of score sets larger than one machine's memory.

Needs the optional dependency dask (the ``dask`` extra): ``pip install 'dask[distributed]'``.
``import focal`` never imports this package (nor dask).

- Binary measures with the names of :mod:`focal.metrics`, taking ``(scores, labels)`` dask arrays
  or Series: :func:`cllr`, :func:`min_cllr`, :func:`dcf`, :func:`min_dcf`, :func:`eer`,
  :func:`rocch`, :func:`det_curve`, :func:`bayes_error_rates`, :func:`cross_entropy`,
  :func:`pav_llr`, :func:`calibration_report`, and :func:`summarize` for several at once.
  Exact: the PAV blocks of score ranges cut at sampled quantiles are merged with the
  engine-neutral :mod:`focal.core.summary`.
- :func:`fit` trains :class:`focal.LogisticFusion` / :class:`focal.LinearCalibrator` /
  :class:`focal.MulticlassFusion` (scalar and calibration modes) with one gradient / Hessian
  reduction per Newton step and returns the usual in-memory estimator;
  :func:`apply` maps a fitted model over a dask collection.
- :func:`read_trials` reads score and key files (one partition per file) into dask arrays
  aligned by trial id (a partitioned hash join, with the single-process rules for repeated and
  missing trials across files); :func:`evaluate_files` is ``focal evaluate --dask``: the
  in-memory report, EER threshold included.

Everything runs on the active dask scheduler: open a ``dask.distributed.Client`` (or use
:func:`cluster_client`) to use a cluster.
"""

from __future__ import annotations

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        'focal.dask needs the optional dependency dask (the "dask" extra): '
        "pip install 'dask[distributed]' "
        f"(import failed: {exc})"
    ) from exc

from .fit import apply, fit
from .io import read_trials
from .metrics import (
    bayes_error_rates,
    calibration_report,
    cllr,
    cross_entropy,
    dcf,
    det_curve,
    eer,
    min_cllr,
    min_dcf,
    pav_llr,
    rocch,
    summarize,
)
from .workflows import cluster_client, evaluate_files

__all__ = [
    "summarize",
    "cross_entropy",
    "cllr",
    "min_cllr",
    "dcf",
    "min_dcf",
    "eer",
    "rocch",
    "det_curve",
    "bayes_error_rates",
    "fit",
    "apply",
    "calibration_report",
    "read_trials",
    "cluster_client",
    "evaluate_files",
    "pav_llr",
]

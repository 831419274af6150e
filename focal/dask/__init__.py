"""focal on Dask: exact evaluation and fusion of score sets larger than one machine's memory.

Needs the optional dependency dask (the ``dask`` extra): ``pip install 'dask[distributed]'``.
``import focal`` never imports this package (nor dask).

- Binary measures: :func:`summarize` gives, in one exact pass over ``(scores, labels)`` dask
  arrays or Series, a :class:`focal.metrics.SummarizedScores` that every binary measure of
  :mod:`focal.metrics` takes in place of ``(tar, non)`` (``focal.metrics.eer(s)``,
  ``min_dcf(s, p_target=0.01)``, ``cllr(s)``, ...): the PAV blocks of score ranges cut at
  sampled quantiles, merged with the engine-neutral :mod:`focal.core.summary`, and the sums of
  the measures of actual decisions. :func:`calibration_report` is that pass and the report;
  :func:`pav_llr` maps the scores through the PAV of the pass.
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
from .metrics import calibration_report, pav_llr, summarize
from .workflows import cluster_client, evaluate_files

__all__ = [
    "summarize",
    "calibration_report",
    "pav_llr",
    "fit",
    "apply",
    "read_trials",
    "cluster_client",
    "evaluate_files",
]

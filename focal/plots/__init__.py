"""Figures of scores and LLRs (matplotlib, the optional ``plot`` extra).

``pip install matplotlib`` (the ``plot`` extra) is all it needs; ``import focal`` never imports
it.
Every function takes data (scores, LLRs, or the results of :mod:`focal.metrics` and
:mod:`focal.std`), draws on the given ``ax`` or a new figure's, returns the Axes and never calls
``show()``. Curve data come from :mod:`focal.metrics` / :mod:`focal.std` (and the core functions
behind them); nothing is recomputed here.

- binary: :func:`det_plot`, :func:`ape_plot`, :func:`nbe_plot`, :func:`ece_plot`,
  :func:`tippett_plot`, :func:`score_histogram_plot`, :func:`calibration_map_plot`,
  :func:`reliability_plot`, and their Display objects in scikit-learn's style
  (:class:`DETDisplay`, :class:`APEDisplay`, :class:`NBEDisplay`, :class:`ECEDisplay`,
  :class:`TippettDisplay`, :class:`ScoreHistogramDisplay`, :class:`CalibrationMapDisplay`,
  :class:`ReliabilityDisplay`: ``from_scores`` / ``from_labels``, curve data, ``plot``,
  ``ax_``);
- multiclass: :func:`pairwise_bar_matrix`, :func:`detection_ape_plots`,
  :func:`detection_llr_scatter`, :func:`subset_scatter`, :func:`cavg_sweep_plot`;
- spoken term detection: :func:`std_det_plot`;
- a report of binary LLR sets: :func:`write_report` (figures and an HTML page), and
  :func:`output_folder` for scripts.

The binary plots take target and non-target scores ``(tar, non)`` (natural-log LLRs where the
plot is about calibration), or a :class:`focal.metrics.BinaryScores` as ``tar`` (``non``
omitted) so that several plots of one system share one sort and one PAV. Calling a function
again with the same ``ax`` adds another system (the property cycle gives it a new colour; the
legend lists every system). Each artist carries a ``gid`` (``"det"``, ``"ape-actual"``, ...) so
that programs and tests can find it.

Importing this package registers the ``"probit"`` axis scale (:class:`ProbitScale`).
"""

try:
    import matplotlib  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        'focal.plots needs matplotlib, an optional dependency of focal (the "plot" extra): '
        "pip install matplotlib"
    ) from exc

from .ape import APE_SCALE, ape_bar_axes, ape_plot
from .bayes_error import ece_plot, nbe_plot
from .calibration import calibration_map_plot, reliability_plot
from .det import det_plot
from .displays import (
    APEDisplay,
    CalibrationMapDisplay,
    DETDisplay,
    ECEDisplay,
    NBEDisplay,
    ReliabilityDisplay,
    ScoreHistogramDisplay,
    TippettDisplay,
)
from .histogram import score_histogram_plot
from .lre import cavg_sweep_plot, subset_scatter
from .multiclass import detection_ape_plots, detection_llr_scatter, pairwise_bar_matrix
from .report import output_folder, write_report
from .scales import ProbitScale
from .std import std_det_plot
from .tippett import tippett_plot

__all__ = [
    "APE_SCALE",
    "ProbitScale",
    "ape_bar_axes",
    "ape_plot",
    "det_plot",
    "ece_plot",
    "nbe_plot",
    "tippett_plot",
    "score_histogram_plot",
    "calibration_map_plot",
    "reliability_plot",
    "pairwise_bar_matrix",
    "detection_ape_plots",
    "detection_llr_scatter",
    "subset_scatter",
    "std_det_plot",
    "write_report",
    "output_folder",
    "cavg_sweep_plot",
    "DETDisplay",
    "APEDisplay",
    "NBEDisplay",
    "ECEDisplay",
    "TippettDisplay",
    "ScoreHistogramDisplay",
    "CalibrationMapDisplay",
    "ReliabilityDisplay",
]

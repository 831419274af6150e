"""Figures of scores and LLRs (matplotlib, the optional ``plot`` extra).

``pip install "focal-calibration[plot]"`` installs matplotlib; ``import focal`` never imports it.
Every function takes data (scores, LLRs, or the results of :mod:`focal.metrics` and
:mod:`focal.std`), draws on the given ``ax`` or a new figure's, returns the Axes and never calls
``show()``. Curve data come from :mod:`focal.metrics` / :mod:`focal.std`; nothing is recomputed
here.

Binary: :func:`det_plot`, :func:`ape_plot`, :func:`nbe_plot`, :func:`ece_plot`,
:func:`tippett_plot`. Multiclass: :func:`pairwise_bar_matrix`, :func:`detection_ape_plots`,
:func:`detection_llr_scatter`, :func:`subset_scatter`. Spoken term detection: :func:`std_det_plot`. A report of score files:
:func:`write_report`. Importing this package registers the ``"probit"`` axis scale.
"""

try:
    import matplotlib  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        'focal.plots needs matplotlib, an optional dependency of focal: '
        'pip install "focal-calibration[plot]"'
    ) from exc

from .binary import APE_SCALE, ape_bar_axes, ape_plot, det_plot, ece_plot, nbe_plot, tippett_plot
from .multiclass import (
    detection_ape_plots,
    detection_llr_scatter,
    pairwise_bar_matrix,
    subset_scatter,
)
from .report import output_folder, write_report
from .scales import ProbitScale
from .std import std_det_plot

__all__ = [
    "APE_SCALE", "ProbitScale", "ape_bar_axes", "ape_plot", "det_plot", "ece_plot", "nbe_plot",
    "std_det_plot", "tippett_plot", "write_report", "output_folder", "pairwise_bar_matrix", "detection_ape_plots",
    "detection_llr_scatter", "subset_scatter",
]

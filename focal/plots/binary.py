"""Plots of binary scores and LLRs: DET, APE, normalized Bayes error-rate, ECE and Tippett.

Every function takes target and non-target scores ``(tar, non)`` (natural-log LLRs where the plot
is about calibration), or a :class:`focal.metrics.BinaryScores` as ``tar`` (``non`` omitted) so
that several plots of one system share one sort and one PAV; it draws on the given ``ax`` or on a
new figure's axes, returns the Axes and never calls ``show()``. Calling a function again with the
same ``ax`` adds another system (the property cycle gives it a new colour; the legend lists every
system).

All curve data come from :mod:`focal.metrics` (one sort per class and one PAV, the joint-sort
computation of thesis sec. 7.6.1), or from the core functions behind it where a plot needs them
many times: the ECE curve evaluates the cross-entropy of :func:`focal.metrics.cross_entropy` at
each prior on the once-validated LLRs, the Tippett curves read the error rates of the joint sort
at every score. This module only draws them.
Each artist carries a ``gid`` (``"det"``, ``"ape-actual"``, ...) so that programs and tests can
find it.

The functions live in :mod:`focal.plots.det`, :mod:`focal.plots.ape`,
:mod:`focal.plots.bayes_error` and :mod:`focal.plots.tippett`; this module gathers them.

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
"""

from __future__ import annotations

# binary_scores, _ape_window, finish_det and set_probit_limits are imported from here by the
# Displays and the term-detection DET: re-exported for them and for existing code
from ._axes import binary_scores  # noqa: F401
from .ape import APE_SCALE, _ape_window, ape_bar_axes, ape_plot  # noqa: F401
from .bayes_error import ece_plot, nbe_plot
from .det import det_plot, finish_det, set_probit_limits  # noqa: F401
from .tippett import tippett_plot

__all__ = [
    "det_plot",
    "ape_plot",
    "ape_bar_axes",
    "nbe_plot",
    "ece_plot",
    "tippett_plot",
    "APE_SCALE",
]

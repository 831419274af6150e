"""Spoken term detection scoring: the MediaEval 2013 Spoken Web Search measures [1]_.

Read a system's output and the reference, align them, and compute ATWV, MTWV, the DET points,
C_nxe and C_nxe^min::

    from focal import std
    task = std.read_task("sys.stdlist.xml", "ref.rttm", "audio.ecf.xml", "terms.tlist.xml")
    report = std.term_detection_report(task)          # SWS 2013 operating point
    print(report); report.to_dict()

or from arrays with :class:`Detections`, :class:`Reference` and :class:`STDTask`. The pieces are
also available one by one: :func:`align` gives the aligned trial set that :func:`atwv`,
:func:`mtwv`, :func:`term_det_curve`, :func:`cnxe` and :func:`min_cnxe` take.

Modules: ``model`` (data model), ``alignment`` (with ``matching``), ``measures`` (TWV, DET,
speed factors) and ``cross_entropy`` (C_xe, C_nxe, C_nxe^min): pure math; ``readers`` (file
formats), ``report``.

References
----------
.. [1] :cite:t:`sws2013measures` ("SWS plan").
"""

from ..core.operating_point import OperatingPoint
from ._xml import read_ecf, read_stdlist, read_tlist
from .alignment import TIME_SLACK, AlignedTrials, QueryCounts, Sweep, align
from .cross_entropy import AffineRecalibration, affine_recalibration, cnxe, cxe, min_cnxe
from .measures import (
    TWVResult,
    atwv,
    indexing_speed_factor,
    mtwv,
    processing_load,
    searching_speed_factor,
    term_det_curve,
    twv,
)
from .model import ECF, STD2006, SWS2013, Detections, Reference, STDTask
from .readers import (
    read_audio_table,
    read_detection_table,
    read_query_table,
    read_reference_table,
    read_rttm,
    read_task,
)
from .report import STDReport, term_detection_report

__all__ = [
    "Detections",
    "Reference",
    "STDTask",
    "OperatingPoint",
    "SWS2013",
    "STD2006",
    "TIME_SLACK",
    "AlignedTrials",
    "QueryCounts",
    "Sweep",
    "align",
    "TWVResult",
    "AffineRecalibration",
    "twv",
    "atwv",
    "mtwv",
    "term_det_curve",
    "cxe",
    "cnxe",
    "min_cnxe",
    "affine_recalibration",
    "indexing_speed_factor",
    "searching_speed_factor",
    "processing_load",
    "ECF",
    "read_ecf",
    "read_tlist",
    "read_rttm",
    "read_stdlist",
    "read_detection_table",
    "read_reference_table",
    "read_audio_table",
    "read_query_table",
    "read_task",
    "STDReport",
    "term_detection_report",
]

"""HTML report pages of multiclass (language recognition) and term-detection evaluations.

The counterparts of :func:`focal.plots.write_report` (binary LLRs): figures into a folder and an
``index.html`` showing them with the text reports, at any pixel size (same options).

References
----------
.. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
.. [2] :cite:t:`brummer2006calibration`.
"""

from __future__ import annotations

import html
import pathlib

import numpy as np

from .._text.outputs import FolderWriter
from ..metrics import pairwise_analysis
from .multiclass import detection_ape_plots, pairwise_bar_matrix
from .report import _html_page, draw_figures, figure_options
from .std import std_det_plot

__all__ = ["write_multiclass_report", "write_std_report"]


def write_multiclass_report(
    systems,
    out_dir,
    *,
    size=(800, 600),
    dpi=None,
    formats=("png",),
    title: str = "focal multiclass evaluation report",
):
    """Figures of each multiclass system and an HTML page with them and its text report.

    For each system: the APE plots of the one-vs-rest detection LLRs of every class
    (:func:`detection_ape_plots`, 2006 paper fig. 2) and the pairwise Cllr bar matrix
    (:func:`pairwise_bar_matrix`, fig. 3).

    Parameters
    ----------
    systems : sequence of dict
        Each ``{"name": str, "llh": (n, N) array, "labels": (n,) ints, "class_names": list,
        "prior": (N,) array or None, "text": str}`` (``text``: the printed report, optional).
    out_dir : path-like
    size, dpi, formats, title
        As in :func:`focal.plots.write_report`.

    Returns
    -------
    pathlib.Path
        The HTML page.
    """
    (w, h), dpi, fmts = figure_options(size, dpi, formats)
    folder = FolderWriter(out_dir)  # checked before any work
    specs, texts = [], []
    for i, system in enumerate(systems, start=1):
        name = str(system["name"])
        llh, labels = np.asarray(system["llh"], float), np.asarray(system["labels"])
        names, prior = system.get("class_names"), system.get("prior")

        def ape(fig, llh=llh, labels=labels, names=names, prior=prior):
            detection_ape_plots(llh, labels, prior=prior, class_names=names, fig=fig)

        def pairs(fig, llh=llh, labels=labels, names=names, prior=prior):
            pairwise_bar_matrix(pairwise_analysis(llh, labels), class_names=names, fig=fig)

        specs += [
            (
                f"detection_ape_{i}",
                f"{name}: detection APE plots",
                "APE of the one-vs-rest "
                "detection LLRs of each class: area under the solid curve = Cllr of that "
                "detector, dashed = after PAV (minCllr).",
                ape,
                {"layout": None, "height_inches": 1.7 * llh.shape[1]},
            ),
            (
                f"pairwise_{i}",
                f"{name}: pairwise Cllr",
                "Cllr of each pair of classes' LLR "
                "l_i - l_j as given (left bar) and its PAV minimum (right), bits; dotted line: "
                "an uninformative system (1 bit).",
                pairs,
                {"layout": None, "height_inches": 0.9 * llh.shape[1]},
            ),
        ]
        if system.get("text"):
            texts.append(system["text"])
    if not specs:
        raise ValueError("systems is empty: nothing to report")
    intro = "<p>Log-likelihoods are natural logs; C_mce in nats (Albayzin eq. 6), Cllr in bits.</p>"
    with folder:  # every file, or none
        figures = draw_figures(specs, folder, (w, h), dpi, fmts)
        page = _html_page(title, intro, figures, (w, h), "Reports", texts)
        folder.write("index.html", page.encode("utf-8"))
    return pathlib.Path(folder.path, "index.html")


def write_std_report(
    report,
    out_dir,
    *,
    operating_point=None,
    text: str = "",
    size=(800, 600),
    dpi=None,
    formats=("png",),
    title: str = "focal term-detection report",
):
    """The DET of a term-detection evaluation and an HTML page with it and the text report.

    Parameters
    ----------
    report : focal.std.STDReport
        From :func:`focal.std.term_detection_report`.
    out_dir : path-like
    operating_point : focal.std.OperatingPoint, optional
        Marked on the DET (default the report's own).
    text : str
        The printed report, shown under the figure.
    size, dpi, formats, title
        As in :func:`focal.plots.write_report`.
    """
    (w, h), dpi, fmts = figure_options(size, dpi, formats)
    folder = FolderWriter(out_dir)  # checked before any work
    kwargs = {} if operating_point is None else {"operating_point": operating_point}

    def det(fig):
        std_det_plot(report, ax=fig.subplots(), **kwargs)

    with folder:  # every file, or none
        figures = draw_figures(
            [
                (
                    "std_det",
                    "DET",
                    "Term-weighted DET of the detections: miss rate "
                    "against false-alarm rate over all queries, with the actual "
                    "(ATWV) and best (MTWV) thresholds.",
                    det,
                )
            ],
            folder,
            (w, h),
            dpi,
            fmts,
        )
        page = _html_page(
            title,
            f"<p>{html.escape(str(getattr(report, 'name', '')))}</p>"
            if getattr(report, "name", "")
            else "",
            figures,
            (w, h),
            "Report",
            [text] if text else [],
        )
        folder.write("index.html", page.encode("utf-8"))
    return pathlib.Path(folder.path, "index.html")

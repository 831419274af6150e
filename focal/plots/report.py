"""A report of binary LLR sets: figures (PNG, optionally PDF) and an HTML page with the numbers.

One module although it is long: the page and its figures are one document, written through one
folder writer, all or nothing, and every number the page shows comes from the same reports that
the figures are drawn from.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

import html
import os
import pathlib
import tempfile
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from .._text.outputs import FolderWriter
from ..metrics import BinaryScores, calibration_report
from ..metrics.report import check_operating_point
from ._axes import describe_operating_point
from .ape import ape_plot
from .bayes_error import ece_plot, nbe_plot
from .calibration import calibration_map_plot, reliability_plot
from .det import det_plot
from .histogram import score_histogram_plot
from .partitions import partition_dcf_plot
from .tippett import tippett_plot

__all__ = ["write_report", "output_folder", "ReportFigure", "FORMATS", "MAX_PIXELS"]

FORMATS = ("png", "pdf", "svg")


@dataclass(frozen=True)
class ReportFigure:
    """One figure of a report: its title, a caption, and the files written (by format)."""

    title: str
    caption: str
    files: dict


def output_folder(path=None, prefix: str = "focal_") -> pathlib.Path:
    """The folder ``path`` (created if needed), or a new temporary folder when ``path`` is None.

    Recipes write their figures here: by default a fresh folder under the system's temporary
    directory (named ``prefix`` + random letters), never the current directory.

    Parameters
    ----------
    path : str or path-like, optional
        The folder to use (created with its parents if needed).
    prefix : str, default ``"focal_"``
        Name prefix of a new temporary folder.

    Returns
    -------
    pathlib.Path
        The folder.
    """
    if path is None:
        return pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    folder = pathlib.Path(os.fspath(path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


#: the largest figure drawn, in pixels: matplotlib's Agg renders a whole RGBA canvas in memory;
#: measured peak for a one-system report (five figures): 5000 x 5000 0.55 GB and 45 s,
#: 16000 x 12000 3.2 GB and 3 min (20000 x 20000, 400 M pixels, would need about 6 GB)
MAX_PIXELS = 25_000_000


def _pixels(size):
    try:
        w, h = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ValueError(f"size must be (width, height) in pixels, got {size!r}") from None
    if w < 100 or h < 100 or w > 20000 or h > 20000 or w * h > MAX_PIXELS:
        raise ValueError(
            f"size must be between 100 and 20000 pixels per side and at most "
            f"{MAX_PIXELS:,} pixels in all (e.g. 5000 x 5000), got {size!r}"
        )
    return w, h


def _systems(systems):
    """``[(name, tar, non)]`` from a mapping ``name -> (tar, non)`` or a sequence of triples."""
    items = systems.items() if hasattr(systems, "items") else systems
    out = []
    for i, item in enumerate(items):
        try:
            name, (tar, non) = item if hasattr(systems, "items") else (item[0], item[1:])
        except (TypeError, ValueError):
            raise ValueError(
                "systems must map names to (tar, non) pairs, or be a sequence of "
                f"(name, tar, non) triples; item {i} is {item!r:.80}"
            ) from None
        out.append((str(name), tar, non))
    if not out:
        raise ValueError("systems is empty: nothing to report")
    return out


def _save(fig, folder: FolderWriter, stem: str, formats, dpi: float) -> dict:
    files = {}
    for fmt in formats:
        name = f"{stem}.{fmt}"
        with folder.open(name) as out:
            fig.savefig(out, format=fmt, dpi=dpi)
        files[fmt] = name
    return files


def _number(x: float, fmt: str) -> str:
    return format(x, fmt) if np.isfinite(x) else "inf"


def _cell(value: float, fmt: str, interval=None, scale: float = 1.0) -> str:
    """A number, with its confidence interval under it when there is one."""
    text = _number(scale * value, fmt)
    if interval is not None:
        text += (
            f"<br><small>[{_number(scale * interval.low, fmt)}, "
            f"{_number(scale * interval.high, fmt)}]</small>"
        )
    return text


def _intervals_by_column(r) -> dict:
    """The bootstrap intervals of a report by column: ``cllr``, ``min_cllr``, ``eer``, then
    ``("dcf", i)`` and ``("min_dcf", i)`` of operating point i (the order in which
    :func:`focal.metrics.calibration_report` asks for them).
    """
    names: list = ["cllr", "min_cllr", "eer"]
    for i in range(len(r.operating_points)):
        names += [("dcf", i), ("min_dcf", i)]
    out = {}
    for name, iv in zip(names, r.intervals):
        expected = name if isinstance(name, str) else name[0]
        if iv.measure.split("(")[0] != expected:  # not the layout expected: show none
            return {}
        out[name] = iv
    return out


def _table(reports) -> str:
    """The numbers of every report (as printed): one row per system, intervals under the
    estimates, the conventional EER and C_primary when they were asked for.
    """
    ops = reports[0].operating_points
    conventional = any(r.eer_conventional is not None for r in reports)
    primary = [r.c_primary for r in reports if r.c_primary is not None]
    head = [
        "system",
        "targets",
        "non-targets",
        "Cllr (bits)",
        "minCllr (bits)",
        "calibration loss",
        "EER (%)",
    ]
    if conventional:
        head.append("conventional EER (%)")
    for op in ops:
        where = describe_operating_point(op.p_target, op.c_miss, op.c_fa)
        head += [f"actDCF ({where})", f"minDCF ({where})"]
    if primary:
        name = primary[0].name.upper()
        head += [f"C_primary{f' ({name})' if name else ''}", "min C_primary"]
    rows = []
    for r in reports:
        iv = _intervals_by_column(r)
        cells = [
            html.escape(r.name),
            f"{r.n_targets:,}",
            f"{r.n_nontargets:,}",
            _cell(r.cllr, ".4f", iv.get("cllr")),
            _cell(r.min_cllr, ".4f", iv.get("min_cllr")),
            _number(r.calibration_loss, ".4f"),
            _cell(r.eer, ".3f", iv.get("eer"), 100.0),
        ]
        if conventional:
            cells.append(
                "" if r.eer_conventional is None else _number(100 * r.eer_conventional, ".3f")
            )
        for i, op in enumerate(r.operating_points):
            cells += [
                _cell(op.act_dcf, ".4f", iv.get(("dcf", i))),
                _cell(op.min_dcf, ".4f", iv.get(("min_dcf", i))),
            ]
        if primary:
            cp = r.c_primary
            cells += (
                ["", ""]
                if cp is None
                else [
                    _number(cp.actual, ".4f"),
                    _number(cp.minimum, ".4f"),
                ]
            )
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    header = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
    note = ""
    with_iv = [r for r in reports if r.intervals]
    if with_iv:
        first = with_iv[0].intervals[0]
        note = (
            f"<p>Under the estimates: {100 * first.confidence:g} % confidence intervals "
            f"({html.escape(first.resampling)} bootstrap, {first.n_bootstrap} replicates).</p>"
        )
    return "<table>\n" + header + "\n" + "\n".join(rows) + "\n</table>" + note


def _forensic_table(summaries) -> str:
    """Cllr, Cllr_min, Cllr_cal, rates of misleading evidence and ELUB limits per system, in
    the wording of forensic LR validation (:func:`focal.metrics.forensic_summary`).
    """
    head = [
        "system",
        "Cllr (bits)",
        "Cllr_min (bits)",
        "Cllr_cal (bits)",
        "EER (%)",
        "H1-true LR < 1 (%)",
        "H2-true LR > 1 (%)",
        "ELUB limits (log10 LR)",
    ]
    rows = []
    for f in summaries:
        lo, hi = f.elub.log10
        cells = [
            html.escape(f.name),
            _number(f.cllr, ".4f"),
            _number(f.cllr_min, ".4f"),
            _number(f.cllr_cal, ".4f"),
            _number(100 * f.eer, ".3f"),
            _number(100 * f.misleading_h1, ".2f"),
            _number(100 * f.misleading_h2, ".2f"),
            f"[{lo:.3f}, {hi:.3f}]",
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    header = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
    return (
        "<h2>Forensic validation</h2>\n<p>In the wording of forensic likelihood-ratio "
        "validation (Meuwly, Ramos and Haraksim 2017): Cllr measures the accuracy of the LRs, "
        "Cllr_min (after the PAV recalibration) their discriminating power and Cllr_cal = Cllr "
        "- Cllr_min the loss due to calibration. The rates of misleading evidence are the "
        "H1-true (same source, target) comparisons with LR &lt; 1 and the H2-true "
        "(different source) ones with LR &gt; 1. Beyond the ELUB limits (Vergeer et al. 2016) "
        "these data no longer support the LRs the system gives.</p>\n<table>\n"
        + header
        + "\n"
        + "\n".join(rows)
        + "\n</table>"
    )


def _partition_table(report) -> str:
    """The table of a :class:`focal.metrics.PartitionReport`: pooled, each partition, each
    equalization.
    """
    ops = report.pooled.operating_points
    cp = report.pooled.c_primary is not None
    head = ["trials", "targets", "non-targets", "Cllr (bits)", "minCllr (bits)", "EER (%)"]
    for op in ops:
        where = describe_operating_point(op.p_target, op.c_miss, op.c_fa)
        head += [f"actDCF ({where})", f"minDCF ({where})"]
    if cp:
        head += ["C_primary", "min C_primary"]
    rows = []
    for label, n_t, n_n, m in report.rows():
        cells = [html.escape(label), "" if n_t is None else f"{n_t:,}"]
        cells.append("" if n_n is None else f"{n_n:,}")
        if m is None:
            cells += ["one class only"] + [""] * (len(head) - 4)
        else:
            cells += [
                _number(m.cllr, ".4f"),
                _number(m.min_cllr, ".4f"),
                _number(100 * m.eer, ".3f"),
            ]
            for op in m.operating_points:
                cells += [_number(op.act_dcf, ".4f"), _number(op.min_dcf, ".4f")]
            if cp:
                c = m.c_primary
                cells += (
                    ["", ""]
                    if c is None
                    else [
                        _number(c.actual, ".4f"),
                        _number(c.minimum, ".4f"),
                    ]
                )
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    header = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
    title = html.escape(report.name or "system")
    return (
        f"<h2>Partitions: {title}</h2>\n<p>Columns: {html.escape(', '.join(report.columns))}. "
        "Equalized: every partition weighted equally, as NIST SRE equalizes C_primary "
        "(focal.metrics.partition_report).</p>\n<table>\n"
        + header
        + "\n"
        + "\n".join(rows)
        + "\n</table>"
    )


_BINARY_INTRO = (
    "<p>Scores are read as natural-log likelihood-ratios. Cllr and minCllr in bits "
    "(thesis eq. 7.41, sec. 7.7.4); EER is the ROCCH-EER (sec. 7.3.7); DCFs are "
    "normalized (SWS plan eqs. 8-10).</p>"
)


def _page(title, reports, figures, size, summaries=(), partitions=()) -> str:
    head = _BINARY_INTRO + "\n" + _table(reports)
    if summaries:
        head += "\n" + _forensic_table(summaries)
    for report in partitions:
        head += "\n" + _partition_table(report)
    texts = [str(r) for r in reports] + [str(p) for p in partitions]
    texts += [str(f) for f in summaries]
    return _html_page(title, head, figures, size, "Reports (as printed)", texts)


def _html_page(title, head_html, figures, size, texts_title, texts) -> str:
    """The HTML page of a report: a heading, ``head_html`` (trusted, built here), the figures
    with their captions, and the text reports (escaped).
    """
    w, h = size
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>body{{font-family:sans-serif;max-width:{max(w + 40, 900)}px;margin:1em auto}}"
        "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 8px;"
        "text-align:right}td:first-child,th:first-child{text-align:left}"
        "img{max-width:100%;height:auto}pre{background:#f4f4f4;padding:.5em}</style>",
        "</head>",
        "<body>",
        f"<h1>{html.escape(title)}</h1>",
        head_html,
    ]
    for fig in figures:
        png = fig.files.get("png")
        others = " ".join(
            f'<a href="{html.escape(name)}">{fmt.upper()}</a>'
            for fmt, name in fig.files.items()
            if fmt != "png"
        )
        parts += [
            f"<h2>{html.escape(fig.title)}</h2>",
            f"<p>{html.escape(fig.caption)}" + (f" ({others})" if others else "") + "</p>",
        ]
        if png:
            parts.append(
                f'<img src="{html.escape(png)}" width="{w}" height="{h}" '
                f'alt="{html.escape(fig.title)}">'
            )
    if texts:
        parts.append(f"<h2>{html.escape(texts_title)}</h2>")
        parts += [f"<pre>{html.escape(str(t))}</pre>" for t in texts]
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


_MIN_DPI = 80.0  # text of at least ~11 px at 10 pt, however narrow the figure


_MARKER_NAMES = (
    ("square", "cross"),
    ("diamond", "plus"),
    ("triangle", "tri-down"),
    ("down-triangle", "tri-up"),
)


def _det_caption(ops) -> str:
    points = "; ".join(
        f"{_MARKER_NAMES[i % 4][0]} / {_MARKER_NAMES[i % 4][1]} at "
        f"{describe_operating_point(*check_operating_point(op, 'op'))}"
        for i, op in enumerate(ops)
    )
    return (
        "Steppy DET curves with the ROCCH-EER (circle) and the minimum / actual DCF points"
        + (f" ({points})" if points else "")
        + "; a point without false alarms sits on "
        "the left edge."
    )


def _check_reports(reports, entries, kind: str):
    """``reports`` (one per system, in the order of ``systems``, named as they are) as a list."""
    reports = list(reports)
    names = [name for name, _ in entries]
    got = [r.name for r in reports]
    if got != names:
        raise ValueError(f"{kind} must be one per system, named and ordered as systems: "
                         f"got {got}, systems are {names}")  # fmt: skip
    return reports


def write_report(
    systems,
    out_dir,
    *,
    operating_points=(0.01,),
    reports=None,
    partitions=None,
    log10: bool = False,
    size=(800, 600),
    dpi=None,
    formats=("png",),
    title: str = "focal evaluation report",
) -> pathlib.Path:
    """Write the figures of a calibration analysis and an HTML page showing them with the numbers.

    For binary LLR sets (one or several systems on the same trials or not) it writes, into
    ``out_dir`` (created if needed):

    * ``det``: DET curves of every system with the ROCCH-EER and, at every operating point,
      the minDCF and actual-DCF points (:func:`det_plot`);
    * ``nbe``: normalized Bayes error-rate plot with DR30 points and a line at every operating
      point (:func:`nbe_plot`);
    * ``ape``: APE curves and the Cllr bars (:func:`ape_plot`);
    * ``ece``: empirical cross-entropy curves (:func:`ece_plot`);
    * ``calibration``: each system's LLRs against their PAV recalibration, with the EER and
      minDCF thresholds (:func:`calibration_map_plot`);
    * ``reliability``: posteriors at P_target 0.5 against the observed ones
      (:func:`reliability_plot`);
    * ``histogram_<i>``, ``tippett_<i>``: the LLR histograms and the Tippett plot of each system
      (:func:`score_histogram_plot`, :func:`tippett_plot`);
    * ``partitions_<i>``: with ``partitions``, the minimum and actual DCF of each partition of
      a system (:func:`focal.plots.partitions.partition_dcf_plot`);
    * ``index.html``: the table of the numbers (with their intervals, C_primary and the
      conventional EER when the reports hold them), the forensic validation numbers (Cllr,
      Cllr_min, Cllr_cal, rates of misleading evidence, ELUB limits), the partition tables,
      the figures, and the text reports.

    Parameters
    ----------
    systems : mapping or sequence
        ``{name: (tar, non)}`` or ``[(name, tar, non), ...]``: natural-log LLRs of the target
        and non-target trials of each system.
    out_dir : str or path
        Folder the page and its figures are written to (created if needed), all of them or
        none: each file is renamed into place once every file is written, replacing a file or
        link of the same name (never writing through a link); on an error the folder is left as
        it was.
    operating_points : sequence, default (0.01,)
        Priors or ``(P_target, C_miss, C_fa)`` tuples of the DCF columns (as for
        :func:`focal.metrics.calibration_report`); each is marked on the DET and NBE plots.
    reports : sequence of CalibrationReport, optional
        The reports a program printed for these systems (one per system, same names and order,
        e.g. with intervals or C_primary): the page shows them, so that it holds every number
        printed. Default: :func:`focal.metrics.calibration_report` at ``operating_points``.
    partitions : sequence of PartitionReport, optional
        A :func:`focal.metrics.partition_report` per system (same names and order): their
        tables, text and bar charts.
    log10 : bool, default False
        Draw the Tippett plots, histograms, calibration (PAV) plot and ECE curves in log10 units
        (forensic practice).
    size : (int, int), default (800, 600)
        Width and height of every raster figure, in pixels: 100 to 20000 per side, at most
        :data:`MAX_PIXELS` (25 million, e.g. 5000 x 5000) in all, which matplotlib renders in
        about 0.5 GB (vector formats, PDF and SVG, scale to any size).
    dpi : float, optional
        Dots per inch: sets the text size relative to the figure (larger dpi, larger text).
        Default ``max(min(width / 8, height / 6), 80)``: the layout of an 8 x 6 inch figure at
        any pixel size down to 640 x 480, and readable text (about 11 px) on smaller figures.
    formats : sequence of str, default ("png",)
        Among ``"png"``, ``"pdf"``, ``"svg"``; PNG is always written (the page shows it).
    title : str
        Title of the page.

    Returns
    -------
    pathlib.Path
        The HTML page.
    """
    from ..metrics import forensic_summary

    entries = _systems(systems)
    (w, h), dpi, fmts = figure_options(size, dpi, formats)
    folder = FolderWriter(out_dir)  # checked before any work
    ops = [operating_points] if np.ndim(operating_points) == 0 else list(operating_points)
    # one sort and one PAV per system, shared by its report and every figure
    entries = [(name, BinaryScores(tar, non)) for name, tar, non in entries]
    if reports is None:
        reports = [
            calibration_report(scores, operating_points=ops, name=name) for name, scores in entries
        ]
    reports = _check_reports(reports, entries, "reports")
    parts = [] if partitions is None else _check_reports(partitions, entries, "partitions")
    summaries = [forensic_summary(scores, name=name) for name, scores in entries]

    def every_system(plot, **kwargs):
        def draw(fig):
            ax = fig.subplots()
            for name, scores in entries:
                plot(scores, label=name, ax=ax, **kwargs)

        return draw

    def ape(fig):
        ax, bar_ax = fig.subplots(1, 2, width_ratios=[5, 1])
        for name, scores in entries:
            ape_plot(scores, label=name, ax=ax, bar_ax=bar_ax)

    unit = "log10 LR" if log10 else "LLR"
    specs: list = [
        ("det", "DET", _det_caption(ops), every_system(det_plot, operating_points=ops)),
        (
            "nbe",
            "Normalized Bayes error-rate",
            "Actual (solid) and minimum (dashed) DCF "
            "normalized by the default system's, against the prior log-odds; DR30 (open circles): "
            "fewer than 30 false alarms to the left; dashed vertical lines: the operating points "
            "of the table.",
            every_system(nbe_plot, operating_points=ops),
        ),
        (
            "ape",
            "APE",
            "Applied probability of error: the area under the actual curve is Cllr, "
            "under the minimum curve minCllr; the bar splits Cllr into discrimination and "
            "calibration loss.",
            ape,
        ),
        (
            "ece",
            "ECE",
            "Empirical cross-entropy of the LLRs (solid), after PAV (dashed) and of "
            "the default system (dotted), in bits"
            + (", against the prior log10-odds." if log10 else "."),
            every_system(ece_plot, log10_odds=log10),
        ),
        (
            "calibration",
            "Calibration (PAV plot)",
            "Each system's LLRs (the diagonal) against the LLRs of their PAV recalibration "
            "(dashed steps), the best monotone map for these trials: where the steps leave the "
            "diagonal the LLRs over- or under-state the evidence. Circle: the threshold of the "
            "ROCCH-EER; squares: the minDCF thresholds, on the Bayes threshold of their "
            "operating point (dotted); arrows: PAV blocks of one class (LLR +/-inf).",
            every_system(calibration_map_plot, operating_points=ops, log10_lr=log10),
        ),
        (
            "reliability",
            "Reliability",
            "Posteriors at P_target = 0.5 (Bayes' rule on the LLRs), binned, against the "
            "observed proportion of targets in each bin (prior-weighted); the dotted diagonal "
            "is perfect calibration; bars: trials per bin of the first system.",
            every_system(reliability_plot),
        ),
    ]
    for i, (name, scores) in enumerate(entries, start=1):
        specs += [
            (
                f"histogram_{i}",
                f"Histogram: {name}",
                f"Densities of the target (solid, filled) and non-target (dashed) {unit}s, "
                "with the Bayes thresholds of the operating points.",
                lambda fig, sc=scores, name=name: score_histogram_plot(
                    sc, label=name, ax=fig.subplots(), operating_points=ops, log10_lr=log10
                ),
            ),
            (
                f"tippett_{i}",
                f"Tippett: {name}",
                f"Proportion of target (solid) and non-target (dashed) {unit}s at or above "
                "each value.",
                lambda fig, sc=scores, name=name: tippett_plot(
                    sc, label=name, ax=fig.subplots(), log10_lr=log10
                ),
            ),
        ]
    for i, report in enumerate(parts, start=1):
        specs.append(
            (
                f"partitions_{i}",
                f"Partitions: {report.name}",
                "Minimum DCF (solid) and actual DCF (to the end of the lighter bar) of the "
                "pooled trials, each partition and each equalization, at the first operating "
                "point.",
                lambda fig, r=report: partition_dcf_plot(r, ax=fig.subplots()),
                {"height_inches": 1.4 + 0.3 * len(report.rows())},
            )
        )
    with folder:  # every file, or none
        figures = draw_figures(specs, folder, (w, h), dpi, fmts)
        page = _page(title, reports, figures, (w, h), summaries, parts)
        folder.write("index.html", page.encode("utf-8"))
    return pathlib.Path(folder.path, "index.html")


def figure_options(size, dpi, formats):
    """Validated ``((width, height), dpi, formats)`` of a report (PNG first, always)."""
    w, h = _pixels(size)
    dpi = max(min(w / 8.0, h / 6.0), _MIN_DPI) if dpi is None else float(dpi)
    if not 10 <= dpi <= 2000:
        raise ValueError(f"dpi must be between 10 and 2000, got {dpi!r}")
    fmts = ["png"] + [f for f in dict.fromkeys(str(f).lower() for f in formats) if f != "png"]
    bad = [f for f in fmts if f not in FORMATS]
    if bad:
        raise ValueError(f"formats must be among {FORMATS}, got {bad}")
    return (w, h), dpi, fmts


def draw_figures(specs, folder, size, dpi, formats, after=None):
    """Draw and save ``specs`` = ``[(stem, title, caption, draw(fig)[, options]), ...]``; the
    optional ``options`` dict may set ``layout`` (default ``"constrained"``; None for figures
    that place their own axes) and ``height_inches`` (a taller figure for grids of plots).
    Returns the ReportFigures.
    """
    w, h = size
    figures = []
    for stem, title_, caption, draw, *options in specs:
        opt = options[0] if options else {}
        height = max(h / dpi, opt.get("height_inches", 0.0))
        fig = Figure(figsize=(w / dpi, height), dpi=dpi, layout=opt.get("layout", "constrained"))
        draw(fig)
        if after is not None:
            after(fig)
        figures.append(ReportFigure(title_, caption, _save(fig, folder, stem, formats, dpi)))
    return figures

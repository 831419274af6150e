"""Evaluation of score files: the jobs of ``focal evaluate``, ``focal evaluate-multiclass`` and
``focal sws`` as library functions, each returning report objects that print themselves
(:class:`focal.metrics.CalibrationReport`, :class:`focal.metrics.MulticlassReport`,
:class:`focal.std.report.STDReport`) and, when asked, writing the figures and the HTML page.

Every option of ``focal evaluate`` is a keyword argument of :func:`evaluate_binary`: the
command line only turns its options into these arguments and prints what comes back.
``dask=`` runs the same evaluation on a Dask cluster (:func:`focal.dask.evaluate_files`),
which does every part it can do exactly as in memory and refuses, by name and before any
work, every argument it cannot honour.

Besides the numbers, the evaluation says what a user might not see (warnings, shown by the
command line as ``focal: warning:`` lines): a system at chance level (ROCCH-EER above 45 %,
often scores whose direction is reversed: distances), systems compared on different trials
(``missing="drop"``), a closed-set file evaluated in the open-set condition.
"""

from __future__ import annotations

import os
import pathlib
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from .._progress import logger, step
from ..io._multiclass_align import align_multiclass
from ..io.alignment import check_both_classes, trial_set, warn_different_trial_sets
from ..io.engine import iter_aligned
from ..io.multiclass import read_multiclass_key, read_multiclass_systems

__all__ = [
    "Evaluation",
    "evaluate_binary",
    "evaluate_multiclass",
    "evaluate_term_detection",
    "figure_names",
    "summary_table",
    "SCORE_DIRECTIONS",
]

#: What ``scores_are`` may say of the score files: natural-log LLRs (or any score where higher
#: means target), or distances (lower means target: negated before anything is measured).
SCORE_DIRECTIONS = ("llr", "distance")

_LN10 = float(np.log(10.0))

#: ROCCH-EER above which a system is reported as hardly better than chance.
CHANCE_EER = 0.45

#: Command-line names of the arguments whose name there is not ``--`` + the argument's.
_OPTION_NAMES = {
    "confidence": "--ci",
    "n_bootstrap": "--bootstrap",
    "random_state": "--seed",
    "n_jobs": "--jobs",
    "format": "--format / --columns",
    "key_format": "--key-format / --key-columns",
    "operating_points": "--p-target / --cost",
}


def option_name(argument: str) -> str:
    """The ``focal evaluate`` option of a keyword argument of :func:`evaluate_binary`."""
    return _OPTION_NAMES.get(argument, "--" + argument.replace("_", "-"))


@dataclass
class Evaluation:
    """What an evaluation workflow computed.

    Attributes
    ----------
    reports : list
        One report per system (:class:`focal.metrics.CalibrationReport` of
        :func:`evaluate_binary`, :class:`focal.metrics.MulticlassReport` of
        :func:`evaluate_multiclass`), in the order of the score files; the one
        :class:`focal.std.report.STDReport` of :func:`evaluate_term_detection`.
    systems : dict or None
        :func:`evaluate_binary`: ``{name: (tar, non)}``, the scores each report measured
        (negated for distances); None when evaluated on Dask (the scores stay on the cluster)
        and for the other workflows.
    page : pathlib.Path or None
        The HTML page, when figures were asked for (``plot=``).
    partitions : list of PartitionReport or None
        :func:`evaluate_binary` with ``partition=``: each system's pooled, per-partition and
        equalized measures (:func:`focal.metrics.partition_report`), in the order of the
        reports.
    """

    reports: list
    systems: dict | None = None
    page: pathlib.Path | None = field(default=None)
    partitions: list | None = None

    def to_dict(self) -> list:
        """The reports as plain Python (``focal evaluate --json`` prints this); with
        partitions, each system's :class:`focal.metrics.PartitionReport` under
        ``"partitions"``.
        """
        if not self.partitions:
            return [r.to_dict() for r in self.reports]
        return [
            {**r.to_dict(), "partitions": p.to_dict()}
            for r, p in zip(self.reports, self.partitions)
        ]


def figure_names(systems):
    """File names as figure labels when they tell the systems apart (short legends), else the
    paths as given.
    """
    names = [pathlib.PurePath(p).name for p in systems]
    return dict(zip(names, systems.values())) if len(set(names)) == len(names) else systems


def _short_names(names):
    """Last path components when they tell the names apart, else the names as given."""
    short = [str(n).replace("\\", "/").rsplit("/", 1)[-1] for n in names]
    return short if len(set(short)) == len(short) else [str(n) for n in names]


def summary_table(reports, title=None) -> str:
    """One line per binary report: Cllr, minCllr (bits), EER (%), actual and minimum DCF at each
    operating point and, when the reports have it, C_primary (actual and minimum).

    Parameters
    ----------
    reports : sequence of CalibrationReport
        Of the same operating points (e.g. :attr:`Evaluation.reports`).
    title : str, optional
        The first line (default: what the columns hold).

    Returns
    -------
    str
        The table; systems named by their file names when these tell them apart.
    """
    points = reports[0].operating_points
    primary = any(r.c_primary is not None for r in reports)
    names = _short_names(r.name for r in reports)
    width = max(len(n) for n in names) + 2
    labels = [f"{op.p_target:g}:{op.c_miss:g}:{op.c_fa:g}" for op in points]
    if title is None:
        title = "Summary (Cllr and minCllr in bits, EER in %, normalized DCF"
        title += f" at {labels[0]})" if len(points) == 1 else " at each P_target:C_miss:C_fa)"
    lines = [title]
    if len(points) > 1 or primary:
        lines.append(
            f"  {'':<{width}}{'':25}"
            + "".join(f"{label:>16}" for label in labels)
            + (f"{'C_primary':>16}" if primary else "")
        )
    lines.append(
        f"  {'system':<{width}}{'Cllr':>8}{'minCllr':>9}{'EER %':>8}"
        + f"{'actDCF':>8}{'minDCF':>8}" * (len(points) + primary)
    )
    for name, r in zip(names, reports):
        dcfs = [(op.act_dcf, op.min_dcf) for op in r.operating_points]
        if primary:
            cp = r.c_primary
            dcfs.append((np.nan, np.nan) if cp is None else (cp.actual, cp.minimum))
        lines.append(
            f"  {name:<{width}}{r.cllr:8.4f}{r.min_cllr:9.4f}{100 * r.eer:8.2f}"
            + "".join(f"{a:8.4f}{m:8.4f}" for a, m in dcfs)
        )
    return "\n".join(lines)


def _plots(module=""):
    """:mod:`focal.plots` (or its ``module``), or a ValueError saying how to install
    matplotlib.
    """
    import importlib

    try:
        return importlib.import_module("focal.plots" + (f".{module}" if module else ""))
    except ImportError as exc:
        raise ValueError(str(exc)) from None


def _same(value, default) -> bool:
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return list(value) == list(default)
    return value is default or value == default


def _refuse_on_dask(arguments) -> None:
    """Refuse, by name, every argument of :func:`evaluate_binary` given a value other than its
    default that :func:`focal.dask.evaluate_files` does not honour: before any work, never
    silently ignored. An argument added here later is refused until Dask learns it.
    """
    import inspect

    from ..dask.workflows import EVALUATE_ARGUMENTS, NOT_ON_DASK

    defaults = {n: p.default for n, p in inspect.signature(evaluate_binary).parameters.items()}
    for name, value in arguments.items():
        if name in EVALUATE_ARGUMENTS or _same(value, defaults.get(name)):
            continue
        why = NOT_ON_DASK.get(name, "not implemented on a cluster")
        raise ValueError(f"{option_name(name)} is not available with --dask ({name}=): {why}")


def _check_options(
    operating_points, scores_are, c_primary, confidence, n_bootstrap, cluster, missing
):
    """Every argument checked before any file is read; returns the operating points."""
    from ..core.operating_point import as_operating_points
    from ..metrics.sre import resolve_points

    points = as_operating_points(operating_points)
    if not points:
        raise ValueError("operating_points: give at least one operating point")
    if scores_are not in SCORE_DIRECTIONS:
        raise ValueError(
            f"scores_are must be one of {', '.join(SCORE_DIRECTIONS)}, got {scores_are!r}"
        )
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    if cluster not in ("trial", "model", "test", "both"):
        raise ValueError(f"cluster must be 'trial', 'model', 'test' or 'both', got {cluster!r}")
    if confidence is not None and not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")
    if n_bootstrap is not None and not (
        isinstance(n_bootstrap, (int, np.integer)) and n_bootstrap >= 1
    ):
        raise ValueError(f"n_bootstrap must be at least 1, got {n_bootstrap!r}")
    if c_primary is not None:
        resolve_points(c_primary)
    return points


def warn_chance_level(reports, scores_are="llr"):
    """Warn for each report whose ROCCH-EER is above :data:`CHANCE_EER`."""
    for r in reports:
        if r.eer > CHANCE_EER:
            hint = (
                "if lower scores mean target (distances), say so: scores_are='distance' "
                "(focal: --scores-are distance)"
                if scores_are == "llr"
                else "its scores were read as distances (lower = target): if higher scores "
                "mean target, leave out scores_are='distance' (focal: --scores-are distance)"
            )
            warnings.warn(
                f"{r.name}: ROCCH-EER {100 * r.eer:.1f} % is above {100 * CHANCE_EER:g} %, "
                f"hardly better than chance: {hint}",
                UserWarning,
                stacklevel=3,
            )


def evaluate_binary(
    score_paths,
    key_path=None,
    operating_points=(0.01,),
    *,
    missing="error",
    pos_label=None,
    format=None,
    key_format=None,
    scores_are="llr",
    conventional_eer=False,
    c_primary=None,
    confidence=None,
    n_bootstrap=None,
    cluster="trial",
    random_state=0,
    n_jobs=None,
    progress=False,
    plot=None,
    plot_size=(800, 600),
    plot_formats=("png",),
    dask=None,
    partition=None,
    partition_columns=None,
    log10=False,
) -> Evaluation:
    """Calibration reports of score files read as natural-log LLRs against a key: what
    ``focal evaluate`` runs.

    Parameters
    ----------
    score_paths : sequence of path-like
        One ``model test score`` file per system (with ``dask``: each a path, a glob pattern or
        a list of them, each file one partition).
    key_path : path-like, optional
        ``model test label`` key (:func:`focal.io.read_key`); None when the score files carry
        the labels (``format="wespeaker"``, ...).
    operating_points : sequence, default (0.01,)
        Priors or ``(P_target, C_miss, C_fa)`` of the DCFs
        (:func:`focal.metrics.calibration_report`).
    missing : {"error", "drop"}
        Trials missing from a score file or the key (:func:`focal.io.align_trials`); ``"drop"``
        drops per system (a warning says when the systems keep different trials).
    pos_label : str, optional
        The key's target label when it does not use target/nontarget, tar/non or 1/0.
    format, key_format : str or Layout, optional
        Columns of the score files and the key (as :func:`focal.io.read_scores` and
        :func:`focal.io.read_key` read them).
    scores_are : {"llr", "distance"}, default "llr"
        ``"distance"``: lower scores mean target; the scores are negated before they are
        measured (thresholds are then of the negated scores).
    conventional_eer : bool
        Also the EER of the empirical ROC (:func:`focal.metrics.conventional_eer`).
    c_primary : str or sequence, optional
        Also NIST SRE's C_primary at these operating points (``"sre16"``, ... or two or more
        ``(P_target, C_miss, C_fa)``; :func:`focal.metrics.sre.c_primary`).
    confidence : float, optional
        Add bootstrap confidence intervals at this coverage (e.g. 0.95).
    n_bootstrap : int, optional
        Bootstrap replicates (default 1000).
    cluster : {"trial", "model", "test", "both"}, default "trial"
        What the bootstrap resamples: trials, whole models, whole test segments, or models
        and test segments independently (two-way).
    random_state : int, default 0
        Seed of the bootstrap.
    n_jobs : int, optional
        Workers of the bootstrap.
    progress : bool or callable, default False
        Progress bars on stderr of each long step (tqdm).
    plot : path-like, optional
        Folder for the figures and the HTML page (:func:`focal.plots.write_report`).
    plot_size : (int, int), default (800, 600)
        Size of each figure in pixels.
    plot_formats : sequence of str, default ("png",)
        Figure formats besides PNG.
    dask : str, optional
        Evaluate on a Dask cluster: ``"local"`` (a local one) or a scheduler address
        (:func:`focal.dask.evaluate_files`).
    partition : path-like, optional
        A partition file (:func:`focal.io.read_partitions`: each trial's labels in one or more
        metadata columns): also each system's measures per partition, pooled and equalized
        (:func:`focal.metrics.partition_report`, with intervals per partition when
        ``confidence`` is given; figures and tables in the report of ``plot``).
    partition_columns : sequence of str, optional
        The partition file's columns to use (default: all after the trial's two).
    log10 : bool, default False
        The score files hold log10 likelihood-ratios (forensic practice): they are read as
        ``ln 10`` times the values; the reports' score thresholds are given back in log10 LR,
        and the figures of ``plot`` (Tippett, histograms, calibration, ECE) are drawn in log10
        units.

    Returns
    -------
    Evaluation
        The reports (one per file, in order), the scores behind them and the page.

    Raises
    ------
    ValueError
        Before any file is read: a bad argument, matplotlib missing for ``plot``, an argument
        Dask cannot honour. Then: what the readers refuse (``path:line:``), trials of one
        class only.
    """
    arguments = dict(locals())  # every argument, for Dask to check what it can do
    points = _check_options(
        operating_points, scores_are, c_primary, confidence, n_bootstrap, cluster, missing
    )
    if dask is not None:
        try:
            from ..dask.workflows import evaluate_files
        except ImportError as exc:
            raise ValueError(str(exc)) from None
        _refuse_on_dask(arguments)
        reports = evaluate_files(
            score_paths,
            key_path,
            points,
            missing=missing,
            pos_label=pos_label,
            format=format,
            key_format=key_format,
            scores_are=scores_are,
            conventional_eer=conventional_eer,
            c_primary=c_primary,
            address=dask,
        )
        warn_chance_level(reports, scores_are)
        return Evaluation(reports)
    plots = _plots() if plot is not None else None  # before any work
    table = None
    if partition is not None:
        from ..io.partitions import read_partitions

        with step(f"read {os.fspath(partition)}", progress):
            table = read_partitions(partition, partition_columns)
    elif partition_columns is not None:
        raise ValueError("partition_columns needs a partition file (partition=)")
    paths = [os.fspath(p) for p in score_paths]
    key_name = os.fspath(key_path) if key_path is not None else paths[0]
    ids = cluster != "trial" or (missing == "drop" and len(paths) > 1) or table is not None
    systems, trials, kept, labels = {}, {}, {}, {}
    aligned = iter_aligned(
        paths,
        key_path,
        format=format,
        key_format=key_format,
        pos_label=pos_label,
        missing=missing,
        ids=ids,
    )  # 'drop' drops per system
    for k in range(len(paths)):
        with step(f"read and align {paths[k]}", progress):
            path, x, y, models, tests = next(aligned)
        y = y.astype(bool)
        check_both_classes(int(np.count_nonzero(y)), y.size, key_name, path, missing)
        if log10:
            x = x * np.log(10.0)
        if scores_are == "distance":
            x = -x
        systems[path] = (x[y], x[~y])
        if table is not None:
            from ..io.partitions import trial_partitions

            found = trial_partitions(table, models, tests, path)
            labels[path] = (found[y], found[~y])
        if cluster != "trial":
            trials[path] = (models, tests, y)  # split only when clusters ask (memory)
        if missing == "drop" and len(paths) > 1:
            kept[path] = trial_set(models, tests)
    warn_different_trial_sets(kept, stacklevel=2)
    reports = [
        _report(name, tar, non, points, trials.get(name), arguments)
        for name, (tar, non) in systems.items()
    ]
    warn_chance_level(reports, scores_are)
    parts = None
    if table is not None:
        parts = [
            _partitions(name, tar, non, labels[name], table.columns, points, trials.get(name),
                        arguments)
            for name, (tar, non) in systems.items()
        ]  # fmt: skip
    page = None
    if plots is not None:
        with step(f"plots in {os.fspath(plot)}", progress):
            shown = figure_names(systems)
            short = dict(zip(systems, shown))  # the figures' names of the systems
            page = plots.write_report(
                shown,
                plot,
                operating_points=points,
                reports=[replace(r, name=short[r.name]) for r in reports],
                partitions=None if parts is None else [_renamed(p, short) for p in parts],
                log10=log10,
                size=plot_size,
                formats=plot_formats,
            )
    if log10:  # thresholds on the scale of the files
        reports = [_thresholds_in_log10(r) for r in reports]
        parts = None if parts is None else [_partitions_in_log10(p) for p in parts]
    return Evaluation(reports, systems, page, parts)


def _renamed(report, short):
    """A PartitionReport named as the figures name its system."""
    return replace(report, name=short[report.name], pooled=replace(report.pooled,
                   name=short[report.name]))  # fmt: skip


def _thresholds_in_log10(report):
    """A CalibrationReport of natural-log LLRs with its score thresholds in log10 LR."""
    if report is None:
        return None

    def scaled(thr):
        if thr is None:
            return None
        return replace(thr, value=thr.value / _LN10, low=thr.low / _LN10, high=thr.high / _LN10)

    return replace(
        report,
        eer_threshold=scaled(report.eer_threshold),
        operating_points=tuple(
            replace(op, min_dcf_threshold=scaled(op.min_dcf_threshold))
            for op in report.operating_points
        ),
    )


def _partitions_in_log10(report):
    """A PartitionReport with every report's thresholds in log10 LR."""
    return replace(
        report,
        pooled=_thresholds_in_log10(report.pooled),
        partitions=tuple(
            replace(p, report=_thresholds_in_log10(p.report)) for p in report.partitions
        ),
    )


def _clusters(ids, cluster):
    """``(tar_clusters, non_clusters)`` of the bootstrap from the trials' ids."""
    if ids is None:
        return None, None
    models, tests, y = ids
    tm, tt, nm, nt = models[y], tests[y], models[~y], tests[~y]
    return {"model": (tm, nm), "test": (tt, nt), "both": ((tm, tt), (nm, nt))}[cluster]


def _partitions(name, tar, non, labels, columns, points, ids, arguments):
    """One system's :func:`focal.metrics.partition_report`."""
    from ..metrics import partition_report

    tar_labels, non_labels = labels
    clusters = _clusters(ids, arguments["cluster"])
    n_bootstrap = 1000 if arguments["n_bootstrap"] is None else arguments["n_bootstrap"]
    with step(f"partitions of {name}"):
        return partition_report(
            tar,
            non,
            {c: tar_labels[:, j] for j, c in enumerate(columns)},
            {c: non_labels[:, j] for j, c in enumerate(columns)},
            operating_points=points,
            name=name,
            conventional_eer=arguments["conventional_eer"],
            c_primary=arguments["c_primary"],
            confidence=arguments["confidence"],
            n_bootstrap=n_bootstrap,
            tar_clusters=clusters[0],
            non_clusters=clusters[1],
            random_state=arguments["random_state"],
            n_jobs=arguments["n_jobs"],
        )


def _report(name, tar, non, points, ids, arguments):
    """One system's :func:`focal.metrics.calibration_report` with the parts asked for."""
    from ..metrics import calibration_report

    clusters = _clusters(ids, arguments["cluster"])
    confidence = arguments["confidence"]
    n_bootstrap = 1000 if arguments["n_bootstrap"] is None else arguments["n_bootstrap"]
    what = f"measures of {name}"
    if confidence is not None:
        what += f" with {n_bootstrap} bootstrap replicates"
        logger.info("%s ...", what)
    with step(what):
        return calibration_report(
            tar,
            non,
            operating_points=points,
            name=name,
            conventional_eer=arguments["conventional_eer"],
            c_primary=arguments["c_primary"],
            confidence=confidence,
            n_bootstrap=n_bootstrap,
            tar_clusters=clusters[0],
            non_clusters=clusters[1],
            random_state=arguments["random_state"],
            n_jobs=arguments["n_jobs"],
            progress=arguments["progress"],
        )


def evaluate_multiclass(
    score_paths,
    key_path,
    conditions=None,
    *,
    missing="error",
    other="error",
    progress=False,
    plot=None,
    plot_size=(800, 600),
    plot_formats=("png",),
):
    """Multiclass reports of log-likelihood files against a ``segment language`` key, one per
    file: what ``focal evaluate-multiclass`` runs.

    Parameters
    ----------
    score_paths : sequence of path-like
        Albayzin 2012 or generic files of one task and condition.
    key_path : path-like
        ``segment language`` key (:func:`focal.io.read_multiclass_key`).
    conditions : sequence of {"closed", "open"}, optional
        Default: each file's own (:func:`focal.metrics.multiclass_report.default_conditions`).
        A closed-set file evaluated in the open-set condition is warned about (its out-of-set
        column was not scored for that).
    missing, other : str
        Policies of :func:`focal.io.align_multiclass`.
    progress : bool or callable, default False
        Progress on stderr of each long step (tqdm).
    plot : path-like, optional
        Folder for the one-vs-rest APE plots, the pairwise Cllr bars and the HTML page
        (:func:`focal.plots.pages.write_multiclass_report`).
    plot_size : (int, int), default (800, 600)
        Size of each figure in pixels.
    plot_formats : sequence of str, default ("png",)
        Figure formats besides PNG.

    Returns
    -------
    Evaluation
        ``reports``: a MulticlassReport per file; ``page``: the HTML page (with ``plot``).
    """
    from ..metrics.multiclass_report import multiclass_report

    pages = _plots("pages") if plot is not None else None  # before any work
    with step("read " + ", ".join(map(os.fspath, score_paths)), progress):
        systems = read_multiclass_systems(score_paths)
        key = read_multiclass_key(key_path)
    reports, entries = [], []
    for system in systems:
        with step(f"align and measure {system.path}"):
            X, labels, _, classes = align_multiclass(key, system, missing=missing, other=other)
            report = multiclass_report(
                X,
                labels,
                classes,
                conditions,
                name=system.path,
                task=system.task,
                condition=system.condition,
            )
        _warn_closed_as_open(report)
        reports.append(report)
        if pages is not None:
            entries.append(
                {
                    "name": report.name,
                    "llh": X,
                    "labels": labels,
                    "class_names": list(classes),
                    "text": str(report),
                }
            )
    page = None
    if pages is not None:
        with step(f"plots in {os.fspath(plot)}", progress):
            page = pages.write_multiclass_report(
                entries, plot, size=plot_size, formats=plot_formats
            )
    return Evaluation(reports, page=page)


def _warn_closed_as_open(report):
    """A closed-set Albayzin file evaluated in the open-set condition: its out-of-set column
    was not scored to be used, and C_mce is usually above C_def (worse than the prior alone).
    """
    if report.condition != "Closed":
        return
    for result in report.results:
        if result.condition == "open":
            m = result.albayzin
            worse = (
                f": C_mce {m.c_mce:.4f} is above C_def {m.c_def:.4f}" if m.c_mce > m.c_def else ""
            )
            warnings.warn(
                f"{report.name}: a closed-set file (condition Closed) evaluated in the open-set "
                f"condition{worse}; its out-of-set column is not scored for open-set decisions "
                f"(evaluate it in the closed condition)",
                UserWarning,
                stacklevel=3,
            )


def evaluate_term_detection(
    system,
    reference,
    audio,
    queries=None,
    *,
    operating_point="sws2013",
    tolerance=0.5,
    n_tps=1.0,
    threshold=None,
    prefer="score",
    cnxe_queries="evaluated",
    progress=False,
    plot=None,
    plot_size=(800, 600),
    plot_formats=("png",),
):
    """The spoken term detection report (:func:`focal.std.term_detection_report`) of files:
    what ``focal sws`` runs.

    Parameters
    ----------
    system, reference, queries : path-like
        STDLIST / KWSLIST XML or a detection table; RTTM or a reference table; TLIST XML or a
        query table (optional).
    audio : path-like, str or float
        ECF XML or an audio table, or T_audio in seconds (a number, or a text that is one and
        names no file).
    operating_point : {"sws2013", "std2006", "sws2012"} or (P_target, C_miss, C_fa)
    tolerance, n_tps : float
        Alignment tolerance (s) and trials per second of audio.
    threshold : float, "bayes" or None
        Decide YES iff score >= threshold for ATWV; ``"bayes"``: at the Bayes threshold of the
        operating point (scores read as LLRs); None: the system's own decisions.
    prefer : {"score", "decision"}
        Alignment preference between detections competing for one occurrence
        (:func:`focal.std.align`).
    cnxe_queries : {"evaluated", "all"}
        The queries of C_nxe (:func:`focal.std.term_detection_report`).
    progress : bool or callable, default False
        Progress on stderr of each long step (tqdm).
    plot : path-like, optional
        Folder for the term-weighted DET and the HTML page
        (:func:`focal.plots.pages.write_std_report`).
    plot_size : (int, int), default (800, 600)
        Size of the figure in pixels.
    plot_formats : sequence of str, default ("png",)
        Figure formats besides PNG.

    Returns
    -------
    Evaluation
        ``reports``: the one STDReport; ``page``: the HTML page (with ``plot``).
    """
    from ..std import OperatingPoint, read_task, term_detection_report

    pages = _plots("pages") if plot is not None else None  # before any work
    if isinstance(operating_point, str):  # a name; "sws2012" is resolved with the data
        if operating_point.lower() not in OperatingPoint.NAMES:
            raise ValueError(
                f"operating_point must be one of {', '.join(OperatingPoint.NAMES)} or "
                f"(P_target, C_miss, C_fa), got {operating_point!r}"
            )
        op = operating_point
    else:
        op = OperatingPoint(*operating_point, name="given")
    if isinstance(audio, (str, os.PathLike)) and not pathlib.Path(audio).exists():
        try:
            audio = float(os.fspath(audio))
        except ValueError:
            raise ValueError(
                f"{os.fspath(audio)}: no such file (give an ECF file, an audio "
                f"table, or T_audio in seconds)"
            ) from None
    if isinstance(threshold, str):
        if threshold != "bayes":
            raise ValueError(f"threshold must be a number, 'bayes' or None, got {threshold!r}")
        where = "the operating point of a Bayes threshold"
        fixed = OperatingPoint.named(op, where=where) if isinstance(op, str) else op
        threshold = fixed.bayes_threshold
    with step(f"read {os.fspath(system)}", progress):
        task = read_task(system, reference, audio, queries, n_tps=n_tps)
    with (
        step("align and measure", progress),
        np.errstate(divide="ignore", invalid="ignore", over="ignore"),
    ):
        report = term_detection_report(
            task,
            tolerance=tolerance,
            operating_point=op,
            decision_threshold=threshold,
            prefer=prefer,
            cnxe_queries=cnxe_queries,
        )
    page = None
    if pages is not None:
        with step(f"plots in {os.fspath(plot)}", progress):
            page = pages.write_std_report(
                report, plot, text=report.to_text(), size=plot_size, formats=plot_formats
            )
    return Evaluation([report], page=page)

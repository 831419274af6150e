"""Evaluation of score files: the jobs of ``focal evaluate``, ``focal evaluate-multiclass`` and
``focal sws`` as library functions, each returning report objects that print themselves
(:class:`focal.metrics.CalibrationReport`, :class:`focal.metrics.MulticlassReport`,
:class:`focal.std.report.STDReport`).
"""

from __future__ import annotations

import os

import numpy as np

from ..io._multiclass_align import align_multiclass
from ..io.engine import iter_aligned
from ..io.multiclass import read_multiclass_key, read_multiclass_systems

__all__ = ["evaluate_binary", "evaluate_multiclass", "evaluate_term_detection"]


def evaluate_binary(
    score_paths,
    key_path,
    p_targets,
    *,
    missing="error",
    pos_label=None,
    format=None,
    key_format=None,
):
    """Calibration reports of score files read as natural-log LLRs against a key: what
    ``focal evaluate`` runs.

    Parameters
    ----------
    score_paths : sequence of path-like
        One ``model test score`` file per system, read as natural-log LLRs.
    key_path : path-like
        ``model test label`` key (:func:`focal.io.read_key`).
    p_targets : sequence
        Operating points of the DCFs (:func:`focal.metrics.calibration_report`).
    missing : {"error", "drop"}
        Trials missing from a score file or the key (:func:`focal.io.align_trials`).
    pos_label : str, optional
        The key's target label when it does not use target/nontarget, tar/non or 1/0.
    format, key_format : str or Layout, optional
        Columns of the score files and the key (:func:`focal.io.read_key_and_scores`).

    Returns
    -------
    systems : dict
        ``{path: (tar, non)}`` LLRs of each file.
    reports : list of CalibrationReport
        One per file, in the order of ``score_paths``.
    """
    from ..metrics import calibration_report, from_labels

    systems = {}
    for path, x, y, _, _ in iter_aligned(
        score_paths,
        key_path,
        format=format,
        key_format=key_format,
        pos_label=pos_label,
        missing=missing,
        ids=False,
    ):  # 'drop' drops per system
        systems[path] = from_labels(x, y)
    reports = [
        calibration_report(tar, non, operating_points=p_targets, name=name)
        for name, (tar, non) in systems.items()
    ]
    return systems, reports


def evaluate_multiclass(score_paths, key_path, conditions=None, *, missing="error", other="error"):
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
    missing, other : str
        Policies of :func:`focal.io.align_multiclass`.

    Returns
    -------
    list of MulticlassReport
        One per file and condition.
    """
    from ..metrics.multiclass_report import multiclass_report

    systems = read_multiclass_systems(score_paths)
    key = read_multiclass_key(key_path)
    reports = []
    for system in systems:
        X, labels, _, classes = align_multiclass(key, system, missing=missing, other=other)
        reports.append(
            multiclass_report(
                X,
                labels,
                classes,
                conditions,
                name=system.path,
                task=system.task,
                condition=system.condition,
            )
        )
    return reports


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
):
    """The spoken term detection report (:func:`focal.std.term_detection_report`) of files.

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
    """
    import pathlib

    from ..std import OperatingPoint, read_task, term_detection_report

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
    task = read_task(system, reference, audio, queries, n_tps=n_tps)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return term_detection_report(
            task,
            tolerance=tolerance,
            operating_point=op,
            decision_threshold=threshold,
            prefer=prefer,
            cnxe_queries=cnxe_queries,
        )

"""Training and evaluation on score files: the jobs of ``focal train``, ``focal evaluate``,
``focal train-multiclass`` and ``focal evaluate-multiclass`` as library functions.

Each reads every file once, checks what the files say about themselves (one Albayzin task and
condition for the systems of a multiclass job), and returns fitted models that carry their
input schema (:mod:`focal.schema`: system names from the file names, class names and order
from the files' headers, the score-file format) or report objects
(:class:`focal.metrics.CalibrationReport`, :class:`focal.metrics.MulticlassReport`).

References
----------
.. [1] N. Brümmer, "Measuring, refining and calibrating speaker and language information
   extracted from speech", PhD dissertation, Stellenbosch University, 2010 ("thesis").
.. [2] L. J. Rodríguez-Fuentes, N. Brümmer, M. Penagarikano, A. Varona, M. Diez and
   G. Bordel, "The Albayzin 2012 Language Recognition Evaluation Plan", evaluation plan,
   GTTS, UPV/EHU, 2012 ("Albayzin plan").
"""

from __future__ import annotations

import os

import numpy as np

from ._join import iter_aligned, read_aligned
from ._multiclass_align import align_multiclass
from ._text import BLOCK_BYTES
from .multiclass import MulticlassScores, _MulticlassReader, read_multiclass_key

__all__ = [
    "FileFit",
    "fusion_formula",
    "read_multiclass_systems",
    "check_one_task",
    "training_prior",
    "train_fusion",
    "train_multiclass_fusion",
    "evaluate_binary",
    "evaluate_multiclass",
    "evaluate_term_detection",
]


def read_multiclass_systems(paths, *, block_bytes: int = BLOCK_BYTES) -> list:
    """Each file's log-likelihoods, in the format its first record shows (Albayzin 2012 or the
    generic format with a header), each file parsed once; the files must share one task and
    condition (:func:`check_one_task`).

    Parameters
    ----------
    paths : sequence of path-like
        One file per system.
    block_bytes : int
        Bytes read and parsed at a time.

    Returns
    -------
    list of MulticlassScores
        One per file, in the order of ``paths``.
    """
    systems = []
    for path in paths:
        reader = _MulticlassReader(path, block_bytes)
        segments, llh, lines = reader.read("auto")
        systems.append(
            MulticlassScores(
                segments,
                llh,
                tuple(reader.classes),
                reader.path,
                reader.task,
                reader.condition,
                lines,
            )
        )
    check_one_task(systems)
    return systems


def check_one_task(systems) -> None:
    """Refuse multiclass files of different Albayzin tasks or conditions (or a mix of Albayzin
    and generic files): their columns and priors do not mean the same thing.

    ``systems`` are objects with ``path``, ``task`` and ``condition`` (``MulticlassScores``,
    :class:`focal.io.stream.FileLayout`).
    """

    def what(s):
        return f"{s.task} {s.condition}" if s.task else "generic format"

    first = systems[0]
    for other in systems[1:]:
        if (other.task, other.condition) != (first.task, first.condition):
            raise ValueError(
                f"{other.path}: {what(other)} differs from {first.path}'s "
                f"{what(first)}; use files of one task and condition"
            )


def training_prior(condition, classes, prior=None):
    """The training prior of a multiclass fusion on files of ``condition``.

    The one given (one value per class, zeros ignore a class), else the Albayzin 2012 closed-set
    evaluation prior for ``Closed`` files (plan eq. 2: the out-of-set class and its segments are
    ignored), else None (flat: ``Open`` files and the generic format).
    """
    from ..metrics import albayzin_prior

    n = len(classes)
    if prior is not None:
        if len(prior) != n:
            raise ValueError(f"prior: {len(prior)} values for {n} classes ({', '.join(classes)})")
        return [float(p) for p in prior]
    if condition == "Closed":
        return albayzin_prior(n, open_set=False).tolist()
    return None


class FileFit:
    """A model fitted on score files, and what a person reads about the fit (``str()``).

    Attributes
    ----------
    model : fitted estimator or Pipeline, carrying its input schema
    n_trials : int
        Training trials (segments).
    labels : ndarray
        The training labels (bool for binary: True = target; class indices for multiclass).
    """

    def __init__(self, model, labels, lines, info=None):
        self.model, self.labels, self.n_trials = model, labels, len(labels)
        self._lines = lines
        self._info = dict(info or {})

    def __str__(self) -> str:
        return "\n".join(self._lines)

    def to_dict(self) -> dict:
        """The fit's numbers as plain Python (for JSON): what ``str()`` shows."""
        return dict(self._info)


def _file_name(path) -> str:
    return os.path.basename(os.fspath(path))


def fusion_formula(fusion, names) -> str:
    """``llr = b + w1 * name1 - w2 * name2 ...`` of a fitted LogisticFusion."""
    terms = " ".join(
        f"{'-' if w < 0 else '+'} {abs(w):.6g} * {n}" for w, n in zip(fusion.coef_, names)
    )
    return f"llr = {fusion.intercept_:.6g} {terms}"


def _import_in_background(*modules):
    """A started thread importing ``modules`` while the files are read (errors: the caller's)."""
    import contextlib
    import importlib
    import threading

    def load():
        with contextlib.suppress(Exception):
            for name in modules:
                importlib.import_module(name)

    thread = threading.Thread(target=load, name="focal-imports", daemon=True)
    thread.start()
    return thread


def train_fusion(
    score_paths,
    key_path,
    *,
    p_target=0.5,
    pav=False,
    pseudo_count=1.0,
    missing="error",
    pos_label=None,
    format=None,
    key_format=None,
) -> FileFit:
    """Fit a :class:`focal.LogisticFusion` (then a :class:`focal.PAVCalibrator` if ``pav``) of
    score files against a key: what ``focal train`` runs.

    Parameters
    ----------
    score_paths : sequence of path-like
        One ``model test score`` file per system.
    key_path : path-like
        ``model test label`` key (:func:`focal.io.read_key`).
    p_target : float
        Effective target prior of the training cost (thesis sec. 8.3.2).
    pav : bool
        Follow the fusion by a PAV calibration bounded by ``pseudo_count`` virtual trials.
    pseudo_count : float, default 1.0
        Virtual trials bounding the PAV calibration's extreme LLRs.
    missing : {"error", "drop"}
        Trials missing from a score file or the key (:func:`focal.io.align_trials`).
    pos_label : str, optional
        The key's target label when it does not use target/nontarget, tar/non or 1/0.
    format, key_format : str or Layout, optional
        Columns of the score files and the key (:func:`focal.io.read_key_and_scores`);
        ``key_path`` may be None when the score files carry the labels.

    Returns
    -------
    FileFit
        The fitted model, carrying its input schema (system names from the file names,
        :func:`focal.schema.system_names`; format ``"bosaris"``), the labels and a summary.
    """
    loading = _import_in_background("sklearn.pipeline", "focal.estimators")
    X, y, _, _, key_name = read_aligned(
        score_paths,
        key_path,
        format=format,
        key_format=key_format,
        pos_label=pos_label,
        missing=missing,
        ids=False,
    )
    loading.join()
    from sklearn.pipeline import make_pipeline

    from ..estimators import LogisticFusion, PAVCalibrator
    from ..schema import set_input_schema, system_names

    fusion = LogisticFusion(p_target=p_target)
    model = make_pipeline(fusion, PAVCalibrator(pseudo_count=pseudo_count)) if pav else fusion
    model.fit(X, y)
    set_input_schema(model, systems=system_names(score_paths), format="bosaris")
    n_tar = int(y.sum())
    lines = [
        f"LogisticFusion of {len(score_paths)} system(s), trained at p_target = "
        f"{p_target:g} on {len(y):,} trials ({n_tar:,} target, {len(y) - n_tar:,} "
        f"non-target) of {key_name}:",
        f"  {fusion_formula(fusion, [_file_name(p) for p in score_paths])}   (natural-log LLR)",
        f"  training Cllr at p_target = {p_target:g}: {fusion.objective_:.4f} (1 = uninformative)",
    ]
    if pav:
        cal = model[-1]
        lines.append(
            f"  then PAVCalibrator (pseudo_count {pseudo_count:g}): {cal.llr_.size} "
            f"blocks, LLRs from {cal.llr_[0]:.4g} to {cal.llr_[-1]:.4g}"
        )
    info = {
        "p_target": float(p_target),
        "systems": [_file_name(p) for p in score_paths],
        "n_targets": n_tar,
        "n_nontargets": len(y) - n_tar,
        "coef": fusion.coef_.tolist(),
        "intercept": float(fusion.intercept_),
        "training_cllr": float(fusion.objective_),
        "pav": bool(pav),
    }
    if pav:
        info["pav_blocks"] = int(model[-1].llr_.size)
    return FileFit(model, y, lines, info)


def train_multiclass_fusion(
    score_paths, key_path, *, mode="scalar", prior=None, missing="error", other="error"
) -> FileFit:
    """Fit a :class:`focal.MulticlassFusion` of log-likelihood files against a key: what
    ``focal train-multiclass`` runs.

    Parameters
    ----------
    score_paths : sequence of path-like
        One log-likelihood file per system, Albayzin 2012 or generic, of one task and condition
        (:func:`read_multiclass_systems`); they give the class names and column order.
    key_path : path-like
        ``segment language`` key (:func:`focal.io.read_multiclass_key`).
    mode : {"scalar", "calibration", "full"}
    prior : sequence of float, optional
        Training prior over the classes; default :func:`training_prior` of the files' condition.
    missing, other : str
        Policies of :func:`focal.io.align_multiclass`.

    Returns
    -------
    FileFit
        The fitted model (``class_names`` from the files, ``classes_`` the names), carrying its
        input schema (systems, classes, format, task and condition), the labels and a summary.
    """
    from ..estimators import MulticlassFusion
    from ..schema import set_input_schema, system_names

    systems = read_multiclass_systems(score_paths)
    if mode == "calibration" and len(systems) != 1:
        raise ValueError(f"mode='calibration' takes one score file, got {len(systems)}")
    key = read_multiclass_key(key_path)
    X, labels, _, classes = align_multiclass(key, *systems, missing=missing, other=other)
    first = systems[0]
    model = MulticlassFusion(
        prior=training_prior(first.condition, classes, prior), mode=mode, class_names=list(classes)
    ).fit(X, labels)
    set_input_schema(
        model,
        systems=system_names(score_paths),
        format="albayzin" if first.task else "multiclass",
        task=first.task,
        condition=first.condition,
    )
    where = f"{first.task} {first.condition}, " if first.task else ""
    shown = "flat" if model.prior is None else ", ".join(f"{p:.4g}" for p in model.prior_)
    lines = [
        f"MulticlassFusion ({mode}) of {len(systems)} system(s) on {len(labels):,} "
        f"segments of {os.fspath(key_path)} ({where}{len(classes)} classes: "
        f"{', '.join(classes)}), prior {shown}:"
    ]
    if model.coef_.ndim == 1:
        lines += [f"  weight {w:10.6g}  {_file_name(p)}" for w, p in zip(model.coef_, score_paths)]
    lines += [
        f"  offsets {', '.join(f'{b:.4g}' for b in model.intercept_)}",
        f"  training C_mce {model.loss_:.4f} nats (prior-weighted, Albayzin eq. 6)",
    ]
    info = {
        "mode": mode,
        "classes": list(classes),
        "systems": [_file_name(p) for p in score_paths],
        "n_segments": len(labels),
        "prior": np.asarray(model.prior_, dtype=float).tolist(),
        "coef": np.asarray(model.coef_).tolist(),
        "intercept": model.intercept_.tolist(),
        "training_c_mce": float(model.loss_),
    }
    return FileFit(model, labels, lines, info)


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

"""Training on score files: the jobs of ``focal train`` and ``focal train-multiclass`` as
library functions.

Each reads every file once, checks what the files say about themselves (one Albayzin task and
condition for the systems of a multiclass job), and returns a fitted model that carries its
input schema (:mod:`focal.models.schema`: system names from the file names, class names and
order from the files' headers, the score-file format) with what a person reads about the fit.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .._progress import step
from .._text.outputs import check_output, read_secret
from ..io._multiclass_align import align_multiclass
from ..io.engine import read_aligned
from ..io.multiclass import read_multiclass_key, read_multiclass_systems

__all__ = [
    "FileFit",
    "check_score_direction",
    "display_names",
    "fusion_formula",
    "training_prior",
    "train_fusion",
    "train_multiclass_fusion",
]


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


def display_names(paths) -> list:
    """How a summary names the systems of ``paths``: their file names when these tell them apart,
    else the names the model records (:func:`focal.models.schema.system_names`, which fall back
    on the folders: ``a/scores.txt, b/scores.txt -> a, b``).
    """
    from ..models.schema import system_names

    names = [os.path.basename(os.fspath(p)) for p in paths]
    return names if len(set(names)) == len(names) else list(system_names(paths))


def check_score_direction(model, names, scores_are="llr", *, refuse=False) -> None:
    """The fusion weights of ``model`` (its first step's ``coef_``) against the direction the
    score files are said to have.

    ``scores_are="llr"``: a warning when every system gets a negative weight (lower scores mean
    target: distances, to be said so when these scores are evaluated). ``"distance"``: each
    system must get a negative weight; a positive one is warned about (``refuse=False``, after
    training) or refused (``refuse=True``, before applying a model to distances: it was not
    trained on them). A model without fusion weights cannot be checked: refused for distances.
    """
    from ..models.schema import model_steps

    if scores_are not in ("llr", "distance"):
        raise ValueError(f"scores_are must be 'llr' or 'distance', got {scores_are!r}")
    coef = getattr(model_steps(model)[0], "coef_", None)
    coef = None if coef is None or np.ndim(coef) != 1 else np.asarray(coef)
    names = [os.fspath(n) for n in names]
    if scores_are == "llr":
        if coef is not None and (coef < 0).all():
            warnings.warn(
                f"every system gets a negative weight ({', '.join(names)}): lower scores mean "
                f"target (distances?); the fusion's LLRs are right, but evaluate these scores "
                f"with scores_are='distance' (focal: --scores-are distance)",
                UserWarning,
                stacklevel=3,
            )
        return
    if coef is None:
        raise ValueError(
            "scores_are='distance' (focal: --scores-are distance): the model has no fusion "
            "weights, so whether it takes distances cannot be checked"
        )
    positive = [f"{n} ({w:+.4g})" for n, w in zip(names, coef) if w > 0]
    if positive:
        message = (
            f"scores_are='distance' (focal: --scores-are distance), but the model gives "
            f"{', '.join(positive)} a positive weight: higher scores mean target there"
        )
        if refuse:
            raise ValueError(message + "; the model was not trained on distances")
        warnings.warn(message, UserWarning, stacklevel=3)


def fusion_formula(fusion, names, log10=False) -> str:
    """``llr = b + w1 * name1 - w2 * name2 ...`` of a fitted LogisticFusion; with ``log10``,
    ``log10 LR = ...``: the same map divided by ``ln 10``.
    """
    scale = 1.0 / np.log(10.0) if log10 else 1.0
    terms = " ".join(
        f"{'-' if w < 0 else '+'} {abs(w) * scale:.6g} * {n}" for w, n in zip(fusion.coef_, names)
    )
    return f"{'log10 LR' if log10 else 'llr'} = {fusion.intercept_ * scale:.6g} {terms}"


def _output(output, signing_key, inputs):
    """The secret of ``signing_key`` (or None), once ``output`` is known to be writable without
    harm to ``inputs`` (:func:`focal._text.outputs.check_output`): both before any work.
    """
    if output is None:
        if signing_key is not None:
            raise ValueError("signing_key signs the saved model: give output too")
        return None
    paths = [os.fspath(p) for p in inputs if p is not None]
    check_output(output, paths + ([os.fspath(signing_key)] if signing_key is not None else []))
    return None if signing_key is None else read_secret(signing_key)


def _save(fit, output, secret):
    """Save ``fit.model`` to ``output`` (signed with ``secret``), as :func:`focal.save` does."""
    if output is not None:
        from ..models.persistence import save

        with step(f"write {os.fspath(output)}"):
            save(fit.model, output, key=secret)
    return fit


def train_fusion(
    score_paths,
    key_path,
    *,
    p_target=0.5,
    pav=False,
    pseudo_count=1.0,
    elub=False,
    missing="error",
    pos_label=None,
    format=None,
    key_format=None,
    scores_are="llr",
    output=None,
    signing_key=None,
    progress=False,
    log10=False,
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
    elub : bool, default False
        Clip the model's LLRs to the ELUB limits of its training LLRs
        (:func:`focal.metrics.elub_bounds`, :cite:t:`vergeer2016elub`): the strongest LRs the
        training data support (forensic practice). The last step clips: the PAV calibration
        with ``pav`` (``PAVCalibrator(bounds="elub")``), else the fusion
        (``LogisticFusion(bounds="elub")``).
    missing : {"error", "drop"}
        Trials missing from a score file or the key (:func:`focal.io.align_trials`).
    pos_label : str, optional
        The key's target label when it does not use target/nontarget, tar/non or 1/0.
    format, key_format : str or Layout, optional
        Columns of the score files and the key (as :func:`focal.io.read_scores` and
        :func:`focal.io.read_key` read them); ``key_path`` may be None when the score files carry
        the labels.
    scores_are : {"llr", "distance"}, default "llr"
        What the score files hold: scores where higher means target, or distances (lower
        means target). The fusion learns the direction (a negative weight for distances) and
        the model takes the files' own scores; this says which sign each weight should have
        (:func:`check_score_direction` warns when one does not).
    output : path-like, optional
        Save the model there (:func:`focal.save`); checked before any work.
    signing_key : path-like, optional
        File holding the secret that signs the saved model (HMAC-SHA256).
    progress : bool, default False
        Show each long step (read, fit, write) on stderr (tqdm).
    log10 : bool, default False
        The score files hold log10 likelihood-ratios and the model's output is to be read as
        log10 LRs too (:func:`apply_model` with ``log10=True``, forensic practice): the
        summary gives the fusion as ``log10 LR = ...`` and the PAV calibration's range in
        log10. The inputs are taken as they are (the fusion's affine map absorbs their scale),
        so the model, its training and its Cllr are those of ``log10=False``.

    Returns
    -------
    FileFit
        The fitted model, carrying its input schema (system names from the file names,
        :func:`focal.models.schema.system_names`; format ``"bosaris"``), the labels and a summary.
    """
    if scores_are not in ("llr", "distance"):
        raise ValueError(f"scores_are must be 'llr' or 'distance', got {scores_are!r}")
    secret = _output(output, signing_key, [*score_paths, key_path])
    with step("read and align " + ", ".join(map(os.fspath, score_paths)), progress):
        X, y, _, _, key_name = read_aligned(
            score_paths,
            key_path,
            format=format,
            key_format=key_format,
            pos_label=pos_label,
            missing=missing,
            ids=False,
        )
    from ..io.alignment import check_both_classes

    check_both_classes(int(y.sum()), y.size, key_name, None, missing, "training needs")
    from sklearn.pipeline import make_pipeline

    from ..estimators import LogisticFusion, PAVCalibrator
    from ..models.schema import set_input_schema, system_names

    # the last step clips to the ELUB limits of its own training LLRs
    fusion = LogisticFusion(p_target=p_target, bounds="elub" if elub and not pav else None)
    pav_step = PAVCalibrator(pseudo_count=pseudo_count, bounds="elub" if elub else None)
    model = make_pipeline(fusion, pav_step) if pav else fusion
    with step(f"fit on {len(y):,} trials", progress):
        model.fit(X, y)
    set_input_schema(model, systems=system_names(score_paths), format="bosaris")
    names = display_names(score_paths)
    check_score_direction(model, names, scores_are)
    n_tar = int(y.sum())
    lines = [
        f"LogisticFusion of {len(score_paths)} system(s), trained at p_target = "
        f"{p_target:g} on {len(y):,} trials ({n_tar:,} target, {len(y) - n_tar:,} "
        f"non-target) of {key_name}:",
        f"  {fusion_formula(fusion, names, log10)}   "
        + ("(as focal apply --log10 writes)" if log10 else "(natural-log LLR)"),
        f"  training Cllr at p_target = {p_target:g}: {fusion.objective_:.4f} (1 = uninformative)",
    ]
    unit = np.log(10.0) if log10 else 1.0
    if pav:
        cal = model[-1]
        low, high = cal.llr_[[0, -1]] / unit
        lines.append(
            f"  then PAVCalibrator (pseudo_count {pseudo_count:g}): {cal.llr_.size} "
            f"blocks, {'log10 LRs' if log10 else 'LLRs'} from {low:.4g} to {high:.4g}"
        )
    clipper = model[-1] if pav else fusion  # the step that clips with elub
    if elub:
        low, high = clipper.bounds_ / unit
        lines.append(
            f"  {'PAV' if pav else 'fused'} {'log10 LRs' if log10 else 'LLRs'} clipped to the "
            f"ELUB limits of the training LLRs (Vergeer et al. 2016): {low:.4g} to {high:.4g}"
        )
    info = {
        "p_target": float(p_target),
        "systems": names,
        "n_targets": n_tar,
        "n_nontargets": len(y) - n_tar,
        "coef": fusion.coef_.tolist(),
        "intercept": float(fusion.intercept_),
        "training_cllr": float(fusion.objective_),
        "pav": bool(pav),
        "log10": bool(log10),
    }
    if log10:  # the printed formula's numbers
        info["coef_log10"] = (fusion.coef_ / np.log(10.0)).tolist()
        info["intercept_log10"] = float(fusion.intercept_ / np.log(10.0))
    if pav:
        info["pav_blocks"] = int(model[-1].llr_.size)
    if elub:  # nats
        info["elub"] = clipper.bounds_.tolist()
    return _save(FileFit(model, y, lines, info), output, secret)


def train_multiclass_fusion(
    score_paths,
    key_path,
    *,
    mode="scalar",
    prior=None,
    missing="error",
    other="error",
    output=None,
    signing_key=None,
    progress=False,
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
    output : path-like, optional
        Save the model there (:func:`focal.save`); checked before any work.
    signing_key : path-like, optional
        File holding the secret that signs the saved model (HMAC-SHA256).
    progress : bool, default False
        Show each long step (read, fit, write) on stderr (tqdm).

    Returns
    -------
    FileFit
        The fitted model (``class_names`` from the files, ``classes_`` the names), carrying its
        input schema (systems, classes, format, task and condition), the labels and a summary.
    """
    from ..estimators import MulticlassFusion
    from ..models.schema import set_input_schema, system_names

    secret = _output(output, signing_key, [*score_paths, key_path])
    with step("read and align " + ", ".join(map(os.fspath, score_paths)), progress):
        systems = read_multiclass_systems(score_paths)
        if mode == "calibration" and len(systems) != 1:
            raise ValueError(f"mode='calibration' takes one score file, got {len(systems)}")
        key = read_multiclass_key(key_path)
        X, labels, _, classes = align_multiclass(key, *systems, missing=missing, other=other)
    first = systems[0]
    model = MulticlassFusion(
        prior=training_prior(first.condition, classes, prior), mode=mode, class_names=list(classes)
    )
    with step(f"fit on {len(labels):,} segments", progress):
        model.fit(X, labels)
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
        lines += [
            f"  weight {w:10.6g}  {n}" for w, n in zip(model.coef_, display_names(score_paths))
        ]
    lines += [
        f"  offsets {', '.join(f'{b:.4g}' for b in model.intercept_)}",
        f"  training C_mce {model.loss_:.4f} nats (prior-weighted, Albayzin eq. 6)",
    ]
    info = {
        "mode": mode,
        "classes": list(classes),
        "systems": display_names(score_paths),
        "n_segments": len(labels),
        "prior": np.asarray(model.prior_, dtype=float).tolist(),
        "coef": np.asarray(model.coef_).tolist(),
        "intercept": model.intercept_.tolist(),
        "training_c_mce": float(model.loss_),
    }
    return _save(FileFit(model, labels, lines, info), output, secret)

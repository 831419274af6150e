"""Cohort score normalization of ``model test score`` files (z-, t-, s- and adaptive s-norm).

Cohort files are ordinary score files:

- enrolment cohort: ``model cohort_segment score`` — every enrolment model against every cohort
  segment (rows: the models, first column);
- test cohort: ``cohort_model test_segment score`` — every cohort model against every test
  segment (rows: the segments, *second* column, as in any score file the model comes first).

Each must cover its full grid (rows x cohort members). The trial file is streamed a chunk at a
time, so its size is not limited by memory; the cohort statistics are one mean and standard
deviation per model or segment (:class:`focal.estimators.normalization.ScoreNormalizer`).
"""

from __future__ import annotations

import os

import numpy as np

from .._progress import Progress, logger, step
from .._text.blocks import BLOCK_BYTES
from .._text.outputs import check_output, write_output
from ..io.binary import TrialScores, read_scores
from ..io.stream import iter_score_chunks
from .apply import _write_chunk

__all__ = ["cohort_matrix", "normalize_files"]


def cohort_matrix(cohort: TrialScores, rows: str):
    """``(row_ids, matrix)`` of a cohort score file, rows from the ``"models"`` or ``"tests"``
    column and one column per cohort member; a grid with holes is a ValueError naming the file.
    """
    if rows not in ("models", "tests"):
        raise ValueError(f"rows must be 'models' or 'tests', got {rows!r}")
    row_col, member_col = (
        (cohort.models, cohort.tests) if rows == "models" else (cohort.tests, cohort.models)
    )
    row_ids, r = np.unique(row_col, return_inverse=True)
    members, c = np.unique(member_col, return_inverse=True)
    if row_ids.size * members.size != cohort.scores.size:
        raise ValueError(
            f"{cohort.path}: cohort scores must cover every ({rows[:-1]}, cohort) "
            f"pair: {cohort.scores.size} of {row_ids.size} x {members.size} present"
        )
    M = np.empty((row_ids.size, members.size))
    M[r.ravel(), c.ravel()] = cohort.scores  # read_scores refuses repeated pairs
    return row_ids, M


def normalize_files(
    trials,
    output,
    *,
    method="s-norm",
    top_n=None,
    enrol_cohort=None,
    test_cohort=None,
    chunk_size: int = 1 << 16,
    block_bytes: int = BLOCK_BYTES,
    progress=False,
):
    """Normalize the scores of a ``model test score`` file and write them in the same format.

    Parameters
    ----------
    trials : path-like
        The trial scores to normalize.
    output : path-like
        Written whole or not at all (:func:`focal._text.outputs.write_output`); never one of the
        inputs, by any path.
    method : {"s-norm", "z-norm", "t-norm", "as-norm"}
    top_n : int, optional
        Cohort members per side for adaptive s-norm.
    enrol_cohort, test_cohort : path-like, optional
        The cohort score files (see the module docstring); z-norm needs the first, t-norm the
        second, the s-norms both.
    chunk_size, block_bytes : int
        Trials per chunk and bytes read at a time.
    progress : bool or callable, default False
        A tqdm bar over the trials written (the ``progress`` extra), or a callable given the
        number of trials written so far.

    Returns
    -------
    ScoreNormalizer
        The fitted normalizer (its cohort statistics per model and segment).

    Raises
    ------
    ValueError
        Before any work: the output cannot be written or is an input. Before writing: a
        cohort grid with holes, cohort statistics that overflow float64 (naming the cohort
        file and the model or segment). While writing (the output is then not created): a
        trial without cohort statistics, or a normalized score that is not finite
        (``path:line`` of the trial).
    """
    from ..estimators.normalization import ScoreNormalizer

    norm = ScoreNormalizer(method=method, top_n=top_n)
    use_enrol, use_test = norm._sides()  # parameter errors before reading anything
    trials, output = os.fspath(trials), os.fspath(output)
    paths = [trials] + [os.fspath(p) for p in (enrol_cohort, test_cohort) if p is not None]
    check_output(output, paths)  # by device and inode, before any work
    E = T = e_ids = t_ids = None
    if use_enrol and enrol_cohort is None:
        raise ValueError(f"method {method!r} needs enrol_cohort (model vs cohort scores)")
    if use_test and test_cohort is None:
        raise ValueError(f"method {method!r} needs test_cohort (cohort vs test scores)")
    if use_enrol:
        with step(f"read {os.fspath(enrol_cohort)}", progress):
            e_ids, E = cohort_matrix(read_scores(enrol_cohort), "models")
    if use_test:
        with step(f"read {os.fspath(test_cohort)}", progress):
            t_ids, T = cohort_matrix(read_scores(test_cohort), "tests")
    with step("cohort statistics"), np.errstate(over="ignore", invalid="ignore"):
        norm.fit(E, T, enrol_ids=e_ids, test_ids=t_ids)  # refused below, naming the file
    _check_statistics(norm, {"enrol": enrol_cohort, "test": test_cohort})
    logger.info(
        "%s: %d enrolment and %d test cohort rows",
        method,
        0 if E is None else E.shape[0],
        0 if T is None else T.shape[0],
    )
    with (
        step(f"normalize {trials} into {output}"),
        write_output(output, paths) as out,
        Progress(progress, None, "trials") as bar,
    ):
        for chunk in iter_score_chunks(
            [trials], chunk_size=chunk_size, block_bytes=block_bytes, threads=0
        ):
            models, tests = chunk.ids
            for use, ids, known, what, cohort in (
                (use_enrol, models, e_ids, "model", enrol_cohort),
                (use_test, tests, t_ids, "test segment", test_cohort),
            ):
                if not use or known is None:
                    continue
                unknown = np.flatnonzero(~np.isin(ids, known))
                if len(unknown):
                    i = int(unknown[0])
                    raise ValueError(
                        f"{trials}:{int(chunk.lines[i])}: {what} "
                        f"{ids[i].decode('utf-8', 'replace')!r} has no scores in "
                        f"the cohort file {os.fspath(cohort)}"
                    )
            with np.errstate(over="ignore", invalid="ignore"):  # refused below, with the line
                Y = norm.transform(
                    chunk.X[:, 0], models if use_enrol else None, tests if use_test else None
                )
            _check_finite(Y, chunk, trials, method)
            _write_chunk(out, chunk, Y)
            bar.update(len(chunk))
    return norm


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _check_statistics(norm, cohorts) -> None:
    """Refuse cohort statistics that are not finite (scores near the float64 limit overflow
    the mean or the standard deviation), naming the cohort file and the row.
    """
    for side, what in (("enrol", "model"), ("test", "test segment")):
        ids = getattr(norm, f"{side}_ids_")
        if ids is None:
            continue
        mean, std = getattr(norm, f"{side}_mean_"), getattr(norm, f"{side}_std_")
        bad = ~(np.isfinite(mean) & np.isfinite(std))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{os.fspath(cohorts[side])}: the cohort scores of {what} {_text(ids[i])!r} "
                f"overflow float64 (mean {mean[i]:g}, standard deviation {std[i]:g}; "
                f"{int(bad.sum())} {what}(s) so): scale the scores down; nothing was written"
            )


def _check_finite(Y, chunk, trials, method) -> None:
    """Refuse a normalized score that is not finite, naming the trial's line."""
    bad = ~np.isfinite(Y)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        models, tests = chunk.ids
        where = f"{trials}:{int(chunk.lines[i])}" if chunk.lines is not None else trials
        raise ValueError(
            f"{where}: the {method} score of trial ({_text(models[i])}, {_text(tests[i])}) is "
            f"{Y[i]:g}: the score {chunk.X[i, 0]:g} is too far from its cohort statistics for "
            "float64; nothing was written"
        )

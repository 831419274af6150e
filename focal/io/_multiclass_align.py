"""Multiclass scores aligned on the segment names: with a key (:func:`align_multiclass`, labels
0..N-1 in the class order) or without (:func:`align_multiclass_scores`, in the first system's
order), the systems' log-likelihood blocks side by side and their class columns matched by name.

Public through :mod:`focal.io`.

References
----------
.. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

import numpy as np

from .._text.fields import as_id_array, ids_text
from ._ids import check_matched, check_unique, match_ids
from .engine import check_missing
from .multiclass import _OOS_NAMES, MulticlassKey, MulticlassScores

__all__ = ["align_multiclass", "align_multiclass_scores"]


def _class_index(key, classes, other):
    """Labels 0..N-1 of the key's languages (case-insensitive class names)."""
    lowered = np.char.lower(as_id_array(key.languages, "languages"))
    names = [c.lower().encode() for c in classes]
    labels = np.full(len(key), -1, dtype=np.int64)
    for j, name in enumerate(names):
        labels[lowered == name] = j
    oos = names[-1].decode() in _OOS_NAMES
    if oos:
        for alias in _OOS_NAMES:
            labels[lowered == alias.encode()] = len(names) - 1
    unknown = labels < 0
    if unknown.any():
        if other == "oos":
            if not oos:
                raise ValueError(
                    "other='oos' needs an out-of-set class (named 'OOS') as the last "
                    f"class; the classes are {', '.join(classes)}"
                )
            labels[unknown] = len(names) - 1
        else:
            i = int(np.argmax(unknown))
            where = f"{key.path}:{key.lines.line(i)}" if key.lines is not None else f"key[{i}]"
            raise ValueError(
                f"{where}: unknown language {ids_text(key.languages[i])!r} (classes: "
                f"{', '.join(classes)}); use other='oos' (focal: --other oos) to count "
                f"languages outside the classes as out-of-set"
            )
    return labels


def align_multiclass(
    key: MulticlassKey, *systems: MulticlassScores, missing: str = "error", other: str = "error"
):
    """Align several systems' log-likelihoods with the key on the segment name, exactly.

    Parameters
    ----------
    key : MulticlassKey
        The key: the true language of each segment.
    *systems : MulticlassScores
        One per system; they must have the same classes (the generic format may list them in
        another order: columns are reordered to the first system's order).
    missing : {"error", "drop"}
        A key segment without scores in some system, or a scored segment absent from the key:
        ``"error"`` raises ``ValueError`` with the count and the first segment names; ``"drop"``
        keeps only the key segments present in every system.
    other : {"error", "oos"}
        A key language that is not one of the classes: an error, or (``"oos"``) the out-of-set
        class, for keys that name the actual OOS language.

    Returns
    -------
    X : ndarray, shape (n_segments, n_systems * n_classes)
        The systems' log-likelihood blocks side by side (system k in columns
        ``k * n_classes : (k + 1) * n_classes``), segments in key order.
    labels : ndarray of int, shape (n_segments,)
        True class index 0..N-1 of each row.
    segments : ndarray of bytes
        The segment names of the rows.
    classes : tuple of str
        The class of each column of a block.
    """
    check_missing(missing)
    if other not in ("error", "oos"):
        raise ValueError(f"other must be 'error' or 'oos', got {other!r}")
    if not systems:
        raise ValueError("align_multiclass needs at least one system's scores")
    classes = tuple(systems[0].classes)
    labels = _class_index(key, classes, other)
    X, keep = _blocks(key, f"key {key.path}".rstrip(), systems, classes, missing)
    if not keep.any():
        raise ValueError("no segment is present in the key and in every score file")
    return X[keep], labels[keep], key.segments[keep], classes


def align_multiclass_scores(*systems: MulticlassScores, missing: str = "error"):
    """Align several systems on the segment name, in the first system's order (no key).

    Parameters
    ----------
    *systems : MulticlassScores
        One per system, with the same classes.
    missing : {"error", "drop"}
        A segment missing from some system: raise ``ValueError`` (``"error"``) or keep only
        the segments present in every system (``"drop"``).

    Returns
    -------
    X : ndarray, shape (n_segments, n_systems * n_classes)
        The systems' log-likelihood blocks side by side, as in :func:`align_multiclass`.
    segments : ndarray of bytes
        The segment names of the rows, in the first system's order.
    classes : tuple of str
        The class of each column of a block.
    """
    check_missing(missing)
    if not systems:
        raise ValueError("align_multiclass_scores needs at least one system's scores")
    first = systems[0]
    classes = tuple(first.classes)
    X, keep = _blocks(first, f"first score file {first.path}".rstrip(), systems, classes, missing)
    if not keep.any():
        raise ValueError("no segment is present in every score file")
    return X[keep], first.segments[keep], classes


def _blocks(reference, reference_name, systems, classes, missing):
    """Each system's llh at the reference's (the key's, or the first system's) segments, side by
    side; mask of rows found everywhere. A segment repeated in a reference or system made in
    memory is refused (matching would take one of the two silently).
    """
    ref_ids = (as_id_array(reference.segments, "segments"),)
    if reference.lines is None:  # made in memory (a reader's objects were checked as read)
        check_unique(
            ref_ids, reference.path or ("key" if reference is not systems[0] else "scores")
        )
    keep = np.ones(len(ref_ids[0]), dtype=bool)
    blocks = []
    for system in systems:
        if not isinstance(system, MulticlassScores):
            raise ValueError(f"expected MulticlassScores, got {type(system).__name__}")
        order = _column_order(system, classes)
        ids = (as_id_array(system.segments, "segments"),)
        if system is not reference and system.lines is None:
            check_unique(ids, system.path or "scores")
        where = match_ids(ref_ids, ids)
        found = where >= 0
        if missing == "error":
            check_matched(
                where,
                len(system),
                system.path or "scores",
                reference_name,
                "segment",
                "scores",
                lambda i: ", ".join(ids_text(reference.segments[k]) for k in i[:3]),
                lambda i, s=system: ", ".join(ids_text(s.segments[k]) for k in i[:3]),
            )
        keep &= found
        blocks.append(np.asarray(system.llh, dtype=np.float64)[np.maximum(where, 0)][:, order])
    return np.concatenate(blocks, axis=1), keep


def _column_order(system, classes):
    names = list(system.classes)
    if sorted(names) != sorted(classes):
        raise ValueError(
            f"{system.path or 'scores'}: classes {', '.join(names)} differ from the "
            f"first system's {', '.join(classes)}"
        )
    return np.array([names.index(c) for c in classes], dtype=np.int64)

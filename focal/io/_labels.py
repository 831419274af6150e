"""Key labels of binary trial files: the target / non-target words a key may use, or a named
target label (``pos_label``), read as a boolean column without a Python call per line.

Labels: ``target`` / ``nontarget`` (also ``non-target``), ``tar`` / ``non``, ``1`` / ``0``,
``true`` / ``false``, ``impostor`` (any case). With a named target label, every other trial
must carry one other label (focal's label rule for binary labels).
"""

from __future__ import annotations

import numpy as np

from .._text.fields import ids_text

__all__ = ["NONTARGET", "TARGET", "label_column", "namedlabel_column"]

TARGET = (b"target", b"tar", b"1", b"true")
NONTARGET = (b"nontarget", b"non-target", b"non", b"0", b"false", b"impostor")
# the target word keys pair with a non-target word (for messages)
_PAIRS = {b"non": b"tar", b"0": b"1", b"false": b"true", b"impostor": b"genuine"}


def _lower(words):
    """ASCII lower case of a bytes array (same width), without a Python call per word."""
    raw = np.ascontiguousarray(words).view(np.uint8).copy()
    raw |= ((raw >= 65) & (raw <= 90)).view(np.uint8) << 5
    return raw.view(words.dtype)


def _one_of(words, choices):
    """Whether each word of a bytes array (width a multiple of 8) is one of ``choices``."""
    width = words.dtype.itemsize
    table = np.array([c for c in choices if len(c) <= width], dtype=f"S{width}")
    rows = np.ascontiguousarray(words).view(np.uint64).reshape(words.size, -1)
    table = table.view(np.uint64).reshape(table.size, -1)
    found = np.zeros(words.size, dtype=bool)
    for choice in table:
        same = rows[:, 0] == choice[0]
        for j in range(1, rows.shape[1]):
            same &= rows[:, j] == choice[j]
        found |= same
    return found


def label_column(raw, lines, path):
    """Whether each label word (a bytes array, width a multiple of 8; ``lines`` their lines) is a
    target word, every word one of focal's (the module notes), any other refused with its line.
    """
    words = _lower(raw)
    target = _one_of(words, TARGET)
    known = target | _one_of(words, NONTARGET)
    if not known.all():
        i = int(np.argmin(known))
        raise ValueError(f"{path}:{int(lines[i])}: {unknown_label(ids_text(raw[i]))}")
    return target


def unknown_label(word):
    """The message refusing label ``word``: the words focal knows, and how to name a target."""
    return (
        f"unknown label {word!r} (focal knows target/nontarget, tar/non, 1/0, true/false and "
        f"impostor); if {word!r} marks the target trials, say so: --pos-label {word} "
        f"(pos_label={word!r})"
    )


def namedlabel_column(pos_label):
    """The label column of a key whose target label is ``pos_label`` (exact), all other trials
    carrying one other label (focal's label rule, ``as_binary_labels``).

    A ``pos_label`` that is one of focal's non-target words (``nontarget``, ``non``, ``0``,
    ``false``, ``impostor``, any case) is refused: such a key says in its own words which
    trials are targets, and taking its non-targets as targets would invert every label.
    """
    target_word = str(pos_label).encode()
    if target_word.lower() in NONTARGET:
        target = _PAIRS.get(target_word.lower(), b"target").decode()
        raise ValueError(
            f"pos_label {pos_label!r} (--pos-label) names the non-target trials: focal reads "
            f"{pos_label!r} as a non-target label, so taking it as the target label would "
            f"invert every label; give the label of the target trials (e.g. {target!r}), or "
            f"no pos_label for a key labelled target/nontarget, tar/non, 1/0 or true/false"
        )
    other = []

    def column(words, lines, path):
        target = words == target_word
        rest = words[~target]
        if rest.size:
            if not other:
                other.append(rest[0])
            wrong = words != other[0]
            wrong &= ~target
            if wrong.any():
                i = int(np.argmax(wrong))
                raise ValueError(
                    f"{path}:{int(lines[i])}: label {ids_text(words[i])!r} is "
                    f"neither the target label {pos_label!r} (pos_label) nor the "
                    f"non-target label {ids_text(other[0])!r} seen before"
                )
        return target

    return column

"""Column layouts of binary trial files: which field is the model, the test, the score, the label.

Score and key files of the field differ only in the order of their columns and in an optional
header line:

============  ==========================================  =====================================
preset        score file                                  key file
============  ==========================================  =====================================
bosaris       ``model test score``                        ``model test label``
kaldi         ``enrol test score``                        ``enrol test target|nontarget``
nist-sre      ``modelid segmentid side LLR`` (header)     ``modelid segmentid side targettype``
wespeaker     ``enrol test score label``                  the same file
speechbrain   ``enrol test label score``                  the same file
voxceleb      ``enrol test score``                        ``label enrol test`` (trial lists)
============  ==========================================  =====================================

A :class:`Layout` gives each column a role (``model``, ``test``, ``score``, ``label``; ``-``
ignores a column) by position, by header name, or both (``nist-sre``: positions, checked
against the header names when the file has a header). :func:`parse_layout` reads the
``--columns`` text: roles by position (``"label model test"``, ``"model test - score"``) or by
header name (``"model=modelid test=segmentid score=LLR"``). Role synonyms: ``enrol`` /
``enroll`` for model, ``segment`` for test, ``llr`` for score, ``key`` for label.

Header lines are recognised, never guessed: the first line (after comments and blank lines) is a
header only when every field of it is a non-numeric name and the fields in the score and label
columns are column names (``score``, ``llr``, ``label``, ``targettype`` ...) or the names the
layout asks for. A first line that is neither a record nor such a header is an error naming the
file and the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._labels import unknown_label

__all__ = [
    "PRESETS",
    "ROLES",
    "Layout",
    "default_key_format",
    "key_layout",
    "parse_layout",
    "resolve_layout",
    "score_layout",
]

ROLES = ("model", "test", "score", "label")
_SYNONYMS = {"-": None} | {
    word: role
    for role, words in {
        "model": ("model", "enrol", "enroll", "enrolment", "enrollment"),
        "test": ("test", "segment"),
        "score": ("score", "llr"),
        "label": ("label", "key"),
    }.items()
    for word in words
}
#: column names that make a first line a header (lower case), per value role
HEADER_NAMES = {
    "score": {"score", "scores", "llr", "llrs", "lr", "logit", "similarity", "cosine"},
    "label": {
        "label",
        "labels",
        "key",
        "targettype",
        "target_type",
        "trial_type",
        "truth",
        "lab",
        "is_target",
        "target/nontarget",
        "class",
    },
}
_NUMBER = re.compile(
    rb"^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|infinity|nan)$", re.IGNORECASE
)


@dataclass(frozen=True)
class Layout:
    """Roles of the columns of a trial file.

    Parameters
    ----------
    roles : tuple of str or None, optional
        The role of each column by position (``None`` ignores the column); also the number of
        fields of a record.
    names : dict, optional
        ``{role: header name}``: the columns found by name in the file's header line (which is
        then required unless ``roles`` also gives the positions).
    name : str
        What error messages call the layout (a preset name or the ``--columns`` text).
    optional : int, default 0
        How many of the last ``roles`` a file may lack (wespeaker's label: its scorer writes
        ``enrol test score`` for a trial list without labels); every record of a file has the
        number of fields of its first.
    """

    roles: tuple | None = None
    names: dict = field(default_factory=dict)
    name: str = "bosaris"
    optional: int = 0

    def __post_init__(self):
        if self.roles is None and not self.names:
            raise ValueError("a layout needs the roles of its columns (by position or by name)")
        if self.roles is not None:
            given = [r for r in self.roles if r is not None]
            if len(set(given)) != len(given):
                raise ValueError(f"layout {self.name!r}: a role is given twice")
        for role in list(self.names) + [r for r in self.roles or () if r is not None]:
            if role not in ROLES:
                raise ValueError(
                    f"layout {self.name!r}: unknown role {role!r} (one of {', '.join(ROLES)})"
                )

    def has(self, role) -> bool:
        """Whether the layout has a column of ``role``."""
        return role in self.names or (self.roles is not None and role in self.roles)

    def describe(self) -> str:
        """The columns as error messages show them, e.g. ``'model test score'``."""
        if self.roles is not None:
            words = [r or "-" for r in self.roles]
            if self.optional:
                words[-self.optional :] = [f"[{w}]" for w in words[-self.optional :]]
            return "'" + " ".join(words) + "'"
        return "'" + " ".join(f"{r}={n}" for r, n in self.names.items()) + "'"


_SCORE = ("model", "test", "score")
_KEY = ("model", "test", "label")
_NIST_NAMES = {"model": "modelid", "test": "segmentid"}
#: (score layout, key layout) of each preset
PRESETS = {
    "bosaris": (Layout(_SCORE, name="bosaris"), Layout(_KEY, name="bosaris")),
    "kaldi": (Layout(_SCORE, name="kaldi"), Layout(_KEY, name="kaldi")),
    "nist-sre": (
        Layout(("model", "test", None, "score"), dict(_NIST_NAMES, score="LLR"), name="nist-sre"),
        Layout(
            ("model", "test", None, "label"), dict(_NIST_NAMES, label="targettype"), name="nist-sre"
        ),
    ),
    "wespeaker": (Layout(("model", "test", "score", "label"), name="wespeaker", optional=1),) * 2,
    "speechbrain": (Layout(("model", "test", "label", "score"), name="speechbrain"),) * 2,
    "voxceleb": (
        Layout(_SCORE, name="voxceleb"),
        Layout(("label", "model", "test"), name="voxceleb"),
    ),
}


def parse_layout(text: str) -> Layout:
    """A :class:`Layout` from the ``--columns`` text.

    ``"label model test"`` names the roles by position (``-`` skips a column);
    ``"model=modelid test=segmentid score=LLR"`` finds the columns by header name. Fields may
    also be separated by commas.
    """
    words = [w for w in re.split(r"[\s,]+", text.strip()) if w]
    if not words:
        raise ValueError(
            "--columns: empty; give the role of each column, e.g. 'model test "
            "score' or 'model=modelid test=segmentid score=LLR'"
        )
    named = ["=" in w for w in words]
    if any(named) and not all(named):
        raise ValueError(
            f"--columns {text!r}: give every role by position or every role by "
            f"name (role=header_name), not a mix"
        )
    if all(named):
        pairs = [w.partition("=") for w in words]
        return Layout(None, {_role(role, text): header for role, _, header in pairs}, name=text)
    return Layout(tuple(_role(w, text) for w in words), name=text)


def _role(word, text):
    try:
        return _SYNONYMS[word.lower()]
    except KeyError:
        raise ValueError(
            f"--columns {text!r}: unknown role {word!r} (model/enrol, test/segment, "
            f"score/llr, label/key, or - to skip a column)"
        ) from None


def _as_layout(spec, which):
    """The layout ``spec`` names (None: bosaris) of a score file (``which`` 0) or a key (1),
    refused unless it has the model, test and score (label) columns.
    """
    spec = "bosaris" if spec is None else spec
    if isinstance(spec, Layout):
        layout = spec
    elif not isinstance(spec, str):
        raise ValueError(
            f"format must be a preset name, a --columns text or a Layout, got {type(spec).__name__}"
        )
    elif spec in PRESETS:
        layout = PRESETS[spec][which]
    elif re.fullmatch(r"[A-Za-z-]+", spec) and spec.lower() not in _SYNONYMS:
        raise ValueError(
            f"unknown format {spec!r} (one of {', '.join(PRESETS)}, or the "
            f"columns, e.g. 'model test score')"
        )
    else:
        layout = parse_layout(spec)
    missing = [r for r in ("model", "test", ("score", "label")[which]) if not layout.has(r)]
    if missing:
        raise ValueError(
            f"format {layout.name!r} has no {', '.join(missing)} column for a "
            f"{('score file', 'key')[which]} (it has {layout.describe()})"
        )
    return layout


def score_layout(spec=None) -> Layout:
    """The layout of a score file: a preset name, a ``--columns`` text or a :class:`Layout`
    (default ``bosaris``); it must have model, test and score columns.
    """
    return _as_layout(spec, 0)


def key_layout(spec=None) -> Layout:
    """The layout of a key file (default ``bosaris``); model, test and label columns."""
    return _as_layout(spec, 1)


def default_key_format(format=None):
    """The key layout that goes with a score ``format``: the preset's own key layout, the same
    columns when they include a label, else ``bosaris``.
    """
    if format is None or (isinstance(format, str) and format in PRESETS):
        return key_layout(format)
    layout = score_layout(format)
    return layout if layout.has("label") else key_layout(None)


def is_number(word: bytes) -> bool:
    """Whether a field reads as a number (the header rule: a header has none)."""
    return bool(_NUMBER.match(word))


def resolve_layout(layout: Layout, first: list, path: str, line: int, value_ok, later=list):
    """Where each role's column is, and whether the first line is a header.

    Parameters
    ----------
    layout : Layout
    first : list of bytes
        The fields of the file's first line that is not blank or a comment.
    path, line : str, int
        For error messages.
    value_ok : callable
        ``value_ok(role, word)``: whether ``word`` is a valid value of a ``score`` or ``label``
        column (so that the line is a record).
    later : callable, optional
        ``later()``: the fields of the next lines (a list of lists of bytes), read only to
        word an error (a label word on several lines is a label, not a column name).

    Returns
    -------
    columns : dict
        ``{role: column index}``.
    n_fields : int
        Fields of a record.
    header : bool
        Whether the first line is a header (to be skipped).
    """
    words = [w.decode("utf-8", "replace") for w in first]
    if layout.names:
        found = _by_name(layout, words)
        if found is not None:  # the header names the columns: as many as it has
            return found, len(words), True
        if layout.roles is None:
            raise ValueError(
                f"{path}:{line}: no header line naming the columns "
                f"{', '.join(repr(v) for v in layout.names.values())} (found "
                f"{' '.join(words)!r})"
            )
    roles = layout.roles
    assert roles is not None  # without roles, a Layout with names has returned or raised above
    if layout.optional and len(first) == len(roles) - layout.optional:
        roles = roles[: len(first)]  # a file without the optional columns
    columns = {r: i for i, r in enumerate(roles) if r is not None}
    n = len(roles)
    if len(first) != n:
        return columns, n, False  # the reader's field-count error names the line
    values = [r for r in ("score", "label") if r in columns]
    if all(value_ok(r, first[columns[r]]) for r in values):
        return columns, n, False
    if any(is_number(w) for w in first):
        return columns, n, False  # not a header: the reader names the bad value
    if all(words[columns[r]].lower() in HEADER_NAMES[r] for r in values):
        return columns, n, True
    bad = next(r for r in values if not value_ok(r, first[columns[r]]))
    word = words[columns[bad]]
    if bad == "label" and any(
        len(fields) == n and fields[columns[bad]] == first[columns[bad]] for fields in later()
    ):  # the word labels other trials too: a label, not a column name
        raise ValueError(f"{path}:{line}: {unknown_label(word)}")
    raise ValueError(
        f"{path}:{line}: {word!r} in the {bad} column is neither a "
        f"{bad} nor a header name focal knows ({', '.join(sorted(HEADER_NAMES[bad]))}); "
        f"name the columns with --columns, e.g. 'model=... test=... {bad}=...'"
        + (
            f", or, if {word!r} is the label of the target trials, pass --pos-label {word}"
            if bad == "label"
            else ""
        )
    )


def _by_name(layout, words):
    """``{role: index}`` when every name of the layout is in ``words`` once, else None."""
    out = {}
    for role, name in layout.names.items():
        hits = [i for i, w in enumerate(words) if w == name]
        if not hits:
            hits = [i for i, w in enumerate(words) if w.lower() == name.lower()]
        if len(hits) != 1:
            return None
        out[role] = hits[0]
    if layout.roles is not None:
        for i, r in enumerate(layout.roles[: len(words)]):
            if r is not None:
                out.setdefault(r, i)
    return out

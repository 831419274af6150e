"""Data model of a spoken term detection (STD / query-by-example search) evaluation.

A *task* is what the MediaEval SWS 2013 measures (SWS plan [1]_) are computed from:

* the system's **detections**: query id, audio file (and channel), start time ``tbeg`` and duration
  ``dur`` in seconds, a score (more positive = more likely; a natural-log LLR when C_nxe is
  wanted) and the hard YES/NO decision;
* the **reference** occurrences of each query: query id, file (and channel), ``tbeg``, ``dur``;
* the total audio duration ``t_audio`` (seconds) and the number of trials per second ``n_tps``
  (default 1), which define ``N = n_tps * T_audio`` trials per query (plan eq. 2);
* optionally the **term list**: the set of queries Q that were searched.

Everything here validates its input once (clear ``ValueError`` naming the argument) and stores new
NumPy arrays; it never modifies the caller's data.

References
----------
.. [1] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..core.operating_point import OperatingPoint
from ..core.validation import as_binary_labels, as_score_array, check_positive

__all__ = [
    "Detections",
    "Reference",
    "STDTask",
    "ECF",
    "SWS2013",
    "STD2006",
    "factorize",
]


def _as_labels(values, name: str, n: int | None) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries, expected {n}")
    if arr.size == 0:
        return np.zeros(0, dtype=object)
    if arr.dtype.kind == "f":
        raise ValueError(f"{name} must hold identifiers (strings or integers), got floats")
    if arr.dtype.kind == "O" and (arr == None).any():  # noqa: E711 - elementwise, in C
        raise ValueError(f"{name} contains None")
    return arr.copy()


def _set_located(obj, prefix: str) -> int:
    """Validate and store (as new arrays) the query, file, tbeg, dur and channel of ``obj``.

    Shared by :class:`Detections` and :class:`Reference`; returns the number of rows.
    """
    query = _as_labels(obj.query, f"{prefix}.query", None)
    n = query.shape[0]
    tbeg = as_score_array(obj.tbeg, f"{prefix}.tbeg", allow_inf=False, allow_empty=True)
    dur = as_score_array(obj.dur, f"{prefix}.dur", allow_inf=False, allow_empty=True)
    for arr, label in ((tbeg, "tbeg"), (dur, "dur")):
        if arr.shape[0] != n:
            raise ValueError(f"{prefix}.{label} has {arr.shape[0]} entries, expected {n}")
    if (dur < 0).any():
        i = int(np.flatnonzero(dur < 0)[0])
        raise ValueError(f"{prefix}.dur must be >= 0 seconds; entry {i} is {dur[i]!r}")
    channel = None if obj.channel is None else _as_labels(obj.channel, f"{prefix}.channel", n)
    object.__setattr__(obj, "query", query)
    object.__setattr__(obj, "file", _as_labels(obj.file, f"{prefix}.file", n))
    object.__setattr__(obj, "tbeg", tbeg)
    object.__setattr__(obj, "dur", dur)
    object.__setattr__(obj, "channel", channel)
    return n


def factorize(values) -> tuple[np.ndarray, list]:
    """Integer codes of the labels in ``values`` and the list of distinct labels.

    Integer and boolean labels are coded in sorted order (``np.unique``); other labels (strings,
    objects) in order of first appearance, with one dictionary pass (several times faster than
    sorting strings). ``uniques[codes[i]] == values[i]``.
    """
    arr = np.asarray(values)
    if arr.dtype.kind in "iub":
        uniques, codes = np.unique(arr, return_inverse=True)
        return codes.astype(np.int64, copy=False), uniques.tolist()
    table: dict = {}
    codes = np.fromiter(
        (table.setdefault(v, len(table)) for v in arr.tolist()), dtype=np.int64, count=arr.shape[0]
    )
    return codes, list(table)


def codes_over(*arrays, order=None):
    """Codes of several label arrays over one shared vocabulary, and that vocabulary.

    Each array is factorized on its own (no dtype coercion between them: the integer 1 and the
    string "1" stay different ids). ``order`` fixes the vocabulary (the term list); otherwise
    ids are sorted when they are comparable.
    """
    parts = [factorize(a) for a in arrays]
    vocab = list(order) if order is not None else []
    index = {v: i for i, v in enumerate(vocab)}
    for _, uniques in parts:
        for u in uniques:
            if u not in index:
                index[u] = len(vocab)
                vocab.append(u)
    if order is None:
        try:
            vocab = sorted(vocab)
        except TypeError:  # mixed, incomparable ids: keep first-appearance order
            pass
        index = {v: i for i, v in enumerate(vocab)}
    out = []
    for codes, uniques in parts:
        lookup = np.array([index[u] for u in uniques], dtype=np.int64)
        out.append(lookup[codes] if codes.size else np.zeros(0, dtype=np.int64))
    return out, vocab


@dataclass(frozen=True, eq=False)
class Detections:
    """The system output: one row per detection (STDLIST ``term`` element).

    Attributes
    ----------
    query, file : ndarray of identifiers
        Query (term) id and audio file id of each detection.
    tbeg, dur : ndarray of float
        Start time and duration in seconds (finite; ``dur >= 0``).
    score : ndarray of float
        Detection score; higher means more likely. A natural-log LLR for C_nxe (plan eq. 37).
        +/-inf are legal, NaN is not.
    decision : ndarray of bool or None
        Hard decision (True = YES), used by ATWV. None when the system gave none.
    channel : ndarray of identifiers or None
        Audio channel; None means one channel per file. A detection and an occurrence can only
        be aligned when file and channel agree.
    """

    query: np.ndarray
    file: np.ndarray
    tbeg: np.ndarray
    dur: np.ndarray
    score: np.ndarray
    decision: np.ndarray | None = None
    channel: np.ndarray | None = None

    def __post_init__(self):
        n = _set_located(self, "detections")
        score = as_score_array(self.score, "detections.score", allow_empty=True)
        if score.shape[0] != n:
            raise ValueError(f"detections.score has {score.shape[0]} entries, expected {n}")
        decision = None
        if self.decision is not None:
            decision = as_binary_labels(self.decision, "detections.decision")
            if decision.shape[0] != n:
                raise ValueError(
                    f"detections.decision has {decision.shape[0]} entries, expected {n}"
                )
        object.__setattr__(self, "score", score)
        object.__setattr__(self, "decision", decision)

    def __len__(self) -> int:
        return int(self.query.shape[0])

    @property
    def mid(self) -> np.ndarray:
        """Mid point ``tbeg + dur / 2`` of each detection, seconds (used by the alignment)."""
        return self.tbeg + 0.5 * self.dur


@dataclass(frozen=True, eq=False)
class Reference:
    """The actual occurrences of the queries (RTTM ``LEXEME`` lines): target trials.

    Attributes
    ----------
    query, file : ndarray of identifiers
    tbeg, dur : ndarray of float
        Time span of each occurrence, seconds.
    channel : ndarray of identifiers or None
        As in :class:`Detections`.
    """

    query: np.ndarray
    file: np.ndarray
    tbeg: np.ndarray
    dur: np.ndarray
    channel: np.ndarray | None = None

    def __post_init__(self):
        _set_located(self, "reference")

    def __len__(self) -> int:
        return int(self.query.shape[0])

    def subset(self, keep) -> Reference:
        """The occurrences where the boolean mask ``keep`` is True (new arrays).

        Parameters
        ----------
        keep : array_like of bool, shape (n_occurrences,)
            The occurrences to keep.

        Returns
        -------
        Reference
            The kept occurrences.
        """
        keep = np.asarray(keep, dtype=bool)
        return Reference(
            self.query[keep],
            self.file[keep],
            self.tbeg[keep],
            self.dur[keep],
            None if self.channel is None else self.channel[keep],
        )


def describe_unknown(labels: np.ndarray, known, what: str) -> str | None:
    """A sentence naming the ids in ``labels`` that ``known`` lacks, or None if there are none."""
    unknown = sorted(set(labels.tolist()).difference(known), key=str)
    if not unknown:
        return None
    shown = ", ".join(repr(v) for v in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
    return f"{what} names {len(unknown)} query id(s) not in the term list: {shown}"


@dataclass(frozen=True, eq=False)
class STDTask:
    """Everything needed to score one system: detections, reference, audio duration, term list.

    Attributes
    ----------
    detections : Detections
    reference : Reference
    t_audio : float
        Total duration of the searched audio T_audio, seconds (plan eq. 2).
    queries : tuple or None
        The term list Q. None: every query id found in the reference or the detections.
        Queries without a reference occurrence are excluded from every measure (plan footnote
        1 assumes N_act(q) > 0) and the exclusion is reported.
    n_tps : float
        Trials per second n_tps (default 1), so each query has ``N = n_tps * t_audio`` trials.
    notes : tuple of str
        What the readers assumed or left out (shown in the report).
    name : str
        The system's name (e.g. the STDLIST ``system_id``).
    """

    detections: Detections
    reference: Reference
    t_audio: float
    queries: tuple | None = None
    n_tps: float = 1.0
    notes: tuple = field(default=())
    name: str = ""

    def __post_init__(self):
        if not isinstance(self.detections, Detections):
            raise ValueError("detections must be a focal.std.Detections")
        if not isinstance(self.reference, Reference):
            raise ValueError("reference must be a focal.std.Reference")
        t_audio = check_positive(self.t_audio, "t_audio")
        n_tps = check_positive(self.n_tps, "n_tps")
        object.__setattr__(self, "t_audio", t_audio)
        object.__setattr__(self, "n_tps", n_tps)
        object.__setattr__(self, "notes", tuple(self.notes))
        if self.queries is not None:
            if isinstance(self.queries, (str, bytes)):
                raise ValueError("queries must be a sequence of query ids, not one string")
            q = self.queries
            queries = tuple(q.tolist() if isinstance(q, np.ndarray) else q)
            if len(set(queries)) != len(queries):
                raise ValueError("queries (the term list) contains duplicate ids")
            known = set(queries)
            for labels, what in (
                (self.detections.query, "detections.query"),
                (self.reference.query, "reference.query"),
            ):
                problem = describe_unknown(labels, known, what)
                if problem:
                    raise ValueError(problem)
            object.__setattr__(self, "queries", queries)

    @property
    def n_trials(self) -> float:
        """Trials per query ``N = n_tps * T_audio`` (plan eq. 2)."""
        return self.n_tps * self.t_audio


@dataclass(frozen=True, eq=False)
class ECF:
    """The audio an evaluation searched: excerpts (file, channel, tbeg, dur in seconds).

    ``duration`` is T_audio: the total length of the union of the excerpt spans of each file
    (channels of a file share its time line; overlapping excerpts count once).
    ``source_signal_duration`` is the ECF attribute of that name, when present.

    Attributes
    ----------
    file, channel : tuple
        File name and channel of each excerpt.
    tbeg, dur : ndarray
        Start and duration of each excerpt, seconds.
    source_signal_duration : float or None
        The ECF attribute of that name, when present.
    """

    file: tuple
    channel: tuple
    tbeg: np.ndarray
    dur: np.ndarray
    source_signal_duration: float | None = None

    @property
    def duration(self) -> float:
        """T_audio: total length of the union of each file's excerpt spans, seconds."""
        spans: dict = {}
        for f, t, d in zip(self.file, self.tbeg.tolist(), self.dur.tolist()):
            spans.setdefault(f, []).append((t, t + d))
        total = 0.0
        for intervals in spans.values():
            intervals.sort()
            end = -math.inf
            for lo, hi in intervals:
                if hi > end:
                    total += hi - max(lo, end)
                    end = hi
        return total

    def sources(self) -> set:
        """The (file, channel) pairs the ECF lists.

        Returns
        -------
        set of tuple
            The ``(file, channel)`` pairs.
        """
        return set(zip(self.file, self.channel))


SWS2013 = OperatingPoint.sws2013()
"""The MediaEval 2013 SWS operating point (plan eq. 21): beta = 66.66, P_tar = 0.0148."""

STD2006 = OperatingPoint.std2006()
"""The NIST STD 2006 operating point (plan sec. 2.5): beta = 999.9."""

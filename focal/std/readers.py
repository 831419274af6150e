"""Readers for the NIST STD 2006 file formats used by MediaEval SWS, and plain whitespace tables.

XML formats (parsed with the standard library's ``xml.etree.ElementTree`` parser, streaming into a
parser *target*, so no element tree is built):

* **ECF** (experiment control file): ``<ecf source_signal_duration=.. version=..>`` holding
  ``<excerpt audio_filename=.. channel=.. tbeg=.. dur=.. language=.. source_type=../>``. T_audio
  is the total duration of the union of the excerpts of each file (the channels of one file
  share its time line; overlapping excerpts count once). A ``.wav`` / ``.sph`` extension of
  ``audio_filename`` is dropped, as NIST's tools do, to match the file ids of the other files.
* **TLIST** (term list): ``<termlist ..>`` holding
  ``<term termid=..><termtext>..</termtext></term>``.
* **STDLIST** (system output): ``<stdlist ..>`` holding ``<detected_termlist termid=..>`` holding
  ``<term file=.. channel=.. tbeg=.. dur=.. score=.. decision="YES|NO"/>``.

The OpenKWS spellings (``kwlist``/``kw kwid``/``kwtext``, ``kwslist``/``detected_kwlist kwid``/
``kw``) are accepted too.

**Untrusted XML.** A DTD can declare entities whose expansion explodes (the "billion laughs"
attack) or reads external resources. These files never need one, so every reader rejects any
``<!DOCTYPE ...>`` declaration: the parser target's ``doctype`` hook fires at the start of the
declaration, before its internal subset is even read, and aborts the parse. Without a DTD no
entity other than the five predefined ones can exist, so nothing is ever expanded or fetched.

Text formats:

* **RTTM** (reference): space-separated lines ``type file channel tbeg tdur ortho stype name conf
  [slat]``; ``;;`` starts a comment. Each ``LEXEME`` line is one occurrence of the query whose id
  is its orthography field (the SWS 2012/2013 convention); other line types are not occurrences.
  Word-level references of NIST STD 2006, where a multi-word term has to be found as a sequence
  of words, are not expanded here.
* **Plain tables** (whitespace-separated, ``#`` starts a comment line, see below; one channel
  per file):
  detections ``query file tbeg dur score decision`` (``decision`` YES/NO, optional for the whole
  file), reference ``query file tbeg dur``, audio ``file tbeg dur``, queries ``query [text...]``.

Malformed input raises ``ValueError`` naming the file and the line (text) or the element (XML).
Numbers are what Python's ``float`` reads, except that underscores (``1_000``) are refused and
a decimal beyond the float64 range (``1e400``) is an error; start times and durations must be
finite and non-negative, scores may be ``inf`` only when spelled out. Comments exist only where
a format defines them (``;;`` in RTTM, ``#`` in the plain tables): a plain-table line whose
first field is ``#`` followed by more text and that has a record's number of fields (``#q1 f
1.0 2.0``) is refused as ambiguous, never skipped. Lines are at most
:data:`focal.io._text.MAX_LINE_BYTES` long and NUL bytes are refused, so binary or endless input
(``/dev/zero``) fails at once.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from array import array
from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from .._files import open_input as open_text
from .model import Detections, Reference, STDTask, describe_unknown

__all__ = ["ECF", "read_ecf", "read_tlist", "read_rttm", "read_stdlist", "read_detection_table",
           "read_reference_table", "read_audio_table", "read_query_table", "read_task"]

_AUDIO_EXTENSIONS = (".wav", ".sph")
_CHUNK = 1 << 20


def _place(where) -> str:
    """Error location: a string, or a callable that builds it (only when an error occurs)."""
    return where() if callable(where) else where


def _number(text, where, what: str, *, finite: bool = True) -> float:
    try:
        if "_" in text:  # float() reads 1_000; score files do not
            raise ValueError(text)
        v = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{_place(where)}: {what} is not a number: {text!r}") from None
    if math.isnan(v) or (finite and math.isinf(v)):
        raise ValueError(f"{_place(where)}: {what} must be a {'finite ' if finite else ''}number, "
                         f"got {text!r}")
    if math.isinf(v) and any(c.isdigit() for c in text):
        raise ValueError(f"{_place(where)}: {what} {text!r} is out of the float64 range (write "
                         f"inf for an infinite value)")
    return v


def _duration(text, where, what: str = "dur") -> float:
    v = _number(text, where, what)
    if v < 0:
        raise ValueError(f"{_place(where)}: {what} must be >= 0 seconds, got {text!r}")
    return v


_DECISIONS = {"YES": True, "NO": False}


def _decision(text, where) -> bool:
    value = _DECISIONS.get(text)
    if value is None:
        value = _DECISIONS.get(str(text).strip().upper())
        if value is None:
            raise ValueError(f"{_place(where)}: decision must be YES or NO, got {text!r}")
    return value


def _floats(texts: list, first: int, locate, what: str, *, finite=True, non_negative=False):
    """Convert a batch of numeric strings with NumPy; name the first bad one's line / element."""
    try:
        if "_" in "".join(texts):
            raise ValueError("an underscore")
        values = np.array(texts, dtype=float)
    except ValueError:  # find the culprit
        values = np.array([_number(t, lambda i=i: locate(first + i), what, finite=finite)
                           for i, t in enumerate(texts)])
    bad = np.isnan(values) | np.isinf(values)  # infinite: only spelled out, and if allowed
    if not finite:
        bad[bad] = np.array([any(c.isdigit() for c in texts[i]) or math.isnan(values[i])
                             for i in np.flatnonzero(bad)], dtype=bool)
    if non_negative:
        bad |= values < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        check = _duration if non_negative else _number
        check(texts[i], locate(first + i), what, **({} if non_negative else {"finite": finite}))
    return values


class _Labels:
    """A column of identifiers stored compactly: integer codes and one string per distinct id."""

    def __init__(self):
        self.index: dict = {}
        self.codes = array("q")

    def values(self) -> np.ndarray:
        vocab = np.empty(len(self.index), dtype=object)
        vocab[:] = list(self.index)
        return vocab[np.frombuffer(self.codes, dtype=np.int64)] if self.codes else vocab


class _Rows:
    """Detections, occurrences or excerpts as a file is read.

    Identifiers are coded through dictionaries; numbers are held as text for a batch of rows and
    converted by NumPy, so a row costs little Python work and about 40 bytes. ``locate(i)``
    names row ``i``'s line or element in error messages; ``dur_name`` is the duration's field
    name in them.
    """

    BATCH = 1 << 16

    def __init__(self, locate, dur_name: str = "dur"):
        self.locate = locate
        self.dur_name = dur_name
        self.query, self.file, self.channel = _Labels(), _Labels(), _Labels()
        self.text = {"tbeg": [], "dur": [], "score": []}
        self.done = {"tbeg": [], "dur": [], "score": []}
        self.decision = array("b")
        self.n = 0
        self.n_done = 0

    def add(self, query, file, channel, tbeg, dur, score=None, decision=None):
        if decision is not None:
            value = _DECISIONS.get(decision)
            if value is None:
                value = _decision(decision, self.locate(self.n))
            self.decision.append(value)
        for labels, value in ((self.query, query), (self.file, file), (self.channel, channel)):
            labels.codes.append(labels.index.setdefault(value, len(labels.index)))
        text = self.text
        text["tbeg"].append(tbeg)
        text["dur"].append(dur)
        if score is not None:
            text["score"].append(score)
        self.n += 1
        if self.n - self.n_done >= self.BATCH:
            self._convert()

    def _convert(self):
        for name, what, options in (("tbeg", "tbeg", {"non_negative": True}),
                                    ("dur", self.dur_name, {"non_negative": True}),
                                    ("score", "score", {"finite": False})):
            if self.text[name]:
                self.done[name].append(_floats(self.text[name], self.n_done, self.locate, what,
                                               **options))
                self.text[name] = []
        self.n_done = self.n

    def column(self, name: str) -> np.ndarray:
        self._convert()
        return np.concatenate(self.done[name]) if self.done[name] else np.zeros(0)

    def _located(self):
        return dict(query=self.query.values(), file=self.file.values(), tbeg=self.column("tbeg"),
                    dur=self.column("dur"), channel=self.channel.values())

    def detections(self) -> Detections:
        decision = np.frombuffer(self.decision, dtype=np.int8).astype(bool) \
            if len(self.decision) == self.n else None
        return Detections(score=self.column("score"), decision=decision, **self._located())

    def reference(self) -> Reference:
        return Reference(**self._located())

    def ecf(self, source_signal_duration=None) -> "ECF":
        return ECF(tuple(self.file.values()), tuple(self.channel.values()), self.column("tbeg"),
                   self.column("dur"), source_signal_duration)


# ---------------------------------------------------------------------------------------------
# XML: a streaming parser target per format


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class _Target:
    """Parser target base: tracks the element path, checks the root element, refuses DTDs.

    Subclasses name their allowed root elements in ``ROOTS`` and handle every deeper element in
    ``open(tag, depth, attrib)``; the root's attributes are kept in ``root``.
    """

    ROOTS: tuple = ()

    def __init__(self, path):
        self.path = os.fspath(path)
        self.stack: list[str] = []
        self.root: dict | None = None
        self.root_tag = ""

    def doctype(self, name, pubid, system):
        raise ValueError(f"{self.path}: <!DOCTYPE {name}> refused: STD files need no DTD, and a "
                         f"DTD can declare entities (entity-expansion or external-entity attacks)")

    n_events = 0  # elements opened or closed: the parser is making progress

    def start(self, tag, attrib):
        self.n_events += 1
        tag = _local(tag)
        depth = len(self.stack)
        self.stack.append(tag)
        if depth:
            self.open(tag, depth, attrib)
        elif tag in self.ROOTS:
            self.root = dict(attrib)
            self.root_tag = tag
        else:
            self.unexpected(tag, depth, self.ROOTS)

    def end(self, tag):
        self.n_events += 1
        self.stack.pop()

    def close(self):
        return self

    def fail(self, where: str, message: str):
        raise ValueError(f"{self.path}: {where}: {message}")

    def require(self, attrib, names, where: str):
        missing = [n for n in names if n not in attrib]
        if missing:
            self.fail(where, f"missing attribute(s) {', '.join(missing)}")

    def unexpected(self, tag: str, depth: int, expected):
        parent = f" inside <{self.stack[-2]}>" if depth else ""
        self.fail(f"<{tag}>{parent}", f"unexpected element (expected <{'> or <'.join(expected)}>)")


def _parse_xml(path, target: _Target):
    from ..io import _text

    parser = ET.XMLParser(target=target)
    limit = _text.MAX_LINE_BYTES
    try:
        with open_text(path) as f:
            fed, seen = 0, 0  # bytes fed since an element last opened or closed
            while chunk := f.read(_CHUNK):
                if b"\x00" in chunk:
                    raise ValueError(f"{os.fspath(path)}: NUL byte: not an XML text file")
                parser.feed(chunk)
                fed = 0 if target.n_events != seen else fed + len(chunk)
                seen = target.n_events
                if fed > limit:  # the parser re-scans an unfinished token on every feed
                    raise ValueError(f"{os.fspath(path)}: no XML element in {fed:,} bytes: "
                                     f"not an STD file, or a token longer than {limit} bytes")
        parser.close()
    except ET.ParseError as err:
        raise ValueError(f"{os.fspath(path)}: not well-formed XML ({err})") from None
    return target


class _STDListTarget(_Target):
    ROOTS = ("stdlist", "kwslist")
    LISTS = {"detected_termlist": "termid", "detected_kwlist": "kwid"}
    ATTRS = ("file", "tbeg", "dur", "score", "decision")

    def __init__(self, path):
        super().__init__(path)
        self.rows = _Rows(lambda i: f"{self.path}: {self.element(i)}")
        self.list_start = array("q")           # first row of each detected_termlist
        self.list_name: list[str] = []         # "<detected_termlist termid='q'>" of each
        self.termid = None

    def element(self, i: int) -> str:
        """Row ``i`` as an element: ``<term> #k of <detected_termlist termid='q'>``."""
        j = bisect_right(self.list_start, i) - 1
        tag = "kw" if self.root_tag == "kwslist" else "term"
        return f"<{tag}> #{i - self.list_start[j] + 1} of {self.list_name[j]}"

    def open(self, tag, depth, attrib):
        if depth == 1:
            if tag not in self.LISTS:
                self.unexpected(tag, depth, tuple(self.LISTS))
            key = self.LISTS[tag]
            self.require(attrib, (key,), f"<{tag}>")
            self.termid = attrib[key]
            self.list_start.append(self.rows.n)
            self.list_name.append(f"<{tag} {key}={self.termid!r}>")
        elif depth == 2 and tag in ("term", "kw"):
            try:
                self.rows.add(self.termid, attrib["file"], attrib.get("channel", "1"),
                              attrib["tbeg"], attrib["dur"], attrib["score"], attrib["decision"])
            except KeyError:
                self.require(attrib, self.ATTRS, self.element(self.rows.n))
                raise
        else:
            self.unexpected(tag, depth, ("term", "kw"))


class _ECFTarget(_Target):
    ROOTS = ("ecf",)

    def __init__(self, path):
        super().__init__(path)
        self.rows = _Rows(lambda i: f"{self.path}: <excerpt> #{i + 1}")

    def open(self, tag, depth, attrib):
        if depth == 1 and tag == "excerpt":
            self.require(attrib, ("audio_filename", "tbeg", "dur"), f"<excerpt> #{self.rows.n + 1}")
            name = attrib["audio_filename"]
            base, ext = os.path.splitext(name)
            if ext.lower() in _AUDIO_EXTENSIONS:
                name = base
            self.rows.add("", name, attrib.get("channel", "1"), attrib["tbeg"], attrib["dur"])
        else:
            self.unexpected(tag, depth, ("excerpt",))


class _TermListTarget(_Target):
    ROOTS = ("termlist", "kwlist")
    TERMS = {"term": ("termid", "termtext"), "kw": ("kwid", "kwtext")}

    def __init__(self, path):
        super().__init__(path)
        self.terms: dict = {}
        self.current = None
        self.text: list[str] | None = None

    def open(self, tag, depth, attrib):
        if depth == 1:
            if tag not in self.TERMS:
                self.unexpected(tag, depth, tuple(self.TERMS))
            key = self.TERMS[tag][0]
            where = f"<{tag}> #{len(self.terms) + 1}"
            self.require(attrib, (key,), where)
            if attrib[key] in self.terms:
                self.fail(where, f"duplicate {key} {attrib[key]!r}")
            self.current = attrib[key]
            self.terms[self.current] = ""
        elif depth == 2 and tag == self.TERMS[self.stack[1]][1]:
            self.text = []
        # any other element inside a term (e.g. <kwinfo>) is metadata and is skipped

    def data(self, text):
        if self.text is not None:
            self.text.append(text)

    def end(self, tag):
        if self.text is not None and len(self.stack) == 3:
            self.terms[self.current] = " ".join("".join(self.text).split())
            self.text = None
        super().end(tag)


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


def read_ecf(path) -> ECF:
    """Read an experiment control file (see the module docstring).

    Parameters
    ----------
    path : str or path-like
        The file to read.

    Returns
    -------
    ECF
        The excerpts and their total duration.
    """
    t = _parse_xml(path, _ECFTarget(path))
    ssd = t.root.get("source_signal_duration")
    ssd = None if ssd is None else _number(ssd, f"{t.path}: <ecf>", "source_signal_duration")
    if not t.rows.n:
        raise ValueError(f"{t.path}: the ECF lists no <excerpt>")
    return t.rows.ecf(ssd)


def read_tlist(path) -> dict:
    """Read a term list: ``{termid: termtext}`` in file order.

    Parameters
    ----------
    path : str or path-like
        The file to read.

    Returns
    -------
    dict
        ``{termid: termtext}`` in file order.
    """
    return dict(_parse_xml(path, _TermListTarget(path)).terms)


def _read_stdlist(path):
    t = _parse_xml(path, _STDListTarget(path))
    return t.rows.detections(), t.root


def read_stdlist(path) -> Detections:
    """Read the system output (STDLIST or KWSLIST XML) as :class:`Detections`.

    Parameters
    ----------
    path : str or path-like
        The file to read.

    Returns
    -------
    Detections
        The detections, file order.
    """
    return _read_stdlist(path)[0]


# ---------------------------------------------------------------------------------------------
# text formats


def _data_lines(path, comment: str, counts=None):
    """(line number, fields) of every non-blank, non-comment line of a UTF-8 text file.

    Lines are read with a bounded length (:data:`focal.io._text.MAX_LINE_BYTES`); a NUL byte
    is an error. A line whose first field starts with ``comment`` is a comment, unless
    ``comment`` is ``#``, the first field is longer than ``#`` and the line has one of the
    ``counts`` of fields of a record (``None``: any): that line is refused as ambiguous (a
    comment, or a record whose id starts with ``#``?) instead of being skipped.
    """
    from ..io import _text

    limit = _text.MAX_LINE_BYTES
    with open_text(path) as f:
        lineno = 0
        while raw := f.readline(limit + 1):
            lineno += 1
            if b"\x00" in raw:
                raise ValueError(f"{os.fspath(path)}, line {lineno}: NUL byte: not a text file")
            if len(raw) > limit and not raw.endswith(b"\n"):
                raise ValueError(f"{os.fspath(path)}, line {lineno}: line longer than {limit} "
                                 f"bytes: not a text table?")
            try:
                fields = raw.decode("utf-8-sig" if lineno == 1 else "utf-8").split()
            except UnicodeDecodeError as err:
                raise ValueError(f"{os.fspath(path)}, line {lineno}: not UTF-8 text "
                                 f"({err.reason})") from None
            if not fields:
                continue
            if not fields[0].startswith(comment):
                yield lineno, fields
            elif comment == "#" and fields[0] != "#" and (counts is None
                                                          or len(fields) in counts):
                raise ValueError(f"{os.fspath(path)}, line {lineno}: a line starting with "
                                 f"{fields[0][:20]!r} has the fields of a record: a comment, or "
                                 f"a record whose id starts with '#'? Ids may not start with "
                                 f"'#'; write comments as '# text'")


def read_rttm(path) -> Reference:
    """Read the reference occurrences: every ``LEXEME`` line of an RTTM file.

    The orthography field (6th) is the query id, ``tbeg`` / ``tdur`` (4th / 5th) the span in
    seconds, the 2nd / 3rd fields file and channel.

    Parameters
    ----------
    path : str or path-like
        The file to read.

    Returns
    -------
    Reference
        The reference occurrences, file order.
    """
    p = os.fspath(path)
    lines = array("q")
    rows = _Rows(lambda i: f"{p}, line {lines[i]}", dur_name="tdur")
    for lineno, fields in _data_lines(path, ";;"):
        if fields[0] != "LEXEME":
            continue
        if len(fields) < 6:
            raise ValueError(f"{p}, line {lineno}: a LEXEME line needs the fields type file "
                             f"channel tbeg tdur ortho [stype name conf slat]; "
                             f"got {len(fields)} field(s)")
        lines.append(lineno)
        rows.add(fields[5], fields[1], fields[2], fields[3], fields[4])
    return rows.reference()


def _table(path, what: str, counts: tuple):
    """Stream a whitespace table whose rows all have one of ``counts`` fields.

    Yields the fields of each row; ``rows`` is a :class:`_Rows` whose ``locate`` reads the line
    numbers recorded here.
    """
    p = os.fspath(path)
    lines = array("q")
    rows = _Rows(lambda i: f"{p}, line {lines[i]}")
    width = None

    def fields_of_rows():
        nonlocal width
        for lineno, fields in _data_lines(path, "#", counts):
            if len(fields) not in counts or (width is not None and len(fields) != width):
                allowed = width if width is not None else " or ".join(map(str, counts))
                raise ValueError(f"{p}, line {lineno}: a {what} line has {allowed} fields, "
                                 f"got {len(fields)}")
            width = len(fields)
            lines.append(lineno)
            yield fields

    return rows, fields_of_rows()


def read_detection_table(path) -> Detections:
    """Read detections from a table ``query file tbeg dur score [decision]`` (channel 1).

    Parameters
    ----------
    path : str or path-like
        The file to read.

    Returns
    -------
    Detections
        The detections, file order.
    """
    rows, table = _table(path, "detection (query file tbeg dur score [decision])", (6, 5))
    for x in table:
        rows.add(x[0], x[1], "1", x[2], x[3], x[4], x[5] if len(x) == 6 else None)
    return rows.detections()


def read_reference_table(path) -> Reference:
    """Read reference occurrences from a table ``query file tbeg dur`` (channel 1).

    Parameters
    ----------
    path : str or path-like
        The file to read.

    Returns
    -------
    Reference
        The reference occurrences, file order.
    """
    rows, table = _table(path, "reference (query file tbeg dur)", (4,))
    for x in table:
        rows.add(x[0], x[1], "1", x[2], x[3])
    return rows.reference()


def read_audio_table(path) -> ECF:
    """Read the searched audio from a table ``file tbeg dur`` (channel 1): the ECF's equivalent.

    Parameters
    ----------
    path : str or path-like
        The file to read.

    Returns
    -------
    ECF
        The excerpts and their total duration.
    """
    rows, table = _table(path, "audio (file tbeg dur)", (3,))
    for x in table:
        rows.add("", x[0], "1", x[1], x[2])
    if not rows.n:
        raise ValueError(f"{os.fspath(path)}: the audio table lists no file")
    return rows.ecf()


def read_query_table(path) -> dict:
    """Read a term list from a table ``query [text...]``: ``{query: text}`` in file order.

    Parameters
    ----------
    path : str or path-like
        The file to read.

    Returns
    -------
    dict
        ``{query: text}`` in file order.
    """
    p = os.fspath(path)
    terms: dict = {}
    for lineno, fields in _data_lines(path, "#"):
        if fields[0] in terms:
            raise ValueError(f"{p}, line {lineno}: duplicate query id {fields[0]!r}")
        terms[fields[0]] = " ".join(fields[1:])
    return terms


# ---------------------------------------------------------------------------------------------
# a whole task


def _is_xml(path) -> bool:
    with open_text(path) as f:
        head = f.read(512)
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


def _is_reference_table(path) -> bool:
    for _, fields in _data_lines(path, "#"):
        return len(fields) == 4
    return False


def _check_sources(labels: Detections | Reference, known: set, what: str, source):
    pairs = set(zip(labels.file.tolist(), labels.channel.tolist()))
    unknown = sorted(pairs - known, key=str)
    if unknown:
        f, c = unknown[0]
        raise ValueError(f"{os.fspath(source)}: {len(unknown)} (file, channel) pair(s) of the "
                         f"{what} are not in the audio list, e.g. file {f!r} channel {c!r}")


def read_task(system, reference, audio, queries=None, *, n_tps: float = 1.0) -> STDTask:
    """Read a complete evaluation, sniffing each file's format.

    Parameters
    ----------
    system : path
        STDLIST / KWSLIST XML, or a detection table.
    reference : path
        RTTM, or a reference table (recognized by 4 fields on its first data line).
    audio : path or float
        ECF XML or an audio table (giving T_audio and the files that may be named), or T_audio
        in seconds.
    queries : path, sequence of ids, or None
        TLIST / KWLIST XML, a query table, or the ids. When given, reference lines of other ids
        are left out (and counted in the task's notes) and a detection of another id is an error.
    n_tps : float
        Trials per second (plan eq. 2).

    Returns
    -------
    STDTask
        With ``notes`` saying what was left out or derived.
    """
    notes = []
    name = ""
    if _is_xml(system):
        detections, attrs = _read_stdlist(system)
        name = attrs.get("system_id", "")
    else:
        detections = read_detection_table(system)
    ref = (read_reference_table if _is_reference_table(reference) else read_rttm)(reference)

    terms = None
    if queries is not None:
        if isinstance(queries, (str, os.PathLike)):
            terms = read_tlist(queries) if _is_xml(queries) else read_query_table(queries)
        else:
            terms = {q: "" for q in queries}
        problem = describe_unknown(detections.query, terms, "the system output")
        if problem:
            raise ValueError(f"{os.fspath(system)}: {problem}")
        known = np.array([q in terms for q in ref.query.tolist()], dtype=bool)
        if not known.all():
            notes.append(f"left out {int((~known).sum())} reference line(s) whose query id is "
                         f"not in the term list")
            ref = ref.subset(known)

    if isinstance(audio, (str, os.PathLike)):
        ecf = read_ecf(audio) if _is_xml(audio) else read_audio_table(audio)
        sources = ecf.sources()
        _check_sources(detections, sources, "detections", system)
        _check_sources(ref, sources, "reference", reference)
        t_audio = ecf.duration
        if ecf.source_signal_duration is not None and \
                abs(ecf.source_signal_duration - t_audio) > 1e-6 * max(t_audio, 1.0):
            notes.append(f"T_audio = {t_audio:g} s, the union of the ECF excerpts "
                         f"(source_signal_duration says {ecf.source_signal_duration:g} s)")
    else:
        t_audio = audio
    return STDTask(detections, ref, t_audio, None if terms is None else tuple(terms), n_tps,
                   tuple(notes), name)

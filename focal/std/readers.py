"""Readers for the NIST STD 2006 file formats used by MediaEval SWS, and plain whitespace tables.

XML formats (parsed with the standard library's ``xml.etree.ElementTree`` parser, streaming into a
parser *target*, so no element tree is built):

* **ECF** (experiment control file): ``<ecf source_signal_duration=.. version=..>`` holding
  ``<excerpt audio_filename=.. channel=.. tbeg=.. dur=.. language=.. source_type=../>``. T_audio
  is the total duration of the union of the excerpts of each file (the channels of one file
  share its time line; overlapping excerpts count once). A ``.wav`` / ``.sph`` extension of
  ``audio_filename`` is dropped, as NIST's tools do, to match the file ids of the other files.
* **TLIST** (term list): ``<termlist ..>`` holding ``<term termid=..><termtext>..</termtext></term>``.
* **STDLIST** (system output): ``<stdlist ..>`` holding ``<detected_termlist termid=..>`` holding
  ``<term file=.. channel=.. tbeg=.. dur=.. score=.. decision="YES|NO"/>``.

The OpenKWS spellings (``kwlist``/``kw kwid``/``kwtext``, ``kwslist``/``detected_kwlist kwid``/
``kw``) are accepted too.

**Untrusted XML.** A DTD can declare entities whose expansion explodes (the "billion laughs"
attack) or reads external resources. These files never need one, so every reader rejects any
``<!DOCTYPE ...>`` declaration: the parser target's ``doctype`` hook fires at the declaration,
before any entity is referenced, and aborts the parse. Without a DTD no entity other than the
five predefined ones can exist, so nothing is ever expanded or fetched.

Text formats:

* **RTTM** (reference): space-separated lines ``type file channel tbeg tdur ortho stype name conf
  [slat]``; ``;;`` starts a comment. Each ``LEXEME`` line is one occurrence of the query whose id
  is its orthography field (the SWS 2012/2013 convention); other line types are not occurrences.
  Word-level references of NIST STD 2006, where a multi-word term has to be found as a sequence
  of words, are not expanded here.
* **Plain tables** (whitespace-separated, ``#`` starts a comment line; one channel per file):
  detections ``query file tbeg dur score decision`` (``decision`` YES/NO, optional for the whole
  file), reference ``query file tbeg dur``, audio ``file tbeg dur``, queries ``query [text...]``.

Malformed input raises ``ValueError`` naming the file and the line (text) or the element (XML).
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from .model import Detections, Reference, STDTask

__all__ = ["ECF", "read_ecf", "read_tlist", "read_rttm", "read_stdlist", "read_detection_table",
           "read_reference_table", "read_audio_table", "read_query_table", "read_task"]

_AUDIO_EXTENSIONS = (".wav", ".sph")
_CHUNK = 1 << 20


def _number(text, where: str, what: str, *, finite: bool = True) -> float:
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {what} is not a number: {text!r}") from None
    if math.isnan(v) or (finite and math.isinf(v)):
        raise ValueError(f"{where}: {what} must be a {'finite ' if finite else ''}number, "
                         f"got {text!r}")
    return v


def _duration(text, where: str, what: str = "dur") -> float:
    v = _number(text, where, what)
    if v < 0:
        raise ValueError(f"{where}: {what} must be >= 0 seconds, got {text!r}")
    return v


def _decision(text, where: str) -> bool:
    value = str(text).strip().upper()
    if value not in ("YES", "NO"):
        raise ValueError(f"{where}: decision must be YES or NO, got {text!r}")
    return value == "YES"


# ---------------------------------------------------------------------------------------------
# XML: a streaming parser target per format


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class _Target:
    """Parser target base: tracks the element path and refuses DTDs."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.stack: list[str] = []

    def doctype(self, name, pubid, system):
        raise ValueError(f"{self.path}: <!DOCTYPE {name}> refused: STD files need no DTD, and a DTD "
                         f"can declare entities (entity-expansion or external-entity attacks)")

    def start(self, tag, attrib):
        self.stack.append(_local(tag))
        self.open(self.stack[-1], len(self.stack) - 1, attrib)

    def end(self, tag):
        self.stack.pop()

    def data(self, text):
        pass

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
    parser = ET.XMLParser(target=target)
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                parser.feed(chunk)
        parser.close()
    except ET.ParseError as err:
        raise ValueError(f"{os.fspath(path)}: not well-formed XML ({err})") from None
    return target


class _STDListTarget(_Target):
    LISTS = {"detected_termlist": "termid", "detected_kwlist": "kwid"}

    def __init__(self, path):
        super().__init__(path)
        self.root = None
        self.cols = {k: [] for k in ("query", "file", "channel", "tbeg", "dur", "score", "decision")}
        self.termid = None
        self.k = 0

    def open(self, tag, depth, attrib):
        if depth == 0:
            if tag not in ("stdlist", "kwslist"):
                self.unexpected(tag, depth, ("stdlist", "kwslist"))
            self.root = dict(attrib)
        elif depth == 1:
            if tag not in self.LISTS:
                self.unexpected(tag, depth, tuple(self.LISTS))
            key = self.LISTS[tag]
            self.require(attrib, (key,), f"<{tag}>")
            self.termid, self.k = attrib[key], 0
        elif depth == 2 and tag in ("term", "kw"):
            self.k += 1
            where = f"<{tag}> #{self.k} of <{self.stack[1]} {self.LISTS[self.stack[1]]}={self.termid!r}>"
            self.require(attrib, ("file", "tbeg", "dur", "score", "decision"), where)
            c = self.cols
            c["query"].append(self.termid)
            c["file"].append(attrib["file"])
            c["channel"].append(attrib.get("channel", "1"))
            c["tbeg"].append(_number(attrib["tbeg"], f"{self.path}: {where}", "tbeg"))
            c["dur"].append(_duration(attrib["dur"], f"{self.path}: {where}"))
            c["score"].append(_number(attrib["score"], f"{self.path}: {where}", "score", finite=False))
            c["decision"].append(_decision(attrib["decision"], f"{self.path}: {where}"))
        else:
            self.unexpected(tag, depth, ("term", "kw"))

    def detections(self) -> Detections:
        c = self.cols
        return Detections(query=np.array(c["query"], dtype=object), file=np.array(c["file"], dtype=object),
                          tbeg=np.array(c["tbeg"], dtype=float), dur=np.array(c["dur"], dtype=float),
                          score=np.array(c["score"], dtype=float),
                          decision=np.array(c["decision"], dtype=bool),
                          channel=np.array(c["channel"], dtype=object))


class _ECFTarget(_Target):
    def __init__(self, path):
        super().__init__(path)
        self.root = None
        self.rows = []

    def open(self, tag, depth, attrib):
        if depth == 0:
            if tag != "ecf":
                self.unexpected(tag, depth, ("ecf",))
            self.root = dict(attrib)
        elif depth == 1 and tag == "excerpt":
            where = f"<excerpt> #{len(self.rows) + 1}"
            self.require(attrib, ("audio_filename", "tbeg", "dur"), where)
            name = attrib["audio_filename"]
            base, ext = os.path.splitext(name)
            if ext.lower() in _AUDIO_EXTENSIONS:
                name = base
            self.rows.append((name, attrib.get("channel", "1"),
                              _number(attrib["tbeg"], f"{self.path}: {where}", "tbeg"),
                              _duration(attrib["dur"], f"{self.path}: {where}")))
        else:
            self.unexpected(tag, depth, ("excerpt",))


class _TermListTarget(_Target):
    TERMS = {"term": ("termid", "termtext"), "kw": ("kwid", "kwtext")}

    def __init__(self, path):
        super().__init__(path)
        self.root = None
        self.terms: dict = {}
        self.current = None
        self.text: list[str] | None = None

    def open(self, tag, depth, attrib):
        if depth == 0:
            if tag not in ("termlist", "kwlist"):
                self.unexpected(tag, depth, ("termlist", "kwlist"))
            self.root = dict(attrib)
        elif depth == 1:
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
    """

    file: tuple
    channel: tuple
    tbeg: np.ndarray
    dur: np.ndarray
    source_signal_duration: float | None = None

    @property
    def duration(self) -> float:
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
        """The (file, channel) pairs the ECF lists."""
        return set(zip(self.file, self.channel))


def read_ecf(path) -> ECF:
    """Read an experiment control file (see the module docstring)."""
    t = _parse_xml(path, _ECFTarget(path))
    ssd = t.root.get("source_signal_duration")
    ssd = None if ssd is None else _number(ssd, f"{t.path}: <ecf>", "source_signal_duration")
    if not t.rows:
        raise ValueError(f"{t.path}: the ECF lists no <excerpt>")
    f, c, tb, d = zip(*t.rows)
    return ECF(tuple(f), tuple(c), np.array(tb), np.array(d), ssd)


def read_tlist(path) -> dict:
    """Read a term list: ``{termid: termtext}`` in file order."""
    return dict(_parse_xml(path, _TermListTarget(path)).terms)


def _read_stdlist(path):
    t = _parse_xml(path, _STDListTarget(path))
    return t.detections(), t.root


def read_stdlist(path) -> Detections:
    """Read the system output (STDLIST or KWSLIST XML) as :class:`Detections`."""
    return _read_stdlist(path)[0]


# ---------------------------------------------------------------------------------------------
# text formats


def _data_lines(path, comment: str):
    """(line number, fields) of every non-blank, non-comment line."""
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.split()
            if fields and not fields[0].startswith(comment):
                yield lineno, fields


def read_rttm(path) -> Reference:
    """Read the reference occurrences: every ``LEXEME`` line of an RTTM file.

    The orthography field (6th) is the query id, ``tbeg`` / ``tdur`` (4th / 5th) the span in
    seconds, the 2nd / 3rd fields file and channel.
    """
    p = os.fspath(path)
    cols = ([], [], [], [], [])
    for lineno, fields in _data_lines(path, ";;"):
        if fields[0] != "LEXEME":
            continue
        where = f"{p}, line {lineno}"
        if len(fields) < 6:
            raise ValueError(f"{where}: a LEXEME line needs the fields type file channel tbeg tdur "
                             f"ortho [stype name conf slat]; got {len(fields)} field(s)")
        cols[0].append(fields[5])
        cols[1].append(fields[1])
        cols[2].append(fields[2])
        cols[3].append(_number(fields[3], where, "tbeg"))
        cols[4].append(_duration(fields[4], where, "tdur"))
    return Reference(query=np.array(cols[0], dtype=object), file=np.array(cols[1], dtype=object),
                     tbeg=np.array(cols[3], dtype=float), dur=np.array(cols[4], dtype=float),
                     channel=np.array(cols[2], dtype=object))


def _table(path, what: str, counts: tuple):
    p = os.fspath(path)
    rows = []
    width = None
    for lineno, fields in _data_lines(path, "#"):
        if len(fields) not in counts or (width is not None and len(fields) != width):
            allowed = width if width is not None else " or ".join(map(str, counts))
            raise ValueError(f"{p}, line {lineno}: a {what} line has {allowed} fields, "
                             f"got {len(fields)}")
        width = len(fields)
        rows.append((f"{p}, line {lineno}", fields))
    return rows


def read_detection_table(path) -> Detections:
    """Read detections from a table ``query file tbeg dur score [decision]`` (channel 1)."""
    rows = _table(path, "detection (query file tbeg dur score [decision])", (6, 5))
    q, f, tb, d, s, dec = [], [], [], [], [], []
    for where, x in rows:
        q.append(x[0])
        f.append(x[1])
        tb.append(_number(x[2], where, "tbeg"))
        d.append(_duration(x[3], where))
        s.append(_number(x[4], where, "score", finite=False))
        if len(x) == 6:
            dec.append(_decision(x[5], where))
    n = len(q)
    return Detections(query=np.array(q, dtype=object), file=np.array(f, dtype=object),
                      tbeg=np.array(tb, dtype=float), dur=np.array(d, dtype=float),
                      score=np.array(s, dtype=float),
                      decision=np.array(dec, dtype=bool) if (dec or not n) else None,
                      channel=np.array(["1"] * n, dtype=object))


def read_reference_table(path) -> Reference:
    """Read reference occurrences from a table ``query file tbeg dur`` (channel 1)."""
    rows = _table(path, "reference (query file tbeg dur)", (4,))
    n = len(rows)
    return Reference(query=np.array([x[0] for _, x in rows], dtype=object),
                     file=np.array([x[1] for _, x in rows], dtype=object),
                     tbeg=np.array([_number(x[2], w, "tbeg") for w, x in rows], dtype=float),
                     dur=np.array([_duration(x[3], w) for w, x in rows], dtype=float),
                     channel=np.array(["1"] * n, dtype=object))


def read_audio_table(path) -> ECF:
    """Read the searched audio from a table ``file tbeg dur`` (channel 1): the ECF's equivalent."""
    rows = _table(path, "audio (file tbeg dur)", (3,))
    if not rows:
        raise ValueError(f"{os.fspath(path)}: the audio table lists no file")
    return ECF(tuple(x[0] for _, x in rows), ("1",) * len(rows),
               np.array([_number(x[1], w, "tbeg") for w, x in rows]),
               np.array([_duration(x[2], w) for w, x in rows]))


def read_query_table(path) -> dict:
    """Read a term list from a table ``query [text...]``: ``{query: text}`` in file order."""
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
    with open(path, "rb") as f:
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
        raise ValueError(f"{os.fspath(source)}: {len(unknown)} (file, channel) pair(s) of the {what} "
                         f"are not in the audio list, e.g. file {f!r} channel {c!r}")


def _check_queries(labels: np.ndarray, known: dict, what: str, source):
    unknown = sorted(set(labels.tolist()) - set(known), key=str)
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5])
        raise ValueError(f"{os.fspath(source)}: the {what} name {len(unknown)} query id(s) that the "
                         f"term list does not: {shown}{', ...' if len(unknown) > 5 else ''}")


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
    ref = read_reference_table(reference) if _is_reference_table(reference) else read_rttm(reference)

    terms = None
    if queries is not None:
        if isinstance(queries, (str, os.PathLike)):
            terms = read_tlist(queries) if _is_xml(queries) else read_query_table(queries)
        else:
            terms = {q: "" for q in queries}
        _check_queries(detections.query, terms, "detections", system)
        known = np.array([q in terms for q in ref.query.tolist()], dtype=bool)
        if not known.all():
            notes.append(f"left out {int((~known).sum())} reference line(s) whose query id is not in "
                         f"the term list")
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

"""The XML files of NIST STD 2006 / MediaEval SWS: ECF, TLIST and STDLIST (see
:mod:`focal.std.readers` for the formats).

Parsed with the standard library's ``xml.etree.ElementTree`` parser, streaming into a parser
*target*, so no element tree is built; any ``<!DOCTYPE ...>`` is refused before its internal
subset is read (no entity is ever expanded or fetched). Errors are
:class:`focal.exceptions.FileFormatError` ``path: <element>: message`` (the element stands for
the line, which the parser does not report), or ``path:line: not well-formed XML (...)``.

References
----------
.. [1] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from array import array
from bisect import bisect_right

import numpy as np

from .._text import blocks as _blocks
from .._text.numbers import parse_numbers
from .._text.outputs import open_input
from ..exceptions import FileFormatError
from ._docs import shared_doc
from ._records import Columns, bad_seconds, decision_values
from .model import ECF, Detections

__all__ = ["read_ecf", "read_tlist", "read_stdlist", "read_stdlist_and_attributes"]

_AUDIO_EXTENSIONS = (".wav", ".sph")
_CHUNK = 1 << 20


def _floats(texts: list, path, locate, what: str, *, seconds: bool = False) -> np.ndarray:
    """Numeric attributes read by the score files' rule (:func:`focal._text.numbers.parse_numbers`:
    what ``float`` reads, without underscores, NaN or a decimal beyond float64; ``inf`` spelled
    out); with ``seconds``, finite and >= 0 too. Errors name the element of the first bad one
    (``locate(i)`` for ``texts[i]``).
    """
    joined = "".join(texts).encode("utf-8")
    pieces = texts if len(joined) == sum(map(len, texts)) else [t.encode("utf-8") for t in texts]
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))  # in bytes
    starts = np.cumsum(lengths) - lengths
    buf = np.frombuffer(joined, dtype=np.uint8)

    def fail(i, message):
        raise FileFormatError(path, None, f"{locate(int(i))}: {what} {message}")

    values = parse_numbers(buf, starts, lengths, fail)
    if seconds:
        bad = bad_seconds(values)
        if bad is not None:
            i, problem = bad
            fail(i, f"must be {problem}, got {texts[i]!r}")
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
    """Detections or excerpts as a file is parsed.

    Identifiers and decisions are coded through dictionaries; numbers are held as text for a
    batch of rows and converted by NumPy, so an element costs little Python work and about 50
    bytes. ``locate(i)`` names row ``i``'s element in error messages.
    """

    BATCH = 1 << 16

    def __init__(self, path, locate):
        self.path = path
        self.locate = locate
        self.query, self.file, self.channel, self.decision = (_Labels() for _ in range(4))
        self.text: dict = {"tbeg": [], "dur": [], "score": []}
        self.columns = Columns("query", "file", "channel", "tbeg", "dur", "score", "decision")
        self.n = 0
        self.n_done = 0

    def add(self, query, file, channel, tbeg, dur, score=None, decision=None):
        labels = ((self.query, query), (self.file, file), (self.channel, channel))
        if decision is not None:
            labels += ((self.decision, decision),)
        for column, value in labels:
            column.codes.append(column.index.setdefault(value, len(column.index)))
        text = self.text
        text["tbeg"].append(tbeg)
        text["dur"].append(dur)
        if score is not None:
            text["score"].append(score)
        self.n += 1
        if self.n - self.n_done >= self.BATCH:
            self._convert()

    def _convert(self):
        first = self.n_done
        for name in ("tbeg", "dur", "score"):
            if self.text[name]:
                values = _floats(
                    self.text[name],
                    self.path,
                    lambda i: self.locate(first + i),
                    name,
                    seconds=name != "score",
                )
                self.columns.add(**{name: values})
                self.text[name] = []
        self.n_done = self.n

    def _finish(self) -> Columns:
        self._convert()
        self.columns.add(
            query=self.query.values(), file=self.file.values(), channel=self.channel.values()
        )
        return self.columns

    def detections(self) -> Detections:
        columns = self._finish()
        with_decisions = len(self.decision.codes) == self.n
        if with_decisions:
            words = list(self.decision.index)
            value, bad = decision_values(words)
            codes = np.frombuffer(self.decision.codes, dtype=np.int64)
            if bad[codes].any():
                i = int(np.argmax(bad[codes]))
                raise FileFormatError(
                    self.path,
                    None,
                    f"{self.locate(i)}: decision must be YES or NO, got {words[codes[i]]!r}",
                )
            columns.add(decision=value[codes])
        return columns.detections(with_decisions)

    def ecf(self, source_signal_duration=None) -> ECF:
        return self._finish().ecf(source_signal_duration)


# ---------------------------------------------------------------------------------------------
# a streaming parser target per format


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
        raise FileFormatError(
            self.path,
            None,
            f"<!DOCTYPE {name}> refused: STD files need no "
            f"DTD, and a DTD can declare entities "
            f"(entity-expansion or external-entity attacks)",
        )

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
        raise FileFormatError(self.path, None, f"{where}: {message}")

    def require(self, attrib, names, where: str):
        missing = [n for n in names if n not in attrib]
        if missing:
            self.fail(where, f"missing attribute(s) {', '.join(missing)}")

    def unexpected(self, tag: str, depth: int, expected):
        parent = f" inside <{self.stack[-2]}>" if depth else ""
        self.fail(f"<{tag}>{parent}", f"unexpected element (expected <{'> or <'.join(expected)}>)")


def _parse_xml(path, target: _Target):
    parser = ET.XMLParser(target=target)
    limit = _blocks.MAX_LINE_BYTES
    p = os.fspath(path)
    try:
        with open_input(path) as f:
            fed, seen = 0, 0  # bytes fed since an element last opened or closed
            while chunk := f.read(_CHUNK):
                if b"\x00" in chunk:
                    raise FileFormatError(p, None, "NUL byte: not an XML text file")
                parser.feed(chunk)
                fed = 0 if target.n_events != seen else fed + len(chunk)
                seen = target.n_events
                if fed > limit:  # the parser re-scans an unfinished token on every feed
                    raise FileFormatError(
                        p,
                        None,
                        f"no XML element in {fed:,} bytes: not an "
                        f"STD file, or a token longer than {limit} "
                        f"bytes",
                    )
        parser.close()
    except ET.ParseError as err:
        raise FileFormatError(p, err.position[0], f"not well-formed XML ({err})") from None
    return target


class _STDListTarget(_Target):
    ROOTS = ("stdlist", "kwslist")
    LISTS = {"detected_termlist": "termid", "detected_kwlist": "kwid"}
    ATTRS = ("file", "tbeg", "dur", "score", "decision")

    def __init__(self, path):
        super().__init__(path)
        self.rows = _Rows(self.path, self.element)
        self.list_start = array("q")  # first row of each detected_termlist
        self.list_name: list[str] = []  # "<detected_termlist termid='q'>" of each
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
                self.rows.add(
                    self.termid,
                    attrib["file"],
                    attrib.get("channel", "1"),
                    attrib["tbeg"],
                    attrib["dur"],
                    attrib["score"],
                    attrib["decision"],
                )
            except KeyError:
                self.require(attrib, self.ATTRS, self.element(self.rows.n))
                raise
        else:
            self.unexpected(tag, depth, ("term", "kw"))


class _ECFTarget(_Target):
    ROOTS = ("ecf",)

    def __init__(self, path):
        super().__init__(path)
        self.rows = _Rows(self.path, lambda i: f"<excerpt> #{i + 1}")

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


@shared_doc
def read_ecf(path) -> ECF:
    """Read an experiment control file (see :mod:`focal.std.readers`).

    {reads_ecf}
    """
    t = _parse_xml(path, _ECFTarget(path))
    ssd = t.root.get("source_signal_duration")
    if ssd is not None:
        ssd = float(_floats([ssd], t.path, lambda i: "<ecf>", "source_signal_duration")[0])
    if not t.rows.n:
        raise FileFormatError(t.path, None, "the ECF lists no <excerpt>")
    return t.rows.ecf(ssd)


@shared_doc
def read_tlist(path) -> dict:
    """Read a term list: ``{termid: termtext}`` in file order.

    {path}

    Returns
    -------
    dict
        ``{termid: termtext}`` in file order.
    """
    return dict(_parse_xml(path, _TermListTarget(path)).terms)


def read_stdlist_and_attributes(path):
    """``(detections, attributes of the root element)`` of an STDLIST / KWSLIST file."""
    t = _parse_xml(path, _STDListTarget(path))
    return t.rows.detections(), t.root


@shared_doc
def read_stdlist(path) -> Detections:
    """Read the system output (STDLIST or KWSLIST XML) as :class:`Detections`.

    {reads_detections}
    """
    return read_stdlist_and_attributes(path)[0]

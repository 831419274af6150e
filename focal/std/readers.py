"""Readers for the NIST STD 2006 file formats used by MediaEval SWS, and plain whitespace tables.

XML formats (read by :mod:`focal.std._xml`, streaming, with any ``<!DOCTYPE ...>`` refused so
that no entity is ever expanded or fetched):

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

Text formats (read in blocks with NumPy, :func:`focal._text.fields.iter_lines`; fields are
separated by white space, i.e. bytes <= 32):

* **RTTM** (reference): lines ``type file channel tbeg tdur ortho stype name conf [slat]``.
  Each ``LEXEME`` line is one occurrence of the query whose id is its orthography field (the SWS
  2012/2013 convention); other line types (and ``;;`` comments) are not occurrences. Word-level
  references of NIST STD 2006, where a multi-word term has to be found as a sequence of words,
  are not expanded here.
* **Plain tables** (``#`` starts a comment line, see below; one channel per file):
  detections ``query file tbeg dur score decision`` (``decision`` YES/NO, optional for the whole
  file), reference ``query file tbeg dur``, audio ``file tbeg dur``, queries ``query [text...]``.

Malformed input raises :class:`focal.exceptions.FileFormatError` (a ``ValueError``)
``path:line: message``, or ``path: <element>: message`` in XML. Numbers are what Python's
``float`` reads, except that underscores (``1_000``) are refused and a decimal beyond the
float64 range (``1e400``) is an error; start times and durations must be finite and
non-negative, scores may be ``inf`` only when spelled out. Comments exist only where a format
defines them: a plain-table line whose first field is ``#`` followed by more text and that has a
record's number of fields (``#q1 f 1.0 2.0``) is refused as ambiguous, never skipped. Lines are
at most :func:`focal.io.read_limits` long and NUL bytes are refused, so binary or endless input
(``/dev/zero``) fails at once.

References
----------
- "SWS plan": :cite:p:`sws2013measures`
- NIST STD 2006 (the file formats): :cite:p:`nist2006std`
"""

from __future__ import annotations

import os

import numpy as np

from .._text.fields import iter_lines
from .._text.outputs import open_input
from ..exceptions import FileFormatError
from ._docs import shared_doc
from ._records import Columns, bad_seconds, decision_values
from ._xml import read_ecf, read_stdlist_and_attributes, read_tlist
from .model import ECF, Detections, Reference, STDTask, describe_unknown

__all__ = [
    "read_rttm",
    "read_detection_table",
    "read_reference_table",
    "read_audio_table",
    "read_query_table",
    "read_task",
]


def _distinct(ids: np.ndarray) -> tuple[list, np.ndarray]:
    """The distinct ids of fixed-width UTF-8 bytes, decoded, and each id's index among them."""
    if ids.dtype.itemsize == 8:  # ids of up to 8 bytes: sort them as integers
        distinct, inverse = np.unique(ids.view(np.uint64), return_inverse=True)
        distinct = distinct.view(ids.dtype)
    else:
        distinct, inverse = np.unique(ids, return_inverse=True)
    return [bytes(v).decode("utf-8") for v in distinct], inverse.reshape(-1)


def _strings(ids: np.ndarray) -> np.ndarray:
    """Object array of ``str`` from fixed-width UTF-8 bytes ids (decoding each distinct id once)."""
    if ids.size == 0:
        return np.zeros(0, dtype=object)
    words, inverse = _distinct(ids)
    vocab = np.empty(len(words), dtype=object)
    vocab[:] = words
    return vocab[inverse]


def _field_text(fields, i: int, column: int) -> str:
    start = fields.starts[i, column]
    return fields.data[start : start + fields.lengths[i, column]].tobytes().decode("utf-8")


def _seconds(fields, column: int, what: str) -> np.ndarray:
    """Start times or durations: finite numbers >= 0, errors ``path:line: what ...``."""
    values = fields.numbers([column], fields.path, what)[:, 0]
    bad = bad_seconds(values)
    if bad is not None:
        i, problem = bad
        text = _field_text(fields, i, column)
        raise FileFormatError(
            fields.path, int(fields.lines[i]), f"{what} must be {problem}, got {text!r}"
        )
    return values


def _decisions(fields, column: int) -> np.ndarray:
    """YES / NO (any case, as NIST's tools write them) as booleans."""
    words, inverse = _distinct(fields.ids(column))
    value, bad = decision_values(words)
    if bad.any():
        i = int(np.argmax(bad[inverse]))
        raise FileFormatError(
            fields.path,
            int(fields.lines[i]),
            f"decision must be YES or NO, got {words[inverse[i]]!r}",
        )
    return value[inverse]


def _comment_lines(lf, counts):
    """(comment, refused): lines whose first field starts with ``#``, and those among them
    that look like records (first field longer than ``#`` and, unless ``counts`` is None, a
    record's number of fields).
    """
    comment = lf.first_field_starts_with(b"#")
    refused = comment & ~lf.first_field_is(b"#")
    if counts is not None:
        refused &= np.isin(lf.counts, counts)
    return comment, refused


def _refuse_glued(lf, i):
    lf.fail(
        i,
        f"a line starting with {lf.text(i, 0)[:20]!r} has the fields of a record: a "
        f"comment, or a record whose id starts with '#'? Ids may not start with '#'; "
        f"write comments as '# text'",
    )


def _tables(path, what: str, counts: tuple):
    """Yield the records of a whitespace table as :class:`focal._text.fields.Fields`, block by
    block.

    Every record has one of ``counts`` fields, the same number throughout the file; the width
    is given to the caller through the ``Fields`` shape.
    """
    width = None
    for lf in iter_lines(path):
        comment, refused = _comment_lines(lf, counts)
        record = (lf.counts > 0) & ~comment
        rows = np.flatnonzero(record)
        first_of_file = width is None and rows.size > 0
        if first_of_file and int(lf.counts[rows[0]]) in counts:
            width = int(lf.counts[rows[0]])
        wrong = record & (lf.counts != (width if width is not None else -1))
        problem = refused | wrong
        if problem.any():
            i = int(np.argmax(problem))
            if refused[i]:
                _refuse_glued(lf, i)
            allowed = " or ".join(map(str, counts)) if width is None else width
            lf.fail(i, f"a {what} line has {allowed} fields, got {int(lf.counts[i])}")
        if rows.size:
            yield lf.fields(rows, width)


@shared_doc
def read_detection_table(path) -> Detections:
    """Read detections from a table ``query file tbeg dur score [decision]`` (channel 1).

    {reads_detections}
    """
    cols = Columns("query", "file", "tbeg", "dur", "score", "decision")
    width = None
    for f in _tables(path, "detection (query file tbeg dur score [decision])", (6, 5)):
        width = f.starts.shape[1]
        cols.add(
            query=_strings(f.ids(0)),
            file=_strings(f.ids(1)),
            tbeg=_seconds(f, 2, "tbeg"),
            dur=_seconds(f, 3, "dur"),
            score=f.numbers([4], f.path, "score")[:, 0],
        )
        if width == 6:
            cols.add(decision=_decisions(f, 5))
    return cols.detections(with_decisions=width != 5)


@shared_doc
def read_reference_table(path) -> Reference:
    """Read reference occurrences from a table ``query file tbeg dur`` (channel 1).

    {reads_reference}
    """
    cols = Columns("query", "file", "tbeg", "dur")
    for f in _tables(path, "reference (query file tbeg dur)", (4,)):
        cols.add(
            query=_strings(f.ids(0)),
            file=_strings(f.ids(1)),
            tbeg=_seconds(f, 2, "tbeg"),
            dur=_seconds(f, 3, "dur"),
        )
    return cols.reference()


@shared_doc
def read_audio_table(path) -> ECF:
    """Read the searched audio from a table ``file tbeg dur`` (channel 1): the ECF's equivalent.

    {reads_ecf}
    """
    cols = Columns("file", "tbeg", "dur")
    for f in _tables(path, "audio (file tbeg dur)", (3,)):
        cols.add(file=_strings(f.ids(0)), tbeg=_seconds(f, 1, "tbeg"), dur=_seconds(f, 2, "dur"))
    if not cols.get("file", object).size:
        raise FileFormatError(path, None, "the audio table lists no file")
    return cols.ecf()


@shared_doc
def read_query_table(path) -> dict:
    """Read a term list from a table ``query [text...]``: ``{query: text}`` in file order.

    {path}

    Returns
    -------
    dict
        ``{query: text}`` in file order.
    """
    terms: dict = {}
    for lf in iter_lines(path):
        comment, refused = _comment_lines(lf, None)
        if refused.any():
            _refuse_glued(lf, int(np.argmax(refused)))
        for i in np.flatnonzero((lf.counts > 0) & ~comment).tolist():  # one per query
            query = lf.text(i, 0)
            if query in terms:
                lf.fail(i, f"duplicate query id {query!r}")
            terms[query] = " ".join(lf.text(i, k) for k in range(1, int(lf.counts[i])))
    return terms


@shared_doc
def read_rttm(path) -> Reference:
    """Read the reference occurrences: every ``LEXEME`` line of an RTTM file.

    The orthography field (6th) is the query id, ``tbeg`` / ``tdur`` (4th / 5th) the span in
    seconds, the 2nd / 3rd fields file and channel.

    {reads_reference}
    """
    cols = Columns("query", "file", "channel", "tbeg", "dur")
    for lf in iter_lines(path):
        lexeme = lf.first_field_is(b"LEXEME")
        short = lexeme & (lf.counts < 6)
        if short.any():
            i = int(np.argmax(short))
            lf.fail(
                i,
                f"a LEXEME line needs the fields type file channel tbeg tdur ortho "
                f"[stype name conf slat]; got {int(lf.counts[i])} field(s)",
            )
        rows = np.flatnonzero(lexeme)
        if rows.size:
            f = lf.fields(rows, 6)
            cols.add(
                query=_strings(f.ids(5)),
                file=_strings(f.ids(1)),
                channel=_strings(f.ids(2)),
                tbeg=_seconds(f, 3, "tbeg"),
                dur=_seconds(f, 4, "tdur"),
            )
    return cols.reference()


# ---------------------------------------------------------------------------------------------
# a whole task


def _is_xml(path) -> bool:
    with open_input(path) as f:
        head = f.read(512)
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


def _is_reference_table(path) -> bool:
    """True when the first data line of ``path`` has 4 fields (a reference table, not RTTM)."""
    for lf in iter_lines(path):
        comment, refused = _comment_lines(lf, None)
        found = refused | ((lf.counts > 0) & ~comment)
        if found.any():
            i = int(np.argmax(found))
            if refused[i]:
                _refuse_glued(lf, i)
            return int(lf.counts[i]) == 4
    return False


def _check_sources(labels: Detections | Reference, known: set, what: str, source):
    files = labels.file.tolist()
    # no channel: one channel per file, channel "1" as the readers' tables have it
    channels = ["1"] * len(files) if labels.channel is None else labels.channel.tolist()
    pairs = set(zip(files, channels))
    unknown = sorted(pairs - known, key=str)
    if unknown:
        f, c = unknown[0]
        raise FileFormatError(
            source,
            None,
            f"{len(unknown)} (file, channel) pair(s) of the "
            f"{what} are not in the audio list, e.g. file {f!r} "
            f"channel {c!r}",
        )


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
        detections, attrs = read_stdlist_and_attributes(system)
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
            raise FileFormatError(system, None, problem)
        known = np.array([q in terms for q in ref.query.tolist()], dtype=bool)
        if not known.all():
            notes.append(
                f"left out {int((~known).sum())} reference line(s) whose query id is "
                f"not in the term list"
            )
            ref = ref.subset(known)

    if isinstance(audio, (str, os.PathLike)):
        ecf = read_ecf(audio) if _is_xml(audio) else read_audio_table(audio)
        sources = ecf.sources()
        _check_sources(detections, sources, "detections", system)
        _check_sources(ref, sources, "reference", reference)
        t_audio = ecf.duration
        if ecf.source_signal_duration is not None and abs(
            ecf.source_signal_duration - t_audio
        ) > 1e-6 * max(t_audio, 1.0):
            notes.append(
                f"T_audio = {t_audio:g} s, the union of the ECF excerpts "
                f"(source_signal_duration says {ecf.source_signal_duration:g} s)"
            )
    else:
        t_audio = audio
    return STDTask(
        detections, ref, t_audio, None if terms is None else tuple(terms), n_tps, tuple(notes), name
    )

"""The columns of term detection records as a reader gathers them, and what they build.

One way for both readers, the XML files (:mod:`focal.std._xml`) and the text files
(:mod:`focal.std.readers`): columns are gathered piece by piece (a block of lines, a batch of
elements) and concatenated once; YES / NO decisions and times in seconds are checked by one
rule (numbers are parsed by :func:`focal._text.numbers.parse_numbers` in both); the same code builds
:class:`~focal.std.model.Detections`, :class:`~focal.std.model.Reference` and
:class:`~focal.std.model.ECF` (one channel ``"1"`` per file where a format has no channel).
"""

from __future__ import annotations

import numpy as np

from .model import ECF, Detections, Reference

__all__ = ["DECISIONS", "Columns", "bad_seconds", "decision_values"]

#: The decisions of STDLIST ``term`` elements and detection tables (any case, as NIST's tools
#: write them)
DECISIONS = {"YES": True, "NO": False}


def decision_values(words) -> tuple[np.ndarray, np.ndarray]:
    """``(value, bad)``: each distinct decision word as a boolean, and which are not YES / NO.

    Any case; white space around the word is ignored.
    """
    keys = [str(w).strip().upper() for w in words]
    value = np.array([DECISIONS.get(k, False) for k in keys], dtype=bool)
    bad = np.array([k not in DECISIONS for k in keys], dtype=bool)
    return value, bad


def bad_seconds(values: np.ndarray) -> tuple[int, str] | None:
    """The first of ``values`` that is not a start time or duration (finite, >= 0 seconds) and
    what it must be, or None.
    """
    bad = ~np.isfinite(values) | (values < 0)
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return i, "a finite number" if np.isinf(values[i]) else ">= 0 seconds"


class Columns:
    """Columns of a file gathered piece by piece, concatenated at the end."""

    def __init__(self, *names):
        self.parts: dict = {name: [] for name in names}

    def add(self, **columns):
        """Append one piece to each of the named columns."""
        for name, values in columns.items():
            self.parts[name].append(values)

    def get(self, name, dtype=float) -> np.ndarray:
        """The whole column (empty, of ``dtype``, when nothing was added)."""
        parts = self.parts.get(name, [])
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    def located(self) -> dict:
        """``query``, ``file``, ``channel`` (``"1"`` where not read), ``tbeg`` and ``dur``."""
        out = {name: self.get(name, object) for name in ("query", "file")}
        out.update(tbeg=self.get("tbeg"), dur=self.get("dur"))
        channel = self.get("channel", object) if "channel" in self.parts else None
        if channel is None:
            channel = np.full(out["file"].size, "1", dtype=object)
        out["channel"] = channel
        return out

    def detections(self, with_decisions: bool) -> Detections:
        """The detections (with the ``decision`` column, or none)."""
        decision = self.get("decision", bool) if with_decisions else None
        return Detections(score=self.get("score"), decision=decision, **self.located())

    def reference(self) -> Reference:
        """The reference occurrences."""
        return Reference(**self.located())

    def ecf(self, source_signal_duration=None) -> ECF:
        """The excerpts of the searched audio."""
        at = self.located()
        return ECF(
            tuple(at["file"]), tuple(at["channel"]), at["tbeg"], at["dur"], source_signal_duration
        )

"""Score and key files (I/O at the edge: nothing below imports this package)."""

from .binary import TrialKey, TrialScores, align_trials, read_key, read_scores

__all__ = ["TrialKey", "TrialScores", "align_trials", "read_key", "read_scores"]

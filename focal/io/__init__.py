"""Score and key files (I/O at the edge: nothing below imports this package).

- :mod:`focal.io.binary`: BOSARIS-style ``model test score`` files and ``model test label`` keys.
- :mod:`focal.io.alignment`: the systems' scores of a key's trials, matched exactly by trial.
- :mod:`focal.io.multiclass`: Albayzin 2012 system outputs, a generic multiclass format with a
  header of class names, and ``segment language`` keys.
- :mod:`focal.io.stream`: chunked reading of several systems' files side by side.
- :mod:`focal.io.partitions`: tables of each trial's partition labels (partitioned scoring).

What is done with the files (training, applying, evaluating) is in :mod:`focal.workflows`.

Readers parse blocks of bytes with NumPy (no Python object per line), keep ids as fixed-width
UTF-8 bytes and read numbers exactly; writers write numbers that read back bit-identically.
Every reader error is a ``ValueError`` naming the file and the line. Hostile input stays
linear in time and bounded in memory: lines longer than 1 MiB, ids longer than 4096 characters
(:func:`read_limits` changes both), NUL bytes and invalid UTF-8 are refused as they are read.

References
----------
- "Albayzin plan" (the multiclass formats): :cite:p:`albayzin2012plan`
"""

from .._lazy import attach

# each name loads with its module on first use: reading one format loads only its reader
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        ".binary": (
            "TrialKey",
            "TrialScores",
            "read_key",
            "read_scores",
            "write_scores",
        ),
        ".alignment": (
            "align_scores",
            "align_trials",
        ),
        ".multiclass": (
            "ALBAYZIN_CLASSES",
            "MulticlassKey",
            "MulticlassScores",
            "multiclass_format",
            "read_albayzin_scores",
            "read_multiclass_key",
            "read_multiclass_scores",
            "read_multiclass_systems",
            "write_albayzin_scores",
            "write_multiclass_scores",
        ),
        "._multiclass_align": (
            "align_multiclass",
            "align_multiclass_scores",
        ),
        ".partitions": (
            "PartitionTable",
            "read_partitions",
            "trial_partitions",
        ),
        "focal._text.blocks": ("read_limits",),
        ".stream": (
            "ScoreChunk",
            "iter_score_chunks",
        ),
    },
)

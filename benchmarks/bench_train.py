"""``focal train`` of a 3-system fusion on score files against a key in another order, beside a
polars script.

Target: ``focal train --scores sys1 sys2 sys3 --key key`` on 10M trials (each file in its own
order) is no slower than a polars script that reads the four files and joins them with 1:1
checks (the fastest floor a user would write; it fits nothing), with peak memory at most the
key's id bytes + 64 bytes per trial + 256 MiB. Both run as processes, in turn (min and median of
the rounds); twice: short ids and VoxCeleb-style 29-character ids (the files of
``bench_evaluate``, and two more systems). With ``$FOCAL_BENCH_REFERENCE``, the reference tree's
``focal train`` runs too and the two model files are compared byte for byte.
"""

from __future__ import annotations

import numpy as np
from _common import ID_KINDS, race, same_file
from bench_evaluate import contenders, evaluation_files, print_memory_target

_POLARS = r"""
import sys
import polars as pl
def read(path, last):
    return pl.read_csv(path, separator=" ", has_header=False,
                       new_columns=["model", "test", last])
key = read(sys.argv[-1], "label")
joined = key
for k, path in enumerate(sys.argv[1:-1]):
    joined = joined.join(read(path, f"s{k}"), on=["model", "test"], how="inner", validate="1:1")
if joined.height != key.height:
    sys.exit("not every trial is in every file")
"""


def system_files(folder, score_path):
    """Two more systems' score files, each in its own trial order (the first: ``score_path``)."""
    from focal.io import read_scores, write_scores

    paths = [score_path] + [folder / f"sys{k}.scores" for k in (2, 3)]
    done = folder / "systems.done"
    if done.exists():
        return paths
    scores = read_scores(score_path)
    rng = np.random.default_rng(2)
    for k, path in enumerate(paths[1:], start=2):
        order = rng.permutation(len(scores))
        values = np.round(scores.scores[order] * k + rng.normal(size=len(scores)), 6)
        write_scores(path, scores.models[order], scores.tests[order], values)
    done.write_text("ok\n")
    return paths


def run(quick: bool = False, repeat: int = 3):
    n = 1_000_000 if quick else 10_000_000
    for kind in ID_KINDS:
        folder, score_path, key_path = evaluation_files(n, kind)
        paths = system_files(folder, score_path)
        model = folder / "trained.json"
        runs = race(
            f"train a 3-system fusion on {n:,} trials ({kind} ids), each file in its own order",
            contenders(
                ["train", "--scores", *paths, "--key", key_path],
                _POLARS,
                [*paths, key_path],
                output=model,
            ),
            repeat,
            n,
            floor="polars: read, join 1:1",
        )
        if "focal, reference tree" in runs:
            same = same_file(model, f"{model}.reference")
            print(f"  model file identical to the reference tree's: {same}")
        print_memory_target(key_path, n)

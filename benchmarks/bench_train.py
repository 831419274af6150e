"""``focal train`` of a 3-system fusion on score files against a key in another order, beside a
polars script.

Target: ``focal train --scores sys1 sys2 sys3 --key key`` on 10M trials with VoxCeleb-like ids
(each file in its own order) is no slower than a polars script that reads the four files and
joins them with 1:1 checks (the fastest floor a user would write; it fits nothing), with peak
memory under 1 GiB. Both run as processes, alternately (best and median of the rounds).

Then the same work in this process, step by step (read the key: hashes and labels kept, ids
written to a temporary file; stream the score files at once, a thread each, looked up by hash
and their matched ids checked byte for byte; fit the logistic-regression fusion; write the
model), each step printed as a share of the total with the process's resident memory at its
end.

The files (about 2.8 GB for 10M trials) are generated in a temporary folder, or kept in
``$FOCAL_BENCH_DIR`` (generated once, reused by the next runs; shared with bench_evaluate).
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

import numpy as np
from _common import optional_import, skipped
from bench_evaluate import Steps, _race, bench_folder, evaluation_files, join_steps

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


def _system_files(folder, score_path):
    """Two more systems' score files, each in its own trial order (the first: ``score_path``)."""
    from focal.io import read_scores, write_scores

    paths = [score_path] + [folder / f"sys{k}.scores" for k in (2, 3)]
    if all(p.exists() for p in paths):
        return paths
    scores = read_scores(score_path)
    rng = np.random.default_rng(2)
    for k, path in enumerate(paths[1:], start=2):
        order = rng.permutation(len(scores))
        values = np.round(scores.scores[order] * k + rng.normal(size=len(scores)), 6)
        write_scores(path, scores.models[order], scores.tests[order], values)
    return paths


def _steps(score_paths, key_path, folder):
    """Each step of ``focal train`` in-process."""
    from focal.estimators import LogisticFusion
    from focal.models.persistence import save

    steps = Steps()
    X, y = join_steps(steps, score_paths, key_path, folder)
    model = steps("fit (logistic-regression fusion)", LogisticFusion().fit, X, y)
    steps("write the model", save, model, folder / "fusion.json")
    return steps


def run(quick: bool = False, repeat: int = 2):
    n = 1_000_000 if quick else 10_000_000
    pl = optional_import("polars")
    with bench_folder(n) as tmp:
        folder = pathlib.Path(tmp)
        score_path, key_path = evaluation_files(folder, n)
        paths = _system_files(folder, score_path)
        print(
            f"{n:,} trials, VoxCeleb-like ids, 3 systems' score files and a key, each in its order"
        )
        floor = {}
        if pl is not None:
            floor["polars: read the 4 files, join with 1:1 checks (process)"] = [
                sys.executable,
                "-c",
                _POLARS,
                *map(str, paths),
                str(key_path),
            ]
        else:
            skipped("polars", "not installed")
        with tempfile.TemporaryDirectory(prefix="focal-bench-train-") as scratch:
            scratch = pathlib.Path(scratch)
            train = [sys.executable, "-m", "focal", "train", "--scores", *map(str, paths)]
            _race(
                f"train a 3-system fusion on {n:,} trials against a key in another order",
                {
                    "focal train (process)": train
                    + ["--key", str(key_path), "-o", str(scratch / "m.json")],
                    **floor,
                },
                repeat,
            )
            print("  target: focal train no slower than polars (ratio <= 1), peak under 1024 MiB")
            _steps(paths, key_path, scratch).print("the same work in-process")

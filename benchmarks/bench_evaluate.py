"""``focal evaluate`` of a score file against a key in another order, beside a polars script.

Target: ``focal evaluate scores --key key`` on 10M trials, the key in another order than the
scores, is no slower than a polars script that reads both files and joins them with a 1:1 check
(the fastest floor a user would write; it computes no metric at all), with peak memory at most
the key's id bytes + 64 bytes per trial + 256 MiB. Both run as processes, in turn (min and
median of the rounds), so their ratio is fair on a shared machine; twice: short ids
(``spk01234 seg00000042``) and VoxCeleb-style 29-character ids
(``id10270/5r0dWxy17C8/00001.wav``).

With ``$FOCAL_BENCH_REFERENCE`` set to another focal source tree (e.g. main before a change),
its ``focal evaluate`` runs too, in the same rounds, and the two reports are compared byte for
byte.

The files are generated once in ``$FOCAL_BENCH_DIR`` (default: the system's temporary folder;
about 1.4 GB for 10M trials with VoxCeleb-style ids) and reused by later runs (``bench_train``
shares them). polars and duckdb are optional: without one, its row is skipped.
"""

from __future__ import annotations

import sys

import numpy as np
from _common import (
    ID_KINDS,
    bench_folder,
    focal_command,
    optional_import,
    race,
    reference_root,
    skipped,
    trial_ids,
)

_POLARS = r"""
import sys
import polars as pl
scores = pl.read_csv(sys.argv[1], separator=" ", has_header=False,
                     new_columns=["model", "test", "score"])
key = pl.read_csv(sys.argv[2], separator=" ", has_header=False,
                  new_columns=["model", "test", "label"])
joined = scores.join(key, on=["model", "test"], how="inner", validate="1:1")
if joined.height != key.height or joined.height != scores.height:
    sys.exit("not every trial is in both files")
"""

# The same job in SQL: read the files, join them on (model, test), check that every trial is in
# every file once (the count of distinct pairs equals each file's count).
_DUCKDB = r"""
import sys
import duckdb
def read(path, last):
    return (f"read_csv('{path}', delim=' ', header=false, "
            f"columns={{'model': 'VARCHAR', 'test': 'VARCHAR', '{last}': 'VARCHAR'}})")
paths, key = sys.argv[1:-1], sys.argv[-1]
tables = [read(key, "label")] + [read(p, f"s{k}") for k, p in enumerate(paths)]
con = duckdb.connect()
con.execute("CREATE TABLE t0 AS SELECT * FROM " + tables[0])
query = "SELECT count(*), count(DISTINCT (t0.model, t0.test)) FROM t0"
for k, table in enumerate(tables[1:], start=1):
    con.execute(f"CREATE TABLE t{k} AS SELECT * FROM {table}")
    query += f" JOIN t{k} USING (model, test)"
joined, distinct = con.execute(query).fetchone()
n = [con.execute(f"SELECT count(*) FROM t{k}").fetchone()[0] for k in range(len(tables))]
if joined != distinct or any(m != joined for m in n):
    sys.exit("not every trial is in every file once")
"""


def _write_key(path, models, tests, labels):
    names = np.where(labels, b"target", b"nontarget")
    with open(path, "wb") as f:
        step = 1_000_000
        for i in range(0, models.size, step):
            j = i + step
            lines = np.char.add(np.char.add(models[i:j], b" "), np.char.add(tests[i:j], b" "))
            f.write(b"\n".join(np.char.add(lines, names[i:j]).tolist()) + b"\n")


def evaluation_files(n, kind):
    """The folder of the ``kind`` ids, its score file ``eval.scores`` (``%.6f`` scores) and
    its key ``eval.key`` (the same trials in another order), generated unless there.
    """
    from focal.io import write_scores

    folder = bench_folder(f"focal-bench-{n}-{kind}")
    score_path, key_path, done = folder / "eval.scores", folder / "eval.key", folder / "eval.done"
    if not done.exists():
        print(f"generating {n:,} trials ({kind} ids) in {folder} (once)")
        rng = np.random.default_rng(0)
        models, tests = trial_ids(rng, n, kind)
        labels = rng.random(n) < 0.05
        write_scores(score_path, models, tests, np.round(rng.normal(size=n) + 3.0 * labels, 6))
        order = rng.permutation(n)
        _write_key(key_path, models[order], tests[order], labels[order])
        done.write_text("ok\n")
    return folder, score_path, key_path


def contenders(focal_args, polars_script, polars_args, output=None):
    """The focal of this tree (and the reference tree's, writing ``output`` + ``.reference`` when
    the command writes a file), the polars script and the duckdb script (given the same files,
    the key last): ``{name: (command, root)}``.
    """
    out = {"focal": (focal_command(*focal_args, *(["-o", output] if output else [])), None)}
    reference = reference_root()
    if reference:
        more = ["-o", f"{output}.reference"] if output else []
        out["focal, reference tree"] = (focal_command(*focal_args, *more), reference)
    if optional_import("polars") is not None:
        out["polars: read, join 1:1"] = ([sys.executable, "-c", polars_script, *polars_args], None)
    else:
        skipped("polars", "not installed")
    if optional_import("duckdb") is not None:
        out["duckdb: read, join 1:1"] = ([sys.executable, "-c", _DUCKDB, *polars_args], None)
    else:
        skipped("duckdb", "not installed")
    return out


def run(quick: bool = False, repeat: int = 3):
    n = 1_000_000 if quick else 10_000_000
    for kind in ID_KINDS:
        _, score_path, key_path = evaluation_files(n, kind)
        runs = race(
            f"evaluate {n:,} trials ({kind} ids) against a key in another order",
            contenders(
                ["evaluate", score_path, "--key", key_path], _POLARS, [score_path, key_path]
            ),
            repeat,
            n,
            floor="polars: read, join 1:1",
        )
        if "focal, reference tree" in runs:
            same = runs["focal"][0]["stdout"] == runs["focal, reference tree"][0]["stdout"]
            print(f"  report identical to the reference tree's: {same}")
        print_memory_target(key_path, n)


def print_memory_target(key_path, n):
    """Print the targets, with the peak memory allowed: the key's id bytes + 64 B per trial +
    256 MiB.
    """
    from focal.io import read_key

    key = read_key(key_path)
    id_bytes = int(np.char.str_len(key.models).sum() + np.char.str_len(key.tests).sum())
    allowed = (id_bytes + 64 * n + (256 << 20)) / 2**20
    print(
        f"  target: focal <= 1.0x polars; peak <= {allowed:.0f} MiB (key id bytes "
        f"{id_bytes / 2**20:.0f} MiB + 64 B/trial + 256 MiB)"
    )

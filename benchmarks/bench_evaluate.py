"""``focal evaluate`` of a score file against a key in another order, beside a polars script.

Target: ``focal evaluate scores --key key`` on 10M trials with VoxCeleb-like ids
(``id10270/5r0dWxy17C8/00001.wav``), the key in a different order from the scores, is no slower
than a polars script that reads both files and joins them with a 1:1 check (the fastest floor a
user would write; it computes no metric at all), with peak memory under 1 GiB. Both run as
processes, one after the other, alternately (best of the rounds), so their ratio is fair on a
shared machine.

``focal apply`` of a 3-system fusion streams three 10M-line files (same trial order) to an
output file: trials per second, target 1.5M/s. Each row prints the peak resident memory of its
process. (``focal train`` of a 3-system fusion: ``bench_train.py``.)

Then the same work in this process, step by step (read the key: hashes and labels kept, ids
written to a temporary file; stream the score file, parsed in a worker thread while the main
thread looks its trials up by hash, then checks the matched ids byte for byte; compute; write
10M lines), each step printed as a share of the total and with the process's resident memory at its
end, so it is clear where the time and the memory go.

The files are generated at run time in a temporary folder (about 1.4 GB for 10M trials) and
deleted afterwards, or kept in ``$FOCAL_BENCH_DIR`` (generated once, reused by the next runs).
polars is optional: without it the polars row is skipped.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import optional_import, print_table, skipped

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _voxceleb_ids(rng, n):
    """``id1SSSS/VVVVVVVVVVV/UUUUU.wav``: speaker, 11-character video id, utterance."""
    alphabet = np.frombuffer(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", dtype=np.uint8
    )
    out = np.empty((n, 29), dtype=np.uint8)
    out[:, :3] = np.frombuffer(b"id1", dtype=np.uint8)
    out[:, 3:7] = (
        np.char.zfill(rng.integers(0, 1251, n).astype("S4"), 4).view(np.uint8).reshape(n, 4)
    )
    out[:, 7] = out[:, 19] = ord("/")
    out[:, 8:19] = alphabet[rng.integers(0, alphabet.size, (n, 11))]
    out[:, 20:25] = (
        np.char.zfill((rng.integers(1, 400, n)).astype("S5"), 5).view(np.uint8).reshape(n, 5)
    )
    out[:, 25:] = np.frombuffer(b".wav", dtype=np.uint8)
    return out.view("S29").ravel()


def _make_files(folder, n, seed=0):
    """A score file (``%.6f`` scores) and a key file with the same trials in another order."""
    from focal.io import write_scores

    rng = np.random.default_rng(seed)
    enrol = _voxceleb_ids(rng, n)
    test = _voxceleb_ids(rng, n)
    labels = rng.random(n) < 0.05
    scores = np.round(rng.normal(size=n) + 3.0 * labels, 6)
    score_path, key_path = folder / "eval.scores", folder / "eval.key"
    write_scores(score_path, enrol, test, scores)
    order = rng.permutation(n)
    names = np.where(labels[order], b"target", b"nontarget")
    lines = np.char.add(
        np.char.add(np.char.add(enrol[order], b" "), np.char.add(test[order], b" ")), names
    )
    with open(key_path, "wb") as f:
        step = 1_000_000
        for i in range(0, n, step):
            f.write(b"\n".join(lines[i : i + step].tolist()) + b"\n")
    return score_path, key_path


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

# A small launcher (no NumPy) runs the command and reports its wall time and the maximum resident
# set size of the command's process (not of this benchmark's pages at the spawn).
_LAUNCHER = r"""
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
result = subprocess.run(sys.argv[1:], capture_output=True, text=True)
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024   # KiB on Linux
print(json.dumps({"status": result.returncode, "stderr": result.stderr, "seconds": seconds,
                  "peak": peak}))
"""


def _process(command):
    """Run ``command`` as a process: (wall seconds, peak RSS bytes)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    report = json.loads(
        subprocess.run(
            [sys.executable, "-c", _LAUNCHER, *command],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    if report["status"] != 0:
        raise RuntimeError(f"{command[:4]} failed ({report['status']}): {report['stderr']}")
    return report["seconds"], report["peak"]


def resident_mib():
    """Resident memory of this process now (MiB; Linux), 0 where unknown."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return 0.0


class Steps:
    """Seconds (and resident MiB at the end) of named steps, in order; a step run inside
    another counts for itself only (its time is taken off the outer step's).
    """

    def __init__(self):
        self.times, self.memory = {}, {}
        self.notes = []  # lines printed under the steps
        self._inner = [0.0]  # seconds of the steps nested in each running step

    def __call__(self, name, fn, *args, **kwargs):
        self.times.setdefault(name, 0.0)  # listed in the order the steps start
        self._inner.append(0.0)
        t0 = time.perf_counter()
        try:
            result = fn(*args, **kwargs)
        finally:
            seconds = time.perf_counter() - t0
            own = seconds - self._inner.pop()
            self._inner[-1] += seconds
            self.times[name] += own
            self.memory[name] = resident_mib()
        return result

    def print(self, title):
        total = sum(self.times.values())
        print(f"\n== {title}, step by step ({total:.2f} s in all)")
        width = max(map(len, self.times))
        for step, seconds in self.times.items():
            print(
                f"  {step:<{width}}  {seconds:7.2f} s  {100 * seconds / total:5.1f} %"
                f"   resident {self.memory[step]:6.0f} MiB"
            )
        for note in self.notes:
            print(f"  ({note})")


def join_steps(steps, score_paths, key_path, folder):
    """The join of ``focal evaluate`` / ``train``, step by step: (X, y). The score files are
    read at once, a thread each, each checking its matches at its end: the CPU seconds of the
    checks (summed over the threads) are noted under the steps.
    """
    from focal.io import _join
    from focal.io._join import align_files
    from focal.io._spill import SpilledKey

    checks = []

    class TimedSpill(_join.MatchSpill):
        def check(self, values=None):
            t0 = time.thread_time()
            try:
                return super().check(values)
            finally:
                checks.append(time.thread_time() - t0)

    key = steps("read the key (hashes, labels; ids to disk)", SpilledKey, key_path, str(folder))
    real, _join.MatchSpill = _join.MatchSpill, TimedSpill
    try:
        X, y, _, _ = steps(
            "read the scores, look up by hash, check the ids"
            + (" (a thread per file)" if len(score_paths) > 1 else ""),
            align_files,
            key,
            score_paths,
            ids=False,
        )
    finally:
        _join.MatchSpill = real
    steps.notes.append(
        f"checking the matched ids byte for byte: {sum(checks):.2f} CPU s in the file threads"
    )
    return X, y


def _steps(score_path, key_path, folder):
    """Each step of ``focal evaluate`` (and of writing the aligned trials) in-process."""
    from focal.io import write_scores
    from focal.metrics import calibration_report, from_labels

    steps = Steps()
    X, y = join_steps(steps, [score_path], key_path, folder)

    def compute():
        tar, non = from_labels(X[:, 0], y)
        calibration_report(tar, non, operating_points=[0.01], name="eval")

    steps("compute (Cllr, minCllr, EER, DCF)", compute)
    ids = np.arange(X.shape[0]).astype("S10")  # the ids are on disk: write others
    steps(
        "write (10M lines, as apply does)", write_scores, folder / "out.scores", ids, ids, X[:, 0]
    )
    return steps


def _apply_files(folder, score_path, n_dev=100_000):
    """Three systems' eval files in the score file's trial order, and a 3-system fusion model
    trained on dev files of the same names (the model checks the systems by name).
    """
    from focal.io import read_scores, train_fusion, write_scores
    from focal.models.persistence import save

    scores = read_scores(score_path)
    (folder / "eval").mkdir()
    (folder / "dev").mkdir()
    rng = np.random.default_rng(1)
    paths = []
    for k in range(3):
        path = folder / "eval" / f"sys{k + 1}.scores"
        values = np.round(scores.scores * (k + 1) + rng.normal(size=len(scores)), 6)
        write_scores(path, scores.models, scores.tests, values)
        write_scores(
            folder / "dev" / path.name, scores.models[:n_dev], scores.tests[:n_dev], values[:n_dev]
        )
        paths.append(path)
    labels = np.where(scores.scores[:n_dev] > 1.5, b"target", b"nontarget")
    with open(folder / "dev.key", "wb") as f:
        f.write(
            b"".join(
                m + b" " + t + b" " + w + b"\n"
                for m, t, w in zip(scores.models[:n_dev], scores.tests[:n_dev], labels)
            )
        )
    fit = train_fusion(sorted((folder / "dev").iterdir()), folder / "dev.key")
    save(fit.model, folder / "fusion.json")
    return paths, folder / "fusion.json"


def _race(title, contenders, repeat):
    """Run the contenders as processes, alternately: (best seconds, median, peak RSS) each."""
    runs = {name: [] for name in contenders}
    peaks = dict.fromkeys(contenders, 0)
    for _ in range(repeat):
        for name, command in contenders.items():
            seconds, peak = _process(command)
            runs[name].append(seconds)
            peaks[name] = max(peaks[name], peak)
    print_table(
        f"{title} (best of {repeat}, alternating)",
        [(name, min(times)) for name, times in runs.items()],
    )
    for name, times in runs.items():
        print(f"  {name}: median {np.median(times):.2f} s, peak RSS {peaks[name] / 2**20:.0f} MiB")
    return runs, peaks


def bench_folder(n):
    """A folder for the generated files: ``$FOCAL_BENCH_DIR/<n>`` (kept) or a temporary one."""
    import contextlib

    kept = os.environ.get("FOCAL_BENCH_DIR")
    if kept:
        folder = pathlib.Path(kept) / str(n)
        folder.mkdir(parents=True, exist_ok=True)
        return contextlib.nullcontext(str(folder))
    return tempfile.TemporaryDirectory(prefix="focal-bench-")


def evaluation_files(folder, n):
    """The score file and the key in ``folder`` (generated unless there)."""
    score_path, key_path = folder / "eval.scores", folder / "eval.key"
    if not (score_path.exists() and key_path.exists()):
        _make_files(folder, n)
    return score_path, key_path


def run(quick: bool = False, repeat: int = 2):
    n = 1_000_000 if quick else 10_000_000
    pl = optional_import("polars")
    with bench_folder(n) as tmp:
        folder = pathlib.Path(tmp)
        score_path, key_path = evaluation_files(folder, n)
        print(
            f"{n:,} trials, VoxCeleb-like ids (every id distinct: the worst case for memory); "
            f"score file {score_path.stat().st_size / 2**20:.0f} MiB, key (another order) "
            f"{key_path.stat().st_size / 2**20:.0f} MiB"
        )
        focal = [sys.executable, "-m", "focal"]
        floor = {}
        if pl is not None:
            floor["polars: read both, join with a 1:1 check (process)"] = [
                sys.executable,
                "-c",
                _POLARS,
                str(score_path),
                str(key_path),
            ]
        else:
            skipped("polars", "not installed")
        _race(
            f"evaluate {n:,} trials against a key in another order",
            {
                "focal evaluate (process)": focal
                + ["evaluate", str(score_path), "--key", str(key_path)],
                **floor,
            },
            repeat,
        )
        print("  target: focal evaluate no slower than polars (ratio <= 1), peak under 1024 MiB")

        with tempfile.TemporaryDirectory(prefix="focal-bench-apply-") as scratch:
            _apply_and_steps(pathlib.Path(scratch), score_path, key_path, n, repeat)


def _apply_and_steps(folder, score_path, key_path, n, repeat):
    """``focal apply`` of a 3-system fusion, then the evaluation in-process, step by step."""
    focal = [sys.executable, "-m", "focal"]
    paths, model = _apply_files(folder, score_path)
    runs, _ = _race(
        f"apply a 3-system fusion to {n:,} trials (streamed)",
        {
            "focal apply (process)": focal
            + ["apply", str(model), *map(str, paths), "-o", str(folder / "fused.scores")]
        },
        repeat,
    )
    best = min(runs["focal apply (process)"])
    print(f"  {n / best / 1e6:.2f} M trials/s (target >= 1.5 M/s), including start-up")

    _steps(score_path, key_path, folder).print("the same work in-process")

"""Cold start: ``import focal`` and ``focal apply`` of a saved model, as processes, against the
floor of ``python -c "import numpy"``.

A production back-end that calls ``focal apply`` on a batch pays for Python's start, the imports
and loading the model before it scores one trial. Targets: ``focal apply`` of the sample 3-system
fusion, of the fusion followed by PAV and of a multiclass fusion to the sample trials (4,400
binary trials; 360 multiclass segments) at most 2.5x the wall time of ``python -c "import
numpy"``; ``python -c "import focal"`` at most 2x. Each command is started as a new process,
the contenders in turn (interleaved, so a burst of load elsewhere slows every one of them), and
the best and the median of the rounds are reported. The processes may write bytecode (as a
``pip install`` does), so the rounds after the first measure what a deployed focal costs.

The models are trained by ``focal train`` / ``focal train-multiclass`` on the dev sets of
``data_samples/`` (README quick start). With ``--reference DIR`` (a checkout of another focal,
e.g. ``git worktree add /tmp/main main``), the outputs of ``focal apply`` are also compared,
byte for byte, with those of that focal applying the same model files.

    python benchmarks/bench_cold_start.py [--rounds 5] [--reference DIR]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPK = ROOT / "data_samples" / "speaker_detection"
LID = ROOT / "data_samples" / "language_recognition"


def _focal(args, pythonpath=ROOT):
    return [sys.executable, "-m", "focal", *map(str, args)], pythonpath


def _run(command, pythonpath=ROOT):
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    # as an installed package runs: from compiled bytecode (written by the first round)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=pythonpath)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
    return done


def _train(folder):
    """The three sample models: fusion, fusion + PAV, multiclass fusion (paths)."""
    dev = [SPK / f"dev_sys{k}.scores" for k in (1, 2, 3)]
    lid_dev = [LID / f"dev_sys{k}_open.txt" for k in (1, 2, 3)]
    jobs = {
        "fusion": ["train", "--scores", *dev, "--key", SPK / "dev.key"],
        "fusion+pav": ["train", "--scores", *dev, "--key", SPK / "dev.key", "--pav"],
        "multiclass": ["train-multiclass", "--scores", *lid_dev, "--key", LID / "dev.key"],
    }
    paths = {}
    for name, args in jobs.items():
        paths[name] = folder / f"{name}.json"
        _run(_focal([*args, "-o", paths[name]])[0])
    return paths


def _apply_args(name, model, output):
    if name == "multiclass":
        return ["apply", model, *[LID / f"eval_sys{k}_open.txt" for k in (1, 2, 3)], "-o", output]
    return [
        "apply",
        "--align",
        model,
        *[SPK / f"eval_sys{k}.scores" for k in (1, 2, 3)],
        "-o",
        output,
    ]


def _timed(command, pythonpath=ROOT):
    t0 = time.perf_counter()
    _run(command, pythonpath)
    return time.perf_counter() - t0


def run(quick: bool = False, rounds: int = 5, reference=None):
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        models = _train(folder)
        contenders = [
            ("python -c 'import numpy'", [sys.executable, "-c", "import numpy"]),
            ("python -c 'import focal'", [sys.executable, "-c", "import focal"]),
            ("focal --help", _focal(["--help"])[0]),
        ]
        for name, model in models.items():
            args = _apply_args(name, model, folder / f"{name}.out")
            contenders.append((f"focal apply ({name})", _focal(args)[0]))
        paths = [ROOT] * len(contenders)
        if reference is not None:  # the same commands with the other focal, for comparison
            args = _apply_args("fusion", models["fusion"], folder / "fusion.reference.out")
            contenders.append(("focal apply (fusion), reference focal", _focal(args)[0]))
            paths.append(pathlib.Path(reference))
        times = [[] for _ in contenders]
        for _ in range(2 if quick else rounds):
            for i, (_, command) in enumerate(contenders):
                times[i].append(_timed(command, paths[i]))
        floor_best, floor_median = min(times[0]), statistics.median(times[0])
        print(f"\n== cold start, as processes ({len(times[0])} rounds, interleaved)")
        width = max(len(label) for label, _ in contenders)
        print(f"  {'':<{width}}  {'best':>8}  {'ratio':>6}  {'median':>8}  {'ratio':>6}")
        for (label, _), t in zip(contenders, times):
            best, median = min(t), statistics.median(t)
            print(
                f"  {label:<{width}}  {best:7.3f}s  {best / floor_best:5.2f}x  {median:7.3f}s  "
                f"{median / floor_median:5.2f}x"
            )
        print(
            "  targets: focal apply <= 2.5x import numpy, import focal <= 2x (best of the rounds)"
        )
        if reference is not None:
            _compare(models, folder, pathlib.Path(reference))


def _compare(models, folder, reference):
    """Byte-for-byte comparison of ``focal apply`` here and with the focal at ``reference``."""
    print(f"\n== outputs compared with the focal at {reference}")
    for name, model in models.items():
        theirs = folder / f"{name}.reference.out"
        _run(_focal(_apply_args(name, model, theirs))[0], pythonpath=reference)
        ours = (folder / f"{name}.out").read_bytes()
        same = ours == theirs.read_bytes()
        print(
            f"  focal apply ({name}): {'identical' if same else 'DIFFERENT'} ({len(ours):,} bytes)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--reference", metavar="DIR", help="a checkout of another focal to compare the outputs with"
    )
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    run(options.quick, options.rounds, options.reference)

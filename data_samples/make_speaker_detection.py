"""Generate the binary speaker-detection sample set in data_samples/speaker_detection/.

    python data_samples/make_speaker_detection.py

Reproducible (fixed seed, NumPy only). Three synthetic recognizers score the same trials of a dev
and an eval set; each set has 400 target and 4000 non-target trials. The systems are deliberately
uncalibrated in three different ways, so that fusion, calibration and the calibration analysis
have something to show:

- sys1: a good system whose scores are a stretched and shifted LLR (over-confident, offset);
- sys2: cosine-like scores in a narrow range around 0.3 (needs a slope near 25 to become LLRs);
- sys3: a weaker system with a non-linear (cubic-ish) miscalibration, which affine calibration
  cannot fully repair but PAV can.

The three share a per-trial "difficulty" term, so they are correlated, as real systems are, and
their fusion helps less than independent systems would.
"""

from __future__ import annotations

import pathlib

import numpy as np

SEED = 20261122
N_TARGET = 400
N_NONTARGET = 4000
OUT = pathlib.Path(__file__).resolve().parent / "speaker_detection"


def _trials(rng, first_speaker):
    """Trial ids: 100 enrolled models, each with 4 target and 40 non-target test segments."""
    models, tests, labels = [], [], []
    segment = 0
    for m in range(100):
        spk = first_speaker + m
        for k in range(44):
            target = k < 4
            owner = spk if target else first_speaker + (m + 1 + rng.integers(0, 99)) % 100
            models.append(f"spk{spk:04d}")
            tests.append(f"seg{owner:04d}_{segment:05d}")
            labels.append(target)
            segment += 1
    order = rng.permutation(len(labels))
    return np.array(models)[order], np.array(tests)[order], np.array(labels)[order]


def _system_scores(rng, y):
    n = y.size
    shared = rng.normal(size=n)  # trial difficulty seen by every system
    raw1 = np.where(y, 2.6, 0.0) + 0.5 * shared + 0.8 * rng.normal(size=n)
    raw2 = np.where(y, 2.1, 0.0) + 0.5 * shared + 1.0 * rng.normal(size=n)
    raw3 = np.where(y, 1.6, 0.0) + 0.3 * shared + 1.1 * rng.normal(size=n)
    sys1 = 3.0 * raw1 - 5.0
    sys2 = 0.30 + 0.045 * raw2
    centred = raw3 - 0.8
    sys3 = centred + 0.35 * centred**3
    return sys1, sys2, sys3


def _write(path, models, tests, column, fmt):
    with open(path, "w", encoding="utf-8") as out:
        for m, t, v in zip(models, tests, column):
            out.write(f"{m} {t} {fmt(v)}\n")


def main():
    rng = np.random.default_rng(SEED)
    OUT.mkdir(exist_ok=True)
    for name, first_speaker in (("dev", 1), ("eval", 101)):
        models, tests, y = _trials(rng, first_speaker)
        _write(OUT / f"{name}.key", models, tests, y,
               lambda v: "target" if v else "nontarget")
        for k, scores in enumerate(_system_scores(rng, y), start=1):
            # each system lists the trials in its own order, as real score files do
            order = rng.permutation(y.size)
            _write(OUT / f"{name}_sys{k}.scores", models[order], tests[order], scores[order],
                   lambda v: f"{v:.6f}")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

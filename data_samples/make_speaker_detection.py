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

The same trials are also scored on audio of varying length (``{dev,eval}_varlen_sys{1,2,3}``,
with speech durations of every enrolment and test segment in ``{dev,eval}.durations``), with a
second random stream so the files above stay as they are. There the systems' calibration drifts
with duration as it does in practice: the shorter the two sides, the less the scores separate
the classes (a smaller LLR slope) and the higher every score sits (a different offset), so one
affine calibration cannot fit short and long trials at once; quality fusion can.
"""

from __future__ import annotations

import pathlib

import numpy as np

SEED = 20261122
N_TARGET = 400
N_NONTARGET = 4000
OUT = pathlib.Path(__file__).resolve().parent / "speaker_detection"
DURATION_SEED = 20261123


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


def _system_scores(rng, y, separation=1.0, shift=0.0):
    """The three systems' scores; ``separation`` scales the target means and ``shift`` moves
    every raw score (per trial, both 1 and 0 for the fixed-length sets).
    """
    n = y.size
    shared = rng.normal(size=n)  # trial difficulty seen by every system
    raw1 = np.where(y, 2.6, 0.0) * separation + shift + 0.5 * shared + 0.8 * rng.normal(size=n)
    raw2 = np.where(y, 2.1, 0.0) * separation + shift + 0.5 * shared + 1.0 * rng.normal(size=n)
    raw3 = np.where(y, 1.6, 0.0) * separation + shift + 0.3 * shared + 1.1 * rng.normal(size=n)
    sys1 = 3.0 * raw1 - 5.0
    sys2 = 0.30 + 0.045 * raw2
    centred = raw3 - 0.8
    sys3 = centred + 0.35 * centred**3
    return sys1, sys2, sys3


def _write(path, models, tests, column, fmt):
    with open(path, "w", encoding="utf-8") as out:
        for m, t, v in zip(models, tests, column):
            out.write(f"{m} {t} {fmt(v)}\n")


def _durations(rng, ids, low, high):
    """Speech duration (seconds) of each distinct id, log-uniform in [low, high]."""
    names = np.unique(ids)
    seconds = np.exp(rng.uniform(np.log(low), np.log(high), size=names.size))
    return names, np.round(seconds, 2)


def _varlen(rng, name, models, tests, y):
    """Duration table and duration-dependent scores of the same trials (see the docstring)."""
    enrol, enrol_s = _durations(rng, models, 6.0, 120.0)
    segs, segs_s = _durations(rng, tests, 2.0, 90.0)
    with open(OUT / f"{name}.durations", "w", encoding="utf-8") as out:
        out.write("segment duration\n")
        for seg, sec in zip(np.r_[enrol, segs], np.r_[enrol_s, segs_s]):
            out.write(f"{seg} {sec:.2f}\n")
    d_model = enrol_s[np.searchsorted(enrol, models)]
    d_test = segs_s[np.searchsorted(segs, tests)]
    # the information in a trial grows with both sides' speech and saturates (about 6 s of test
    # speech gives half the separation of unlimited speech); short trials also score higher
    d_eff = 1.0 / (1.0 / d_model + 1.0 / d_test)
    saturation = d_eff / (d_eff + 6.0)
    separation = 1.6 * saturation
    shift = 2.5 * (1.0 - saturation)
    for k, scores in enumerate(_system_scores(rng, y, separation, shift), start=1):
        order = rng.permutation(y.size)
        _write(
            OUT / f"{name}_varlen_sys{k}.scores",
            models[order],
            tests[order],
            scores[order],
            lambda v: f"{v:.6f}",
        )


def main():
    rng = np.random.default_rng(SEED)
    OUT.mkdir(exist_ok=True)
    sets = []
    for name, first_speaker in (("dev", 1), ("eval", 101)):
        models, tests, y = _trials(rng, first_speaker)
        sets.append((name, models, tests, y))
        _write(OUT / f"{name}.key", models, tests, y, lambda v: "target" if v else "nontarget")
        for k, scores in enumerate(_system_scores(rng, y), start=1):
            # each system lists the trials in its own order, as real score files do
            order = rng.permutation(y.size)
            _write(
                OUT / f"{name}_sys{k}.scores",
                models[order],
                tests[order],
                scores[order],
                lambda v: f"{v:.6f}",
            )
    rng = np.random.default_rng(DURATION_SEED)  # a second stream: the files above stay as they are
    for name, models, tests, y in sets:
        _varlen(rng, name, models, tests, y)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

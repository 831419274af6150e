"""Generate the language-recognition sample set in data_samples/language_recognition/.

    python data_samples/make_language_recognition.py

Reproducible (fixed seed, NumPy only). The Plenty-of-Training task of the Albayzin 2012 LRE
(plan sec. 3.2): 6 target languages (Basque, Catalan, English, Galician, Portuguese, Spanish)
plus the out-of-set (OOS) class, in the plan's system-output format (sec. 6.1.3), for a dev and
an eval set, closed-set and open-set, three systems. See language_recognition/README.md.

The model: each segment has a hidden 4-dimensional "language vector" z ~ N(m_c, I) around the
mean of its language c (OOS segments come from three other languages). Target means are placed
so that Galician-Portuguese and Catalan-Spanish are the confusable pairs, as in the real task.
A system observes z plus its own noise, and outputs Gaussian log-likelihoods
l_j = -|x - m_j|^2 / (2 v) (plan eq. 1: any per-segment constant is irrelevant), then:

- sys1: well calibrated (the correct variance), apart from small per-language offsets;
- sys2: a better front end, but over-confident: its log-likelihoods are scaled by 2.6, the
  factor found by Brümmer and van Leeuwen (2006), whose calibration scaled scores by 0.38;
- sys3: a weaker system, under-confident (scaled by 0.6) and shifted.

Open-set files carry a real OOS score (a broad background Gaussian); closed-set files carry the
dummy 0.0000 OOS score of the plan's Figure 1. Every file lists all segments of its set.
"""

from __future__ import annotations

import pathlib

import numpy as np

SEED = 20120612
OUT = pathlib.Path(__file__).resolve().parent / "language_recognition"
LANGUAGES = ("Basque", "Catalan", "English", "Galician", "Portuguese", "Spanish")
MEANS = np.array(
    [
        [3.0, 0.0, 0.0, 0.0],  # Basque
        [0.0, 3.0, 0.0, 0.0],  # Catalan
        [0.0, 0.0, 3.5, 0.0],  # English
        [0.0, 1.2, 0.0, 2.4],  # Galician   (close to Portuguese)
        [0.0, 0.0, 0.0, 3.0],  # Portuguese
        [0.0, 2.2, 0.0, 1.2],  # Spanish    (close to Catalan and Galician)
    ]
)
OOS_MEANS = np.array([[-2.0, 0.0, 0.0, 0.0], [0.0, -2.0, 1.0, 0.0], [1.0, 0.0, -2.0, -1.0]])
PER_LANGUAGE = 45
N_OOS = 90
BACKGROUND_VAR = 9.0  # the open-set systems' OOS model: a broad Gaussian around the origin

# (noise variance, scale, per-language offsets) of each system
SYSTEMS = {
    "sys1": (0.8, 1.0, np.array([0.3, -0.2, 0.0, 0.4, -0.3, 0.1])),
    "sys2": (0.5, 2.6, np.zeros(6)),
    "sys3": (2.0, 0.6, np.array([1.0, 0.5, -0.5, 0.0, 0.5, -1.0])),
}


def _segment_names(rng, n):
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    names = set()
    while len(names) < n:
        names.add("".join(rng.choice(letters, 8)))
    return rng.permutation(sorted(names))


def _make_set(rng):
    labels = np.concatenate([np.repeat(np.arange(6), PER_LANGUAGE), np.full(N_OOS, 6)])
    labels = rng.permutation(labels)
    z = rng.normal(size=(labels.size, 4))
    target = labels < 6
    z[target] += MEANS[labels[target]]
    z[~target] += OOS_MEANS[rng.integers(0, len(OOS_MEANS), (~target).sum())]
    return labels, z


def _log_likelihoods(rng, z, noise_var, scale, offsets):
    """Targets' Gaussian log-likelihoods (variance 1 + noise) and a background OOS score."""
    x = z + rng.normal(scale=np.sqrt(noise_var), size=z.shape)
    var = 1.0 + noise_var
    sq = ((x[:, None, :] - MEANS[None, :, :]) ** 2).sum(axis=2)
    targets = -0.5 * sq / var
    # the same normalization for the background model: -|x|^2/(2 V) - (d/2) log(V / var)
    background = -0.5 * (x**2).sum(axis=1) / (BACKGROUND_VAR + noise_var) - 2.0 * np.log(
        (BACKGROUND_VAR + noise_var) / var
    )
    llh = np.column_stack([targets, background])
    llh[:, :6] += offsets
    return scale * llh


def _write_system(path, segments, llh, condition):
    with open(path, "w", encoding="utf-8") as out:
        for name, row in zip(segments, llh):
            oos = "0.0000" if condition == "Closed" else f"{row[6]:.4f}"
            values = " ".join(f"{v:.4f}" for v in row[:6])
            out.write(f"Plenty {condition} {name} {values} {oos}\n")


def main(out=OUT):
    out = pathlib.Path(out)
    rng = np.random.default_rng(SEED)
    out.mkdir(exist_ok=True)
    for set_name in ("dev", "eval"):
        labels, z = _make_set(rng)
        segments = _segment_names(rng, labels.size)
        names = np.array(LANGUAGES + ("OOS",))
        with open(out / f"{set_name}.key", "w", encoding="utf-8") as key:
            for name, label in zip(segments, labels):
                key.write(f"{name} {names[label]}\n")
        for system, (noise_var, scale, offsets) in SYSTEMS.items():
            llh = _log_likelihoods(rng, z, noise_var, scale, offsets)
            for condition in ("Closed", "Open"):
                _write_system(
                    out / f"{set_name}_{system}_{condition.lower()}.txt", segments, llh, condition
                )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

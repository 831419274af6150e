"""The language-recognition sample set: reproducible, readable, and showing what its README says."""

import importlib.util
import pathlib

import numpy as np
import pytest
from scipy.special import logsumexp

from focal.io import align_multiclass, read_albayzin_scores, read_multiclass_key

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOLDER = ROOT / "data_samples" / "language_recognition"
SCRIPT = ROOT / "data_samples" / "make_language_recognition.py"


def load_script():
    spec = importlib.util.spec_from_file_location("make_language_recognition", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regenerating_gives_the_committed_files(tmp_path):
    load_script().main(tmp_path)
    made = sorted(p.name for p in tmp_path.iterdir())
    committed = sorted(p.name for p in FOLDER.iterdir() if p.name != "README.md")
    assert made == committed
    for name in made:
        assert (tmp_path / name).read_bytes() == (FOLDER / name).read_bytes(), name
    assert sum((FOLDER / n).stat().st_size for n in made) < 500_000


def prior_weighted_cross_entropy(llh, labels, prior):
    """C_mce of Albayzin eq. 6 in nats, written out directly (zero-prior classes ignored)."""
    log_prior = np.log(prior, where=prior > 0, out=np.full(prior.shape, -np.inf))
    log_post = llh + log_prior
    log_post -= logsumexp(log_post, axis=1, keepdims=True)
    return -sum(prior[c] * log_post[labels == c, c].mean() for c in np.flatnonzero(prior))


@pytest.mark.parametrize("set_name", ["dev", "eval"])
def test_sets_read_align_and_sys2_is_over_confident_by_2_6(set_name):
    key = read_multiclass_key(FOLDER / f"{set_name}.key")
    systems = {}
    for system in ("sys1", "sys2", "sys3"):
        for condition in ("closed", "open"):
            s = read_albayzin_scores(FOLDER / f"{set_name}_{system}_{condition}.txt")
            assert s.task == "Plenty" and s.condition == condition.capitalize()
            systems[system, condition] = s
    X, labels, segments, classes = align_multiclass(
        key, *(systems[s, "open"] for s in ("sys1", "sys2", "sys3"))
    )
    assert X.shape == (360, 21) and classes[-1] == "OOS"
    np.testing.assert_array_equal(np.bincount(labels), [45] * 6 + [90])
    closed = systems["sys2", "closed"]
    np.testing.assert_array_equal(closed.llh[:, 6], 0.0)  # the plan's dummy OOS score
    # closed-set prior (Albayzin eq. 2 with pi_m = 0): the best scale of sys2 is about 1/2.6
    Xc, yc, _, _ = align_multiclass(key, closed)
    prior = np.array([1 / 6] * 6 + [0.0])
    scales = np.linspace(0.1, 2.0, 191)
    cost = [prior_weighted_cross_entropy(a * Xc, yc, prior) for a in scales]
    best = scales[int(np.argmin(cost))]
    assert 0.3 <= best <= 0.5, best
    cost1 = [
        prior_weighted_cross_entropy(
            a * align_multiclass(key, systems["sys1", "closed"])[0], yc, prior
        )
        for a in scales
    ]
    assert 0.8 <= scales[int(np.argmin(cost1))] <= 1.25

"""ELUB limits (Vergeer et al. 2016) and the forensic summary, against independent computations
of the paper's definition: the normalized Bayes error-rate with one misleading LR added at the
threshold, read off a fine grid of log10 thresholds.
"""

import numpy as np
import pytest

from focal.metrics import cllr, eer, elub_bounds, forensic_summary, min_cllr
from tests._support.reference_data import lir_cartridge_llrs

LN10 = np.log(10.0)


def grid_elub(tar, non, step=1e-4, reach=4.0):
    """The ELUB limits (log10) read off a grid: the first log10 threshold where the NBE with one
    added misleading LR exceeds 1, going away from LR 1 (the authors' MATLAB formula, one dummy
    LR per threshold), minus one step.
    """
    hp, hd = tar / LN10, non / LN10
    rho = np.arange(0.0, reach, step)
    theta = 10.0**rho
    up = theta * ((hd[None, :] >= rho[:, None]).sum(1) + 1) / (hd.size + 1) + (
        hp[None, :] < rho[:, None]
    ).mean(1)
    rho_low = -rho
    low = ((hp[None, :] <= rho_low[:, None]).sum(1) + 1) / (hp.size + 1) / 10.0**rho_low + (
        hd[None, :] > rho_low[:, None]
    ).mean(1)
    first_up, first_low = np.argmax(up > 1), np.argmax(low > 1)
    assert up[first_up] > 1 and low[first_low] > 1  # the grid reaches both crossings
    return rho_low[first_low], rho[first_up]


def test_elub_on_the_lir_cartridge_cases_agrees_with_the_grid():
    tar, non = lir_cartridge_llrs()
    lower, upper = elub_bounds(tar, non).log10
    grid_lower, grid_upper = grid_elub(tar, non)
    # the exact crossing lies in the grid step before the first grid point past it
    assert grid_upper - 1e-4 <= upper <= grid_upper
    assert grid_lower <= lower <= grid_lower + 1e-4
    # NFI lir 1.x, whose grid adds a misleading LR on both sides, finds [-0.84, 1.55] on these
    assert lower == pytest.approx(-0.8484, abs=1e-3) and upper == pytest.approx(1.5553, abs=1e-3)


@pytest.mark.parametrize("seed", range(8))
def test_elub_agrees_with_the_grid_on_small_random_sets(seed):
    rng = np.random.default_rng(seed)
    n_tar, n_non = rng.integers(3, 40, size=2)
    scale = rng.uniform(0.5, 3.0)
    tar = np.round(rng.normal(scale, 2.0, n_tar), 1)  # ties included
    non = np.round(rng.normal(-scale, 2.0, n_non), 1)
    lower, upper = elub_bounds(tar, non).log10
    grid_lower, grid_upper = grid_elub(tar, non)
    assert grid_upper - 1e-4 - 1e-12 <= upper <= grid_upper + 1e-12
    assert grid_lower - 1e-12 <= lower <= grid_lower + 1e-4 + 1e-12


def test_elub_of_the_hand_worked_case():
    # H2 LRs 1/100, 1/10, 1 and H1 LRs 10, 100: for 1 < theta < 10 no count changes, and
    # NBE_up = theta (0 + 1) / (3 + 1) reaches 1 at theta = 4; for 1/10 < theta < 1,
    # NBE_low = (0 + 1) / (2 + 1) / theta + 1 / 3 (the H2 LR of 1 above theta) reaches 1 at 1/2
    lower, upper = elub_bounds(np.log([10.0, 100.0]), np.log([0.01, 0.1, 1.0]))
    assert np.exp(upper) == pytest.approx(4.0, rel=1e-14)
    assert np.exp(lower) == pytest.approx(0.5, rel=1e-14)


def test_a_system_worse_than_none_has_no_room():
    # every H1 LR below every H2 LR: already at LR 1 the NBE exceeds 1 on both sides
    lower, upper = elub_bounds(np.log([0.1, 0.2]), np.log([5.0, 10.0]))
    assert (lower, upper) == (0.0, 0.0)


def test_the_limits_grow_with_the_validation_set_and_stay_below_its_size():
    rng = np.random.default_rng(3)
    previous = 0.0
    for n in (10, 100, 1000):
        tar, non = rng.normal(8, 4, n), rng.normal(-8, 4, n)  # calibrated, well separated
        lower, upper = elub_bounds(tar, non)
        assert previous < upper <= np.log(n + 1) and -np.log(n + 1) <= lower < 0
        previous = upper


def test_infinite_llrs_are_legal():
    lower, upper = elub_bounds([np.inf, 3.0, 2.0], [-np.inf, -1.0, -2.0])
    assert np.isfinite([lower, upper]).all() and lower < 0 < upper


def test_the_forensic_summary_says_what_the_measures_say():
    tar, non = lir_cartridge_llrs()
    s = forensic_summary(tar, non, name="cartridge")
    assert s.cllr == cllr(tar, non) and s.cllr_min == min_cllr(tar, non) and s.eer == eer(tar, non)
    assert s.cllr_cal == s.cllr - s.cllr_min
    assert s.misleading_h1 == np.mean(tar < 0) and s.misleading_h2 == np.mean(non > 0)
    assert s.elub == elub_bounds(tar, non)
    assert s.min_tar == tar.min() and s.max_non == non.max()
    text = str(s)
    for word in ("Cllr_min", "Cllr_cal", "ELUB", "H1-true", "H2-true"):
        assert word in text
    assert s.to_dict()["elub_log10"] == list(s.elub.log10)

"""best_affine: the one choice between an optimizer's recalibrations, the identity and the
default system (so a minimum is never above the actual or the default cost).
"""

import numpy as np

from focal.core.affine import best_affine


def _quadratic(scale, offset):
    """A toy objective with its minimum at scale 2, offset -1 (value 0)."""
    return (scale - 2.0) ** 2 + float(np.sum((np.asarray(offset) + 1.0) ** 2))


def test_fitted_wins_when_better_and_ties():
    c = best_affine(_quadratic, [(2.0, -1.0)])
    assert (c.value, c.scale, c.offset, c.source) == (0.0, 2.0, -1.0, "fitted")
    # a tie with the identity goes to the fitted candidate
    c = best_affine(lambda s, o: 1.0, [(5.0, 3.0)])
    assert c.source == "fitted" and c.scale == 5.0


def test_identity_and_default_are_candidates():
    c = best_affine(_quadratic, [(10.0, 10.0)])  # a poor optimizer result
    assert c.source == "identity" and c.scale == 1.0 and c.value == 2.0
    c = best_affine(lambda s, o: abs(s), [(3.0, 0.0)], zero_offset=np.zeros(2))
    assert c.source == "default" and c.scale == 0.0 and c.offset.tolist() == [0.0, 0.0]
    # known values are used instead of calling the objective
    c = best_affine(_quadratic, [], identity_value=-5.0, default_value=7.0)
    assert c.source == "identity" and c.value == -5.0


def test_unusable_or_refused_candidates_are_skipped():
    c = best_affine(_quadratic, [(np.nan, 0.0), (2.0, np.array([np.inf]))])
    assert c.source == "identity"
    c = best_affine(lambda s, o: s, [(-3.0, 0.0)], nonnegative_scale=True)
    assert c.source == "default"  # thesis sec. 8.4.2: no reversal
    c = best_affine(lambda s, o: s, [(-3.0, 0.0)])
    assert c.source == "fitted" and c.scale == -3.0

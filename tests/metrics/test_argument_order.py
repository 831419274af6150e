"""Binary measures refuse labels passed as scores: scikit-learn's ``(y_true, y_score)`` order
given to a ``(tar, non)`` measure returned a wrong number with no error (issue: ``eer(y_true,
y_score)`` gave 30.7 % instead of 1.55 % on VoxCeleb1-O; ``cllr(scores, y_bool)`` read the
booleans as non-target scores). One check, in the validation every binary measure shares.
"""

import pathlib

import numpy as np
import pytest

from focal.metrics import (
    BinaryScores,
    bootstrap_ci,
    c_primary,
    calibration_report,
    cllr,
    dcf,
    det_curve,
    eer,
    from_labels,
    min_cllr,
    min_dcf,
    rocch,
    truncated_cllr,
)

RNG = np.random.default_rng(0)
Y = (RNG.random(2000) < 0.1).astype(np.int64)  # labels as scikit-learn users hold them
S = RNG.normal(size=2000) + 3.0 * Y  # scores

MEASURES = {
    "cllr": cllr,
    "min_cllr": min_cllr,
    "dcf": lambda a, b: dcf(a, b, 0.01),
    "min_dcf": lambda a, b: min_dcf(a, b, 0.01),
    "eer": eer,
    "det_curve": det_curve,
    "rocch": rocch,
    "truncated_cllr": truncated_cllr,
    "c_primary": c_primary,
    "calibration_report": calibration_report,
    "BinaryScores": BinaryScores,
    "bootstrap_ci": lambda a, b: bootstrap_ci("eer", a, b, n_bootstrap=10),
}


def _reference_file(name):
    """A file of the shared reference data, found above the checkout; None when absent."""
    for parent in pathlib.Path(__file__).resolve().parents:
        path = parent / "shared" / "reference-data" / name
        if path.is_file():
            return path
    return None


@pytest.mark.parametrize("name", sorted(MEASURES))
def test_every_binary_measure_refuses_labels_then_scores(name):
    with pytest.raises(ValueError, match=r"tar holds only the values 0 and 1.*from_labels"):
        MEASURES[name](Y, S)  # eer(y_true, y_score)
    with pytest.raises(ValueError, match=r"non holds only the values 0 and 1.*from_labels"):
        MEASURES[name](S, Y)  # eer(y_score, y_true)
    with pytest.raises(ValueError, match="booleans"):
        MEASURES[name](S, Y.astype(bool))  # cllr(scores, y_bool)
    MEASURES[name](*from_labels(S, Y))  # what the message says to do


def test_the_issue_calls():
    with pytest.raises(ValueError, match="scikit-learn's argument order"):
        eer(Y, S)
    with pytest.raises(ValueError, match="scikit-learn's argument order"):
        min_dcf(Y, S, 0.01)
    with pytest.raises(ValueError, match="non holds booleans"):
        cllr(S, Y == 1)
    # the right calls, against an independent count: the EER of separated-by-3 Gaussians
    tar, non = from_labels(S, Y)
    assert eer(tar, non) < 0.1


def test_ambiguous_pairs_warn_and_real_scores_pass():
    # floats 0.0 / 1.0 may be a hand-made set of scores: computed, with a warning
    with pytest.warns(UserWarning, match="looks like"):
        value = eer(Y.astype(float), S)
    assert 0.0 <= value <= 0.5
    # hard decisions as scores on both sides, or different lengths: nothing to say
    eer(np.array([1, 1, 0, 1]), np.array([0, 1, 0, 0]))
    eer(np.r_[0.0, 1.0, 1.0], np.r_[0.3, 0.2])


def test_voxceleb1o_in_scikit_learn_order_is_refused():
    path = _reference_file("voxceleb1o_aamsoftmax_cosine.npz")
    if path is None:
        pytest.skip("the shared reference data are not here")
    data = np.load(path)
    scores, labels = data["scores"], data["labels"]
    with pytest.raises(ValueError, match="scikit-learn's argument order"):
        eer(labels, scores)
    with pytest.raises(ValueError, match="scikit-learn's argument order"):
        min_dcf(labels, scores, 0.01)
    tar, non = scores[labels == 1], scores[labels == 0]
    # the EER by an independent count: the threshold where misses and false alarms cross
    t = np.sort(np.r_[tar, non])
    p_miss = np.searchsorted(np.sort(tar), t) / tar.size
    p_fa = 1 - np.searchsorted(np.sort(non), t) / non.size
    i = np.argmin(np.abs(p_miss - p_fa))
    assert eer(*from_labels(scores, labels)) == pytest.approx((p_miss[i] + p_fa[i]) / 2, abs=1e-3)

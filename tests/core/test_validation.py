"""Estimator parameters are checked the same way everywhere (focal.core.validation)."""

import numpy as np
import pytest

from focal import GaussianBackend, LinearCalibrator, LogisticFusion, MulticlassFusion, PAVCalibrator
from focal.core.validation import check_int, check_non_negative


def test_check_non_negative_and_check_int():
    assert check_non_negative(0, "reg") == 0.0
    assert check_non_negative(np.float32(0.5), "reg") == 0.5
    for bad in ("0.5", True, None, -1e-9, np.inf, np.nan):
        with pytest.raises(ValueError, match="reg"):
            check_non_negative(bad, "reg")
    with pytest.raises(ValueError, match="tol must be a finite number > 0"):
        check_non_negative(0.0, "tol", strict=True)
    assert check_int(np.int64(7), "max_iter") == 7
    for bad in (0, 2.0, 2.7, "3", False):
        with pytest.raises(ValueError, match="max_iter must be an integer >= 1"):
            check_int(bad, "max_iter")


def _binary():
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(30, int), np.zeros(30, int)]
    return rng.normal(size=(60, 1)) + y[:, None], y


def _multiclass():
    rng = np.random.default_rng(0)
    y = np.arange(60) % 3
    return rng.normal(size=(60, 3)) + np.eye(3)[y], y


@pytest.mark.parametrize(
    "estimator, data, name",
    [
        (LogisticFusion(reg="0.5"), _binary, "reg"),
        (LogisticFusion(tol=0), _binary, "tol"),
        (LinearCalibrator(max_iter=2.7), _binary, "max_iter"),
        (PAVCalibrator(pseudo_count="1"), _binary, "pseudo_count"),
        (MulticlassFusion(reg="0.5"), _multiclass, "reg"),
        (MulticlassFusion(tol="1e-3"), _multiclass, "tol"),
        (MulticlassFusion(max_iter=2.7), _multiclass, "max_iter"),
        (GaussianBackend(reg=-1.0), _multiclass, "reg"),
    ],
)
def test_bad_parameters_are_refused_at_fit(estimator, data, name):
    X, y = data()
    with pytest.raises(ValueError, match=name):
        estimator.fit(X, y)


def test_sample_weights_are_checked_once_the_same_way():
    from focal.core.multiclass import check_multiclass_trials
    from focal.core.validation import as_sample_weight

    w = [1, 0, 2.5]
    out = as_sample_weight(w, 3)
    assert out.dtype == np.float64 and out.tolist() == [1.0, 0.0, 2.5]
    for bad, message in (
        ([1, -1, 1], "negative"),
        ([1, 1], "2 entries for 3 trials"),
        ([1, np.nan, 1], "NaN"),
        ([1, np.inf, 1], "non-finite"),
        ([[1, 1, 1]], "1-D"),
        (["a", "b", "c"], "real numbers"),
    ):
        with pytest.raises(ValueError, match=message):
            as_sample_weight(bad, 3)
    X, y = _binary()
    Xm, ym = _multiclass()
    for fit in (
        lambda w: LogisticFusion().fit(X, y, sample_weight=w),
        lambda w: MulticlassFusion().fit(Xm, ym, sample_weight=w),
        lambda w: check_multiclass_trials(Xm, ym, sample_weight=w),
    ):
        with pytest.raises(ValueError, match="sample_weight contains negative values"):
            fit(np.r_[-1.0, np.ones(59)])

"""Albayzin 2012 plan C_min, F_dis and F_cal (eqs. 8-14) with the plan's free alpha and the
thesis' alpha >= 0 (sec. 8.4.2) on sign-inverted submissions.

The F values are ``F = expm1(C) / expm1(C_def)`` (eqs. 8-10; ``expm1(log 6) = 5`` for the six
closed-set languages), and both forms share C_mce and F_act; with the thesis form clamped to
the default system (F_dis = 1), ``F_cal(thesis) + 1 = F_act = (F_cal(plan) + 1) F_dis(plan)``.
Published example values of a sign-inverted closed-set submission satisfy these relations:
C_min 1.0574 nats gives F_dis ``expm1(1.0574) / 5 = 0.3758``, and
``(2969.5 + 1) * 0.3758 = 1116.3 = 1115.3 + 1`` (C_mce ``log(1 + 5 * 1116.3) = 8.627`` nats).
"""

import pathlib

import numpy as np
import pytest

from focal.metrics import albayzin_measures

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "data_samples" / "language_recognition"


def _sample(name):
    from focal.io import align_multiclass, read_albayzin_scores, read_multiclass_key

    key = read_multiclass_key(SAMPLES / f"{name.split('_')[0]}.key")
    X, y, _, _ = align_multiclass(key, read_albayzin_scores(SAMPLES / f"{name}.txt"), other="oos")
    return X, y


@pytest.mark.parametrize("name", ["eval_sys3_closed", "dev_sys1_closed"])
def test_plan_and_thesis_forms_of_a_sign_inverted_submission(name):
    L, y = _sample(name)
    plan = albayzin_measures(-L, y)
    thesis = albayzin_measures(-L, y, nonnegative_alpha=True)
    assert plan.c_mce == thesis.c_mce and plan.f_act == thesis.f_act
    # eqs. 8-10 by hand
    assert plan.f_dis == pytest.approx(np.expm1(plan.c_min) / 5, rel=1e-12)
    assert plan.f_act == pytest.approx(np.expm1(plan.c_mce) / 5, rel=1e-12)
    # the thesis form is the default system; the plan's keeps the discrimination
    assert thesis.c_min == pytest.approx(np.log(6), rel=1e-15) and thesis.f_dis == 1.0
    assert plan.alpha < 0 and plan.f_dis < 1
    assert thesis.f_cal + 1 == pytest.approx((plan.f_cal + 1) * plan.f_dis, rel=1e-10)

"""Hand-worked known answers of the Albayzin plan's criteria with an unconstrained alpha
(Rodríguez-Fuentes et al., "The Albayzin 2012 Language Recognition Evaluation Plan", 2012,
eqs. 6-15) against the thesis' alpha >= 0 (Brümmer 2010, sec. 8.4.2).
"""

import numpy as np
import pytest

from focal.metrics import albayzin_measures


def _sign_inverted():
    """Two target languages and the out-of-set column (closed set: the last class and its
    trials are ignored). The log-likelihood-ratio of class 1 against class 0 is x = l_1 - l_0:
    class-1 trials have x = -1 three times and +1 once, class-0 trials x = +1 three times and
    -1 once: the system points the wrong way three times in four.
    """
    x = np.array([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 0.3])
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 2])
    llh = np.column_stack([np.zeros(x.size), x, np.full(x.size, 5.0)])
    return llh, y


def test_sign_inverted_closed_set_by_hand():
    """By the symmetry of the data the best offset is 0 and the cost of alpha is
    ``f(a) = 3/4 log(1 + e^a) + 1/4 log(1 + e^-a)`` (each class, flat prior);
    ``f'(a) = 3/4 s(a) - 1/4 s(-a) = 0`` gives ``s(a) = 1/4``, ``a = -log 3``, and
    ``C_min = f(-log 3) = 3/4 log(4/3) + 1/4 log 4 = log 4 - 3/4 log 3`` nats (eq. 12).
    C_mce = f(1) (eq. 6), C_def = log 2 (eq. 7), F's by eqs. 8-14 with F_def = 1.
    """
    llh, y = _sign_inverted()
    m = albayzin_measures(llh, y)
    c_mce = 0.75 * np.log1p(np.e) + 0.25 * np.log1p(np.exp(-1.0))
    c_min = np.log(4.0) - 0.75 * np.log(3.0)
    assert m.c_def == pytest.approx(np.log(2.0), rel=1e-15)
    assert m.c_mce == pytest.approx(c_mce, rel=1e-13)
    assert m.c_min == pytest.approx(c_min, rel=1e-12)
    assert m.alpha == pytest.approx(-np.log(3.0), rel=1e-9)
    assert m.beta == pytest.approx([0.0, 0.0, 0.0], abs=1e-10)
    f_act, f_dis = np.expm1(c_mce), np.expm1(c_min)  # F_def = e^log 2 - 1 = 1
    assert m.f_act == pytest.approx(f_act, rel=1e-13)
    assert m.f_dis == pytest.approx(4.0 / 3.0**0.75 - 1.0, rel=1e-12)
    assert m.f_cal == pytest.approx((f_act - f_dis) / f_dis, rel=1e-11)
    # four digits, as the plan reports them
    assert (round(m.c_min, 4), round(m.f_dis, 4), round(m.f_cal, 4)) == (0.5623, 0.7548, 1.5118)


def test_thesis_form_clamps_the_same_data_to_the_default_system():
    """With alpha >= 0 the best recalibration of a sign-inverted system is alpha = 0 and the
    prior as offset: C_min = C_def = log 2, F_dis = 1, F_cal = F_act - 1.
    """
    llh, y = _sign_inverted()
    c = albayzin_measures(llh, y, nonnegative_alpha=True)
    assert c.alpha == 0.0 and np.all(c.beta == 0.0)
    assert c.c_min == pytest.approx(np.log(2.0), rel=1e-15) and c.f_dis == pytest.approx(1.0)
    assert c.f_cal == pytest.approx(c.f_act - 1.0, rel=1e-12)

"""Display objects: curve data from focal.metrics, drawing by the plotting functions."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from focal import plots  # noqa: E402
from focal.metrics import (  # noqa: E402
    bayes_error_rates,
    cllr,
    det_curve,
    eer,
    min_cllr,
)


@pytest.fixture
def llrs():
    rng = np.random.default_rng(0)
    return rng.normal(2, 2, 300), rng.normal(-2, 2, 900)


def test_det_display_holds_the_metrics_curve_and_its_axes(llrs):
    tar, non = llrs
    disp = plots.DETDisplay.from_scores(tar, non, name="sys", operating_points=[0.01, 0.1])
    curve = det_curve(tar, non)
    np.testing.assert_array_equal(disp.p_fa, curve.p_fa)
    np.testing.assert_array_equal(disp.p_miss, curve.p_miss)
    assert disp.eer == eer(tar, non)
    assert disp.line_.get_label() == "sys" and disp.figure_ is disp.ax_.figure
    np.testing.assert_array_equal(disp.line_.get_xdata(), curve.p_fa)
    assert len([ln for ln in disp.ax_.lines if ln.get_gid() == "det-min-dcf"]) == 2
    # a second system on the same axes, from (scores, labels)
    scores = np.r_[tar, non] / 2
    labels = np.r_[np.ones(300), np.zeros(900)]
    second = plots.DETDisplay.from_labels(scores, labels, name="half", ax=disp.ax_)
    assert second.ax_ is disp.ax_ and second.line_.get_label() == "half"
    assert second.eer == eer(tar / 2, non / 2)


def test_ape_nbe_ece_tippett_displays(llrs):
    tar, non = llrs
    ape = plots.APEDisplay.from_scores(tar, non, name="sys")
    assert ape.cllr == pytest.approx(cllr(tar, non)) and ape.min_cllr == pytest.approx(
        min_cllr(tar, non)
    )
    np.testing.assert_array_equal(ape.line_.get_ydata(), ape.actual)
    nbe = plots.NBEDisplay.from_scores(tar, non, operating_point=0.01)
    rates = bayes_error_rates(tar, non, nbe.prior_log_odds)
    np.testing.assert_allclose(nbe.minimum, rates.minimum_normalized)
    np.testing.assert_array_equal(nbe.line_.get_ydata(), nbe.actual)
    ece = plots.ECEDisplay.from_scores(tar, non)
    assert ece.minimum is not None and ece.actual.shape == ece.prior_log_odds.shape
    tip = plots.TippettDisplay.from_scores(tar, non, name="sys")
    np.testing.assert_array_equal(tip.tar, np.sort(tar))
    assert tip.line_.get_gid() == "tippett-target"
    # plot again elsewhere, overriding an option
    again = plots.DETDisplay.from_scores(tar, non).plot(rocch_curve=True)
    assert any(ln.get_gid() == "det-rocch" for ln in again.ax_.lines)

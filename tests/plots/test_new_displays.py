"""The score histogram, calibration map and reliability Displays: their data against
independent computations, and the layout checks of the report figures (no legend over data,
no overlapping text at 360 and 1400 px).
"""

import numpy as np
import pytest
from scipy.special import expit

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from focal import LinearCalibrator  # noqa: E402
from focal.estimators import KDECalibrator  # noqa: E402
from focal.metrics import eer, pav_llr, rocch  # noqa: E402
from focal.plots import (  # noqa: E402
    CalibrationMapDisplay,
    ReliabilityDisplay,
    ScoreHistogramDisplay,
)
from tests.plots.test_layout import overlaps  # noqa: E402


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = np.r_[rng.normal(1.2, 1, 300), rng.normal(-1, 1.3, 3000)]
    y = np.r_[np.ones(300, int), np.zeros(3000, int)]
    return x, y


def test_histogram_data_are_numpys_histograms(data):
    x, y = data
    tar, non = x[y == 1], x[y == 0]
    disp = ScoreHistogramDisplay.from_scores(tar, non, bins=25)
    edges = np.histogram_bin_edges(x, 25)
    np.testing.assert_allclose(disp.edges, edges)
    np.testing.assert_allclose(disp.tar_hist, np.histogram(tar, edges, density=True)[0])
    np.testing.assert_allclose(disp.non_hist, np.histogram(non, edges, density=True)[0])
    counts = ScoreHistogramDisplay.from_scores(tar, non, bins=25, density=False)
    assert counts.tar_hist.sum() == 300 and counts.non_hist.sum() == 3000
    plt.close("all")


def test_histogram_thresholds_and_infinite_scores():
    disp = ScoreHistogramDisplay.from_scores(
        [1.0, 2.0, np.inf], [-1.0, 0.0, -np.inf], thresholds={"t": 0.5}, operating_points=[0.1]
    )
    lines = {ln.get_gid(): ln for ln in disp.ax_.lines}
    assert lines["hist-threshold-t"].get_xdata()[0] == 0.5
    assert lines["hist-threshold-Bayes threshold (P_tar=0.1)"].get_xdata()[0] == pytest.approx(
        np.log(9)
    )
    texts = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert any("1 at +inf: not drawn" in t for t in texts)
    assert disp.tar_hist.sum() * np.diff(disp.edges)[0] == pytest.approx(2 / 3)
    plt.close("all")


def test_calibration_map_is_the_estimators_map_over_the_evaluation_pav(data):
    x, y = data
    cal = LinearCalibrator().fit(x, y)
    rng = np.random.default_rng(1)
    xe = np.r_[rng.normal(1.2, 1, 200), rng.normal(-1, 1.3, 2000)]
    ye = np.r_[np.ones(200, int), np.zeros(2000, int)]
    disp = CalibrationMapDisplay.from_estimator(cal, xe, ye, operating_points=[0.01, 0.2])
    np.testing.assert_allclose(disp.llr, cal.decision_function(disp.scores_grid))
    # the PAV blocks are the PAV-LLRs of the evaluation trials
    values = pav_llr(xe, ye)
    block = np.searchsorted(disp.pav_lo, xe, side="right") - 1
    np.testing.assert_array_equal(disp.pav_llr[block], values)
    hull = rocch(xe[ye == 1], xe[ye == 0])
    assert disp.eer[0] == hull.eer_threshold.value and disp.eer[2] == eer(hull)
    for (threshold, llr, _op), p in zip(disp.min_dcf, (0.01, 0.2)):
        assert threshold == hull.min_dcf_threshold(p).value
        assert llr == pytest.approx(-np.log(p / (1 - p)))
    # arrows for the PAV blocks of one class (LLR -inf, +inf)
    assert np.isinf(disp.pav_llr[[0, -1]]).all()
    assert sum(a.get_gid() == "calibration-pav-infinite" for a in disp.ax_.texts) == 2
    plt.close("all")


def test_calibration_map_without_estimator_is_the_diagonal(data):
    x, y = data
    disp = CalibrationMapDisplay.from_scores(x[y == 1], x[y == 0])
    np.testing.assert_array_equal(disp.llr, disp.scores_grid)
    with pytest.raises(ValueError, match="one-column calibrator"):
        from focal import LogisticFusion

        fused = LogisticFusion().fit(np.c_[x, x**3], y)
        CalibrationMapDisplay.from_scores(x[y == 1], x[y == 0], estimator=fused)
    plt.close("all")


def test_reliability_by_hand():
    """At P_tar = 0.5 LLR 0 gives posterior 1/2 and LLR ln 3 gives 3/4. Targets: LLRs 0, ln 3,
    ln 3 (weight 1/2 / 3 each); non-targets: 0, 0, ln 3, and once more 0 (weight 1/2 / 4).
    Bin [0.5, 0.6): 1 target and 3 non-targets: observed (1/6) / (1/6 + 3/8) = 4/13.
    Bin [0.7, 0.8): 2 targets, 1 non-target: (2/6) / (2/6 + 1/8) = 8/11.
    """
    t = np.log([1.0, 3.0, 3.0])
    n = np.log([1.0, 1.0, 3.0, 1.0])
    disp = ReliabilityDisplay.from_scores(t, n, n_bins=10)
    assert disp.n_tar[5] == 1 and disp.n_non[5] == 3 and disp.n_tar[7] == 2
    assert disp.observed[5] == pytest.approx(4 / 13) and disp.observed[7] == pytest.approx(8 / 11)
    assert disp.predicted[5] == pytest.approx(0.5) and disp.predicted[7] == pytest.approx(0.75)
    assert np.isnan(disp.predicted[0])
    plt.close("all")


def test_reliability_of_calibrated_llrs_lies_near_the_diagonal():
    rng = np.random.default_rng(3)
    tar, non = rng.normal(2, 2, 40000), rng.normal(-2, 2, 40000)  # calibrated: llr = x
    for p in (0.5, 0.1):
        disp = ReliabilityDisplay.from_scores(tar, non, p_target=p, strategy="quantile")
        shown = np.isfinite(disp.predicted)
        np.testing.assert_allclose(disp.observed[shown], disp.predicted[shown], atol=0.03)
        # the quantile bins hold about equal prior-weighted mass
        w = p * disp.n_tar / tar.size + (1 - p) * disp.n_non / non.size
        assert w.max() < 1.5 * w.min()
    # an independent posterior: sigmoid(llr + logit p)
    assert expit(0.0 + np.log(0.1 / 0.9)) == pytest.approx(0.1)
    plt.close("all")


def _covered(ax, legend):
    """Drawn vertices of lines and patches (histogram steps) inside the legend's box."""
    box = legend.get_window_extent()
    hidden = []
    paths = [
        (ln.get_gid(), ln.get_transform().transform(np.column_stack(ln.get_data())))
        for ln in ax.lines
    ]
    paths += [(p.get_gid(), p.get_transform().transform(p.get_path().vertices))
              for p in ax.patches if p.get_gid()]  # fmt: skip
    for gid, xy in paths:
        xy = xy[np.isfinite(xy).all(axis=1)]
        inside = (
            (box.x0 < xy[:, 0]) & (xy[:, 0] < box.x1) & (box.y0 < xy[:, 1]) & (xy[:, 1] < box.y1)
        )
        hidden += [(gid, tuple(q)) for q in xy[inside]]
    return hidden


def _figures(data, width):
    x, y = data
    tar, non = x[y == 1], x[y == 0]
    lin = LinearCalibrator().fit(x, y)
    kde = KDECalibrator().fit(x, y)
    llr_lin = lin.decision_function(x)
    llr_kde = kde.decision_function(x)
    dpi = max(width / 8, 80)

    def ax():
        size = (width / dpi, 0.75 * width / dpi)
        return plt.figure(figsize=size, dpi=dpi, layout="constrained").add_subplot()

    d1 = ScoreHistogramDisplay.from_scores(tar, non, name="raw", ax=ax(), thresholds=[0.3])
    d2 = ScoreHistogramDisplay.from_scores(
        llr_lin[y == 1], llr_lin[y == 0], name="linear", ax=ax(), operating_points=[0.01, 0.1]
    )
    ScoreHistogramDisplay.from_scores(
        llr_kde[y == 1], llr_kde[y == 0], name="kde", ax=d2.ax_, operating_points=[0.01, 0.1]
    )
    d3 = CalibrationMapDisplay.from_estimator(lin, x, y, name="linear", ax=ax(),
                                              operating_points=[0.01, 0.1])  # fmt: skip
    CalibrationMapDisplay.from_estimator(
        kde, x, y, name="kde", ax=d3.ax_, operating_points=[0.01, 0.1]
    )
    d4 = ReliabilityDisplay.from_scores(llr_lin[y == 1], llr_lin[y == 0], name="linear", ax=ax())
    ReliabilityDisplay.from_scores(llr_kde[y == 1], llr_kde[y == 0], name="kde", ax=d4.ax_)
    d5 = CalibrationMapDisplay.from_scores(llr_lin[y == 1], llr_lin[y == 0], name="llr", ax=ax())
    return [d1, d2, d3, d4, d5]


@pytest.mark.parametrize("width", [360, 1400])
def test_new_displays_pass_the_layout_checks(data, width):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "constrained_layout not applied"
        displays = _figures(data, width)
    try:
        for disp in displays:
            fig, ax = disp.figure_, disp.ax_
            assert overlaps(fig) == [], type(disp).__name__
            legend = ax.get_legend()
            fig.canvas.draw()
            box = legend.get_window_extent()
            assert not box.overlaps(ax.bbox), type(disp).__name__  # under the axes
            assert _covered(ax, legend) == [], type(disp).__name__
            frame = fig.bbox
            assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1 and frame.y0 - 1 <= box.y0
    finally:
        plt.close("all")


def test_calibration_map_in_log10_is_the_map_divided_by_ln10(data):
    x, y = data
    lin = LinearCalibrator().fit(x, y)
    llr = lin.decision_function(x)
    tar, non = llr[y == 1], llr[y == 0]
    for estimator, x_scale in ((None, 1 / np.log(10)), (lin, 1.0)):
        scores = (x[y == 1], x[y == 0]) if estimator is not None else (tar, non)
        nats = CalibrationMapDisplay.from_scores(*scores, estimator=estimator, ax=None)
        log10 = CalibrationMapDisplay.from_scores(
            *scores, estimator=estimator, ax=None, log10_lr=True
        )
        for gid in ("calibration-map", "calibration-pav", "calibration-eer"):
            (a,) = [ln for ln in nats.ax_.lines if ln.get_gid() == gid]
            (b,) = [ln for ln in log10.ax_.lines if ln.get_gid() == gid]
            np.testing.assert_allclose(b.get_xdata(), np.asarray(a.get_xdata()) * x_scale)
            np.testing.assert_allclose(b.get_ydata(), np.asarray(a.get_ydata()) / np.log(10))
        assert log10.ax_.get_ylabel() == "log10 LR out"
    plt.close("all")

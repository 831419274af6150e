"""focal.plots: the pictures' content, checked against focal.metrics / focal.std and by hand.

Every test reads the plotted data back from the Axes (line data, marker positions, bar heights,
tick labels) and compares them with the measures computed independently here, so a test fails
when a picture shows the wrong thing, not only when no file is written. Headless (Agg).

The whole module is skipped when matplotlib is not installed (the optional ``plot`` extra);
``tests/plots/test_optional.py`` checks that it is skipped, not errored, in that case.
"""

import math
import pathlib
import struct

import numpy as np
import pytest

matplotlib = pytest.importorskip(
    "matplotlib", reason="matplotlib is not installed: pip install matplotlib"
)
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from scipy.special import expit, logit, ndtri  # noqa: E402

from focal import plots, std  # noqa: E402
from focal.metrics import (  # noqa: E402
    bayes_error_rates,
    cllr,
    cross_entropy,
    dcf,
    det_curve,
    eer,
    min_cllr,
    min_dcf,
)
from focal.plots.scales import DET_TICKS, ProbitLocator, percent_formatter  # noqa: E402
from tests._support.cli import run_focal  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
STD_SAMPLES = ROOT / "data_samples" / "term_detection"
SPEAKER = ROOT / "data_samples" / "speaker_detection"
LN2 = math.log(2.0)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def llrs():
    """A miscalibrated (over-confident, shifted) but discriminating set of LLRs."""
    rng = np.random.default_rng(8)
    tar = 2.2 * rng.normal(1.2, 1.0, 400) - 0.6
    non = 2.2 * rng.normal(-1.2, 1.0, 3000) - 0.6
    return tar, non


def artists(ax, gid):
    found = [a for a in ax.get_children() if a.get_gid() == gid]
    found += [a for a in ax.patches if a.get_gid() == gid and a not in found]
    return found


def line(ax, gid, index=0):
    lines = [a for a in ax.lines if a.get_gid() == gid]
    assert lines, f"no line with gid {gid!r}"
    return lines[index]


def xy(artist):
    x, y = artist.get_data()
    return np.asarray(x, dtype=float), np.asarray(y, dtype=float)


def legend_texts(ax):
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def trapezoid(x, y):
    return float(np.sum(0.5 * (y[1:] + y[:-1]) * np.diff(x)))


# -- probit scale -------------------------------------------------------------------------------
def test_probit_scale_places_rates_at_their_probit_and_labels_ticks_in_percent():
    fig, ax = plt.subplots()
    ax.set_xscale("probit")
    ax.set_yscale("probit")
    ax.set_xlim(0.001, 0.4)
    ax.set_ylim(0.001, 0.4)
    fig.canvas.draw()
    p = np.array([0.001, 0.01, 0.1, 0.25, 0.4])
    screen = ax.transData.transform(np.column_stack([p, p]))
    # screen position is affine in probit(p): equal probit steps give equal pixel steps
    slope = np.diff(screen[:, 0]) / np.diff(ndtri(p))
    np.testing.assert_allclose(slope, slope[0], rtol=1e-9)
    locs = ax.xaxis.get_majorticklocs()
    labels = [t.get_text() for t in ax.xaxis.get_majorticklabels()]
    assert set(np.round(locs, 12)) <= set(np.round(DET_TICKS, 12))
    assert labels == [f"{100 * v:g}" for v in locs]
    assert "0.1" in labels and "1" in labels and "10" in labels and "40" in labels


def test_percent_formatter_and_thinned_locator():
    assert [percent_formatter(v) for v in (0.001, 0.02, 0.4, 0.999, 1e-6)] == [
        "0.1",
        "2",
        "40",
        "99.9",
        "0.0001",
    ]
    ticks = ProbitLocator(max_ticks=11).tick_values(1e-7, 0.5)
    assert len(ticks) <= 11 and {1e-6, 1e-3, 0.1} <= set(np.round(ticks, 12))


# -- DET ------------------------------------------------------------------------------------------
def test_det_line_is_the_metrics_det_curve_on_probit_axes(llrs):
    tar, non = llrs
    ax = plots.det_plot(tar, non, label="sys", rocch_curve=True)
    assert ax.get_xscale() == "probit" and ax.get_yscale() == "probit"
    assert "(%)" in ax.get_xlabel() and "(%)" in ax.get_ylabel()
    curve = det_curve(tar, non)
    x, y = xy(line(ax, "det"))
    np.testing.assert_array_equal(x, curve.p_fa)
    np.testing.assert_array_equal(y, curve.p_miss)
    # the ROCCH line passes through every hull vertex and stays on the hull segments
    hull = det_curve(tar, non, convex_hull=True)
    hx, hy = xy(line(ax, "det-rocch"))
    # vertices appear in order; the points between two vertices lie on the segment joining them
    at = [int(np.flatnonzero((hx == a) & (hy == b))[0]) for a, b in zip(hull.p_fa, hull.p_miss)]
    assert at == sorted(at) and at[0] == 0 and at[-1] == hx.size - 1
    for k in range(len(at) - 1):
        sx, sy = hx[at[k] : at[k + 1] + 1], hy[at[k] : at[k + 1] + 1]
        dx, dy = sx[-1] - sx[0], sy[-1] - sy[0]
        np.testing.assert_allclose((sx - sx[0]) * dy - (sy - sy[0]) * dx, 0, atol=1e-12)
        assert np.all(np.diff(sx) <= 0) and np.all(np.diff(sy) >= 0)


def test_det_eer_marker_by_hand():
    # scores 0 (non) < 1 (tar) < 2 (non) < 3 (tar): hull vertices (P_fa, P_miss) = (1, 0),
    # (0.5, 0), (0, 0.5), (0, 1); the hull meets P_miss = P_fa at (0.25, 0.25).
    ax = plots.det_plot([1.0, 3.0], [0.0, 2.0])
    (x,), (y,) = xy(line(ax, "det-eer"))
    assert x == y == 0.25


def test_det_eer_marker_lies_on_the_rocch_at_the_metrics_eer(llrs):
    tar, non = llrs
    ax = plots.det_plot(tar, non)
    (ex,), (ey,) = xy(line(ax, "det-eer"))
    e = eer(tar, non)
    assert ex == ey == pytest.approx(e, abs=1e-15)
    hull = det_curve(tar, non, convex_hull=True)
    assert np.interp(e, hull.p_fa[::-1], hull.p_miss[::-1]) == pytest.approx(e, abs=1e-12)
    assert any(f"EER = {100 * e:.2f} %" in t for t in legend_texts(ax))


def test_det_operating_point_markers_are_the_dcf_points(llrs):
    tar, non = llrs
    p, c_miss, c_fa = 0.01, 10.0, 1.0
    ax = plots.det_plot(tar, non, label="sys", operating_point=(p, c_miss, c_fa))
    threshold = -(logit(p) + math.log(c_miss / c_fa))
    (ax_pfa,), (ax_pmiss,) = xy(line(ax, "det-act-dcf"))
    assert ax_pfa == np.mean(non >= threshold) and ax_pmiss == np.mean(tar < threshold)
    # the minDCF marker is a DET point whose normalized cost is the metrics' minDCF
    (mn_pfa,), (mn_pmiss,) = xy(line(ax, "det-min-dcf"))
    norm = min(p * c_miss, (1 - p) * c_fa)
    best = min_dcf(tar, non, p, c_miss, c_fa)
    assert (p * c_miss * mn_pmiss + (1 - p) * c_fa * mn_pfa) / norm == pytest.approx(best)
    texts = " | ".join(legend_texts(ax))
    assert f"minDCF = {best:.3f}" in texts
    assert f"actDCF = {dcf(tar, non, p, c_miss, c_fa):.3f}" in texts
    # the view shows both markers even though P_miss at this low prior may exceed 50 %
    lo, hi = ax.get_ylim()
    assert lo <= min(mn_pmiss, ax_pmiss) or min(mn_pmiss, ax_pmiss) == 0
    assert hi >= max(mn_pmiss, ax_pmiss)


def test_det_several_systems_share_the_axes_with_a_legend(llrs):
    tar, non = llrs
    ax = plots.det_plot(tar, non, label="first")
    assert plots.det_plot(tar / 2 + 1, non / 2, label="second", ax=ax) is ax
    lines = [a for a in ax.lines if a.get_gid() == "det"]
    assert [ln.get_label() for ln in lines] == ["first", "second"]
    assert lines[0].get_color() != lines[1].get_color()
    texts = legend_texts(ax)
    assert "first" in texts and "second" in texts


# -- APE ------------------------------------------------------------------------------------------
def test_ape_area_under_the_plotted_curves_is_cllr_and_min_cllr(llrs):
    tar, non = llrs
    ax = plots.ape_plot(tar, non, label="sys")
    x, y = xy(line(ax, "ape-actual"))
    assert trapezoid(x, y) == pytest.approx(cllr(tar, non), rel=0.01)
    x, y = xy(line(ax, "ape-minimum"))
    assert trapezoid(x, y) == pytest.approx(min_cllr(tar, non), rel=0.01)
    x, y = xy(line(ax, "ape-default"))
    assert trapezoid(x, y) == pytest.approx(1.0, rel=0.01)  # the default system: 1 bit


def test_ape_curves_are_the_bayes_error_rates_scaled_by_one_over_2ln2(llrs):
    tar, non = llrs
    ax = plots.ape_plot(tar, non)
    h, y = xy(line(ax, "ape-actual"))
    rates = bayes_error_rates(tar, non, h)
    np.testing.assert_allclose(y * 2 * LN2, rates.actual, rtol=1e-12)
    np.testing.assert_allclose(xy(line(ax, "ape-minimum"))[1] * 2 * LN2, rates.minimum, rtol=1e-12)
    # the maximum of the minimum curve is the ROCCH-EER (thesis sec. 7.7.4)
    peak = 2 * LN2 * xy(line(ax, "ape-minimum"))[1].max()
    assert peak <= eer(tar, non) + 1e-12
    assert peak == pytest.approx(eer(tar, non), rel=0.01)


def test_ape_bar_height_is_cllr_split_into_discrimination_and_calibration(llrs):
    tar, non = llrs
    ax = plots.ape_plot(tar, non, label="sys")
    bars = plots.ape_bar_axes(ax)
    (dis,) = [p for p in bars.patches if p.get_gid() == "ape-discrimination-loss"]
    (cal,) = [p for p in bars.patches if p.get_gid() == "ape-calibration-loss"]
    assert dis.get_y() == 0
    assert dis.get_height() == pytest.approx(min_cllr(tar, non), rel=1e-12)
    assert cal.get_y() == pytest.approx(dis.get_height(), rel=1e-12)
    assert cal.get_y() + cal.get_height() == pytest.approx(cllr(tar, non), rel=1e-12)


def test_ape_of_all_zero_llrs_is_the_default_curve_with_area_one_bit():
    ax = plots.ape_plot(np.zeros(5), np.zeros(7))
    x, y = xy(line(ax, "ape-actual"))
    np.testing.assert_allclose(y, np.minimum(expit(x), expit(-x)) / (2 * LN2), atol=1e-15)
    assert trapezoid(x, y) == pytest.approx(1.0, rel=1e-3)
    bars = plots.ape_bar_axes(ax)
    heights = sum(p.get_height() for p in bars.patches)
    assert heights == pytest.approx(1.0, abs=1e-12)


def test_ape_window_widens_for_badly_calibrated_llrs():
    # a target LLR of -30 contributes area at h up to +30: the window must reach it
    rng = np.random.default_rng(3)
    tar = np.append(rng.normal(3, 1, 200), -30.0)
    non = rng.normal(-3, 1, 400)
    ax = plots.ape_plot(tar, non)
    x, y = xy(line(ax, "ape-actual"))
    assert x[-1] >= 30
    assert trapezoid(x, y) == pytest.approx(cllr(tar, non), rel=0.01)


def test_ape_several_systems_get_one_bar_each(llrs):
    tar, non = llrs
    ax = plots.ape_plot(tar, non, label="raw")
    plots.ape_plot(tar / 2.2, non / 2.2, label="scaled", ax=ax)
    bars = plots.ape_bar_axes(ax)
    tops = sorted(
        (p.get_x(), p.get_y() + p.get_height())
        for p in bars.patches
        if p.get_gid() == "ape-calibration-loss"
    )
    assert [t for _, t in tops] == pytest.approx([cllr(tar, non), cllr(tar / 2.2, non / 2.2)])
    assert [t.get_text() for t in bars.get_xticklabels()] == ["raw", "scaled"]


@settings(max_examples=15)
@given(
    st.lists(st.floats(-8, 8), min_size=1, max_size=12),
    st.lists(st.floats(-8, 8), min_size=1, max_size=12),
)
def test_ape_minimum_below_actual_and_default(tar, non):
    ax = plots.ape_plot(tar, non, n_points=201, bar=False)
    act = xy(line(ax, "ape-actual"))[1]
    mn = xy(line(ax, "ape-minimum"))[1]
    default = xy(line(ax, "ape-default"))[1]
    assert np.all(mn <= act + 1e-15) and np.all(mn <= default + 1e-15)
    plt.close("all")


# -- normalized Bayes error-rate -----------------------------------------------------------------
def brute_min_false_alarms(tar, non, h):
    """False alarms at the threshold of minimum Bayes error-rate: every threshold tried."""
    thresholds = np.concatenate([np.unique(np.concatenate([tar, non])), [np.inf]])
    p = expit(h)
    cost = [p * np.mean(tar < t) + (1 - p) * np.mean(non >= t) for t in thresholds]
    return int(np.sum(non >= thresholds[int(np.argmin(cost))]))


def test_nbe_curves_are_the_normalized_metrics(llrs):
    tar, non = llrs
    ax = plots.nbe_plot(tar, non, label="eval")
    h, act = xy(line(ax, "nbe-actual"))
    _, mn = xy(line(ax, "nbe-minimum"))
    for hi, a, m in zip(h[::40], act[::40], mn[::40]):
        p = float(expit(hi))
        assert a == pytest.approx(dcf(tar, non, p), rel=1e-9)
        assert m == pytest.approx(min_dcf(tar, non, p), rel=1e-9)


def test_nbe_dr30_is_where_fewer_than_30_false_alarms_remain(llrs):
    tar, non = llrs
    ax = plots.nbe_plot(tar, non, n_points=91)
    h = xy(line(ax, "nbe-actual"))[0]
    (x,), (y,) = xy(line(ax, "nbe-dr30-fa"))
    i = int(np.flatnonzero(h == x)[0])
    assert brute_min_false_alarms(tar, non, h[i]) >= 30
    assert brute_min_false_alarms(tar, non, h[i - 1]) < 30
    assert y == pytest.approx(min_dcf(tar, non, float(expit(x))), rel=1e-9)
    assert any("DR30" in t for t in legend_texts(ax))


def test_nbe_no_dr30_marker_when_false_alarms_never_run_out(llrs):
    tar, non = llrs
    ax = plots.nbe_plot(tar, non, prior_log_odds=np.linspace(-0.5, 0.5, 11))
    assert not artists(ax, "nbe-dr30-fa")


def test_nbe_components_are_pmiss_and_exp_minus_h_pfa_below_zero(llrs):
    tar, non = llrs
    ax = plots.nbe_plot(tar, non, components=True, prior_log_odds=np.linspace(-6, 2, 81))
    h, miss = xy(line(ax, "nbe-pmiss"))
    fa = xy(line(ax, "nbe-pfa"))[1]
    act = xy(line(ax, "nbe-actual"))[1]
    np.testing.assert_allclose(miss + fa, act, rtol=1e-12)
    below = h < 0
    pmiss = np.array([np.mean(tar < -x) for x in h])
    pfa = np.array([np.mean(non >= -x) for x in h])
    np.testing.assert_allclose(miss[below], pmiss[below], rtol=1e-12)  # thesis eq. 7.44
    np.testing.assert_allclose(fa[below], np.exp(-h[below]) * pfa[below], rtol=1e-9)


def test_nbe_operating_point_line_at_the_effective_log_odds(llrs):
    tar, non = llrs
    ax = plots.nbe_plot(tar, non, operating_point=(0.001, 10.0, 1.0))
    (x0, x1), _ = xy(line(ax, "nbe-operating-point"))
    assert x0 == x1 == pytest.approx(logit(0.001) + math.log(10.0))
    h = xy(line(ax, "nbe-actual"))[0]
    assert h[0] < x0 < h[-1]
    plots.nbe_plot(tar + 1, non, operating_point=(0.001, 10.0, 1.0), ax=ax)
    assert len(artists(ax, "nbe-operating-point")) == 1  # drawn once for both systems


# -- ECE ------------------------------------------------------------------------------------------
def test_ece_curves_are_cross_entropies_in_bits(llrs):
    tar, non = llrs
    ax = plots.ece_plot(tar, non, n_points=21)
    h, act = xy(line(ax, "ece-actual"))
    pav = xy(line(ax, "ece-pav"))[1]
    default = xy(line(ax, "ece-default"))[1]
    for hi, a, m, d in zip(h, act, pav, default):
        p = float(expit(hi))
        entropy = -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
        assert a == pytest.approx(cross_entropy(tar, non, p), rel=1e-12)
        assert m == pytest.approx(min_cllr(tar, non, p) * entropy, rel=1e-9)
        assert d == pytest.approx(entropy, rel=1e-12)
    mid = int(np.flatnonzero(h == 0)[0])
    assert act[mid] == pytest.approx(cllr(tar, non), rel=1e-12)  # Cllr: ECE at h = 0
    assert pav[mid] == pytest.approx(min_cllr(tar, non), rel=1e-12)
    assert np.all(pav <= act + 1e-12) and np.all(pav <= default + 1e-12)


def test_ece_log10_axis(llrs):
    tar, non = llrs
    ax = plots.ece_plot(tar, non, log10_odds=True, prior_log_odds=[-math.log(10), 0, math.log(100)])
    np.testing.assert_allclose(xy(line(ax, "ece-actual"))[0], [-1, 0, 2])
    assert "log10" in ax.get_xlabel()


# -- Tippett --------------------------------------------------------------------------------------
def step_value(x, y, q):
    """Value of a 'steps-pre' line at q: y[i] on (x[i-1], x[i]]."""
    return y[np.searchsorted(x, q, side="left")]


def test_tippett_curves_are_the_proportions_at_or_above(llrs):
    tar, non = llrs
    ax = plots.tippett_plot(tar, non)
    tl, nl = line(ax, "tippett-target"), line(ax, "tippett-nontarget")
    assert tl.get_drawstyle() == nl.get_drawstyle() == "steps-pre"
    queries = np.concatenate([tar[:50], non[:50], np.linspace(-10, 10, 41)])
    xt, yt = xy(tl)
    xn, yn = xy(nl)
    for q in queries:
        assert step_value(xt, yt, q) == pytest.approx(np.mean(tar >= q), abs=1e-12)
        assert step_value(xn, yn, q) == pytest.approx(np.mean(non >= q), abs=1e-12)
    assert yt[0] == yn[0] == 1.0 and yt[-1] == yn[-1] == 0.0
    texts = " ".join(legend_texts(ax))
    assert f"{100 * np.mean(tar < 0):.1f} % < 0" in texts
    assert f"{100 * np.mean(non > 0):.1f} % > 0" in texts


def test_tippett_by_hand_with_ties_and_log10():
    ax = plots.tippett_plot([0.0, 0.0, math.log(10.0)], [-math.log(10.0), 0.0], log10_lr=True)
    xt, yt = xy(line(ax, "tippett-target"))
    assert step_value(xt, yt, 0.0) == 1.0 and step_value(xt, yt, 0.5) == pytest.approx(1 / 3)
    assert step_value(xt, yt, 0.999) == pytest.approx(1 / 3)
    assert step_value(xt, yt, 1.001) == 0.0
    xn, yn = xy(line(ax, "tippett-nontarget"))
    assert step_value(xn, yn, -1.0) == 1.0 and step_value(xn, yn, -0.5) == 0.5
    assert step_value(xn, yn, 0.0) == 0.5 and step_value(xn, yn, 0.001) == 0.0


@settings(max_examples=15)
@given(
    st.lists(st.integers(-4, 4).map(float), min_size=1, max_size=10),
    st.lists(st.integers(-4, 4).map(float), min_size=1, max_size=10),
)
def test_tippett_property(tar, non):
    ax = plots.tippett_plot(tar, non)
    xt, yt = xy(line(ax, "tippett-target"))
    xn, yn = xy(line(ax, "tippett-nontarget"))
    for q in np.arange(-5, 5.5, 0.5):
        if xt[0] < q <= xt[-1]:
            assert step_value(xt, yt, q) == pytest.approx(np.mean(np.array(tar) >= q), abs=1e-12)
        if xn[0] < q <= xn[-1]:
            assert step_value(xn, yn, q) == pytest.approx(np.mean(np.array(non) >= q), abs=1e-12)
    assert yt[0] == yn[0] == 1.0 and yt[-1] == yn[-1] == 0.0
    plt.close("all")


# -- spoken term detection ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def std_report():
    task = std.read_task(
        STD_SAMPLES / "sws_sample.stdlist.xml",
        STD_SAMPLES / "sws_sample.rttm",
        STD_SAMPLES / "sws_sample.ecf.xml",
        STD_SAMPLES / "sws_sample.tlist.xml",
    )
    return std.term_detection_report(task)


def test_std_det_curve_and_twv_points(std_report):
    trials = std_report.trials
    ax = plots.std_det_plot(trials, label="sample")
    curve = std.term_det_curve(trials)
    x, y = xy(line(ax, "std-det"))
    np.testing.assert_array_equal(x, curve.p_fa)
    np.testing.assert_array_equal(y, curve.p_miss)
    best, actual = std.mtwv(trials), std.atwv(trials)
    assert xy(line(ax, "std-mtwv")) == ([best.p_fa], [best.p_miss])
    assert xy(line(ax, "std-atwv")) == ([actual.p_fa], [actual.p_miss])
    # TWV = 1 - P_miss - beta P_fa at the marked points (SWS plan eq. 6)
    beta = std.SWS2013.beta
    assert 1 - best.p_miss - beta * best.p_fa == pytest.approx(best.twv)
    texts = " ".join(legend_texts(ax))
    assert f"MTWV = {best.twv:.4f}" in texts and f"ATWV = {actual.twv:.4f}" in texts
    assert ax.get_xscale() == ax.get_yscale() == "probit"


def test_std_det_from_a_report_uses_its_numbers(std_report):
    ax = plots.std_det_plot(std_report)
    assert xy(line(ax, "std-mtwv")) == ([std_report.mtwv.p_fa], [std_report.mtwv.p_miss])
    assert xy(line(ax, "std-atwv")) == ([std_report.atwv.p_fa], [std_report.atwv.p_miss])


def test_std_det_rejects_other_input():
    with pytest.raises(ValueError, match="STDReport or focal.std.AlignedTrials"):
        plots.std_det_plot([1, 2, 3])


# -- contract: axes in, axes out, no show(), bad input --------------------------------------------
def test_functions_draw_on_the_given_axes_and_never_show(llrs, monkeypatch):
    tar, non = llrs

    def no_show(*args, **kwargs):
        raise AssertionError("show() called")

    monkeypatch.setattr(plt, "show", no_show)
    monkeypatch.setattr(matplotlib.figure.Figure, "show", no_show)
    fig, axes = plt.subplots(2, 3)
    for fn, ax in zip(
        [plots.det_plot, plots.ape_plot, plots.nbe_plot, plots.ece_plot, plots.tippett_plot],
        axes.ravel(),
    ):
        assert fn(tar, non, ax=ax) is ax
    assert len(fig.axes) == 7  # 6 subplots and the APE bar panel beside its axes


@pytest.mark.parametrize(
    "fn", [plots.det_plot, plots.ape_plot, plots.nbe_plot, plots.ece_plot, plots.tippett_plot]
)
def test_bad_scores_raise_before_drawing(fn):
    before = plt.get_fignums()
    with pytest.raises(ValueError, match="NaN"):
        fn([1.0, np.nan], [0.0])
    with pytest.raises(ValueError):
        fn([], [0.0])
    assert plt.get_fignums() == before


def test_bad_plot_options_raise():
    with pytest.raises(ValueError, match="prior_log_odds"):
        plots.nbe_plot([1.0], [0.0], prior_log_odds=[0.0])
    with pytest.raises(ValueError, match="n_points"):
        plots.ape_plot([1.0], [0.0], n_points=1)
    with pytest.raises(ValueError, match="operating_point"):
        plots.det_plot([1.0], [0.0], operating_point=1.5)


# -- report and command line ----------------------------------------------------------------------
def png_size(path):
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_write_report_writes_pngs_of_the_requested_size_and_the_numbers(llrs, tmp_path):
    tar, non = llrs
    page = plots.write_report(
        {"a": (tar, non), "b": (tar / 2, non / 2)},
        tmp_path / "out",
        size=(640, 480),
        formats=("png", "pdf"),
    )
    folder = page.parent
    pngs = sorted(folder.glob("*.png"))
    assert {p.name for p in pngs} == {
        "det.png",
        "nbe.png",
        "ape.png",
        "ece.png",
        "calibration.png",
        "reliability.png",
        "histogram_1.png",
        "histogram_2.png",
        "tippett_1.png",
        "tippett_2.png",
    }
    for p in pngs:
        assert png_size(p) == (640, 480)
        assert p.with_suffix(".pdf").stat().st_size > 0
    text = page.read_text()
    for p in pngs:
        assert f'src="{p.name}"' in text
    assert f"{cllr(tar, non):.4f}" in text and f"{min_cllr(tar / 2, non / 2):.4f}" in text
    assert f"{100 * eer(tar, non):.3f}" in text
    assert f"{dcf(tar, non, 0.01):.4f}" in text


def test_write_report_checks_arguments_before_writing(llrs, tmp_path):
    tar, non = llrs
    with pytest.raises(ValueError, match="pixels"):
        plots.write_report({"a": (tar, non)}, tmp_path / "x", size=(20, 20))
    with pytest.raises(ValueError, match="formats"):
        plots.write_report({"a": (tar, non)}, tmp_path / "x", formats=("gif",))
    with pytest.raises(ValueError, match="empty"):
        plots.write_report({}, tmp_path / "x")
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_cli_evaluate_plot_writes_the_report(tmp_path):
    scores = [str(SPEAKER / f"eval_sys{i}.scores") for i in (1, 2)]
    result = run_focal(
        "evaluate",
        *scores,
        "--key",
        str(SPEAKER / "eval.key"),
        "--plot",
        str(tmp_path / "report"),
        "--plot-size",
        "720x450",
        "--plot-format",
        "pdf",
    )
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "report"
    assert f"report: {folder / 'index.html'}" in result.stdout
    pngs = sorted(folder.glob("*.png"))
    assert len(pngs) == 10
    for p in pngs:
        assert p.stat().st_size > 1000 and png_size(p) == (720, 450)
        assert p.with_suffix(".pdf").exists()
    assert "eval_sys1.scores" in (folder / "index.html").read_text()


def test_cli_bad_plot_size_is_a_usage_error(tmp_path):
    result = run_focal(
        "evaluate",
        str(SPEAKER / "eval_sys1.scores"),
        "--key",
        str(SPEAKER / "eval.key"),
        "--plot",
        str(tmp_path),
        "--plot-size",
        "big",
    )
    assert result.returncode == 2 and "WIDTHxHEIGHT" in result.stderr


def test_output_folder_is_the_given_one_or_a_new_temporary_one(tmp_path, monkeypatch):
    given = plots.output_folder(tmp_path / "a" / "b")
    assert given == tmp_path / "a" / "b" and given.is_dir()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    first, second = plots.output_folder(prefix="x_"), plots.output_folder(prefix="x_")
    assert first != second and first.parent == second.parent == tmp_path
    assert first.name.startswith("x_") and first.is_dir()


def test_plots_of_one_binary_scores_object_equal_those_of_the_arrays(llrs):
    """A BinaryScores given as ``tar`` (one sort shared by several plots) draws the same data."""
    from focal.metrics import BinaryScores

    tar, non = llrs
    scores = BinaryScores(tar, non)
    for plot, gid in (
        (plots.det_plot, "det"),
        (plots.nbe_plot, "nbe-actual"),
        (plots.ape_plot, "ape-actual"),
        (plots.ece_plot, "ece-actual"),
        (plots.tippett_plot, "tippett-target"),
    ):
        a = xy(line(plot(tar, non), gid))
        b = xy(line(plot(scores), gid))
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    with pytest.raises(ValueError, match="not both"):
        plots.det_plot(scores, non)
    with pytest.raises(ValueError, match="non-target scores are missing"):
        plots.det_plot(tar)

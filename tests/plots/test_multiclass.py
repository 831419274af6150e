"""focal.plots for multiclass log-likelihoods: the analyses of Brümmer & van Leeuwen
(2006) and of the thesis, checked against focal.metrics.

Skipped without matplotlib (see tests/plots/test_optional.py).
"""

import numpy as np
import pytest

matplotlib = pytest.importorskip(
    "matplotlib", reason="matplotlib is not installed: pip install matplotlib"
)
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from focal import plots  # noqa: E402
from focal.metrics import (  # noqa: E402
    cllr,
    detection_analysis,
    detection_llrs,
    pairwise_analysis,
    subset_analysis,
)

NAMES = ["eng", "spa", "cat", "glg", "eus"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def trials():
    """Over-confident 5-class log-likelihoods (scaled by 2.6) and an affine recalibration."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 5, 900)
    llh = 2.6 * (1.6 * np.eye(5)[y] + rng.normal(size=(900, 5)))
    recal = llh / 2.6 + np.array([0.1, -0.2, 0.0, 0.3, -0.2])
    return llh, y, recal


def heights(ax, gid):
    return [p.get_height() for p in ax.patches if p.get_gid() == gid]


def test_pairwise_bar_matrix_shows_the_pairwise_analysis(trials):
    llh, y, recal = trials
    before, after = pairwise_analysis(llh, y), pairwise_analysis(recal, y)
    axes = plots.pairwise_bar_matrix(before, after, class_names=NAMES)
    assert axes.shape == (4, 4)
    for k, (i, j) in enumerate(before.pairs):
        ax = axes[i, j - 1]
        assert heights(ax, "pairwise-cllr") == [pytest.approx(before.cllr[k], rel=1e-12)]
        assert heights(ax, "pairwise-cllr-recalibrated") == [
            pytest.approx(after.cllr[k], rel=1e-12)
        ]
        assert heights(ax, "pairwise-min-cllr") == [pytest.approx(before.min_cllr[k], rel=1e-12)]
    # an independent check of one cell: Cllr of l_eng - l_cat on the eng and cat trials
    tar = llh[y == 0, 0] - llh[y == 0, 2]
    non = llh[y == 2, 0] - llh[y == 2, 2]
    assert heights(axes[0, 1], "pairwise-cllr")[0] == pytest.approx(cllr(tar, non), rel=1e-12)
    assert not axes[1, 0].axison and not axes[3, 2].axison  # below the diagonal: off
    assert [axes[0, c].get_title() for c in range(4)] == NAMES[1:]
    assert [axes[r, r].get_ylabel() for r in range(4)] == NAMES[:4]


def test_pairwise_bar_matrix_without_recalibration_and_on_a_subset_of_classes(trials):
    llh, y, _ = trials
    analysis = pairwise_analysis(llh, y, classes=[1, 3, 4])
    axes = plots.pairwise_bar_matrix(analysis, class_names=NAMES)
    assert axes.shape == (2, 2)
    assert heights(axes[0, 0], "pairwise-cllr") == [pytest.approx(analysis.cllr[0])]
    assert heights(axes[0, 0], "pairwise-cllr-recalibrated") == []
    assert axes[0, 0].get_title() == "glg" and axes[0, 0].get_ylabel() == "spa"
    with pytest.raises(ValueError, match="same class pairs"):
        plots.pairwise_bar_matrix(analysis, pairwise_analysis(llh, y))
    with pytest.raises(ValueError, match="class_names"):
        plots.pairwise_bar_matrix(analysis, class_names=NAMES[:3])


def test_detection_ape_plots_show_each_targets_detection_cllr(trials):
    llh, y, recal = trials
    prior = np.array([0.3, 0.3, 0.4, 0.0, 0.0])  # classes 3, 4 and their trials left out
    axes = plots.detection_ape_plots(llh, y, prior=prior, recalibrated=recal, class_names=NAMES)
    assert axes.shape == (3, 2)
    for c, data in enumerate([llh, recal]):
        expected = detection_analysis(data, y, prior=prior)
        for r in range(3):
            bars = plots.ape_bar_axes(axes[r, c])
            (dis,) = heights(bars, "ape-discrimination-loss")
            (cal,) = heights(bars, "ape-calibration-loss")
            assert dis == pytest.approx(expected.min_cllr[r], rel=1e-12)
            assert dis + cal == pytest.approx(expected.cllr[r], rel=1e-12)
            x, yy = [
                np.asarray(v)
                for v in next(
                    ln for ln in axes[r, c].lines if ln.get_gid() == "ape-actual"
                ).get_data()
            ]
            area = float(np.sum(0.5 * (yy[1:] + yy[:-1]) * np.diff(x)))
            assert area == pytest.approx(expected.cllr[r], rel=0.01)
    assert [ax.get_title() for ax in axes[:, 1]] == ["eng (opt)", "spa (opt)", "cat (opt)"]


def test_detection_ape_plots_check_their_input(trials):
    llh, y, recal = trials
    with pytest.raises(ValueError, match="recalibrated"):
        plots.detection_ape_plots(llh, y, recalibrated=recal[:, :4])
    with pytest.raises(ValueError, match="labels"):
        plots.detection_ape_plots(llh, y[:-1])


def test_detection_llr_scatter_plots_detection_llrs_before_and_after(trials):
    llh, y, recal = trials
    ax = plots.detection_llr_scatter(llh, recal, y, 2, class_names=NAMES)
    target = next(c for c in ax.collections if c.get_gid() == "scatter-target").get_offsets()
    nontarget = next(c for c in ax.collections if c.get_gid() == "scatter-nontarget").get_offsets()
    before, after = detection_llrs(llh)[:, 2], detection_llrs(recal)[:, 2]
    np.testing.assert_array_equal(np.asarray(target), np.column_stack([before, after])[y == 2])
    np.testing.assert_array_equal(np.asarray(nontarget), np.column_stack([before, after])[y != 2])
    assert "cat" in ax.get_xlabel()


def test_subset_scatter_shows_every_subset(trials):
    llh, y, _ = trials
    analysis = subset_analysis(llh, y)
    ax = plots.subset_scatter(analysis, jitter=0.25)
    dots = np.asarray(next(c for c in ax.collections if c.get_gid() == "subsets").get_offsets())
    assert dots.shape == (2**5 - 5 - 1, 2)
    np.testing.assert_array_equal(dots[:, 1], analysis.values)
    assert np.all(np.abs(dots[:, 0] - analysis.sizes) <= 0.25)
    star = next(ln for ln in ax.lines if ln.get_gid() == "subset-all")
    assert list(star.get_xdata()) == [5]
    assert list(star.get_ydata()) == [analysis.values[analysis.sizes == 5][0]]
    means = next(ln for ln in ax.lines if ln.get_gid() == "subset-means")
    for k, m in zip(means.get_xdata(), means.get_ydata()):
        assert m == pytest.approx(analysis.values[analysis.sizes == k].mean())
    assert ax.get_ylabel() == "CAVG"


def test_subset_scatter_compares_two_systems_on_one_axes(trials):
    llh, y, recal = trials
    ax = plots.subset_scatter(subset_analysis(llh, y), label="as given")
    plots.subset_scatter(subset_analysis(recal, y), ax=ax, label="calibrated", color="C3")
    stars = [ln for ln in ax.lines if ln.get_gid() == "subset-all"]
    assert len(stars) == 2
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(texts) == len(set(texts)) == 6
    assert any(t.startswith("calibrated: all 5 classes") for t in texts)


def test_cavg_sweep_plot_draws_the_normalized_sweep(trials):
    """Thesis 8.5.1: the curves are CAVG / min(alpha, 1 - alpha) against logit alpha, and the
    value at logit alpha = 0 is CAVG itself (the default there is 1/2).
    """
    from focal.metrics import cavg, cavg_sweep

    llh, y, _ = trials
    sweep = cavg_sweep(llh, y, p_targets=[0.01, 0.2, 0.5, 0.9])
    ax = plots.cavg_sweep_plot(sweep, label="sys")
    lines = {ln.get_gid(): ln for ln in ax.get_lines()}
    actual, rec = lines["cavg-actual"], lines["cavg-recalibrated"]
    np.testing.assert_allclose(
        actual.get_xdata(), np.log([0.01 / 0.99, 0.25, 1.0, 9.0]), rtol=1e-12, atol=1e-15
    )
    assert actual.get_ydata()[2] == pytest.approx(cavg(llh, y) / 0.5, rel=1e-12)
    assert actual.get_ydata()[0] == pytest.approx(cavg(llh, y, p_target=0.01) / 0.01, rel=1e-12)
    # over-confident system: the affine calibration helps at the extreme operating points
    assert rec.get_ydata()[0] < actual.get_ydata()[0]
    assert "cavg-default" in lines
    plots.cavg_sweep_plot(sweep, ax=ax, label="again")  # second system, one default line
    assert sum(ln.get_gid() == "cavg-default" for ln in ax.get_lines()) == 1
    raw = plots.cavg_sweep_plot(sweep, normalized=False)
    assert {ln.get_gid(): ln for ln in raw.get_lines()}["cavg-actual"].get_ydata()[
        2
    ] == pytest.approx(cavg(llh, y), rel=1e-12)


def _drawn(axes):
    """Every line's and collection's data of a grid of Axes (or one Axes), in drawing order."""
    out = []
    for ax in np.atleast_1d(axes).ravel():
        out += [np.asarray(ln.get_xydata()) for ln in ax.lines]
        out += [np.asarray(c.get_offsets()) for c in ax.collections]
    return out


def test_the_detection_plots_take_a_multiclass_trials(trials):
    from focal.core.multiclass import MulticlassTrials

    llh, y, recal = trials
    prior = np.array([0.3, 0.3, 0.4, 0.0, 0.0])
    given = MulticlassTrials(llh, y, prior)
    a = plots.detection_ape_plots(given, recalibrated=recal, class_names=NAMES)
    b = plots.detection_ape_plots(llh, y, prior=prior, recalibrated=recal, class_names=NAMES)
    for u, v in zip(_drawn(a), _drawn(b), strict=True):
        np.testing.assert_array_equal(u, v)
    a = plots.detection_llr_scatter(given, recal, target=1)
    b = plots.detection_llr_scatter(llh, recal, y, 1, prior=prior)
    for u, v in zip(_drawn(a), _drawn(b), strict=True):
        np.testing.assert_array_equal(u, v)
    with pytest.raises(ValueError, match="not both"):
        plots.detection_ape_plots(given, y)
    with pytest.raises(ValueError, match="conflicts"):
        plots.detection_llr_scatter(given, recal, target=1, prior=np.full(5, 0.2))
    with pytest.raises(ValueError, match="target is missing"):
        plots.detection_llr_scatter(given, recal)

"""Report figures stay readable at phone and desktop widths: no two texts overlap, nothing
collapses, every DCF point is on the plot.
"""

import itertools

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import focal.plots.report as report_module  # noqa: E402


def visible_texts(fig):
    """Every drawn, non-empty text of the figure: ticks, labels, titles, legends, annotations."""
    renderer = fig.canvas.get_renderer()
    out = []
    axes = list(fig.axes)
    axes += [child for ax in fig.axes for child in getattr(ax, "child_axes", [])]
    texts = []
    for ax in axes:
        if not (ax.get_visible() and ax.axison):  # e.g. the empty cells of a grid: not drawn
            texts += [ax.title] + list(ax.texts)
            continue
        texts += _in_view(ax.xaxis.get_ticklabels(), ax.get_xlim(), 0)
        texts += _in_view(ax.yaxis.get_ticklabels(), ax.get_ylim(), 1)
        texts += [ax.xaxis.label, ax.yaxis.label, ax.title] + list(ax.texts)
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
    for legend in fig.legends:
        texts += legend.get_texts()
    for t in texts:
        if t.get_visible() and t.get_text().strip():
            out.append((t.get_text(), t.get_window_extent(renderer)))
    return out


def _in_view(labels, limits, coordinate):
    """The tick labels matplotlib draws: those of ticks inside the view limits."""
    lo, hi = sorted(limits)
    tol = 1e-9 * max(abs(lo), abs(hi), 1.0)
    return [t for t in labels if lo - tol <= t.get_position()[coordinate] <= hi + tol]


def overlaps(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    found = []
    for (a, box_a), (b, box_b) in itertools.combinations(visible_texts(fig), 2):
        # boxes that share more than a pixel in both directions
        dx = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        dy = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        if dx > 1 and dy > 1:
            found.append((a, b))
    return found


@pytest.fixture
def systems():
    rng = np.random.default_rng(0)
    out = {}
    for i, (mu, n) in enumerate([(2.5, 400), (1.2, 400), (0.6, 400)], start=1):
        tar = rng.normal(mu, 1.5, n) * (1.5 if i == 2 else 1.0)
        non = rng.normal(-mu, 1.5, 4000)
        out[f"eval_sys{i}.scores"] = (tar, non)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("width", [360, 1400])
def test_report_figures_have_no_overlapping_text(tmp_path, systems, width, monkeypatch):
    figures = {}
    save = report_module._save

    def keep(fig, folder, stem, fmts, dpi):
        figures[stem] = fig
        return save(fig, folder, stem, fmts, dpi)

    monkeypatch.setattr(report_module, "_save", keep)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "constrained_layout not applied"
        report_module.write_report(
            systems, tmp_path, operating_points=[0.01, 0.001], size=(width, int(0.75 * width))
        )
    assert set(figures) >= {"det", "ape", "nbe", "ece"}
    for stem, fig in figures.items():
        assert overlaps(fig) == [], stem


def test_det_points_without_false_alarms_sit_on_the_edge():
    from focal.plots import det_plot

    # at P_tar = 0.001 the Bayes threshold log(999) = 6.9 accepts no non-target
    tar, non = np.linspace(-2, 9, 50), np.linspace(-6, 3, 500)
    ax = det_plot(tar, non, operating_points=[0.001])
    act = [ln for ln in ax.lines if ln.get_gid() == "det-act-dcf"][0]
    assert act.get_xdata()[0] == 0.0
    ax.figure.canvas.draw()
    x_screen = act.get_transform().transform([[0.0, act.get_ydata()[0]]])[0, 0]
    assert x_screen == pytest.approx(ax.bbox.x0)  # drawn, on the left edge
    assert any("actDCF" in t.get_text() for t in ax.get_legend().get_texts())


def test_the_overlap_check_sees_overlaps():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2), dpi=100)
    ax = fig.subplots()
    ax.text(0.5, 0.5, "some text")
    ax.text(0.52, 0.5, "more text")
    assert overlaps(fig) == [("some text", "more text")]


def test_every_operating_point_is_marked():
    from focal.core.priors import effective_log_odds
    from focal.plots import det_plot, nbe_plot

    rng = np.random.default_rng(1)
    tar, non = rng.normal(2, 1.5, 300), rng.normal(-2, 1.5, 3000)
    ops = [0.01, (0.001, 1, 1), (0.05, 10, 1)]
    ax = det_plot(tar, non, operating_points=ops)
    assert len([ln for ln in ax.lines if ln.get_gid() == "det-min-dcf"]) == 3
    assert len({ln.get_marker() for ln in ax.lines if ln.get_gid() == "det-act-dcf"}) == 3
    ax = nbe_plot(tar, non, operating_points=ops)
    lines = sorted(ln.get_xdata()[0] for ln in ax.lines if ln.get_gid() == "nbe-operating-point")
    expected = sorted(
        effective_log_odds(*(op if isinstance(op, tuple) else (op, 1, 1))) for op in ops
    )
    np.testing.assert_allclose(lines, expected)


@pytest.mark.parametrize("width", [360, 1400])
@pytest.mark.parametrize("n_classes", [3, 7])
def test_pairwise_grid_has_no_overlapping_text(tmp_path, width, n_classes, monkeypatch):
    """The multiclass page's pairwise grid at phone and desktop widths: texts apart, every
    class name whole inside the figure.
    """
    import warnings

    from focal.plots import pages

    rng = np.random.default_rng(0)
    y = rng.integers(0, n_classes, 600)
    llh = rng.normal(size=(600, n_classes))
    llh[np.arange(600), y] += 2.0
    names = ["Basque", "Catalan", "English", "Galician", "Portuguese", "Spanish", "Others"]
    figures = {}
    save = report_module._save

    def keep(fig, folder, stem, fmts, dpi):
        figures[stem] = fig
        return save(fig, folder, stem, fmts, dpi)

    monkeypatch.setattr(report_module, "_save", keep)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pages.write_multiclass_report(
            [{"name": "sys", "llh": llh, "labels": y, "class_names": names[-n_classes:]}],
            tmp_path,
            size=(width, int(0.75 * width)),
        )
    fig = figures["pairwise_1"]
    assert overlaps(fig) == []
    frame = fig.bbox
    for text, box in visible_texts(fig):
        assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1, text  # not cut off
        assert frame.y0 - 1 <= box.y0 and box.y1 <= frame.y1 + 1, text
    shown = {t for t, _ in visible_texts(fig)}
    assert set(names[-n_classes:]) <= shown and {"Cllr", "minCllr (PAV)"} <= shown


@pytest.mark.parametrize("width", [360, 640, 1400])
def test_standalone_det_legend_hides_no_curve(width):
    """A DET in a figure of its own: the legend under the plot (a column per system when they
    fit), never over the curves, unless the figure is too small for it (then in the corner).
    """
    import matplotlib.pyplot as plt

    from focal.plots import det_plot

    rng = np.random.default_rng(0)
    tar, non = rng.normal(2, 1.5, 400), rng.normal(-2, 1.5, 4000)
    dpi = max(width / 8.0, 80.0)
    fig, ax = plt.subplots(figsize=(width / dpi, 0.75 * width / dpi), dpi=dpi, layout="constrained")
    for k, name in enumerate(["eval_sys1.scores", "eval_sys2.scores"]):
        det_plot(tar * (1 - 0.3 * k), non, ax=ax, label=name, operating_points=[0.01, 0.001])
    try:
        assert overlaps(fig) == []
        legend = ax.get_legend()
        assert len(legend.get_texts()) == 12
        inside = legend.get_window_extent().overlaps(ax.bbox)
        assert inside == (width == 360)  # 12 entries leave no room under 270 px
        if not inside:
            assert legend.get_window_extent().y0 >= fig.bbox.y0 - 1
            assert legend._ncols == 2  # a column per system
    finally:
        plt.close(fig)
    # in a grid without a layout engine the legend stays in the axes' lower left corner
    from matplotlib.figure import Figure

    grid = Figure(figsize=(8, 3)).subplots(1, 2)
    det_plot(tar, non, ax=grid[0], label="a")
    assert grid[0].get_legend()._loc == 3

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
        for axis, limits, k in ((ax.xaxis, ax.get_xlim(), 0), (ax.yaxis, ax.get_ylim(), 1)):
            if axis.get_visible():  # e.g. a twin's shared x axis is not drawn
                texts += _in_view(axis.get_ticklabels(), limits, k) + [axis.label]
        texts += [ax.title] + list(ax.texts)
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

    from focal.metrics import partition_report

    rng = np.random.default_rng(1)
    parts = [
        partition_report(
            tar,
            non,
            {"gender": rng.choice(["f", "m"], tar.size), "lang": rng.choice(["a", "b"], tar.size)},
            {"gender": rng.choice(["f", "m"], non.size), "lang": rng.choice(["a", "b"], non.size)},
            operating_points=[0.01, 0.001],
            name=name,
        )
        for name, (tar, non) in systems.items()
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "constrained_layout not applied"
        report_module.write_report(
            systems,
            tmp_path,
            operating_points=[0.01, 0.001],
            partitions=parts,
            size=(width, int(0.75 * width)),
        )
    assert set(figures) >= {
        "det", "ape", "nbe", "ece", "calibration", "reliability", "histogram_1", "partitions_1"
    }  # fmt: skip
    for stem, fig in figures.items():
        assert overlaps(fig) == [], stem
        fig.canvas.draw()
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
        assert legends, stem
        for legend in legends:  # under the plots, hiding no data
            for ax in fig.axes:
                assert covered_points(ax, legend) == [], stem
                if ax.get_visible() and ax.axison:
                    assert not legend.get_window_extent().overlaps(ax.bbox), stem


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


def covered_points(ax, legend):
    """The drawn vertices of the axes' lines and patches (curves, markers, histogram steps,
    bars; in pixels) inside the legend.
    """
    box = legend.get_window_extent()
    hidden = []
    paths = [
        (line.get_gid(), line.get_transform().transform(np.column_stack(line.get_data())))
        for line in ax.lines
    ]
    paths += [
        (patch.get_gid(), patch.get_transform().transform(patch.get_path().vertices))
        for patch in ax.patches
        if patch.get_gid()
    ]
    for gid, xy in paths:
        xy = xy[np.isfinite(xy).all(axis=1)]
        inside = (
            (box.x0 < xy[:, 0]) & (xy[:, 0] < box.x1) & (box.y0 < xy[:, 1]) & (xy[:, 1] < box.y1)
        )
        hidden += [(gid, tuple(p)) for p in xy[inside]]
    return hidden


@pytest.mark.parametrize(
    ("width", "n_systems"), [(360, 1), (360, 2), (360, 3), (640, 2), (1400, 2), (1400, 3)]
)
def test_standalone_det_legend_hides_no_curve(width, n_systems):
    """A DET in a figure of its own: the legend under the plot, never over the curves, even
    with 12 or 18 entries at 360 x 270 px: a column per system headed by its name when they
    fit, else (3 systems at 360 px) a key of names and kinds of points without the numbers.
    """
    import matplotlib.pyplot as plt

    from focal.plots import det_plot

    rng = np.random.default_rng(0)
    tar, non = rng.normal(2, 1.5, 400), rng.normal(-2, 1.5, 4000)
    dpi = max(width / 8.0, 80.0)
    fig, ax = plt.subplots(figsize=(width / dpi, 0.75 * width / dpi), dpi=dpi, layout="constrained")
    names = [f"eval_sys{k}.scores" for k in range(1, n_systems + 1)]
    for k, name in enumerate(names):
        det_plot(tar * (1 - 0.3 * k), non, ax=ax, label=name, operating_points=[0.01, 0.001])
    try:
        assert overlaps(fig) == []
        legend = ax.get_legend()
        fig.canvas.draw()
        box = legend.get_window_extent()
        assert not box.overlaps(ax.bbox)  # under the axes
        assert covered_points(ax, legend) == []
        frame = fig.bbox
        assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1  # whole inside the figure
        assert frame.y0 - 1 <= box.y0
        texts = [t.get_text() for t in legend.get_texts() if t.get_text()]
        # the points without false alarms at P_tar = 0.001 sit on the left edge: said once
        notes = [t for t in texts if "edge:" in t]
        assert "left edge: P_fa 0 %" in notes and len(notes) == len(set(notes))
        texts = [t for t in texts if "edge:" not in t]
        assert set(names) <= set(texts)
        if (width, n_systems) == (360, 3):  # the key: no numbers, each kind of point once
            assert len(texts) == 3 + 5 and not any("=" in t.split("(")[0] for t in texts)
            assert "minDCF (P_tar=0.001)" in texts
        else:  # every number, the system's name said once (its column's head)
            assert len(texts) == 6 * n_systems
            assert sum("EER = " in t for t in texts) == n_systems
            assert not any(name + ":" in t for t in texts for name in names)
            if n_systems > 1 and width >= 640:
                assert legend._ncols in (n_systems, n_systems + 1)  # a column per system (+ notes)
    finally:
        plt.close(fig)


def test_det_legend_in_a_grid_sits_in_the_corner():
    """In a grid without a layout engine the legend stays in the axes' lower left corner, the
    system's name on every entry.
    """
    from matplotlib.figure import Figure

    from focal.plots import det_plot

    rng = np.random.default_rng(0)
    tar, non = rng.normal(2, 1.5, 400), rng.normal(-2, 1.5, 4000)
    grid = Figure(figsize=(8, 3)).subplots(1, 2)
    det_plot(tar, non, ax=grid[0], label="a")
    assert grid[0].get_legend()._loc == 3
    assert "a: EER" in " ".join(t.get_text() for t in grid[0].get_legend().get_texts())


def test_the_legend_check_sees_a_covered_curve():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2), dpi=100)
    ax.plot([0, 1], [0, 1], label="diagonal")
    legend = ax.legend(loc="center")
    fig.canvas.draw()
    try:
        assert covered_points(ax, legend) == []  # the two ends are outside the legend
        ax.lines[0].set_data(np.linspace(0, 1, 11), np.linspace(0, 1, 11))
        assert len(covered_points(ax, legend)) > 0
    finally:
        plt.close(fig)


def test_det_display_on_a_plain_figure_puts_its_legend_under_the_curves():
    """Issue 29: ``fig, ax = plt.subplots()`` (no layout engine) with two systems and two
    operating points put a 12-entry legend over the curves; the lone axes now gets
    constrained layout and the legend goes under it.
    """
    import matplotlib.pyplot as plt

    from focal.plots import DETDisplay

    rng = np.random.default_rng(0)
    fig, ax = plt.subplots()
    try:
        for k, mu in enumerate((2.5, 1.2)):
            tar, non = rng.normal(mu, 1.5, 400), rng.normal(-mu, 1.5, 4000)
            DETDisplay.from_scores(tar, non, name=f"sys{k}", ax=ax, operating_points=[0.01, 0.001])
        legend = ax.get_legend()
        fig.canvas.draw()
        assert not legend.get_window_extent().overlaps(ax.bbox)
        assert covered_points(ax, legend) == [] and overlaps(fig) == []
    finally:
        plt.close(fig)


def test_a_point_off_the_scale_gets_an_arrow_and_a_note():
    """Issue 29: a P_miss = 100 % point was drawn on the top edge, which reads as the edge's
    tick value; it now has an arrow pointing off the plot and a legend note.
    """
    import matplotlib.pyplot as plt

    from focal.plots import det_plot

    # at P_tar = 0.001 (threshold 6.9) every target is rejected: P_miss = 100 %, P_fa = 0
    ax = det_plot(np.linspace(-2, 5, 50), np.linspace(-6, 3, 500), operating_points=[0.001])
    try:
        act = [ln for ln in ax.lines if ln.get_gid() == "det-act-dcf"][0]
        assert (act.get_xdata()[0], act.get_ydata()[0]) == (0.0, 1.0)
        arrows = [a for a in ax.texts if a.get_gid() == "det-off-scale"]
        assert len(arrows) == 3  # actDCF: left and top edges; minDCF: the left edge
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        assert "top edge: P_miss 100 %" in texts and "left edge: P_fa 0 %" in texts
    finally:
        plt.close(ax.figure)

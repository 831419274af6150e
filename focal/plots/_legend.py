"""Legends that hide no data: under the axes, a column per system, or a key without numbers.

Every plot of :mod:`focal.plots` labels its artists ``"system: what"`` (the main curve of a
system by the system's name alone) and ends with :func:`place_legend`. When the figure's layout
engine makes room for it (constrained layout, as in a figure of its own) the legend goes under
the axes, below the x label, where it hides nothing: a column per system when they fit, each
headed by the system's name and its curve, its other entries listed under it without repeating
the name, then the entries shared by every system (a default curve, operating points); in a
small font, or with the systems' columns stacked, when the figure is narrow. When not even that
fits in about half the figure's height (e.g. three systems at 360 x 270 px), a key without the
numbers: the systems' names and one grey entry per kind of marker or line style. A figure of
one axes without a layout engine (``plt.subplots()``) is given constrained layout for this; a
figure with other axes beside the plot (the APE plot's Cllr bars) gets a figure legend under
all of them instead.
Only when no legend fits under the axes (a tiny figure), or in a caller's grid of plots without
a layout engine, does the legend go inside the axes, at the plot's own place.
"""

from __future__ import annotations

import re

#: The gid of the artist that starts each system's legend entries (its main curve)
MAIN_GIDS = (
    "det",
    "std-det",
    "ape-actual",
    "nbe-actual",
    "ece-actual",
    "tippett-target",
    "hist-target",
    "calibration-map",
    "reliability",
)

_FIGURE_LEGEND = "focal-figure-legend"  # the gid of a figure legend drawn by place_legend
_NUMBER = re.compile(r" = [-+]?[0-9.]+(e[-+]?[0-9]+)?( %| bits)?")


def _system_name(label: str) -> str:
    """The system's name in a main curve's label: ``"name: what"`` or the name alone."""
    return label.rsplit(": ", 1)[0] if ": " in label else label


def _entries(ax):
    """``(groups, shared)``: each system's ``[(handle, text), ...]`` (its main curve first,
    labelled in full; the others without the ``"name: "`` prefix) and the entries that belong
    to no system.
    """
    handles, labels = ax.get_legend_handles_labels()
    groups: list = []
    shared: list = []
    name = None
    for handle, label in zip(handles, labels):
        if getattr(handle, "get_gid", lambda: None)() in MAIN_GIDS:
            name = _system_name(label)
            groups.append([(handle, label)])
        elif name is not None and label.startswith(f"{name}: "):
            groups[-1].append((handle, label[len(name) + 2 :]))
        else:
            shared.append((handle, label))
    return groups, shared


def _key(groups, shared):
    """The entries of a legend without numbers: each system's main curve and name, one grey
    entry per kind of line or marker (``"minDCF (P_tar=0.01)"``, the value dropped; the main
    curves' kind first), then the shared entries as they are.
    """
    from matplotlib.lines import Line2D

    systems, kinds = [], {}
    for group in groups:
        (main, label), *rest = group
        name = _system_name(label)
        systems.append((main, name))
        if label != name:
            rest = [(main, label[len(name) + 2 :])] + rest
        for handle, text in rest:
            kind = _NUMBER.sub("", text)
            if not isinstance(handle, Line2D):
                kinds.setdefault(("patch", kind), (handle, kind))
                continue
            marker = handle.get_marker()
            if (marker, handle.get_linestyle(), kind) not in kinds:
                face = "none" if handle.get_markerfacecolor() in ("none", "white") else "grey"
                key = Line2D(
                    [],
                    [],
                    color="grey",
                    linestyle=handle.get_linestyle(),
                    marker=marker,
                    markerfacecolor=face,
                    markersize=handle.get_markersize(),
                )
                kinds[marker, handle.get_linestyle(), kind] = (key, kind)
    return [[e] for e in systems + list(kinds.values())] + [[e] for e in shared]


def _layout_below(ax, groups, shared, room: float = 1.0):
    """``(handles, labels, ncols, fontsize)`` of the legend under the axes, or None if none
    fits (see the module docstring). A layout fits when its width (estimated from the text
    outlines, in points) is within the figure's and its height within 40 % of the figure's
    (50 % for the key, as a last resort), times ``room``.
    Columns are padded with empty entries so that each system starts at the head of a column
    or right under the system above it.
    """
    import matplotlib as mpl
    from matplotlib.font_manager import FontProperties
    from matplotlib.lines import Line2D
    from matplotlib.textpath import TextPath

    if not groups and not shared:
        return None
    width_pt = ax.figure.get_figwidth() * 72
    height_pt = ax.figure.get_figheight() * 72
    base = float(mpl.rcParams["font.size"])
    full = groups + ([shared] if shared else [])
    key = _key(groups, shared)
    for blocks, budget in ((full, 0.4), (key, 0.4), (key, 0.5)):
        # systems' blocks are padded to one length; the shared block (last) follows as it is
        heads = blocks[: len(groups)] if blocks is full else blocks
        length = max((len(b) for b in heads), default=1)
        for fontsize, scale in (("small", 0.833), ("x-small", 0.694)):
            font = FontProperties(size=scale * base)
            size = font.get_size()
            entry = (
                max(
                    TextPath((0, 0), t, prop=font).get_extents().width for b in blocks for _, t in b
                )
                + 3.5 * size
            )  # the handle and the gap after it
            for ncols in range(len(blocks), 0, -1):
                # a block not last in its column is padded so the next starts level with others
                columns = [
                    [
                        e
                        for i, b in enumerate(blocks[j::ncols])
                        for e in b
                        + [None] * ((length - len(b)) * (j + (i + 1) * ncols < len(blocks)))
                    ]
                    for j in range(ncols)
                ]
                rows = max(len(c) for c in columns)
                wide = ncols * entry + (ncols - 1) * 2.0 * size  # columnspacing: 2 em
                if wide > 0.95 * width_pt or rows * 1.6 * size > room * budget * height_pt:
                    continue
                # every column as long as the longest: matplotlib fills columns in equal parts
                columns = [c + [None] * (rows - len(c)) for c in columns]
                entries = [e for column in columns for e in column]
                blank = Line2D([], [], linestyle="none")
                return (
                    [blank if e is None else e[0] for e in entries],
                    ["" if e is None else e[1] for e in entries],
                    ncols,
                    fontsize,
                )
    return None


def place_legend(ax, inside: str = "best", x_label_lines: int = 1, extra=()):
    """Draw the legend of ``ax`` from its labelled artists (see the module docstring).

    Parameters
    ----------
    ax : matplotlib Axes
        The plot.
    inside : str, default "best"
        Its place inside the axes when it cannot go under them.
    x_label_lines : int, default 1
        Lines of text under the axes before the legend (tick labels and x label).
    extra : sequence of (handle, text), default ()
        Entries of artists drawn elsewhere (e.g. on a twin axes), shared by every system.
    """
    groups, shared = _entries(ax)
    shared = shared + list(extra)
    if not groups and not shared:
        return
    fig = ax.figure
    if fig.get_layout_engine() is None and len(fig.axes) == 1:
        fig.set_layout_engine("constrained")
    beside = [
        other
        for other in fig.axes
        if other is not ax and other.axison and other.xaxis.get_visible()
        and other.bbox.bounds != ax.bbox.bounds  # a twin shares the plot: not beside it
    ]  # fmt: skip
    layout = None
    if type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine":
        # under axes beside the plot, their own labels take room too
        layout = _layout_below(ax, groups, shared, 0.5 if beside else 1.0)
    if layout is None:
        handles, labels = ax.get_legend_handles_labels()
        handles += [h for h, _ in extra]
        labels += [t for _, t in extra]
        ax.legend(handles, labels, loc=inside, fontsize="small")
        return
    import matplotlib as mpl
    from matplotlib.transforms import blended_transform_factory, offset_copy

    handles, labels, ncols, fontsize = layout
    options = {"fontsize": fontsize, "frameon": False, "ncols": ncols}
    if beside:  # e.g. the APE bars: a figure legend under every axes, whatever their labels
        for old in [lg for lg in fig.legends if lg.get_gid() == _FIGURE_LEGEND]:
            old.remove()
        legend = fig.legend(handles, labels, loc="outside lower center", **options)
        legend.set_gid(_FIGURE_LEGEND)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        return
    size = float(mpl.rcParams["font.size"])  # the tick labels and the x label above it
    below = offset_copy(
        ax.transAxes, fig=fig, y=-((1.3 * x_label_lines + 1.3) * size + 12), units="points"
    )
    ax.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),  # centred under the figure: long tick labels shift the axes
        bbox_transform=blended_transform_factory(fig.transFigure, below),
        borderaxespad=0,
        **options,
    )

"""The figure sizes the command line accepts are the sizes a report draws: every ``--plot-size``
that passes the argument check gets a valid resolution (20000x20000 used to pass the check and
then fail on an internal dpi after the work), and the bound, 25 million pixels, keeps the
renderer's canvas within about half a gigabyte.
"""

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from focal.cli.args import plot_size
from focal.plots.report import MAX_PIXELS, figure_options

SIDES = st.integers(100, 20000)


@given(SIDES, SIDES)
def test_every_size_the_command_line_accepts_is_drawn(w, h):
    try:
        size = plot_size(f"{w}x{h}")
    except argparse.ArgumentTypeError:
        assert w * h > MAX_PIXELS
        with pytest.raises(ValueError, match="at most 25,000,000 pixels"):
            figure_options((w, h), None, ("png",))
        return
    (width, height), dpi, _ = figure_options(size, None, ("png",))
    assert (width, height) == (w, h) and 10 <= dpi <= 2000


def test_the_bound_is_named():
    with pytest.raises(argparse.ArgumentTypeError, match="at most 25 million pixels"):
        plot_size("20000x20000")
    assert plot_size("20000x1250") == (20000, 1250)  # 25 M pixels: the largest area

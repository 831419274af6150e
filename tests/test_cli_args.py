"""The command line's argument types: a bad value is a usage error (exit status 2) that says
what was expected, before any file is read.
"""

import pytest

from focal.cli.parser import build_parser

EVALUATE = ["evaluate", "s.scores", "--key", "k.key"]
APPLY = ["apply", "m.json", "s.scores", "-o", "out"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (EVALUATE + ["--p-target", "0"], "must be strictly between 0 and 1, got 0"),
        (EVALUATE + ["--p-target", "half"], "expected a probability, got 'half'"),
        (EVALUATE + ["--ci", "95"], "must be strictly between 0 and 1, got 95"),
        (EVALUATE + ["--ci", "most"], "expected a coverage such as 0.95, got 'most'"),
        (EVALUATE + ["--plot", "d", "--plot-size", "50x50"], "each side must be 100 to 20000"),
        (EVALUATE + ["--plot", "d", "--plot-size", "big"], "expected WIDTHxHEIGHT in pixels"),
        (APPLY + ["--chunk-size", "0"], "must be >= 1, got 0"),
        (["train", "--scores", "s", "-o", "m", "--pseudo-count", "-1"], "a finite number >= 0"),
        (["sws", "a", "b", "c", "--n-tps", "inf"], "must be a finite number > 0, got inf"),
        (["sws", "a", "b", "c", "--threshold", "nan"], "must be finite, got nan"),
    ],
)
def test_a_bad_value_is_a_usage_error_that_names_the_expectation(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_good_values_are_converted():
    args = build_parser().parse_args(
        EVALUATE
        + ["--p-target", "0.01", "0.5", "--ci", "0.9", "--plot", "d", "--plot-size", "640X480"]
    )
    assert args.p_target == [0.01, 0.5] and args.ci == 0.9 and args.plot_size == (640, 480)
    assert build_parser().parse_args(APPLY + ["--chunk-size", "7"]).chunk_size == 7

"""
Calibration analysis of score files
===================================

Calibration analysis of binary score files: the numbers and the normalized Bayes error table.

Run it from a checkout (the sample data by default, your files by argument)::

    python recipes/calibration_analysis.py                       # the sample eval systems
    python recipes/calibration_analysis.py --key eval.key a.scores b.scores

For each score file (lines ``model test score``, the scores read as natural-log LLRs) it prints
the calibration report (Cllr, minCllr, calibration loss, ROCCH-EER, PRBEP, actual / minimum DCF)
and a table of the normalized actual and minimum Bayes error-rate over prior log-odds from -7 to
+2 (thesis sec. 7.6: the normalized Bayes error-rate plot, as numbers), marking where fewer than
30 false alarms remain at the optimal threshold (Doddington's rule of 30, thesis appendix B).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(sys.argv[0]).resolve().parent.parent  # run as a script (also by the docs)
sys.path.insert(0, str(ROOT))

from focal.io import align_trials, read_key, read_scores  # noqa: E402
from focal.metrics import (  # noqa: E402
    BinaryScores,
    bayes_error_rates,
    calibration_report,
    from_labels,
)

SAMPLES = ROOT / "data_samples" / "speaker_detection"


def analyse(path, key, priors):
    X, y, _, _ = align_trials(key, read_scores(path))
    scores = BinaryScores(*from_labels(X[:, 0], y))  # one sort and one PAV for all numbers
    print(calibration_report(scores, operating_points=priors, name=str(path)))
    h = np.arange(-7.0, 2.5, 1.0)
    rates = bayes_error_rates(scores, prior_log_odds=h)
    print("  prior log-odds   normalized actual   normalized minimum   false alarms at min")
    for i, hi in enumerate(h):
        dr30 = "  < 30 (DR30)" if rates.min_n_false_alarms[i] < 30 else ""
        print(
            f"  {hi:14.1f}   {rates.actual_normalized[i]:17.3f}   "
            f"{rates.minimum_normalized[i]:18.3f}   {rates.min_n_false_alarms[i]:9d}{dr30}"
        )
    print()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("scores", nargs="*", help="score files (default: the sample eval systems)")
    parser.add_argument("--key", help="key file (default: the sample eval key)")
    parser.add_argument("--p-target", nargs="+", type=float, default=[0.01, 0.001])
    args = parser.parse_args(argv)
    key = read_key(args.key or SAMPLES / "eval.key")
    files = args.scores or sorted(SAMPLES.glob("eval_sys*.scores"))
    for path in files:
        analyse(path, key, args.p_target)


if __name__ == "__main__":
    main()

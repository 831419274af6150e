"""The HTML report holds every number a program printed: intervals, C_primary, the
conventional EER, the forensic wording and the partition tables (issue 29).
"""

import html
import re

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from focal import plots  # noqa: E402
from focal.metrics import calibration_report, forensic_summary, partition_report  # noqa: E402


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    rng = np.random.default_rng(0)
    systems, reports, parts = {}, [], []
    for name, mu in (("a", 2.0), ("b", 1.0)):
        tar, non = rng.normal(mu, 1.5, 150), rng.normal(-mu, 1.5, 600)
        systems[name] = (tar, non)
        reports.append(
            calibration_report(
                tar,
                non,
                operating_points=[0.01, 0.1],
                name=name,
                confidence=0.9,
                n_bootstrap=40,
                random_state=1,
                c_primary="sre16",
                conventional_eer=True,
            )
        )
        parts.append(
            partition_report(
                tar,
                non,
                {"gender": np.resize(["f", "m"], 150)},
                {"gender": np.resize(["f", "m", "m"], 600)},
                operating_points=[0.01, 0.1],
                name=name,
            )
        )
    path = plots.write_report(
        systems,
        tmp_path_factory.mktemp("report"),
        operating_points=[0.01, 0.1],
        reports=reports,
        partitions=parts,
        size=(400, 300),
    )
    text = html.unescape(re.sub(r"<[^>]+>", " ", path.read_text()))
    return systems, reports, parts, text


def test_every_printed_number_is_on_the_page(page):
    _, reports, parts, text = page
    for r in reports:
        assert str(r) in text  # the printed report itself
        for iv in r.intervals:  # and in the table, under its estimate
            assert f"[{iv.low:.4f}, {iv.high:.4f}]" in text or f"[{100 * iv.low:.3f}," in text
        assert f"{100 * r.eer_conventional:.3f}" in text
        assert f"{r.c_primary.actual:.4f}" in text and f"{r.c_primary.minimum:.4f}" in text
    for p in parts:
        assert str(p) in text
        assert "equalized over gender" in text


def test_the_forensic_wording(page):
    systems, _, _, text = page
    for word in ("Cllr_min", "Cllr_cal", "ELUB limits", "H1-true", "H2-true"):
        assert word in text
    for name, (tar, non) in systems.items():
        f = forensic_summary(tar, non, name=name)
        lo, hi = f.elub.log10
        assert f"{f.cllr_cal:.4f}" in text and f"[{lo:.3f}, {hi:.3f}]" in text


def test_reports_must_match_the_systems(tmp_path):
    rng = np.random.default_rng(0)
    tar, non = rng.normal(1, 1, 50), rng.normal(-1, 1, 50)
    other = calibration_report(tar, non, name="other")
    with pytest.raises(ValueError, match="reports must be one per system"):
        plots.write_report({"a": (tar, non)}, tmp_path / "x", reports=[other])

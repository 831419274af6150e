"""Real score sets kept outside the project (never copied into it): found by walking up from the
tests to a folder ``shared/reference-data``, or named by ``FOCAL_REFERENCE_DATA``. Tests that use
them skip when the folder is absent.
"""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest


def folder() -> pathlib.Path | None:
    """The reference-data folder, or None."""
    named = os.environ.get("FOCAL_REFERENCE_DATA")
    if named:
        path = pathlib.Path(named)
        return path if path.is_dir() else None
    for parent in pathlib.Path(__file__).resolve().parents:
        path = parent / "shared" / "reference-data"
        if path.is_dir():
            return path
    return None


def lir_cartridge_llrs():
    """The NFI lir cartridge-case LLRs as natural-log ``(tar, non)``, or skip the test.

    188 known-match and 477 known-non-match log10 LRs (lir's ``LLR_KM.csv`` / ``LLR_KNM.csv``),
    read from the CSV files themselves and multiplied by ln 10.
    """
    base = folder()
    if base is None or not (base / "lir_LLR_KM.csv").is_file():
        pytest.skip("the lir reference data (shared/reference-data) is not available")
    km = np.loadtxt(base / "lir_LLR_KM.csv", ndmin=1)
    knm = np.loadtxt(base / "lir_LLR_KNM.csv", ndmin=1)
    return km * np.log(10.0), knm * np.log(10.0)

"""NIST SRE's primary cost C_primary: normalized DCF averaged over several operating points.

Since SRE16, NIST speaker recognition evaluations rank systems by

    C_primary = (C_norm(P_target,1) + C_norm(P_target,2)) / 2

the mean of the normalized detection costs (SWS plan eqs. 8-10, thesis eq. 7.11) of Bayes
decisions on the LLRs at two target priors with unit costs, and report the minimum C_primary,
the same mean of the minimum normalized DCFs, each minimized over its own threshold (thesis
eq. 7.21). The operating points are those of the evaluation plans:

- SRE16 (NIST 2016 Speaker Recognition Evaluation Plan, sec. 3.1), SRE18 CTS and SRE19 CTS:
  P_target = 0.01 and 0.005, C_miss = C_fa = 1;
- SRE21 (NIST 2021 Speaker Recognition Evaluation Plan, sec. 3.1): P_target = 0.01 and 0.05.

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.operating_point import NIST_SRE_POINTS, as_operating_points
from .binary import dcf, min_dcf
from .binary_scores import as_binary_scores

__all__ = ["SRE_OPERATING_POINTS", "CPrimary", "c_primary"]

SRE_OPERATING_POINTS = NIST_SRE_POINTS
"""The points of each evaluation, ``{"sre16": ((P_target, C_miss, C_fa), ...), ...}``: the table
of :meth:`focal.core.operating_point.OperatingPoint.nist_sre`."""


@dataclass(frozen=True)
class CPrimary:
    """C_primary and its parts.

    Attributes
    ----------
    actual, minimum : float
        Mean of the normalized actual / minimum DCFs (dimensionless; 1 = the default decision).
    operating_points : tuple of (P_target, C_miss, C_fa)
    act_dcf, min_dcf : tuple of float
        The normalized DCFs at each operating point.
    name : str
        The evaluation whose points these are ("sre16", ...), or "" for given points.
    """

    actual: float
    minimum: float
    operating_points: tuple
    act_dcf: tuple
    min_dcf: tuple
    name: str = ""

    def to_dict(self) -> dict:
        """Plain-Python numbers for JSON.

        Returns
        -------
        dict
            The fields as plain Python values (JSON-ready).
        """
        return {
            "name": self.name,
            "c_primary": self.actual,
            "min_c_primary": self.minimum,
            "operating_points": [list(op) for op in self.operating_points],
            "act_dcf": list(self.act_dcf),
            "min_dcf": list(self.min_dcf),
        }


def c_primary(tar, non=None, operating_points="sre16") -> CPrimary:
    """NIST SRE C_primary and minimum C_primary of natural-log LLRs (see the module docstring).

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / SummarizedScores / RocHull as ``tar`` alone
        LLRs of target and non-target trials; or, with ``non`` omitted, one object standing
        for both (:mod:`focal.metrics.binary_scores`), whose sort is reused (pass
        ``operating_points`` by keyword then).
    operating_points : str or sequence
        An evaluation name of :data:`SRE_OPERATING_POINTS` (``"sre16"``, ``"sre18"``,
        ``"sre19"``, ``"sre21"``), or two or more ``(P_target, C_miss, C_fa)`` tuples (or
        priors with unit costs).

    Returns
    -------
    CPrimary
        The actual and minimum C_primary and the DCFs of each operating point.
    """
    name, points = resolve_points(operating_points)
    return c_primary_of(as_binary_scores(tar, non), points, name)


def resolve_points(operating_points):
    """``(name, points)``: an evaluation name or a sequence, validated (two or more points)."""
    name = ""
    if isinstance(operating_points, str):
        key = operating_points.lower()
        if key not in SRE_OPERATING_POINTS:
            raise ValueError(
                f"operating_points must be one of {sorted(SRE_OPERATING_POINTS)} "
                f"or a sequence of (P_target, C_miss, C_fa), got "
                f"{operating_points!r}"
            )
        name, operating_points = key, SRE_OPERATING_POINTS[key]
    points = as_operating_points(operating_points)
    if len(points) < 2:
        raise ValueError(f"C_primary averages two or more operating points, got {len(points)}")
    return name, points


def c_primary_of(scores, points, name: str = "") -> CPrimary:
    """:func:`c_primary` of the sorted or summarized scores ``scores``
    (:func:`focal.metrics.as_binary_scores`) at validated ``(P, C_miss, C_fa)`` points.
    """
    act = tuple(dcf(scores, p_target=p, c_miss=m, c_fa=f) for p, m, f in points)
    mins = tuple(min_dcf(scores, p_target=p, c_miss=m, c_fa=f) for p, m, f in points)
    return CPrimary(float(np.mean(act)), float(np.mean(mins)), tuple(points), act, mins, name)

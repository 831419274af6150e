"""The best affine recalibration among an optimizer's solutions, the identity and the default.

An evaluation minimum over affine recalibrations ``scale * score + offset`` (Albayzin plan eqs.
11-12; Brümmer & van Leeuwen 2006 eq. 18; thesis eqs. 5.5 and 8.21-8.23; MediaEval 2013 SWS
measures eqs. 44-45) must contain the identity (``scale = 1, offset = 0``: the scores as
submitted) and the default system (``scale = 0, offset = 0``: the scores ignored), so that the
minimum is never above the actual cost nor above the cost of the default system, exactly, even
when an optimizer stops short (separable data, where the infimum is only approached). This
module holds that selection, for every such minimum of focal: the multiclass cross-entropy
C_min, the multiclass Brier and C_eta minima and the binary C_nxe^min of term detection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["AffineChoice", "best_affine"]


@dataclass(frozen=True)
class AffineChoice:
    """The chosen recalibration ``scale * score + offset`` and the objective there.

    Attributes
    ----------
    value : float
        Objective at the chosen recalibration (in the objective's unit).
    scale : float
    offset : float or ndarray
    source : str
        ``"fitted"`` (one of the optimizer's candidates), ``"identity"`` or ``"default"``.
    """

    value: float
    scale: float
    offset: Any
    source: str


def best_affine(
    value: Callable,
    fitted: Sequence = (),
    *,
    zero_offset: Any = 0.0,
    nonnegative_scale: bool = False,
    identity_value: float | None = None,
    default_value: float | None = None,
) -> AffineChoice:
    """The best of the fitted recalibrations, the identity and the default system.

    Parameters
    ----------
    value : callable
        ``value(scale, offset) -> float``, the objective of a recalibration (smaller is better).
    fitted : sequence of (scale, offset)
        The optimizer's solutions, best guess first. Non-finite ones are skipped, and so are
        those with ``scale < 0`` when ``nonnegative_scale`` (thesis sec. 8.4.2: a
        recalibration may not reverse the recognizer).
    zero_offset : float or ndarray
        The offset of the identity and of the default system (``0.0`` or ``np.zeros(N)``).
    nonnegative_scale : bool
        Refuse fitted candidates with a negative scale.
    identity_value, default_value : float, optional
        The objective of the identity / default system when the caller knows it already
        (otherwise ``value`` is called).

    Returns
    -------
    AffineChoice
        The first candidate of least objective, in the order fitted, identity, default (so an
        optimizer's solution wins ties).
    """
    candidates: list[tuple[float, Any, str, float | None]] = []
    for scale, offset in fitted:
        usable = np.isfinite(scale) and np.all(np.isfinite(offset))
        if usable and (scale >= 0 or not nonnegative_scale):
            candidates.append((scale, offset, "fitted", None))
    candidates.append((1.0, zero_offset, "identity", identity_value))
    candidates.append((0.0, zero_offset, "default", default_value))
    values = [value(s, o) if known is None else known for s, o, _, known in candidates]
    best = int(np.argmin(values))
    scale, offset, source, _ = candidates[best]
    return AffineChoice(value=values[best], scale=scale, offset=offset, source=source)

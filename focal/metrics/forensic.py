"""Forensic likelihood-ratio validation: the ELUB limits of an LR system and the Cllr wording.

Forensic examiners report a likelihood ratio (LR) for the evidence under the prosecution
hypothesis H1 (the "same source" trials, targets) against the defence hypothesis H2 (different
source, non-targets), usually as log10 LR, and validate the LR system on trials of known
ground truth. This module gives what such a validation reads beside the measures of
:mod:`focal.metrics.binary`:

- :func:`elub_bounds`: the empirical lower and upper bound (ELUB) of Vergeer et al. (2016): the
  most extreme LRs the validation data support, beyond which the system's LRs are extrapolation
  and should be clipped (:class:`focal.estimators.KDECalibrator` and
  :class:`focal.estimators.PAVCalibrator` do it with ``bounds="elub"``);
- :func:`forensic_summary`: Cllr, Cllr_min and Cllr_cal (the performance characteristics
  "accuracy", "discriminating power" and "calibration" of Meuwly, Ramos and Haraksim 2017,
  table 1), the EER, the rates of misleading evidence and the ELUB limits, printed in log10 LR.

Every input is a natural-log LLR, as everywhere in focal; divide by ``ln 10`` (or read files
with ``--log10`` on the command line) for log10 LRs.

The ELUB method (Vergeer et al. 2016)
-------------------------------------
An LR system that outputs ``LR = theta`` claims that, at prior odds ``1 / theta``, deciding by
its LRs costs no more than deciding without them. Test the claim where the data are thinnest:
add to the validation set one *misleading* LR of exactly that strength (an H2 trial with
``LR = theta`` when ``theta > 1``, an H1 trial with ``LR = theta`` when ``theta < 1``) and
compute the normalized Bayes error-rate (thesis eq. 7.20; Vergeer et al. use it as the
"expected utility" of the decision) of Bayes decisions at threshold ``theta``. With ``t = ln
theta`` (natural log here, log10 in the paper), ``N_1`` H1 and ``N_2`` H2 trials:

    NBE_up(t)  = e^t (#{H2 LLRs >= t} + 1) / (N_2 + 1) + #{H1 LLRs < t} / N_1,      t >= 0
    NBE_low(t) = e^-t (#{H1 LLRs <= t} + 1) / (N_1 + 1) + #{H2 LLRs > t} / N_2,     t <= 0

(the authors' own MATLAB code, published in the documentation of NFI lir's ``ELUBBounder``,
evaluates exactly these, the added LR counted as an error). The uninformative system (every
LR 1) has NBE 1 at every threshold. The upper bound is where ``NBE_up`` first exceeds 1 going
up from LR 1, the lower bound where ``NBE_low`` first exceeds 1 going down: beyond them, one
misleading LR of that size would already make the system worse than no system. On each
interval between consecutive LLRs both counts are constant and ``NBE(t) = A e^{+-t} + B`` is
monotone, so each crossing is solved in closed form (``t = +-ln((1 - B) / A)``): the bounds are
exact, not read off a grid. Since a bound never exceeds ``ln(N + 1)`` in size, the limits grow
with the size of the validation set, as Vergeer et al. intend.

NFI lir 1.x (``lir.algorithms.bayeserror.elub``) reads the same curves off a grid of 0.01
log10 steps and adds its misleading trials on *both* sides at every threshold (one H1 trial
always counted as a miss and one H2 trial always counted as a false alarm, its
``add_misleading=1``), which gives bounds nearer LR 1 than the one-sided rule above (e.g.
upper LR 2.63 instead of 4 on its own test case of LRs 0.01, 0.1, 1 (H2) and 10, 100 (H1)).

References
----------
.. [1] P. Vergeer, A. van Es, A. de Jongh, I. Alberink and R. Stoel, "Numerical likelihood
   ratios outputted by LR systems are often based on extrapolation: When to stop
   extrapolating?", Science & Justice 56(6), 482-491, 2016, doi:10.1016/j.scijus.2016.06.003.
.. [2] D. Meuwly, D. Ramos and R. Haraksim, "A guideline for the validation of likelihood ratio
   methods used for forensic evidence evaluation", Forensic Science International 276,
   142-153, 2017, doi:10.1016/j.forsciint.2016.03.048.
.. [3] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .binary import cllr, eer, min_cllr
from .binary_scores import BinaryScores, as_binary_scores

__all__ = ["ELUBBounds", "elub_bounds", "ForensicSummary", "forensic_summary"]

_LN10 = float(np.log(10.0))


class ELUBBounds(NamedTuple):
    """The ELUB limits of an LR system, natural-log LLRs (``lower <= 0 <= upper``).

    Attributes
    ----------
    lower, upper : float
        The lowest and highest LLR (nats) the validation data support; divide by ``ln 10``
        for log10 LR, ``exp`` gives the LRs.
    """

    lower: float
    upper: float

    @property
    def log10(self) -> tuple:
        """``(lower, upper)`` as log10 LRs."""
        return self.lower / _LN10, self.upper / _LN10


def _upper_bound(tar: np.ndarray, non: np.ndarray) -> float:
    """The first ``t >= 0`` where ``NBE_up(t) > 1`` (see the module docstring), exact.

    ``tar`` and ``non`` are sorted LLRs (+/-inf allowed). Between consecutive breakpoints ``a <
    b`` (0 and the positive finite LLRs) the counts are those of ``t`` in ``(a, b]``:
    ``#{non >= t} = #{non >= b}`` and ``#{tar < t} = #{tar <= a}``.
    """
    n_tar, n_non = tar.size, non.size
    a_point = (n_non - np.searchsorted(non, 0.0, "left") + 1) / (n_non + 1)
    if a_point + np.searchsorted(tar, 0.0, "left") / n_tar > 1.0:  # NBE(0) > 1: no support
        return 0.0
    scores = np.concatenate((tar, non))
    cuts = np.unique(scores[(scores > 0) & np.isfinite(scores)])
    lo = np.concatenate(([0.0], cuts))  # interval (lo, hi]
    hi = np.append(cuts, np.inf)
    slope = (n_non - np.searchsorted(non, hi, "left") + 1) / (n_non + 1)  # A
    base = np.searchsorted(tar, lo, "right") / n_tar  # B
    with np.errstate(divide="ignore"):
        cross = np.log(np.maximum(1.0 - base, 0.0) / slope)  # NBE = 1 where A e^t + B = 1
    cross = np.maximum(cross, lo)  # already above 1 at the interval's left end: there
    valid = cross < hi
    return float(cross[valid].min())  # the last interval is always valid (its hi is inf)


def _scores(tar, non, function: str) -> BinaryScores:
    """``(tar, non)`` as :class:`BinaryScores`: these measures read every trial's LLR, which
    block summaries do not keep.
    """
    scores = as_binary_scores(tar, non)
    if not isinstance(scores, BinaryScores):
        raise ValueError(
            f"{function} reads every trial's LLR: pass (tar, non) or a BinaryScores, not "
            f"block summaries ({type(scores).__name__})"
        )
    return scores


def elub_bounds(tar, non=None) -> ELUBBounds:
    """Empirical lower and upper bound (ELUB) LLRs of an LR system (Vergeer et al. 2016).

    The most extreme natural-log LLRs that validation trials of known ground truth support: an
    LLR beyond them would make the system worse than an uninformative one as soon as one
    misleading LR of that strength occurred (the exact crossing of the normalized Bayes
    error-rate with one added misleading LR, see the module docstring). Clip a calibrated
    system's LLRs to ``[lower, upper]`` (``np.clip(llr, *bounds)``, or
    :class:`focal.estimators.KDECalibrator` or :class:`focal.estimators.PAVCalibrator` with
    ``bounds="elub"``).

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / RocHull as ``tar`` alone
        Natural-log LLRs of the H1-true (target, same-source) and H2-true (non-target) trials
        (+/-inf allowed, NaN not); or, with ``non`` omitted, a :class:`BinaryScores` of them.

    Returns
    -------
    ELUBBounds
        ``(lower, upper)`` in nats, ``lower <= 0 <= upper``; ``.log10`` gives log10 LRs.

    Examples
    --------
    Five LRs, 1/100, 1/10 and 1 from H2-true and 10 and 100 from H1-true comparisons. One
    misleading H2-true LR of 4 would make deciding at prior odds 1/4 cost as much as deciding
    without the system (``NBE_up = 4 (0 + 1) / 4 + 0 = 1``); one misleading H1-true LR of 1/2
    would do the same at prior odds 2 (``NBE_low = 2 (0 + 1) / 3 + 1 / 3 = 1``, the H2-true LR
    of 1 being above the threshold 1/2).

    >>> import numpy as np
    >>> from focal.metrics import elub_bounds
    >>> bounds = elub_bounds(np.log([10.0, 100.0]), np.log([0.01, 0.1, 1.0]))
    >>> np.exp(bounds).round(4).tolist()
    [0.5, 4.0]
    """
    trials = _scores(tar, non, "elub_bounds").trials
    upper = _upper_bound(trials.tar, trials.non)
    lower = -_upper_bound(-trials.non[::-1], -trials.tar[::-1])  # NBE_low(t) = NBE_up(-t) swapped
    return ELUBBounds(lower + 0.0, upper)


@dataclass(frozen=True)
class ForensicSummary:
    """The validation numbers of an LR system in the wording of forensic LR validation.

    Attributes
    ----------
    n_targets, n_nontargets : int
        H1-true (same-source) and H2-true (different-source) trials.
    cllr : float
        Cllr, bits: the accuracy of the LRs (thesis eq. 7.41).
    cllr_min : float
        Cllr after the optimal monotone recalibration (PAV), bits: the discriminating power.
    cllr_cal : float
        ``cllr - cllr_min``, bits: the calibration loss.
    eer : float
        ROCCH-EER, a fraction.
    misleading_h1, misleading_h2 : float
        Rates of misleading evidence: the fraction of H1-true trials with LR < 1 and of H2-true
        trials with LR > 1.
    elub : ELUBBounds
        The ELUB limits (nats).
    min_tar, max_non : float
        The strongest misleading LLRs (nats): the lowest H1-true and the highest H2-true LLR.
    name : str
    """

    n_targets: int
    n_nontargets: int
    cllr: float
    cllr_min: float
    cllr_cal: float
    eer: float
    misleading_h1: float
    misleading_h2: float
    elub: ELUBBounds
    min_tar: float
    max_non: float
    name: str = ""

    def to_dict(self) -> dict:
        """Plain-Python numbers (LLRs in nats and in log10), for JSON.

        Returns
        -------
        dict
            The fields, the ELUB limits as ``elub_lower`` / ``elub_upper`` (nats) and
            ``elub_log10``.
        """
        return {
            "name": self.name,
            "n_targets": self.n_targets,
            "n_nontargets": self.n_nontargets,
            "cllr": self.cllr,
            "cllr_min": self.cllr_min,
            "cllr_cal": self.cllr_cal,
            "eer": self.eer,
            "misleading_h1": self.misleading_h1,
            "misleading_h2": self.misleading_h2,
            "elub_lower": self.elub.lower,
            "elub_upper": self.elub.upper,
            "elub_log10": list(self.elub.log10),
            "min_tar": self.min_tar,
            "max_non": self.max_non,
        }

    def lines(self) -> list:
        """The summary as lines of text, LRs in log10 (see ``__str__``).

        Returns
        -------
        list of str
            One line per number.
        """
        lo, hi = self.elub.log10
        return [
            "Forensic validation" + (f": {self.name}" if self.name else ""),
            f"  {self.n_targets:,} H1-true (same source) and {self.n_nontargets:,} H2-true "
            "(different source) comparisons",
            f"  Cllr              {self.cllr:9.4f} bits  (accuracy)",
            f"  Cllr_min          {self.cllr_min:9.4f} bits  (discriminating power, after PAV)",
            f"  Cllr_cal          {self.cllr_cal:9.4f} bits  (calibration loss, Cllr - Cllr_min)",
            f"  EER               {100 * self.eer:9.3f} %",
            f"  misleading evidence: {100 * self.misleading_h1:.2f} % of H1-true LRs < 1, "
            f"{100 * self.misleading_h2:.2f} % of H2-true LRs > 1",
            f"  strongest misleading: H1-true log10 LR {self.min_tar / _LN10:.3g}, "
            f"H2-true log10 LR {self.max_non / _LN10:.3g}",
            f"  ELUB limits       log10 LR in [{lo:.3f}, {hi:.3f}]  "
            f"(LR from 1/{10**-lo:.3g} to {10**hi:.3g})",
        ]

    def __str__(self) -> str:
        return "\n".join(self.lines())


def forensic_summary(tar, non=None, name: str = "") -> ForensicSummary:
    """Cllr, Cllr_min, Cllr_cal, EER, rates of misleading evidence and ELUB limits of LLRs.

    The performance characteristics of Meuwly, Ramos and Haraksim (2017, table 1): accuracy
    (Cllr), discriminating power (Cllr_min, EER) and calibration (Cllr_cal = Cllr - Cllr_min),
    with the rates of misleading evidence and the ELUB limits of Vergeer et al. (2016,
    :func:`elub_bounds`). One sort and one PAV serve every number.

    Parameters
    ----------
    tar, non : array_like, or a BinaryScores / RocHull as ``tar`` alone
        Natural-log LLRs of the H1-true (target) and H2-true (non-target) trials; or, with
        ``non`` omitted, a :class:`BinaryScores` of them.
    name : str, default ""
        The system's name, printed in the title.

    Returns
    -------
    ForensicSummary
        ``str()`` prints it in log10 LR; ``to_dict()`` for programs.

    Examples
    --------
    >>> import numpy as np
    >>> from focal.metrics import forensic_summary
    >>> s = forensic_summary(np.log([10.0, 100.0, 0.5]), np.log([0.01, 0.1, 1.0, 2.0]))
    >>> round(s.cllr_cal, 4) == round(s.cllr - s.cllr_min, 4), s.misleading_h1
    (True, 0.3333333333333333)
    """
    scores = _scores(tar, non, "forensic_summary")
    t, n = scores.trials.tar, scores.trials.non
    accuracy, power = cllr(scores), min_cllr(scores)
    return ForensicSummary(
        n_targets=scores.n_targets,
        n_nontargets=scores.n_nontargets,
        cllr=accuracy,
        cllr_min=power,
        cllr_cal=accuracy - power,
        eer=eer(scores),
        misleading_h1=float(np.searchsorted(t, 0.0, "left") / t.size),
        misleading_h2=float((n.size - np.searchsorted(n, 0.0, "right")) / n.size),
        elub=elub_bounds(scores),
        min_tar=float(t[0]),
        max_non=float(n[-1]),
        name=str(name),
    )

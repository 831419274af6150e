"""Multiclass (language recognition) analysis of one set of log-likelihoods, as a report object.

:func:`multiclass_report` gathers what a language-recognition engineer reads first, per
evaluation condition: the Albayzin 2012 criteria (:cite:t:`albayzin2012plan`, eqs. 6-15), the
multiclass Cllr (:cite:t:`brummer2006calibration`, sec. 4) and NIST CAVG
(:cite:t:`brummer2010thesis`, eq. 8.3). :class:`MulticlassReport` prints as a table and
converts to a dictionary.

Conditions. ``"closed"``: the Albayzin closed-set prior (eq. 2 with ``pi_OOS = 0``): the
out-of-set column and its segments are ignored, CAVG is NIST's over the target languages.
``"open"``: the flat prior over all classes (eq. 2 with ``pi_OOS = 1/m``). The open-set CAVG is
focal's own extension: no paper defines one; focal treats the out-of-set class as one more
target language of the CAVG average.

References
----------
.. [1] :cite:t:`albayzin2012plan` ("Albayzin plan").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.multiclass import _llh_columns, as_multiclass_trials
from .lre import cavg
from .multiclass import AlbayzinMeasures, albayzin_measures, albayzin_prior, multiclass_cllr

__all__ = [
    "CONDITIONS",
    "ConditionResult",
    "MulticlassReport",
    "multiclass_report",
    "default_conditions",
]

#: Evaluation conditions of :func:`multiclass_report`.
CONDITIONS = ("closed", "open")

#: How the CAVG of each condition is defined (shown in the report and its dictionary).
CAVG_DEFINITIONS = {
    "closed": "NIST LRE CAVG over the target languages (out-of-set segments ignored)",
    "open": "focal's own extension (no paper defines an open-set CAVG): the out-of-set class "
    "counted as one more target language",
}


def default_conditions(condition) -> list:
    """The evaluation condition of a file's condition: ``["closed"]`` for an Albayzin
    ``Closed`` file, else ``["open"]`` (``Open`` files and the generic format).
    """
    return ["closed" if condition == "Closed" else "open"]


@dataclass(frozen=True)
class ConditionResult:
    """The measures of one evaluation condition.

    Attributes
    ----------
    condition : {"closed", "open"}
    albayzin : AlbayzinMeasures
        C_mce, C_def, C_min (nats), F_act, F_dis, F_cal and the recalibration (Albayzin sec. 4).
    multiclass_cllr : float
        C_mce / log 2, bits.
    cavg : float
        CAVG at P_target 1/2 over the classes of the condition, a fraction (see
        :data:`CAVG_DEFINITIONS`).
    """

    condition: str
    albayzin: AlbayzinMeasures
    multiclass_cllr: float
    cavg: float

    def to_dict(self) -> dict:
        """Plain-Python numbers for JSON."""
        return {
            **self.albayzin.to_dict(),
            "multiclass_cllr": self.multiclass_cllr,
            "cavg": self.cavg,
            "cavg_definition": CAVG_DEFINITIONS[self.condition],
        }


@dataclass(frozen=True)
class MulticlassReport:
    """Multiclass analysis of one system's log-likelihoods (see :func:`multiclass_report`).

    Attributes
    ----------
    name : str
    classes : tuple of str
        Column order of the log-likelihoods; the last class is out-of-set.
    n_segments : int
    task, condition : str or None
        The Albayzin task and condition of the file (None for the generic format).
    results : tuple of ConditionResult
        One per evaluation condition, in the order asked.
    """

    name: str
    classes: tuple
    n_segments: int
    task: str | None
    condition: str | None
    results: tuple

    def to_dict(self) -> dict:
        """Plain-Python dictionary of every number (for JSON or programs).

        Returns
        -------
        dict
            The fields as plain Python values (JSON-ready).
        """
        return {
            "name": self.name,
            "task": self.task,
            "condition": self.condition,
            "n_segments": self.n_segments,
            "classes": list(self.classes),
            "measures": {r.condition: r.to_dict() for r in self.results},
        }

    def __str__(self) -> str:
        results = self.results
        head = f"{self.task} task, {self.condition} condition; " if self.task else ""
        lines = [
            f"Multiclass analysis: {self.name}",
            f"  {self.n_segments:,} segments; {head}{len(self.classes)} classes: "
            f"{', '.join(self.classes)}",
            "  " + " " * 22 + "".join(f"{r.condition + ' set':>12}" for r in results),
        ]

        def row(label, values, fmt, note):
            lines.append(
                f"  {label:<22}" + "".join(f"{format(v, fmt):>12}" for v in values) + f"   {note}"
            )

        m = [r.albayzin for r in results]
        row(
            f"prior of {self.classes[-1]}",
            [a.prior[-1] for a in m],
            ".4g",
            "(last class; Albayzin eq. 2)",
        )
        row("C_mce", [a.c_mce for a in m], ".4f", "nats, multiclass cross-entropy (eq. 6)")
        row(
            "C_def",
            [a.c_def for a in m],
            ".4f",
            "nats, the prior entropy: a system that says nothing (eq. 7)",
        )
        row(
            "C_min",
            [a.c_min for a in m],
            ".4f",
            "nats, after the best affine recalibration (eq. 12)",
        )
        row("multiclass Cllr", [r.multiclass_cllr for r in results], ".4f", "bits, C_mce / log 2")
        row(
            "F_act",
            [a.f_act for a in m],
            ".4f",
            "actual relative confusion (eq. 10), the primary criterion",
        )
        row("F_dis", [a.f_dis for a in m], ".4f", "discrimination: F after recalibration (eq. 13)")
        row(
            "F_cal",
            [a.f_cal for a in m],
            ".4f",
            "calibration loss, F_act = (1 + F_cal) F_dis (eqs. 14-15)",
        )
        row(
            "recalibration scale",
            [a.alpha for a in m],
            ".4g",
            "alpha of the best alpha * l + beta (eq. 11)",
        )
        lines.append(
            f"  {'Cavg':<22}"
            + "".join(f"{100 * r.cavg:>11.2f}%" for r in results)
            + "   NIST CAVG, P_target 0.5, over the classes of the condition"
        )
        if any(r.condition == "open" for r in results):
            lines.append(f"  (open-set Cavg: {CAVG_DEFINITIONS['open']})")
        return "\n".join(lines)


def _condition_result(trials, condition) -> ConditionResult:
    """The measures of ``trials`` (a MulticlassTrials at the Albayzin prior of ``condition``)."""
    m = albayzin_measures(trials)
    # the Cllr has always been computed at m.prior renormalized (check_prior of a normalized
    # prior can move it by an ulp): with_prior keeps that, and the printed digits
    return ConditionResult(
        condition=condition,
        albayzin=m,
        multiclass_cllr=float(multiclass_cllr(trials.with_prior(m.prior))),
        cavg=float(cavg(trials)),
    )


def multiclass_report(
    llh,
    labels,
    classes,
    conditions=None,
    *,
    name: str = "",
    task: str | None = None,
    condition: str | None = None,
) -> MulticlassReport:
    """Albayzin measures, multiclass Cllr and CAVG of log-likelihoods, per evaluation condition.

    Parameters
    ----------
    llh : array_like, shape (n_segments, m)
        Natural-log likelihoods; the last column is the out-of-set class.
    labels : array_like of int, shape (n_segments,)
        True class ``0..m-1`` of each segment.
    classes : sequence of str
        The ``m`` class names, in column order.
    conditions : sequence of {"closed", "open"}, optional
        Evaluation conditions. Default: :func:`default_conditions` of ``condition``.
    name : str
        Shown in the report (e.g. the file name).
    task, condition : str, optional
        The Albayzin task and condition of the data, shown in the report.

    Returns
    -------
    MulticlassReport

    Raises
    ------
    ValueError
        A condition that is not ``"closed"`` or ``"open"``, ``classes`` that do not match the
        columns, or what :func:`focal.metrics.albayzin_measures` refuses.
    """
    L, m = _llh_columns(llh)
    classes = tuple(str(c) for c in classes)
    if len(classes) != m:
        raise ValueError(f"classes has {len(classes)} names, llh {m} columns")
    conditions = default_conditions(condition) if conditions is None else list(conditions)
    unknown = [c for c in conditions if c not in CONDITIONS]
    if unknown or not conditions:
        raise ValueError(f"conditions must be some of {', '.join(CONDITIONS)}, got {conditions!r}")
    conditions = list(dict.fromkeys(conditions))
    priors = [albayzin_prior(m, open_set=c == "open") for c in conditions]
    trials = as_multiclass_trials(L, labels, priors[0])  # validated once
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        results = tuple(
            _condition_result(trials if k == 0 else trials.with_prior(p), c)
            for k, (c, p) in enumerate(zip(conditions, priors))
        )
    return MulticlassReport(
        name=str(name),
        classes=classes,
        n_segments=trials.n_trials,
        task=task,
        condition=condition,
        results=results,
    )

"""Partitioned scoring: every measure per partition of the trials, pooled, and equalized.

One concept (the partition, its groups and their equalization) in one module although it is
long: the per-partition reports, the pooled one and the equalized measures share one encoding
of the labels and one sort of the scores, which a split would have to pass between modules.

Evaluation keys carry metadata of each trial (gender, language, source type, number of
enrolment segments, same / different phone number, a duration bucket, ...). A pooled measure
lets a large easy partition hide a small hard one; NIST speaker recognition evaluations
therefore report results per partition and rank systems by an *equalized* C_primary.

:func:`partition_report` gives, for one system:

- the pooled report (:func:`focal.metrics.calibration_report` of every trial);
- a report per partition: for each metadata column, per value; with several columns, also per
  cell of their cross product (combinations that occur). Each is exactly the report of that
  partition's trials evaluated alone (a partition holding only one class has no report, but
  still counts in the equalized rates of that class);
- equalized measures per column and over the cross product (:class:`EqualizedMeasures`).

Equalization (NIST SRE)
-----------------------
Each partition is weighted equally: a target trial of partition k weighs ``1 / N_tar,k``, a
non-target ``1 / N_non,k``, so that at every threshold

    P_miss,eq(t) = mean_k P_miss,k(t),     P_fa,eq(t) = mean_k P_fa,k(t)

(means over the partitions holding that class), and every measure is that of the weighted
trials: the actual DCF of Bayes decisions from the equalized rates (the mean of the
partitions' own actual DCFs when each holds both classes), the minimum DCF and the ROCCH-EER
from the weighted ROC at one threshold common to all partitions (so the equalized minimum is
at least the mean of the partitions' own minima), Cllr from the equalized class means of the
logarithmic cost (the mean of the partitions' Cllrs when each holds both classes), minCllr
from the weighted PAV, and C_primary as the mean of the equalized normalized DCFs at its
operating points. With one partition every equalized number is the pooled one.

This is how NIST equalizes C_primary for the telephone (CTS) data of SRE18 and SRE19: the
trials are partitioned by the cross product of the key's metadata columns (number of
enrolment segments, enrolment-test phone number match, CTS type), empty cells dropped, and the
scoring software distributed with the plans computes the actual cost from the miss and
false-alarm rates averaged over the partitions and the minimum cost from the trials weighted
by ``max_k N_k / N_k`` per class (functions ``compute_equalized_act_cost`` and
``compute_equalized_min_cost`` of the SRE18 scoring software, O. Sadjadi, NIST, 2018). (That
software also leaves out the non-target trials of the same-phone-number partition, a rule of
that evaluation's design, not of the equalization.) The two operating points of C_primary are
those of :mod:`focal.metrics.sre`.

References
----------
.. [1] NIST, "NIST 2016 Speaker Recognition Evaluation Plan", version 1.3, 2016,
   https://www.nist.gov/sites/default/files/documents/2016/10/07/sre16_eval_plan_v1.3.pdf.
.. [2] NIST, "NIST 2018 Speaker Recognition Evaluation Plan", 2018-08-17.
.. [3] O. Sadjadi, SRE18 scoring software (``sre18_submission_scorer``), NIST, 2018.
.. [4] :cite:t:`brummer2010thesis` ("thesis").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.operating_point import OperatingPoint, as_operating_points
from ..core.pav import pav_from_counts
from ..core.priors import detection_cost
from ..core.rocch import RocHull
from ..core.scoring import cross_entropy_nats, normalized_cross_entropy
from ..core.validation import check_binary_trials, check_probability
from .binary import eer, min_cllr, min_dcf
from .report import CalibrationReport, OperatingPointResult, calibration_report
from .sre import CPrimary, resolve_points

__all__ = ["EqualizedMeasures", "Partition", "PartitionReport", "partition_report"]


# -- the partition table ----------------------------------------------------------------------


def _columns(parts, n: int, where: str):
    """``(names, values)`` of a partition table: names of the columns and an (n, k) array of
    their labels as text.

    ``parts`` is a mapping ``{column: labels}`` (a dict, a pandas DataFrame), a 1-D sequence
    of labels (one column, ``"partition"``) or a 2-D array (columns ``"partition 1"``, ...).
    """
    if hasattr(parts, "items"):
        names = [str(k) for k in parts.keys()]
        cols = [np.asarray(v) for _, v in parts.items()]
    else:
        arr = np.asarray(parts)
        if arr.ndim == 1:
            names, cols = ["partition"], [arr]
        elif arr.ndim == 2:
            names = [f"partition {j + 1}" for j in range(arr.shape[1])]
            cols = [arr[:, j] for j in range(arr.shape[1])]
        else:
            raise ValueError(
                f"{where} must be a mapping of column names to labels, or a 1-D or 2-D array "
                f"of labels; got an array of shape {arr.shape}"
            )
    if not names:
        raise ValueError(f"{where} has no column")
    if len(set(names)) != len(names):
        raise ValueError(f"{where} names a column twice: {names}")
    for name, col in zip(names, cols):
        if col.ndim != 1 or col.shape[0] != n:
            raise ValueError(
                f"{where}[{name!r}] must hold one label per trial ({n}), got shape {col.shape}"
            )
    return tuple(names), np.stack([c.astype(str) for c in cols], axis=1).reshape(n, len(names))


def _column_codes(tar_values, non_values):
    """Each column's labels as integer codes (both classes together) and its distinct labels:
    ``(codes (n_tar + n_non, k), [labels of column j, ...])``; the strings are sorted once per
    column, the groupings then combine integers.
    """
    both = np.concatenate((tar_values, non_values))
    codes = np.empty(both.shape, dtype=np.int64)
    names = []
    for j in range(both.shape[1]):
        distinct, inverse = np.unique(both[:, j], return_inverse=True)
        codes[:, j] = inverse.reshape(-1)
        names.append(distinct)
    return codes, names


def _group(codes, names, cols, n_tar):
    """Group codes of the trials by the columns ``cols`` (their combinations that occur) and
    the label tuple of each group: ``(tar_codes, non_codes, groups)``.
    """
    distinct, inverse = np.unique(codes[:, cols], axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    groups = [  # one per group (few), not per trial
        tuple(str(names[j][code]) for j, code in zip(cols, row)) for row in distinct.tolist()
    ]
    return inverse[:n_tar], inverse[n_tar:], groups


# -- equalized measures -----------------------------------------------------------------------


@dataclass(frozen=True)
class EqualizedMeasures:
    """Measures of trials weighted so that every partition counts equally (module docstring).

    Attributes
    ----------
    over : tuple of str
        The columns whose values (one column) or value combinations (several) are the
        partitions.
    n_partitions : int
        Partitions holding trials.
    p_target : float
        Prior of Cllr and minCllr.
    cllr, min_cllr : float
        Equalized Cllr and minCllr (bits at ``p_target = 0.5``).
    eer : float
        ROCCH-EER of the equalized rates, a fraction.
    operating_points : tuple of OperatingPointResult
        Equalized actual and minimum normalized DCF at each operating point.
    c_primary : CPrimary or None
        Equalized C_primary, when asked for.
    """

    over: tuple
    n_partitions: int
    p_target: float
    cllr: float
    min_cllr: float
    eer: float
    operating_points: tuple
    c_primary: CPrimary | None = None

    @property
    def label(self) -> str:
        """``"equalized over gender x language"``."""
        return "equalized over " + " x ".join(self.over)

    def to_dict(self) -> dict:
        """Plain-Python numbers for JSON.

        Returns
        -------
        dict
            The fields as plain Python values.
        """
        return {
            "over": list(self.over),
            "n_partitions": self.n_partitions,
            "p_target": self.p_target,
            "cllr": self.cllr,
            "min_cllr": self.min_cllr,
            "eer": self.eer,
            "operating_points": [
                {
                    "p_target": op.p_target,
                    "c_miss": op.c_miss,
                    "c_fa": op.c_fa,
                    "act_dcf": op.act_dcf,
                    "min_dcf": op.min_dcf,
                }
                for op in self.operating_points
            ],
            **({} if self.c_primary is None else {"c_primary": self.c_primary.to_dict()}),
        }


class _CountHull:
    """The ROC convex hull of trial counts (:class:`focal.core.RocHull`) and the measures of
    :mod:`focal.metrics.binary` read off it, as :class:`_FloatHull` gives them.
    """

    def __init__(self, hull: RocHull):
        self.hull = hull

    def min_dcf(self, p_target, c_miss=1.0, c_fa=1.0) -> float:
        return min_dcf(self.hull, p_target=p_target, c_miss=c_miss, c_fa=c_fa)

    @property
    def eer(self) -> float:
        return eer(self.hull)

    def min_cllr(self, p_target=0.5) -> float:
        return min_cllr(self.hull, p_target=p_target)


class _FloatHull:
    """The ROC convex hull of trials with real weights: vertices from the weighted PAV.

    The same measures as :class:`_CountHull` (``min_dcf``, ``eer``, ``min_cllr``) for
    class weights that are not trial counts; the vertices are the weighted PAV's block
    boundaries (thesis 7.3.6, 7.7.3: PAV of weighted trials is optimal for every proper scoring
    rule, weights included).
    """

    def __init__(self, w_tar: np.ndarray, w_non: np.ndarray):
        from scipy.optimize import isotonic_regression

        total = w_tar + w_non
        fit = isotonic_regression(w_tar / total, weights=total, increasing=True)
        starts = np.asarray(fit.blocks[:-1])
        self.w_tar = np.add.reduceat(w_tar, starts)
        self.w_non = np.add.reduceat(w_non, starts)
        t_sum, n_sum = self.w_tar.sum(), self.w_non.sum()
        misses = np.concatenate(([0.0], np.cumsum(self.w_tar)))
        kept = np.concatenate(([0.0], np.cumsum(self.w_non)))
        misses[-1], kept[-1] = t_sum, n_sum
        self.p_miss = misses / t_sum
        self.p_fa = (n_sum - kept) / n_sum
        with np.errstate(divide="ignore"):
            self.llr = np.log(self.w_tar / t_sum) - np.log(self.w_non / n_sum)

    def min_dcf(self, p_target, c_miss=1.0, c_fa=1.0, normalize: bool = True) -> float:
        return float(
            np.min(detection_cost(self.p_miss, self.p_fa, p_target, c_miss, c_fa, normalize))
        )

    @property
    def eer(self) -> float:
        diff = self.p_miss - self.p_fa  # increasing from -1 to 1
        k = int(np.argmax(diff >= 0))
        if diff[k] == 0:
            return float(self.p_miss[k])
        share = -diff[k - 1] / (diff[k] - diff[k - 1])
        return float(self.p_miss[k - 1] + share * (self.p_miss[k] - self.p_miss[k - 1]))

    def min_cllr(self, p_target=0.5) -> float:
        xe = cross_entropy_nats(self.llr, self.llr, p_target, self.w_tar, self.w_non)
        return normalized_cross_entropy(xe, p_target)


def _distinct(tar, non):
    """The distinct scores of both classes and the index of each trial's (targets first)."""
    scores, inverse = np.unique(np.concatenate((tar, non)), return_inverse=True)
    return scores, inverse.reshape(-1)


class _Equalizer:
    """Trials of several partitions weighted equally per class (module docstring).

    Parameters
    ----------
    tar, non : ndarray
        Validated LLRs of every trial, in input order.
    tar_codes, non_codes : ndarray of int
        The partition of each trial, ``0 .. n_groups - 1``.
    n_groups : int
        Number of partitions.
    distinct : (ndarray, ndarray), optional
        :func:`_distinct` of the trials, when already computed (it is the same for every
        grouping of the same trials).
    """

    def __init__(self, tar, non, tar_codes, non_codes, n_groups: int, distinct=None):
        self.tar, self.non = tar, non
        self.distinct = distinct  # (distinct scores, index of each trial's), shared
        self.tar_codes, self.non_codes = tar_codes, non_codes
        self.n_tar = np.bincount(tar_codes, minlength=n_groups)
        self.n_non = np.bincount(non_codes, minlength=n_groups)
        self.tar_groups = self.n_tar > 0
        self.non_groups = self.n_non > 0
        self.n_groups = int(np.count_nonzero(self.tar_groups | self.non_groups))

    def rates(self, threshold: float):
        """Equalized ``(P_miss, P_fa)`` of accepting every LLR ``>= threshold``."""
        misses = np.bincount(self.tar_codes[self.tar < threshold], minlength=self.n_tar.size)
        alarms = np.bincount(self.non_codes[self.non >= threshold], minlength=self.n_non.size)
        p_miss = misses[self.tar_groups] / self.n_tar[self.tar_groups]
        p_fa = alarms[self.non_groups] / self.n_non[self.non_groups]
        return p_miss.sum() / p_miss.size, p_fa.sum() / p_fa.size

    def dcf(self, p_target, c_miss=1.0, c_fa=1.0) -> float:
        """Equalized actual normalized DCF of Bayes decisions on the LLRs."""
        op = OperatingPoint(p_target, c_miss, c_fa)
        return float(op.detection_cost(*self.rates(op.bayes_threshold)))

    def _weights(self):
        """Trial weights ``max_k N_k / N_k`` per class (NIST's scaling: 1 for the largest)."""
        w_t = self.n_tar.max() / np.where(self.tar_groups, self.n_tar, 1)
        w_n = self.n_non.max() / np.where(self.non_groups, self.n_non, 1)
        return w_t[self.tar_codes], w_n[self.non_codes]

    def cllr(self, p_target) -> float:
        """Equalized Cllr: the logarithmic cost with each partition's class means weighted
        equally (thesis eq. 7.40 with trial weights).
        """
        w_t, w_n = self._weights()
        xe = cross_entropy_nats(self.tar, self.non, p_target, w_t, w_n)
        return normalized_cross_entropy(xe, p_target)

    def hull(self):
        """The ROC convex hull of the weighted trials.

        Integer weights (partitions of equal size, one partition) are trial counts: the hull is
        then :class:`focal.core.RocHull` of the weighted PAV of counts (:class:`_CountHull`),
        the same computation as the pooled measures'; other weights take the real-weighted PAV
        (:class:`_FloatHull`).
        """
        w_t, w_n = self._weights()
        if self.distinct is None:
            self.distinct = _distinct(self.tar, self.non)
        scores, inverse = self.distinct
        g = scores.size
        per_tar = np.bincount(inverse[: self.tar.size], weights=w_t, minlength=g)
        per_non = np.bincount(inverse[self.tar.size :], weights=w_n, minlength=g)
        integral = np.array_equal(w_t, np.round(w_t)) and np.array_equal(w_n, np.round(w_n))
        if integral and max(per_tar.sum(), per_non.sum()) < 2.0**52:
            counts = np.round(per_tar).astype(np.int64), np.round(per_non).astype(np.int64)
            return _CountHull(RocHull(pav_from_counts(scores, *counts)))
        return _FloatHull(per_tar, per_non)

    def measures(self, over, p_target, points, cp_points, cp_name) -> EqualizedMeasures:
        hull = self.hull()
        results = tuple(
            OperatingPointResult(
                p_target=pt,
                c_miss=cm,
                c_fa=cf,
                effective_prior=OperatingPoint(pt, cm, cf).effective_prior,
                act_dcf=self.dcf(pt, cm, cf),
                min_dcf=hull.min_dcf(pt, cm, cf),
            )
            for pt, cm, cf in points
        )
        cp = None
        if cp_points is not None:
            act = tuple(self.dcf(*op) for op in cp_points)
            mins = tuple(hull.min_dcf(*op) for op in cp_points)
            cp = CPrimary(
                float(np.mean(act)), float(np.mean(mins)), tuple(cp_points), act, mins, cp_name
            )
        return EqualizedMeasures(
            over=tuple(over),
            n_partitions=self.n_groups,
            p_target=p_target,
            cllr=self.cllr(p_target),
            min_cllr=hull.min_cllr(p_target),
            eer=hull.eer,
            operating_points=results,
            c_primary=cp,
        )


# -- the report -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Partition:
    """One partition of the trials and its report.

    Attributes
    ----------
    columns : tuple of str
        The metadata columns that define it (one, or several for a cell of their cross
        product).
    values : tuple of str
        Its label in each of ``columns``.
    n_targets, n_nontargets : int
        Its trials of each class.
    report : CalibrationReport or None
        The report of its trials evaluated alone; None when it holds only one class.
    """

    columns: tuple
    values: tuple
    n_targets: int
    n_nontargets: int
    report: CalibrationReport | None

    @property
    def label(self) -> str:
        """``"gender=f"`` or ``"gender=f, language=en"``."""
        return ", ".join(f"{c}={v}" for c, v in zip(self.columns, self.values))

    def to_dict(self) -> dict:
        """Plain-Python values for JSON.

        Returns
        -------
        dict
            The partition's columns, labels, counts and report.
        """
        return {
            "columns": list(self.columns),
            "values": list(self.values),
            "n_targets": self.n_targets,
            "n_nontargets": self.n_nontargets,
            "report": None if self.report is None else self.report.to_dict(),
        }


@dataclass(frozen=True)
class PartitionReport:
    """Pooled, per-partition and equalized measures of one system (:func:`partition_report`).

    Attributes
    ----------
    name : str
    columns : tuple of str
        The metadata columns.
    pooled : CalibrationReport
        Every trial together.
    partitions : tuple of Partition
        Per value of each column (in column order, values sorted), then per cell of the cross
        product of the columns (with several columns).
    equalized : tuple of EqualizedMeasures
        Over each column, then over the cross product (with several columns).
    """

    name: str
    columns: tuple
    pooled: CalibrationReport
    partitions: tuple
    equalized: tuple

    def to_dict(self) -> dict:
        """Plain-Python values for JSON.

        Returns
        -------
        dict
            ``name``, ``columns``, ``pooled``, ``partitions`` and ``equalized``.
        """
        return {
            "name": self.name,
            "columns": list(self.columns),
            "pooled": self.pooled.to_dict(),
            "partitions": [p.to_dict() for p in self.partitions],
            "equalized": [e.to_dict() for e in self.equalized],
        }

    def rows(self) -> list:
        """``[(label, n_targets, n_nontargets, numbers), ...]``: the table of ``str()``.

        ``numbers`` is an object with ``cllr``, ``min_cllr``, ``eer``, ``operating_points``
        and ``c_primary`` (a CalibrationReport or EqualizedMeasures), None for a partition of
        one class.

        Returns
        -------
        list of tuple
            One row for the pooled trials, one per partition, one per equalization.
        """
        rows: list = [("pooled", self.pooled.n_targets, self.pooled.n_nontargets, self.pooled)]
        rows += [(p.label, p.n_targets, p.n_nontargets, p.report) for p in self.partitions]
        rows += [(e.label, None, None, e) for e in self.equalized]
        return rows

    def __str__(self) -> str:
        rows = self.rows()
        ops = self.pooled.operating_points
        cp = self.pooled.c_primary is not None
        width = max(12, max(len(r[0]) for r in rows) + 2)
        head = f"  {'':<{width}}{'targets':>9}{'non-tar.':>10}{'Cllr':>8}{'minCllr':>9}{'EER %':>8}"
        for op in ops:
            head += f"{f'act@{op.p_target:g}':>10}{f'min@{op.p_target:g}':>10}"
        if cp:
            head += f"{'Cprim':>8}{'minCprim':>9}"
        lines = [
            "Partitioned analysis"
            + (f": {self.name}" if self.name else "")
            + f" (columns: {', '.join(self.columns)})",
            head,
        ]
        for label, n_t, n_n, m in rows:
            counts = f"{'':>19}" if n_t is None else f"{n_t:>9,}{n_n:>10,}"
            if m is None:
                lines.append(f"  {label:<{width}}{counts}  (one class only: counts in the rates)")
                continue
            line = f"  {label:<{width}}{counts}{m.cllr:8.4f}{m.min_cllr:9.4f}{100 * m.eer:8.2f}"
            for op in m.operating_points:
                line += f"{op.act_dcf:10.4f}{op.min_dcf:10.4f}"
            if cp and m.c_primary is not None:
                line += f"{m.c_primary.actual:8.4f}{m.c_primary.minimum:9.4f}"
            lines.append(line)
        lines.append(
            "  equalized: every partition weighted equally (NIST SRE); DCFs normalized"
            + (", Cllr in bits" if self.pooled.p_target == 0.5 else "")
        )
        with_intervals = [(label, m) for label, _, _, m in rows if getattr(m, "intervals", ())]
        if with_intervals:
            first = with_intervals[0][1].intervals[0]
            lines.append(
                f"  {100 * first.confidence:g} % confidence intervals ({first.resampling} "
                f"bootstrap, {first.n_bootstrap} replicates)"
            )
            for label, m in with_intervals:
                lines.append(f"    {label}")
                lines.extend(
                    f"      {iv.measure:<22}{iv.estimate:>10.4f}  [{iv.low:.4f}, {iv.high:.4f}]"
                    for iv in m.intervals
                )
        return "\n".join(lines)


def _subset(clusters, mask):
    """The cluster labels of the trials in ``mask`` (one array, or a pair for two-way)."""
    if clusters is None:
        return None
    if isinstance(clusters, (tuple, list)) and len(clusters) == 2:
        return tuple(np.asarray(c)[mask] for c in clusters)
    return np.asarray(clusters)[mask]


def partition_report(
    tar,
    non,
    tar_partitions,
    non_partitions,
    *,
    operating_points=((0.01, 1.0, 1.0),),
    p_target=0.5,
    name: str = "",
    conventional_eer: bool = False,
    c_primary=None,
    confidence=None,
    n_bootstrap=1000,
    tar_clusters=None,
    non_clusters=None,
    random_state=None,
    n_jobs=None,
) -> PartitionReport:
    """Measures of natural-log LLRs per partition of the trials, pooled, and equalized.

    See the module docstring: a :func:`focal.metrics.calibration_report` of all the trials, of
    each partition (each value of each metadata column, and each cell of their cross product),
    and the equalized measures (every partition weighted equally) per column and over the
    cross product, as NIST SRE equalizes C_primary.

    Parameters
    ----------
    tar, non : array_like
        Natural-log LLRs of the target and non-target trials (+/-inf allowed, NaN not).
    tar_partitions, non_partitions : mapping, array_like
        The partition labels of each target / non-target trial, in the order of ``tar`` /
        ``non``: a mapping ``{column: labels}`` (a dict or a pandas DataFrame; the same columns
        for both), a 1-D array of labels (one column, ``"partition"``) or a 2-D array (one
        column per metadata field). Labels are compared as text.
    operating_points : sequence, default ((0.01, 1, 1),)
        The DCF operating points, as in :func:`focal.metrics.calibration_report`.
    p_target : float, default 0.5
        Prior of Cllr and minCllr.
    name : str, default ""
        The system's name.
    conventional_eer : bool, default False
        Also report the conventional EER of the pooled trials and of each partition.
    c_primary : str or sequence, optional
        Also report C_primary at these points (``"sre16"``, ``"sre21"``, ... or tuples, as in
        :func:`focal.metrics.c_primary`): pooled, per partition and equalized.
    confidence : float, optional
        With a coverage such as 0.95, bootstrap intervals of the pooled numbers and of each
        partition's (:func:`focal.metrics.bootstrap_ci`).
    n_bootstrap : int, default 1000
        Replicates of each bootstrap.
    tar_clusters, non_clusters : array_like, optional
        Cluster labels of the bootstrap, as in :func:`focal.metrics.calibration_report`.
    random_state : int, RandomState or None
        Seed of the bootstraps.
    n_jobs : int, optional
        Workers of the bootstraps.

    Returns
    -------
    PartitionReport
        ``str()`` prints the table; ``to_dict()`` for programs.

    Examples
    --------
    >>> import numpy as np
    >>> from focal.metrics import partition_report
    >>> tar, non = np.array([2.0, 1.0, 3.0, -1.0]), np.array([-2.0, 0.5, -3.0, -1.0, 1.5, -2.5])
    >>> gender_tar, gender_non = ["f", "f", "m", "m"], ["f", "f", "f", "m", "m", "m"]
    >>> r = partition_report(tar, non, {"gender": gender_tar}, {"gender": gender_non})
    >>> [p.label for p in r.partitions], r.equalized[0].label
    (['gender=f', 'gender=m'], 'equalized over gender')
    """
    t, n = check_binary_trials(tar, non)
    p = check_probability(p_target)
    points = as_operating_points(operating_points)
    cp_name, cp_points = resolve_points(c_primary) if c_primary is not None else ("", None)
    names, t_values = _columns(tar_partitions, t.size, "tar_partitions")
    non_names, n_values = _columns(non_partitions, n.size, "non_partitions")
    if non_names != names:
        raise ValueError(
            f"tar_partitions and non_partitions must have the same columns, got {list(names)} "
            f"and {list(non_names)}"
        )
    options = {
        "operating_points": points,
        "p_target": p,
        "conventional_eer": conventional_eer,
        "c_primary": c_primary,
        "confidence": confidence,
        "n_bootstrap": n_bootstrap,
        "random_state": random_state,
        "n_jobs": n_jobs,
    }
    pooled = calibration_report(
        t, n, name=name, tar_clusters=tar_clusters, non_clusters=non_clusters, **options
    )
    groupings = [(names[j],) for j in range(len(names))]
    if len(names) > 1:
        groupings.append(names)
    partitions, equalized = [], []
    codes, labels_of = _column_codes(t_values, n_values)
    distinct = _distinct(t, n)  # one sort of the pooled scores for every equalization
    for over in groupings:
        cols = [names.index(c) for c in over]
        t_codes, n_codes, groups = _group(codes, labels_of, cols, t.size)
        for k, labels in enumerate(groups):
            t_mask, n_mask = t_codes == k, n_codes == k
            n_t, n_n = int(t_mask.sum()), int(n_mask.sum())
            report = None
            if n_t and n_n:
                report = calibration_report(
                    t[t_mask],
                    n[n_mask],
                    name=", ".join(f"{c}={v}" for c, v in zip(over, labels)),
                    tar_clusters=_subset(tar_clusters, t_mask),
                    non_clusters=_subset(non_clusters, n_mask),
                    **options,
                )
            partitions.append(Partition(tuple(over), labels, n_t, n_n, report))
        eq = _Equalizer(t, n, t_codes, n_codes, len(groups), distinct)
        equalized.append(eq.measures(over, p, points, cp_points, cp_name))
    return PartitionReport(str(name), names, pooled, tuple(partitions), tuple(equalized))

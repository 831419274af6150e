"""The operating point of a binary detection application: (P_target, C_miss, C_fa).

An application that decides "target" or "non-target" with prior P_target, cost C_miss of a miss
and cost C_fa of a false alarm is, for evaluation, equivalent to the application (P_tar, 1, 1)
with the *effective target prior* P_tar (thesis eqs. 7.12-7.13 :cite:p:`brummer2010thesis`;
SWS plan eqs. 22-24 :cite:p:`sws2013measures`):
same Bayes decisions, same ranking of systems. :class:`OperatingPoint` holds one application and
gives its effective prior, its log-odds, the false-alarm weight beta and the Bayes threshold on
natural-log LLRs; the formulas are those of :mod:`focal.core.priors`.

Named points: :meth:`OperatingPoint.sws2013`, :meth:`OperatingPoint.std2006`,
:meth:`OperatingPoint.sws2012` (which depends on the data) and the pairs of NIST speaker
recognition evaluations, :meth:`OperatingPoint.nist_sre`. The first three may also be given by
name (:data:`OperatingPoint.NAMES`, :meth:`OperatingPoint.named`).

References
----------
.. [1] :cite:t:`brummer2010thesis` ("thesis").
.. [2] :cite:t:`sws2013measures` ("SWS plan").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..exceptions import InvalidParameterError
from .priors import bayes_threshold as _bayes_threshold
from .priors import beta as _beta
from .priors import detection_cost as _detection_cost
from .priors import effective_log_odds as _effective_log_odds
from .priors import effective_prior as _effective_prior
from .validation import check_positive, check_probability

__all__ = ["OperatingPoint", "NIST_SRE_POINTS", "as_operating_points"]

#: The (P_target, C_miss, C_fa) points averaged by NIST SRE's C_primary: SRE16 (NIST 2016
#: Speaker Recognition Evaluation Plan, sec. 3.1), SRE18 CTS and SRE19 CTS use P_target = 0.01 and
#: 0.005; SRE21 (NIST 2021 Speaker Recognition Evaluation Plan, sec. 3.1) 0.01 and 0.05; unit costs.
NIST_SRE_POINTS = {
    "sre16": ((0.01, 1.0, 1.0), (0.005, 1.0, 1.0)),
    "sre18": ((0.01, 1.0, 1.0), (0.005, 1.0, 1.0)),
    "sre19": ((0.01, 1.0, 1.0), (0.005, 1.0, 1.0)),
    "sre21": ((0.01, 1.0, 1.0), (0.05, 1.0, 1.0)),
}


@dataclass(frozen=True)
class OperatingPoint:
    """An application (P_target, C_miss, C_fa) of binary detection.

    Iterating gives ``(p_target, c_miss, c_fa)``, so a point can be unpacked or passed as
    ``*op`` wherever the three numbers are expected.

    Parameters
    ----------
    p_target : float
        Prior probability of a target trial, strictly inside (0, 1).
    c_miss, c_fa : float, default 1
        Costs of a miss and of a false alarm, finite and > 0 (any unit; only their ratio
        matters for decisions).
    name : str, default ""
        A label for reports (``"MediaEval SWS 2013"``).

    Examples
    --------
    >>> op = OperatingPoint.sws2013()
    >>> round(op.beta, 2), round(op.effective_prior, 4)
    (66.66, 0.0148)
    >>> p_target, c_miss, c_fa = op
    """

    p_target: float
    c_miss: float = 1.0
    c_fa: float = 1.0
    name: str = ""

    #: The names :meth:`named` accepts, case-insensitive; ``"sws2012"``
    #: depends on the data (:meth:`sws2012`)
    NAMES: ClassVar[tuple] = ("sws2013", "std2006", "sws2012")

    def __post_init__(self):
        object.__setattr__(self, "p_target", check_probability(self.p_target, "p_target"))
        object.__setattr__(self, "c_miss", check_positive(self.c_miss, "c_miss"))
        object.__setattr__(self, "c_fa", check_positive(self.c_fa, "c_fa"))

    def __iter__(self):
        return iter((self.p_target, self.c_miss, self.c_fa))

    def as_tuple(self) -> tuple:
        """``(p_target, c_miss, c_fa)`` as floats.

        Returns
        -------
        tuple of float
            ``(p_target, c_miss, c_fa)``.
        """
        return (self.p_target, self.c_miss, self.c_fa)

    @property
    def log_odds(self) -> float:
        """Effective prior log-odds ``logit(P_target) + log(C_miss / C_fa)`` in nats (thesis
        eq. 7.13).
        """
        return _effective_log_odds(self.p_target, self.c_miss, self.c_fa)

    @property
    def effective_prior(self) -> float:
        """``P_tar = C_miss P_target / (C_miss P_target + C_fa (1 - P_target))`` (SWS plan
        eq. 23): the prior of the equivalent application with unit costs.
        """
        return _effective_prior(self.p_target, self.c_miss, self.c_fa)

    @property
    def beta(self) -> float:
        """``C_fa (1 - P_target) / (C_miss P_target)``, the weight of false alarms in TWV (SWS
        plan eq. 7); 66.66 for SWS 2013. Dimensionless.
        """
        return _beta(self.p_target, self.c_miss, self.c_fa)

    @property
    def bayes_threshold(self) -> float:
        """Bayes decision threshold on natural-log LLRs: accept iff ``llr >= -log_odds``
        (thesis sec. 7.3.1; SWS plan eq. 31).
        """
        return _bayes_threshold(self.p_target, self.c_miss, self.c_fa)

    def detection_cost(self, p_miss, p_fa, normalize: bool = True):
        """``P_target C_miss P_miss + (1 - P_target) C_fa P_fa`` (SWS plan eq. 8), divided by
        the default cost ``min(P_target C_miss, (1 - P_target) C_fa)`` when ``normalize``
        (eqs. 9-10); works on arrays of rates.

        Parameters
        ----------
        p_miss, p_fa : float or array_like
            Miss and false-alarm rates (fractions).
        normalize : bool, default True
            Divide by the default cost.

        Returns
        -------
        float or ndarray
            The cost, of the shape of the rates (dimensionless when normalized).
        """
        return _detection_cost(p_miss, p_fa, self.p_target, self.c_miss, self.c_fa, normalize)

    def describe(self) -> str:
        """``'P_tar=0.01'`` or ``'P_tar=0.01, C_miss=10, C_fa=1'``, for legends and tables.

        Returns
        -------
        str
            The short description.
        """
        if self.c_miss == 1.0 and self.c_fa == 1.0:
            return f"P_tar={self.p_target:g}"
        return f"P_tar={self.p_target:g}, C_miss={self.c_miss:g}, C_fa={self.c_fa:g}"

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def coerce(cls, op, where: str = "operating_point") -> OperatingPoint:
        """An OperatingPoint from a prior (unit costs), a ``(P_target, C_miss, C_fa)`` sequence
        or an OperatingPoint (returned as is); names are :meth:`named`'s.

        Errors are :class:`focal.exceptions.InvalidParameterError` (a ``ValueError``) naming
        ``where`` (the argument, e.g. ``"operating_points[2]"``).
        """
        if isinstance(op, cls):
            return op
        if np.ndim(op) == 0:
            pt, cm, cf = op, 1.0, 1.0
        else:
            values = tuple(np.ravel(op).tolist()) if isinstance(op, np.ndarray) else tuple(op)
            if len(values) != 3:
                raise InvalidParameterError(
                    f"{where} must be a target prior or a tuple "
                    f"(P_target, C_miss, C_fa), got {op!r}"
                )
            pt, cm, cf = values
        return cls(
            check_probability(pt, f"{where} P_target"),
            check_positive(cm, f"{where} C_miss"),
            check_positive(cf, f"{where} C_fa"),
        )

    @classmethod
    def named(cls, name: str, n_true=None, n_trials=None, where: str = "operating_point"):
        """The point called ``name`` (case-insensitive, one of :data:`NAMES`).

        Parameters
        ----------
        name : {"sws2013", "std2006", "sws2012"}
            :meth:`sws2013`, :meth:`std2006`, or :meth:`sws2012`, which depends on the data.
        n_true, n_trials : int and float, optional
            For ``"sws2012"`` only (and then required): the reference occurrences of the
            evaluated queries and the trials per query ``n_tps T_audio`` (SWS plan eq. 17).
        where : str, default "operating_point"
            The argument named in error messages.

        Returns
        -------
        OperatingPoint
            The named point.
        """
        key = name.lower()
        if key == "sws2013":
            return cls.sws2013()
        if key == "std2006":
            return cls.std2006()
        if key != "sws2012":
            raise InvalidParameterError(
                f"{where} must be an OperatingPoint, a tuple (P_target, C_miss, C_fa), a "
                f"target prior or one of {', '.join(map(repr, cls.NAMES))}; got {name!r}"
            )
        if n_true is None or n_trials is None:
            raise InvalidParameterError(
                f"{where} {name!r} depends on the data (P_target = N_true / (n_tps T_audio), "
                f"SWS plan eq. 17): known once detections are aligned; give a fixed point"
            )
        return cls.sws2012(n_true, n_trials)

    @classmethod
    def from_effective_prior(cls, p_tar: float, name: str = "") -> OperatingPoint:
        """The equivalent application ``(P_tar, 1, 1)`` with flat costs (SWS plan eqs. 22-24)."""
        return cls(p_tar, 1.0, 1.0, name)

    @classmethod
    def sws2013(cls) -> OperatingPoint:
        """MediaEval 2013 Spoken Web Search: ``(0.00015, 100, 1)`` (SWS plan eq. 21), beta =
        66.66, P_tar = 0.0148.
        """
        return cls(0.00015, 100.0, 1.0, "MediaEval SWS 2013")

    @classmethod
    def std2006(cls) -> OperatingPoint:
        """NIST Spoken Term Detection 2006: ``(1e-4, 10, 1)`` (SWS plan sec. 2.5), beta = 999.9."""
        return cls(1e-4, 10.0, 1.0, "NIST STD 2006")

    @classmethod
    def sws2012(cls, n_true: int, n_trials: float) -> OperatingPoint:
        """The MediaEval 2012 SWS point: ``C_miss = C_fa = 1`` and ``P_target = N_true / N``.

        ``N = n_tps T_audio`` trials per query and ``N_true`` reference occurrences of all the
        evaluated queries (SWS plan eq. 17), so ``beta = (N - N_true) / N_true`` (eq. 18).
        """
        if not 0 < n_true < n_trials:
            raise ValueError(
                f"the SWS 2012 operating point needs 0 < N_true < n_tps*T_audio; "
                f"got N_true={n_true} and n_tps*T_audio={n_trials:g}"
            )
        return cls(n_true / n_trials, 1.0, 1.0, "SWS 2012 (P_target = N_true / (n_tps T_audio))")

    @classmethod
    def nist_sre(cls, evaluation: str = "sre16") -> tuple:
        """The operating points of NIST SRE's C_primary, one per target prior.

        Parameters
        ----------
        evaluation : {"sre16", "sre18", "sre19", "sre21"}
            Case-insensitive (see :data:`NIST_SRE_POINTS`).

        Returns
        -------
        tuple of OperatingPoint
        """
        key = str(evaluation).lower()
        if key not in NIST_SRE_POINTS:
            raise InvalidParameterError(
                f"evaluation must be one of {sorted(NIST_SRE_POINTS)}, got {evaluation!r}"
            )
        return tuple(cls(*op, name=f"NIST {key.upper()}") for op in NIST_SRE_POINTS[key])


def as_operating_points(operating_points, where: str = "operating_points") -> list:
    """Validated ``(P_target, C_miss, C_fa)`` float tuples of a sequence of operating points.

    Each entry is a target prior (unit costs), a ``(P_target, C_miss, C_fa)`` sequence or an
    :class:`OperatingPoint` (:meth:`OperatingPoint.coerce`); a bare prior stands for one point.
    The one check of the operating points of the calibration report and of C_primary.

    Parameters
    ----------
    operating_points : float, OperatingPoint or sequence of them
        The points.
    where : str, default "operating_points"
        The argument named in error messages (``operating_points[2] P_target ...``).

    Returns
    -------
    list of tuple
        ``(p_target, c_miss, c_fa)`` per point, in the order given.
    """
    if (
        np.isscalar(operating_points)
        or isinstance(operating_points, OperatingPoint)
        or (isinstance(operating_points, np.ndarray) and operating_points.ndim == 0)
    ):  # one bare point
        operating_points = (operating_points,)
    return [
        OperatingPoint.coerce(op, f"{where}[{i}]").as_tuple()
        for i, op in enumerate(operating_points)
    ]

"""Docstring sections shared by the term detection measures and readers, written once.

A public function's docstring names a shared section by a line holding only ``{name}``;
:func:`shared_doc` replaces that line by the section, indented as the marker was.
"""

from __future__ import annotations

__all__ = ["shared_doc"]

SECTIONS = {
    "trials": """trials : AlignedTrials
    The aligned detections and reference occurrences (:func:`focal.std.align`).""",
    "operating_point": """operating_point : OperatingPoint, tuple, float or str, default SWS 2013
    The application (P_target, C_miss, C_fa) (plan eqs. 6-7, 22-23): an OperatingPoint, a
    tuple, a target prior (unit costs) or a name of ``OperatingPoint.NAMES`` (``"sws2012"``
    depends on the trials, plan eqs. 17-18).""",
    "queries": """queries : {"evaluated", "all"}, default "evaluated"
    The queries Q of the trials: those with occurrences, or every query of the task.""",
    "path": """Parameters
----------
path : str or path-like
    The file to read.""",
    "references": """References
----------
.. [1] L. J. Rodríguez-Fuentes and M. Penagarikano, "MediaEval 2013 Spoken Web Search
   Task: System Performance Measures", technical report, GTTS, UPV/EHU, 2013 ("SWS plan").""",
}
SECTIONS["trial_set_parameters"] = "Parameters\n----------\n" + "\n".join(
    SECTIONS[k] for k in ("trials", "operating_point", "queries")
)
_READ = SECTIONS["path"] + "\n\nReturns\n-------\n"
SECTIONS["reads_detections"] = _READ + "Detections\n    The detections, file order."
SECTIONS["reads_reference"] = _READ + "Reference\n    The reference occurrences, file order."
SECTIONS["reads_ecf"] = _READ + "ECF\n    The excerpts and their total duration."


def shared_doc(func):
    """Fill the ``{name}`` lines of ``func``'s docstring with :data:`SECTIONS` (returns ``func``).

    Parameters
    ----------
    func : callable
        A function whose docstring holds marker lines.

    Returns
    -------
    callable
        ``func``, its docstring filled in.
    """
    lines = []
    for line in (func.__doc__ or "").split("\n"):
        key = line.strip()
        if key[:1] == "{" and key[-1:] == "}" and key[1:-1] in SECTIONS:
            indent = line[: len(line) - len(line.lstrip())]
            lines += [indent + part if part else part for part in SECTIONS[key[1:-1]].split("\n")]
        else:
            lines.append(line)
    func.__doc__ = "\n".join(lines)
    return func

"""scikit-learn estimators: thin layers that validate input, call core math and store fitted
``name_`` attributes (DESIGN.md, "Layers")."""

from .fusion import LinearCalibrator, LogisticFusion, PerfectSeparationWarning
from .scorers import (
    LLRScorer,
    cllr_scorer,
    dcf_scorer,
    eer_scorer,
    min_cllr_scorer,
    min_dcf_scorer,
)

__all__ = [
    "LogisticFusion", "LinearCalibrator", "PerfectSeparationWarning",
    "LLRScorer", "cllr_scorer", "min_cllr_scorer", "dcf_scorer", "min_dcf_scorer", "eer_scorer",
]

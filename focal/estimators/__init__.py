"""scikit-learn estimators: thin layers that validate input, call core math and store fitted
``name_`` attributes (ARCHITECTURE.md).
"""

from ._fit_report import PerfectSeparationWarning
from .backend import GaussianBackend
from .calibrated import CalibratedClassifier
from .calibration import ROCCH, PAVCalibrator
from .fusion import LinearCalibrator, LogisticFusion
from .kde import KDECalibrator
from .multiclass import MulticlassFusion, stack_systems
from .normalization import ScoreNormalizer
from .quality import QualityFusion
from .scorers import (
    LLHScorer,
    LLRScorer,
    cavg_scorer,
    cllr_scorer,
    cmce_scorer,
    dcf_scorer,
    eer_scorer,
    min_cllr_scorer,
    min_dcf_scorer,
    multiclass_cllr_scorer,
)

__all__ = [
    "PAVCalibrator",
    "ROCCH",
    "KDECalibrator",
    "LogisticFusion",
    "LinearCalibrator",
    "PerfectSeparationWarning",
    "LLRScorer",
    "cllr_scorer",
    "min_cllr_scorer",
    "dcf_scorer",
    "min_dcf_scorer",
    "eer_scorer",
    "GaussianBackend",
    "MulticlassFusion",
    "stack_systems",
    "QualityFusion",
    "CalibratedClassifier",
    "ScoreNormalizer",
    "LLHScorer",
    "cmce_scorer",
    "multiclass_cllr_scorer",
    "cavg_scorer",
]

from ._fit_report import MiscalibrationWarning, UnboundedObjectiveWarning  # noqa: E402

__all__ += ["UnboundedObjectiveWarning", "MiscalibrationWarning"]

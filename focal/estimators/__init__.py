"""scikit-learn estimators: thin layers that validate input, call core math and store fitted
``name_`` attributes (DESIGN.md, "Layers")."""

from .backend import GaussianBackend
from .calibration import PAVCalibrator, ROCCH
from .multiclass import MulticlassFusion, stack_systems

__all__ = ["PAVCalibrator", "ROCCH", "GaussianBackend", "MulticlassFusion", "stack_systems"]

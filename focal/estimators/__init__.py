"""scikit-learn estimators: thin layers that validate input, call core math and store fitted
``name_`` attributes (DESIGN.md, "Layers")."""

from .calibration import PAVCalibrator, ROCCH

__all__ = ["PAVCalibrator", "ROCCH"]

"""eadct: time-series representation learning with the EA-DC-Transformer.

Wang et al., "Convolution-enhanced Evolving Attention Networks", TPAMI 2023.
"""

from .estimators import EADCTClassifier, EADCTRegressor, EADCTRepresentation

__version__ = "0.1.0"

__all__ = ["EADCTClassifier", "EADCTRegressor", "EADCTRepresentation", "__version__"]

"""eadct: time-series representation learning with the EA-DC-Transformer.

Wang et al., "Convolution-enhanced Evolving Attention Networks", TPAMI 2023.

The estimators are imported on first use, so that ``import eadct.networks`` (pure torch) does not
pull in scikit-learn and ``import eadct.datasets`` does not pull in torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_ESTIMATORS = (
    "EADCTClassifier",
    "EADCTRegressor",
    "EADCTRepresentation",
    "PAPER_CONFIGURATION",
    "paper_configuration",
    "LearnedNothingWarning",
    "LongerSeriesWarning",
)
_PERSISTENCE = ("save", "load")
__all__ = [*_ESTIMATORS, *_PERSISTENCE, "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from .estimators import (  # noqa: F401
        PAPER_CONFIGURATION,
        EADCTClassifier,
        EADCTRegressor,
        EADCTRepresentation,
        LearnedNothingWarning,
        LongerSeriesWarning,
        paper_configuration,
    )
    from .persistence import load, save  # noqa: F401


def __getattr__(name: str):
    if name in _ESTIMATORS:
        return getattr(importlib.import_module(".estimators", __name__), name)
    if name in _PERSISTENCE:
        return getattr(importlib.import_module(".persistence", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)

"""``sam_rho``: sharpness-aware minimisation in fine-tuning (:mod:`eadct.training.sam`).

Its measured effect: docs/accuracy.md, section "Candidate: sharpness-aware minimisation in the classifier".
"""

from __future__ import annotations

from ._param import Param, _number

SAM_RHO = {
    "sam_rho": Param(
        0.0,
        _number(0, low_open=False),
        "a number >= 0",
        "float, default=0.0\n"
        "    Sharpness-aware minimisation in fine-tuning (SAM, Foret et al. 2021): each step's gradient is taken at\n"
        "    the weights moved ``sam_rho`` (Euclidean norm over all trained weights) along the normalised\n"
        "    gradient, which favours flat minima; each step then costs two passes. 0 switches it off\n"
        "    (docs/training.md).",
        before=0.0,
    ),
}

"""One hyperparameter's definition (:class:`Param`) and the checks that the definitions in ``_params`` share."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

#: ``Param.before`` when the parameter's earlier behaviour is its default.
NOT_GIVEN = object()


@dataclass(frozen=True)
class Param:
    """One hyperparameter: default, check (None: not checked here), what it must be, numpydoc text."""

    default: Any
    check: Any
    what: str
    doc: str
    # the value that does what the estimators did before the parameter existed, where that is not the
    # default: a model saved by an earlier version loads with it (``_persistence._upgrade_state``)
    before: Any = NOT_GIVEN


def plain(value):
    """numpy scalars from a parameter grid as Python ones (np.bool_ -> bool, np.int64 -> int)."""
    return value.item() if isinstance(value, np.generic) else value


def _number(low=None, high=None, low_open=True, high_open=True):
    def check(v):
        if not isinstance(v, numbers.Real):
            return False
        ok_low = low is None or (v > low if low_open else v >= low)
        return ok_low and (high is None or (v < high if high_open else v <= high))

    return check


def _none_or(check):
    return lambda v: v is None or check(v)


def _optimizer_class(v) -> bool:
    return isinstance(v, type) and issubclass(v, torch.optim.Optimizer)

"""The fitted state of each estimator, declared: every attribute that ``fit`` sets, its type and its shape.

:func:`eadct.load` reads a file through this schema and nothing else: an attribute that is not declared here
is refused, every declared one is checked for its type, its shape (in terms of the fitted model's channels,
outputs and ensemble members) and its consistency with the others, and no name in a file ever selects a class,
a function or a method. Pickle (``__setstate__``) does not go through it: a pickle is trusted by definition.

A fit that sets a new attribute must declare it here (``tests/test_persistence.py`` fits every estimator and
checks that its state is declared exactly).
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..networks.config import EncoderConfig
from ._params import RENAMED

#: An array's or tensor's shape, in symbols: "C" the channels, "O" the outputs (classes or targets), "M" the
#: networks (ensemble members); ``None`` any length (a network's weights: checked against the network instead).
Shape = tuple[str, ...]


@dataclass(frozen=True)
class Attribute:
    """One fitted attribute: its kind and, for arrays, its shape and element kinds (numpy ``dtype.kind``)."""

    kind: str  # "int", "bool", "str", "array", "labels", "history", "scalars", "networks", "plan", "spec"
    shape: Shape = ()
    dtypes: str = "f"
    required: bool = True  # False: written only by some settings, or only since a later version than 0.1.0


_COMMON = {
    "n_channels_": Attribute("int"),
    "n_features_in_": Attribute("int"),
    "n_timepoints_": Attribute("int"),
    "channel_mean_": Attribute("array", ("C",)),
    "channel_std_": Attribute("array", ("C",)),
    "channel_log_scale_": Attribute("array", ("C",), "f", required=False),
    "wide_scale_channels_": Attribute("array", ("C",), "b", required=False),
    "network_": Attribute("networks"),
    "networks_": Attribute("networks"),
    "history_": Attribute("history"),
    "device_": Attribute("str"),
    "memory_plan_": Attribute("plan"),
    "_network_spec": Attribute("spec"),
}

#: ``class name -> {attribute: Attribute}``: what a fitted estimator of that class holds beside its parameters.
FITTED_STATE: dict[str, dict[str, Attribute]] = {
    "EADCTClassifier": {
        **_COMMON,
        "classes_": Attribute("labels", ("O",)),
        "input_differences_": Attribute("bool", required=False),
    },
    "EADCTRegressor": {
        **_COMMON,
        "_y_ndim": Attribute("int"),
        "target_mean_": Attribute("array", ("O",)),
        "target_scale_": Attribute("array", ("O",)),
        # the range of each target in TRAIN, which files of eadct 0.1 hold (for its clip_predictions): read, unused
        "target_min_": Attribute("array", ("O",), required=False),
        "target_max_": Attribute("array", ("O",), required=False),
        "head_alpha_": Attribute("array", ("M", "O"), required=False),
        "input_differences_": Attribute("bool", required=False),
        "treatment_choice_": Attribute("scalars", required=False),
    },
    "EADCTRepresentation": dict(_COMMON),
}

#: The keys a memory plan may override (``memory_plan_``): encoder settings and the batch size.
PLAN_KEYS = frozenset(f for f in EncoderConfig.__dataclass_fields__ if f not in ("n_channels", "max_len", "uses")) | {
    "batch_size"
}
_DEVICE = re.compile(r"cpu|cuda(:\d{1,3})?")


def is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def is_scalar(v) -> bool:
    """A JSON scalar: None, a bool, a number or a string."""
    return v is None or isinstance(v, (bool, int, float, str))


def is_device(v) -> bool:
    """``"cpu"``, ``"cuda"`` or ``"cuda:N"``: where a fitted network may live (never ``"meta"`` or another)."""
    return isinstance(v, str) and _DEVICE.fullmatch(v) is not None


def check_fitted(state: dict, cls_name: str, fail: Callable[[str], Exception]) -> dict:
    """The fitted attributes of ``state`` (already decoded, tensors as ``TensorRef``) checked against
    :data:`FITTED_STATE` and each other; ``fail(message)`` builds the error to raise.

    Returns the sizes they imply: ``{"C": channels, "O": outputs or None, "M": networks}``.
    """
    schema = FITTED_STATE[cls_name]
    missing = [n for n, a in schema.items() if a.required and n not in state]
    if missing:
        raise fail(f"its fitted state lacks {', '.join(missing)}")
    for name in ("n_channels_", "n_features_in_", "n_timepoints_"):
        if not is_int(state[name]) or state[name] < 1:
            raise fail(f"{name} must be a positive int, got {state[name]!r:.80}")
    if state["n_features_in_"] != state["n_channels_"]:
        raise fail(f"n_features_in_={state['n_features_in_']} differs from n_channels_={state['n_channels_']}")
    spec = state["_network_spec"]
    if not isinstance(spec, dict) or set(spec) != {"n_channels", "max_len", "n_outputs", "plan"}:
        raise fail("_network_spec must be a dict of n_channels, max_len, n_outputs and plan")
    if spec["n_channels"] != state["n_channels_"] or spec["max_len"] != state["n_timepoints_"]:
        raise fail("_network_spec's n_channels and max_len differ from n_channels_ and n_timepoints_")
    outputs = spec["n_outputs"]
    if (outputs is None) != (cls_name == "EADCTRepresentation") or (outputs is not None and not is_int(outputs)):
        raise fail(f"_network_spec's n_outputs={outputs!r:.80} does not fit a {cls_name}")
    if outputs is not None and outputs < (2 if cls_name == "EADCTClassifier" else 1):
        raise fail(f"_network_spec's n_outputs={outputs!r:.80} is too small for a {cls_name}")
    if "_y_ndim" in state and (state["_y_ndim"] not in (1, 2) or (state["_y_ndim"] == 1 and outputs != 1)):
        raise fail(f"_y_ndim={state['_y_ndim']!r:.80} does not fit {outputs} target(s)")
    _check_plan(state["memory_plan_"], spec, fail)
    _check_records(state, fail)
    if not isinstance(state["networks_"], list):
        raise fail("networks_ must be a list of the ensemble's further members")
    return {"C": state["n_channels_"], "O": outputs, "M": 1 + len(state["networks_"])}


def _check_plan(plan, spec: dict, fail) -> None:
    """``memory_plan_``: the overrides a memory plan may make, as ``_network_spec`` repeats them."""
    if not isinstance(plan, dict) or not isinstance(spec["plan"], dict):
        raise fail("memory_plan_ and _network_spec's plan must be dicts")
    for old, new in RENAMED.items():  # plans written before a parameter's rename
        for p in (plan, spec["plan"]):
            if old in p and new not in p:
                p[new] = p.pop(old)
    if spec["plan"] != plan:
        raise fail("memory_plan_ must equal _network_spec's plan")
    unknown = sorted(set(plan) - PLAN_KEYS)
    if unknown or not all(is_scalar(v) for v in plan.values()):
        raise fail(f"memory_plan_ may only set {sorted(PLAN_KEYS)} to plain values, got keys {unknown[:3]}")
    if "batch_size" in plan and not (is_int(plan["batch_size"]) and plan["batch_size"] >= 1):
        raise fail("memory_plan_'s batch_size must be a positive int")


def _check_records(state: dict, fail) -> None:
    """The device, the history and the choices a fit records."""
    if not is_device(state["device_"]):
        raise fail(f"device_ must be 'cpu', 'cuda' or 'cuda:N', got {state['device_']!r:.80}")
    history = state["history_"]
    if not isinstance(history, list) or not all(
        isinstance(r, dict) and all(isinstance(k, str) and is_scalar(v) for k, v in r.items()) for r in history
    ):
        raise fail("history_ must be a list of dicts of plain values")
    if "treatment_choice_" in state:
        choice = state["treatment_choice_"]
        if not isinstance(choice, dict) or not all(isinstance(k, str) and is_scalar(v) for k, v in choice.items()):
            raise fail("treatment_choice_ must be a dict of plain values")
    for name in ("input_differences_",):
        if name in state and not isinstance(state[name], bool):
            raise fail(f"{name} must be True or False, got {state[name]!r:.80}")


def stray_state(estimator, state: dict) -> list[str]:
    """The keys of ``state`` (``estimator.__getstate__()`` without its versions) that are neither the estimator's
    parameters nor its declared fitted state: what :func:`eadct.load` would refuse, so :func:`eadct.save` refuses
    to write them."""
    names, schema = set(type(estimator)._get_param_names()), FITTED_STATE[type(estimator).__name__]
    return sorted(k for k in state if k not in names and k not in schema)

"""The estimators' generated ``__init__`` (keyword arguments stored unchanged, with a real signature) and the check
of those arguments at fit."""

from __future__ import annotations

import inspect
import warnings

from ..networks import ARCHITECTURES, get_architecture, validate_encoder_config
from ._params import ENCODER_PARAMS, PARAMS, RENAMED


def make_init(names: tuple[str, ...], **own_defaults):
    """A scikit-learn ``__init__`` taking ``names`` as keyword arguments with their defaults (``PARAMS``'s,
    or ``own_defaults``), storing them unchanged; its signature is the real one (``inspect.signature``,
    ``get_params``, ``help``)."""
    defaults = {n: own_defaults.get(n, PARAMS[n].default) for n in names}

    def __init__(self, **params):
        for old, new in RENAMED.items():
            if old in params:
                if new in params:
                    raise TypeError(f"pass {new} only; {old} is its old name")
                warnings.warn(f"{old} was renamed {new}; pass {new}.", FutureWarning, stacklevel=2)
                params[new] = params.pop(old)
        for name in params:
            if name not in defaults:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument {name!r}")
        for name, default in defaults.items():
            setattr(self, name, params.get(name, default))

    kw = inspect.Parameter.KEYWORD_ONLY
    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(n, kw, default=d) for n, d in defaults.items()]
    )
    return __init__


def check_params(params: dict, owner: str) -> None:
    """Raise one ValueError naming every invalid hyperparameter in ``params`` (the estimator's
    ``get_params()``); the encoder settings are checked after the architecture's overrides."""
    if not PARAMS["architecture"].check(params["architecture"]):
        raise ValueError(
            f"Invalid parameters for {owner}: architecture must be one of {sorted(ARCHITECTURES)}, "
            f"got {params['architecture']!r}."
        )
    encoder = get_architecture(params["architecture"]).resolve({n: params[n] for n in ENCODER_PARAMS})
    problems = validate_encoder_config(encoder)
    for name, value in params.items():
        spec = PARAMS.get(name)
        if name not in ENCODER_PARAMS and spec is not None and spec.check is not None and not spec.check(value):
            problems.append(f"{name} must be {spec.what}, got {value!r}")
    if params.get("average_epochs") and params.get("average_decay"):
        problems.append(
            f"average_epochs={params['average_epochs']} and average_decay={params['average_decay']} are two ways "
            "of averaging weights; set one of them to None"
        )
    if problems:
        raise ValueError(f"Invalid parameters for {owner}: " + "; ".join(problems) + ".")

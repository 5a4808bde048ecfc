"""The estimators' generated ``__init__``: keyword arguments stored unchanged, with a real signature."""

from __future__ import annotations

import inspect
import warnings

from ._params import PARAMS, RENAMED


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

"""The estimators' generated ``__init__`` (keyword arguments stored unchanged, with a real signature), their
``get_params`` / ``set_params`` with ``options__<field>``, and the check of the settings at fit."""

from __future__ import annotations

import inspect

from ..networks import ARCHITECTURES, get_architecture, validate_encoder_config
from ._options import deep_options, from_init, in_effect, set_attribute, settings, with_options
from ._params import ENCODER_PARAMS, PARAMS


def make_init(names: tuple[str, ...], **own_defaults):
    """A scikit-learn ``__init__`` taking ``names`` as keyword arguments with their defaults (``PARAMS``'s,
    or ``own_defaults``), storing them unchanged; its signature is the real one (``inspect.signature``,
    ``get_params``, ``help``). Removed and moved names: :func:`eadct.estimators._options.from_init`."""
    defaults = {n: own_defaults.get(n, PARAMS[n].default) for n in names}

    def __init__(self, **params):
        params = from_init(type(self), params)
        for name, default in defaults.items():
            setattr(self, name, params.get(name, default))

    kw = inspect.Parameter.KEYWORD_ONLY
    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(n, kw, default=d) for n, d in defaults.items()]
    )
    return __init__


class HasOptions:
    """``get_params`` / ``set_params`` of an estimator with ``options`` (``_option_names``, ``_own_defaults``):
    scikit-learn's, plus an ``options__<field>`` entry per field (its value in effect), settable one by one."""

    _option_names: tuple[str, ...] = ()
    _own_defaults: dict = {}

    def __setattr__(self, name, value):
        # ``clf.n_segments = 2``: once a parameter, now a field of options (or removed); fit must not ignore it
        if not set_attribute(self, type(self), name, value):
            super().__setattr__(name, value)

    def get_params(self, deep=True):
        params = super().get_params(deep=False)
        return {**params, **self._deep_options(self)} if deep else params

    def set_params(self, **params):
        return super().set_params(**self._with_options(self, params))

    @classmethod
    def _deep_options(cls, estimator) -> dict:
        """``options__<field> -> value`` of ``estimator`` (this class, or an sktime or aeon one delegating to it)."""
        return deep_options(estimator, cls)

    @classmethod
    def _with_options(cls, estimator, params: dict) -> dict:
        """``set_params``'s ``params`` for ``estimator`` with the ``options__<field>`` entries in ``options``."""
        return with_options(estimator, cls, params)

    def _settings(self) -> dict:
        """Every setting in effect, flat (the parameters and the fields of ``options``)."""
        return settings(self.get_params(deep=False), type(self))

    def _option(self, name: str):
        """One field of ``options`` in effect."""
        return in_effect(self.options, type(self))[name]


def check_params(params: dict, owner: str) -> None:
    """Raise one ValueError naming every invalid setting in ``params`` (flat: :meth:`HasOptions._settings`); the
    encoder settings are checked after the architecture's overrides, and only those the architecture reads."""
    if not PARAMS["architecture"].check(params["architecture"]):
        raise ValueError(
            f"Invalid parameters for {owner}: architecture must be one of {sorted(ARCHITECTURES)}, "
            f"got {params['architecture']!r}."
        )
    encoder = get_architecture(params["architecture"]).resolve({n: params[n] for n in ENCODER_PARAMS})
    problems = validate_encoder_config(encoder)  # a setting the row does not read is not held to its rules
    for name, value in params.items():
        spec = PARAMS.get(name)
        if name not in ENCODER_PARAMS and spec is not None and spec.check is not None and not spec.check(value):
            problems.append(f"{name} must be {spec.what}, got {value!r}")
    if problems:
        raise ValueError(f"Invalid parameters for {owner}: " + "; ".join(problems) + ".")

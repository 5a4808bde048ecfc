"""``options``: the settings that most users leave at their defaults, one nested dict per estimator.

An estimator's signature holds what users tune and grid-search; every other setting is a field of its
``options`` (None: the estimator's defaults), which scikit-learn's tools reach as ``options__<field>``, the way
a ``Pipeline`` reaches ``step__param`` and skorch ``optimizer__lr``: ``get_params()`` lists every field with the
value in effect, ``set_params(options__<field>=v)`` (and so ``GridSearchCV``) sets one without touching the
others. Inside the package the settings are read flat (:func:`settings`). The fields, their defaults and checks
are :data:`eadct.estimators._params.PARAMS`' entries; which estimator has which is set in ``_params``.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._params import PARAMS, REMOVED, RENAMED
from ._warn import warn_user

PREFIX = "options__"


def option_defaults(cls) -> dict:
    """``cls``'s options in effect when ``options`` is None: ``name -> default``, in order."""
    return {n: cls._own_defaults.get(n, PARAMS[n].default) for n in cls._option_names}


def in_effect(options, owner) -> dict:
    """The fields of ``owner`` in effect under ``options`` (None, or a dict naming the fields it changes)."""
    return {**option_defaults(owner), **(options if isinstance(options, dict) else {})}


def check_options(options, owner) -> dict:
    """``options`` as a dict of ``owner``'s fields (a ValueError naming any other key or a non-dict)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(
            f"{owner.__name__}: options must be None or a dict of settings, e.g. options={{'average_epochs': 10}}; "
            f"got {type(options).__name__}."
        )
    unknown = [k for k in options if k not in owner._option_names]
    if unknown:
        hint = "".join(f" {k} was removed (CHANGELOG.md, 'Removed')." for k in unknown if k in REMOVED)
        hint += "".join(f" {k} is now called {RENAMED[k]}." for k in unknown if k in RENAMED)
        raise ValueError(
            f"{owner.__name__}: options has no field {', '.join(map(repr, unknown))}.{hint} Its fields are "
            f"{list(owner._option_names)}."
        )
    return options


def settings(params: dict, owner) -> dict:
    """Every setting in effect, flat: ``params`` (an estimator's ``get_params(deep=False)``) with ``options``
    replaced by its fields, the estimator's defaults filled in."""
    flat = {k: v for k, v in params.items() if k != "options"}
    return {**flat, **option_defaults(owner), **check_options(params.get("options"), owner)}


def deep_options(estimator, owner) -> dict:
    """``options__<field> -> value`` for every field of ``owner`` (the scikit-learn class) in effect in
    ``estimator`` (``get_params(deep=True)``'s nested entries)."""
    fields = in_effect(estimator.options, owner)
    return {PREFIX + k: v for k, v in fields.items() if k in owner._option_names}


def with_options(estimator, owner, params: dict) -> dict:
    """``set_params``'s arguments for ``estimator`` (of the scikit-learn class ``owner``, or delegating to it) with
    its ``options__<field>`` entries folded into a new ``options`` dict (one given by the caller is never changed)."""
    flat, nested = split_nested(owner, params)
    base = flat.get("options", estimator.options)
    base, effect = (base if isinstance(base, dict) else {}), in_effect(base, owner)
    # a field set to the value it has already (``set_params(**get_params())``) leaves ``options`` as it is
    changed = {k: v for k, v in nested.items() if not (type(v) is type(effect.get(k)) and v == effect.get(k))}
    if changed:
        flat["options"] = {**base, **changed}
    return flat


def split_nested(owner, params: dict) -> tuple[dict, dict]:
    """``set_params``'s arguments as (flat parameters, option fields): ``options__<field>`` entries, and old flat
    names of option fields (a FutureWarning each), become fields; ``options`` itself stays flat."""
    flat, nested = {}, {}
    for key, value in params.items():
        if key in REMOVED and key not in owner._get_param_names():
            _removed(owner, key, value)  # a FutureWarning at the value that did nothing (dropped), else a TypeError
            continue
        name = key.removeprefix(PREFIX) if key.startswith(PREFIX) else RENAMED.get(key, key)
        if key.startswith(PREFIX) or (name in owner._option_names and key not in owner._get_param_names()):
            if not key.startswith(PREFIX):
                _warn_moved(key, name, value)
            if name not in owner._option_names:
                check_options({name: value}, owner)
            nested[name] = value
        else:
            flat[key] = value
    return flat, nested


def from_init(owner, params: dict) -> dict:
    """``__init__``'s keyword arguments as stored: removed ones dropped (a FutureWarning at the value that did
    nothing, else a TypeError), option fields passed flat moved into ``options`` (a FutureWarning)."""
    prefixed = [k for k in params if k.startswith(PREFIX)]
    if prefixed:  # options__<field> is set_params' spelling; the constructor takes options={...}
        raise TypeError(f"{owner.__name__}.__init__() got an unexpected keyword argument {prefixed[0]!r}")
    flat, nested = split_nested(owner, {k: v for k, v in params.items() if k not in owner._get_param_names()})
    if flat:
        raise TypeError(f"{owner.__name__}.__init__() got an unexpected keyword argument {next(iter(flat))!r}")
    if nested:
        given = params.get("options")
        if given is not None and not isinstance(given, dict):
            check_options(given, owner)
        both = [k for k in nested if isinstance(given, dict) and k in given and given[k] != nested[k]]
        if both:
            raise TypeError(
                f"{owner.__name__}: {both[0]} is given twice, {nested[both[0]]!r} flat and {given[both[0]]!r} in "
                "options; pass it once, in options."
            )
        params = {k: v for k, v in params.items() if k in owner._get_param_names()}
        params["options"] = {**(given or {}), **nested}
    return params


def _removed(owner, name: str, value) -> None:
    noop = REMOVED[name]
    if is_noop(value, noop):
        warn_user(
            f"{name} was removed from {owner.__name__} (CHANGELOG.md, 'Removed'); {name}={value!r} did nothing and "
            "is ignored. Stop passing it: in the next release it is an error.",
            FutureWarning,
        )
        return
    raise TypeError(
        f"{owner.__name__}: {name} was removed (CHANGELOG.md, 'Removed': it lost its measurement), so {name}="
        f"{value!r} cannot be honoured. Drop it; the estimator now does what {name}={noop!r} did."
    )


def is_noop(value, noop) -> bool:
    """Whether ``value`` is the removed parameter's value that did nothing: the same kind of value (numpy's scalars
    from a parameter grid too), equal to it; never an array."""
    if noop is None:
        return value is None
    if isinstance(noop, bool):
        return isinstance(value, (bool, np.bool_)) and bool(value) is noop
    if isinstance(noop, str):
        return isinstance(value, str) and value == noop
    if isinstance(noop, float):  # 0 for 0.0, as the parameter's check took both
        real = isinstance(value, (numbers.Real, np.number)) and not isinstance(value, (bool, np.bool_))
        return real and not isinstance(value, np.ndarray) and value == noop
    integral = isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))
    return integral and value == noop


def _warn_moved(old: str, name: str, value) -> None:
    warn_user(  # at the user's line, whether from __init__ or set_params (their call depths differ)
        f"{old} is now a field of options: pass options={{{name!r}: {value!r}}} (options__{name} in a parameter "
        "grid). The flat name works for one more release.",
        FutureWarning,
    )


def flatten(params: dict) -> dict:
    """``params`` (an estimator's keyword arguments) with the fields of its ``options`` beside the others, flat:
    the form the benchmark tables' configurations and keys use."""
    flat = {k: v for k, v in params.items() if k != "options"}
    return {**flat, **(params.get("options") or {})}


def nest(owner, flat: dict) -> dict:
    """``owner``'s keyword arguments for the flat settings ``flat`` (:func:`flatten`'s inverse): its option fields
    gathered in ``options``; a name that is neither a parameter nor a field stays, for ``__init__`` to refuse."""
    fields = {k: v for k, v in flat.items() if k in owner._option_names and k not in owner._get_param_names()}
    params = {k: v for k, v in flat.items() if k not in fields}
    return {**params, "options": fields} if fields else params


def set_attribute(estimator, owner, name: str, value) -> bool:
    """``estimator.name = value`` for a name that is no longer a parameter (``HasOptions.__setattr__``): a field of
    ``options`` goes there (a new dict, with a FutureWarning), a removed name is dropped at its value that did
    nothing (a FutureWarning) and refused otherwise (a TypeError). Returns whether ``name`` was such a name."""
    if name.startswith("_") or name.endswith("_"):
        return False
    if name not in REMOVED and name not in owner._option_names and name not in RENAMED:
        return False
    if name in owner._get_param_names():
        return False
    _, nested = split_nested(owner, {name: value})
    if nested:
        options = estimator.__dict__.get("options")
        object.__setattr__(estimator, "options", {**(options if isinstance(options, dict) else {}), **nested})
    return True

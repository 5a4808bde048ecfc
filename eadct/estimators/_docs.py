"""The estimators' numpydoc, generated from the parameter definitions in ``_params``."""

from __future__ import annotations

from ._params import PARAMS

#: The numpydoc "Attributes" entries every fitted estimator has.
FITTED_DOC = """\
    n_channels_ : int
        Channels seen in fit.
    n_features_in_ : int
        Same as ``n_channels_`` (the features of one time step).
    n_timepoints_ : int
        Longest series seen in fit.
    channel_mean_, channel_std_ : ndarray of shape (n_channels,)
        The per-channel standardisation learnt in fit (of the logged values, for logged channels).
    channel_log_scale_ : ndarray of shape (n_channels,)
        Per channel, the scale s of the signed log applied before the standardisation to the channels of wide
        scales (``wide_scale_channels_``); 0 where the channel is not logged.
    wide_scale_channels_ : ndarray of shape (n_channels,), bool
        Per channel, whether ``wide_scales`` found its TRAIN series' scales spread over orders of magnitude
        (logged, and the network reading each series standardised by its own level and spread); all False with
        ``options={"wide_scales": False}``.
    network_ : eadct.networks.SeriesNetwork
    history_ : list of dict
        One record per epoch: stage, epoch, train_loss, threads (torch's CPU threads), valid_loss
        (valid_accuracy), best, time_s. An epoch in which training diverged (its loss or weights became NaN or
        inf, or its loss grew to more than 1000 times the stage's starting loss) is recorded with
        ``diverged=True`` (and ``non_finite=True`` for NaN or inf): its stage stopped there and kept the earlier
        state named in ``kept``, whose outputs on the training series are finite, with a warning; with no such
        state, fit raises a ValueError naming the stage, the epoch, ``lr`` and ``clip_grad_norm``.
    memory_plan_ : dict
        Settings the memory guard changed (``memory_guard="auto"``); empty when none.
    device_ : str
"""


def doc_with_default(name: str, value) -> str:
    """``PARAMS[name]``'s doc text for an estimator whose own default of ``name`` is ``value``."""
    show = lambda v: f'"{v}"' if isinstance(v, str) else repr(v)  # noqa: E731
    return PARAMS[name].doc.replace(f"default={show(PARAMS[name].default)}", f"default={show(value)}", 1)


def parameters_doc(names: tuple[str, ...], **overrides: str) -> str:
    """The numpydoc "Parameters" entries of ``names`` (``overrides``: name -> another doc text)."""
    out = []
    for name in names:
        first, *rest = overrides.get(name, PARAMS[name].doc).split("\n")
        out.append(f"    {name} : {first}\n" + "".join(f"    {line}\n" for line in rest))
    return "".join(out)


def options_doc(names: tuple[str, ...], own: dict, **overrides: str) -> str:
    """The numpydoc text of an estimator's ``options``: what it is, then each of its fields ``names`` with the
    estimator's default (``own``: its defaults where they differ from ``PARAMS``'; ``overrides``: field -> text)."""
    out = [
        "dict or None, default=None\n"
        "    The settings that most users leave at their defaults, as ``{field: value}`` (None: every field at its\n"
        "    default). ``set_params`` and ``GridSearchCV`` reach one field as ``options__<field>`` (e.g.\n"
        '    ``{"options__n_segments": [4, 8]}``) and ``get_params()`` lists each with its value in effect.\n'
        "    The fields:\n"
    ]
    for name in names:
        text = overrides.get(name) or (doc_with_default(name, own[name]) if name in own else PARAMS[name].doc)
        first, *rest = text.split("\n")
        out.append(f"\n    * ``{name}`` : {first}\n" + "".join(f"      {line.strip()}\n" for line in rest))
    return "".join(out).rstrip("\n")

"""The state of an estimator as pickle and :func:`eadct.save` store it: the networks' weights as CPU tensors
(rebuilt on load) and the versions that wrote it."""

from __future__ import annotations

import inspect

import torch

from ..provenance import VERSIONS_KEY, VERSIONS_OF, model_versions, warn_if_other_version
from ._options import is_noop, option_defaults
from ._param import NOT_GIVEN
from ._params import PARAMS, REMOVED, RENAMED


class PicklesWeights:
    """``__getstate__`` / ``__setstate__`` of the estimators (needs ``_build_network`` and ``_network_spec``)."""

    def __getstate__(self):
        state = self.__dict__.copy()
        if "network_" in state:
            # Weight-normed convs cannot be pickled as modules; save weights on CPU instead,
            # so a model fitted on a GPU also loads on a CPU-only machine.
            weights = lambda net: {k: v.detach().cpu() for k, v in net.state_dict().items()}  # noqa: E731
            state["network_"] = weights(self.network_)
            state["networks_"] = [weights(net) for net in self.networks_[1:]]  # the members after the first
        state[VERSIONS_KEY] = model_versions()
        return state

    def __setstate__(self, state):
        state = dict(state)
        versions, source = state.pop(VERSIONS_KEY, None), state.pop(VERSIONS_OF, "This pickled estimator")
        _upgrade_state(state, type(self))
        weights = state.get("network_")
        self.__dict__.update(state)
        if isinstance(weights, dict):
            device = self.device_
            if device.startswith("cuda") and not torch.cuda.is_available():
                device = self.device_ = "cpu"
            members = [weights, *state.get("networks_", [])]
            self.networks_ = []
            for member in members:
                network = self._build_network(**self._network_spec)
                network.load_state_dict(member)
                self.networks_.append(network.to(device).eval())
            self.network_ = self.networks_[0]
        warn_if_other_version(versions, source)


def _upgrade_state(state: dict, cls: type) -> None:
    """States written by earlier versions: old parameter names to new ones, settings that were flat and are now
    fields of ``options`` moved there, removed settings dropped where they did nothing (a ValueError naming them
    otherwise: the model was fitted by something this version no longer has), and the parameters added since at
    the values that do what that version did (``Param.before``, else the default), so that ``get_params``,
    ``clone`` and a refit work on a loaded model and refit it as it was fitted."""
    for old, new in RENAMED.items():
        if old in state:
            state[new] = state.pop(old)
    used = {n: state.pop(n) for n in [n for n in state if n in REMOVED]}
    used = {n: v for n, v in used.items() if not is_noop(v, REMOVED[n])}
    if used:
        given = ", ".join(f"{n}={v!r:.40}" for n, v in used.items())
        raise ValueError(
            f"this {cls.__name__} was fitted with {given}, which eadct no longer has (CHANGELOG.md, 'Removed'); "
            "load it with the eadct version that saved it"
        )
    flat_fields = [n for n in cls._option_names if n in state]
    if "options" in state and flat_fields:  # no version writes both: every field must pass the same check
        raise ValueError(f"it holds {flat_fields[0]} both flat and as a field of options, which no eadct writes")
    if "options" not in state:  # written before options: its fields were flat, or did not exist yet
        own = option_defaults(cls)
        fields = {n: state.pop(n) for n in cls._option_names if n in state}
        for name in cls._option_names:
            if name not in fields and name in PARAMS and PARAMS[name].before is not NOT_GIVEN:
                fields[name] = PARAMS[name].before
        changed = {n: v for n, v in fields.items() if not (type(v) is type(own[n]) and v == own[n])}
        state["options"] = changed or None
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if name != "self" and name not in state:
            before = PARAMS[name].before if name in PARAMS else NOT_GIVEN
            state[name] = parameter.default if before is NOT_GIVEN else before
    if "_network_args" in state:
        n_channels, max_len, n_outputs, plan = state.pop("_network_args")
        state["_network_spec"] = dict(n_channels=n_channels, max_len=max_len, n_outputs=n_outputs, plan=plan)
    for plan in (state.get("memory_plan_"), state.get("_network_spec", {}).get("plan")):
        for old, new in RENAMED.items():
            if plan and old in plan:
                plan[new] = plan.pop(old)

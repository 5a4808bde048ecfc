"""The registry of poolings: how a series' step representations ``(B, N, d)`` become one vector per series, the
task head's input (docs/model.md, "Representation").

A :class:`Pooling` says how to pool (``apply``; ``build``, for a pooling with weights of its own), how wide the
result is and which settings it reads. The estimators and :class:`~eadct.networks.SeriesNetwork` only look names up
here. To add a pooling: its code and one :func:`register_pooling` call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import torch
from torch import nn

#: Consecutive parts of a series that ``pooling="segments"`` averages separately, unless told otherwise (the
#: estimators' ``n_segments``).
N_SEGMENTS = 4


@dataclass(frozen=True)
class Pooling:
    """One pooling of step representations.

    Parameters
    ----------
    name : str
        The estimators' ``pooling`` value.
    apply : callable
        ``apply(h, valid, *, n_steps, n_segments, module) -> (B, width)`` for step representations ``h``
        ``(B, N, d)`` and ``valid`` ``(B, N)`` (None: every step real); ``n_steps`` is the series length the head
        was built for (the longest training series), ``module`` what ``build`` made (None without ``build``). It
        takes the keywords it reads and ``**_`` for the others.
    width : callable
        ``(d, max_len, n_segments) -> int``: the width of ``apply``'s output for steps of width ``d``, with
        ``max_len`` the longest training series (None where unknown).
    uses : frozenset of str
        The estimator settings it reads besides ``pooling`` (``frozenset({"n_segments"})`` for ``"segments"``).
    description : str
        One line for the docs.
    build : callable or None
        ``(d, max_len, n_segments) -> nn.Module``: the pooling's weights, which :class:`SeriesNetwork` holds as
        ``pooler`` and trains with the encoder; None (every pooling registered here): no weights.
    """

    name: str
    apply: Callable[..., torch.Tensor]
    width: Callable[[int, int | None, int], int]
    uses: frozenset = frozenset()
    description: str = ""
    build: Callable[[int, int | None, int], nn.Module] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "uses", frozenset(self.uses))


_REGISTRY: dict[str, Pooling] = {}
#: The registered poolings, ``name -> Pooling`` (read-only; :func:`register_pooling` adds one).
POOLINGS = MappingProxyType(_REGISTRY)


def register_pooling(pooling: Pooling) -> Pooling:
    """Add ``pooling`` to the registry (a name can be registered once)."""
    if pooling.name in _REGISTRY:
        raise ValueError(f"pooling {pooling.name!r} is registered already")
    _REGISTRY[pooling.name] = pooling
    return pooling


def get_pooling(name: str) -> Pooling:
    """The registered pooling ``name``; a ValueError lists the registered names otherwise."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"pooling must be one of {list(_REGISTRY)}, got {name!r}") from None


def pooled_width(pooling: str, width: int, max_len: int | None = None, n_segments: int = N_SEGMENTS) -> int:
    """Width of :func:`pool_steps`' output for step representations of width ``width``."""
    return get_pooling(pooling).width(width, max_len, n_segments)


def pool_steps(
    h: torch.Tensor,
    valid: torch.Tensor | None,
    pooling: str = "mean",
    n_steps: int | None = None,
    n_segments: int = N_SEGMENTS,
    module: nn.Module | None = None,
) -> torch.Tensor:
    """Pool ``(B, N, d)`` over valid steps into one vector per series, ``(B, pooled_width(...))``, as the registered
    ``pooling`` does (``module``: the weights its ``build`` made, for a pooling that has them)."""
    return get_pooling(pooling).apply(h, valid, n_steps=n_steps, n_segments=n_segments, module=module)


def _mean(h: torch.Tensor, valid: torch.Tensor | None, **_) -> torch.Tensor:
    if valid is None:
        return h.mean(dim=1)
    counts = valid.sum(dim=1, keepdim=True).clamp_min(1).to(h.dtype)  # (B, 1)
    return (h * valid.unsqueeze(-1)).sum(dim=1) / counts


def _max(h: torch.Tensor, valid: torch.Tensor | None, **_) -> torch.Tensor:
    if valid is None:
        return h.amax(dim=1)
    return h.masked_fill(~valid.unsqueeze(-1), float("-inf")).amax(dim=1)


def part_membership(h: torch.Tensor, valid: torch.Tensor | None, n_parts: int) -> torch.Tensor:
    """``(B, N, n_parts)`` one-hot: which of ``n_parts`` consecutive equal parts of its series' valid steps each
    step falls in (step ``t`` of a series of length ``L``: part ``t * n_parts // L``; steps past ``L`` in none)."""
    n = h.shape[1]
    lengths = valid.sum(dim=1) if valid is not None else torch.full((h.shape[0],), n, device=h.device)
    steps = torch.arange(n, device=h.device)
    part = (steps.unsqueeze(0) * n_parts) // lengths.clamp_min(1).unsqueeze(1)  # (B, N), valid steps 0..S-1
    return torch.nn.functional.one_hot(part.clamp_max(n_parts), n_parts + 1)[..., :n_parts]


def part_means(h: torch.Tensor, valid: torch.Tensor | None, n_parts: int) -> torch.Tensor:
    """``(B, N, d)`` -> the means of ``n_parts`` consecutive equal parts of each series' valid steps, part by
    part: ``(B, n_parts * d)`` (:func:`part_membership`)."""
    weights = part_membership(h, valid, n_parts).to(h.dtype)  # (B, N, S)
    counts = weights.sum(dim=1).clamp_min(1)  # (B, S); a series shorter than S leaves some empty
    parts = torch.einsum("bns,bnd->bsd", weights, h) / counts.unsqueeze(-1)
    return parts.reshape(h.shape[0], -1)


def _segments(h: torch.Tensor, valid: torch.Tensor | None, *, n_segments: int, **_) -> torch.Tensor:
    """The mean over each series' valid steps, then the means over ``n_segments`` consecutive equal parts of them
    (relative to the series' own length, so unequal lengths work): ``(B, (n_segments + 1) * d)``."""
    return torch.cat([_mean(h, valid), part_means(h, valid, n_segments)], dim=1)


def _flatten(h: torch.Tensor, valid: torch.Tensor | None, *, n_steps: int | None, **_) -> torch.Tensor:
    """The steps with padded ones zeroed, right-padded with zeros to ``n_steps`` (or the first ``n_steps`` steps of
    a longer series), concatenated: ``(B, n_steps * d)``."""
    if n_steps is None:
        raise ValueError("pooling='flatten' needs n_steps, the series length the head was built for")
    if h.shape[1] > n_steps:
        h, valid = h[:, :n_steps], None if valid is None else valid[:, :n_steps]
    if valid is not None:
        h = h * valid.unsqueeze(-1).to(h.dtype)
    if h.shape[1] < n_steps:
        h = torch.nn.functional.pad(h, (0, 0, 0, n_steps - h.shape[1]))
    return h.reshape(h.shape[0], -1)


def _flatten_width(d: int, max_len: int | None, n_segments: int) -> int:
    if max_len is None:
        raise ValueError("pooling='flatten' needs n_steps, the series length the head was built for")
    return max_len * d


for _pooling in (
    Pooling("mean", _mean, lambda d, max_len, n_segments: d, description="the mean over each series' valid steps"),
    Pooling("max", _max, lambda d, max_len, n_segments: d, description="the maximum over each series' valid steps"),
    Pooling(
        "segments",
        _segments,
        lambda d, max_len, n_segments: (n_segments + 1) * d,
        uses={"n_segments"},
        description="the mean, then the means of n_segments consecutive equal parts of each series",
    ),
    Pooling(
        "flatten",
        _flatten,
        _flatten_width,
        description="TST's head input: the steps of the longest training series, concatenated (shorter zero-padded)",
    ),
):
    register_pooling(_pooling)

"""The EA-DC-Transformer encoder: input stem plus 2 * n_blocks EA-DC layers."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .attention import EvolvingAttention
from .config import EncoderConfig
from .dilated_conv import DilatedConvBranch
from .embedding import InputEmbedding
from .norm import make_norm


class EADCTLayer(nn.Module):
    """One EA-DC layer: evolving attention (width ``p d``) beside a dilated causal conv
    (width ``(1 - p) d``), concatenated, then TST-style post-norm residual and FFN.

    Parameters
    ----------
    config : EncoderConfig
    layer_index : int
        0-based index i - 1 in the chain; layer 0 seeds the attention chain.
    dilation : int
        Dilation of the conv branch (``2 ** block``).
    """

    def __init__(self, config: EncoderConfig, layer_index: int, dilation: int):
        super().__init__()
        d = config.d_model
        self.attention = (
            EvolvingAttention(
                d,
                config.d_attention,
                config.n_heads,
                alpha=config.alpha,
                beta=config.beta,
                kernel_size=config.attention_kernel_size,
                dropout=config.dropout,
                evolve=layer_index > 0,
                recompute=config.recompute_attention,
                downsample=config.attention_downsample,
                fast_plain=config.fast_plain_attention,
                relative_positions=math.ceil(config.max_len / config.attention_downsample)
                if config.relative_positions
                else 0,
            )
            if config.d_attention > 0
            else None
        )
        self.conv = (
            DilatedConvBranch(d, config.d_conv, config.conv_kernel_size, dilation, config.conv_causal)
            if config.d_conv > 0
            else None
        )
        self.norm1 = make_norm(config.norm, d)
        self.norm2 = make_norm(config.norm, d)
        self.ff1 = nn.Linear(d, config.d_ff)
        self.ff2 = nn.Linear(config.d_ff, d)
        self.dropout1 = nn.Dropout(config.dropout)
        self.dropout2 = nn.Dropout(config.dropout)
        # stochastic depth: this layer's residual branches dropped per series, linearly more deeply (0 at layer 0)
        self.drop_path = config.drop_path * layer_index / max(1, config.n_layers - 1)

    def forward(
        self,
        x: torch.Tensor,
        previous_logits: torch.Tensor | None,
        valid: torch.Tensor | None,
        need_logits: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(B, N, d)`` -> ``(B, N, d)`` and this layer's logits ``(B, K, N, N)`` (None if p = 0, or
        when ``need_logits`` is False and the layer took the fused fast path)."""
        parts, logits = [], None
        if self.attention is not None:
            h, logits = self.attention(x, previous_logits, valid, need_logits)
            parts.append(h)
        if self.conv is not None:
            parts.append(self.conv(x, valid))
        r = torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0]  # (B, N, d)
        x = self.norm1(x + self._drop_path(self.dropout1(r)), valid)
        x = self.norm2(x + self._drop_path(self.dropout2(self.ff2(F.relu(self.ff1(x))))), valid)
        if valid is not None:
            x = x * valid.unsqueeze(-1)
        return x, logits

    def _drop_path(self, branch: torch.Tensor) -> torch.Tensor:
        """``branch`` ``(B, N, d)`` zeroed for each series with probability ``self.drop_path`` in training and divided
        by the probability of keeping it otherwise (the identity in eval mode, or at 0)."""
        rate = getattr(self, "drop_path", 0.0)  # a network pickled before stochastic depth has none
        if not self.training or rate == 0.0:
            return branch
        keep = torch.rand(branch.shape[0], 1, 1, device=branch.device) >= rate
        return branch * keep.to(branch.dtype) / (1.0 - rate)


class EADCTEncoder(nn.Module):
    """Input stem plus ``2 * n_blocks`` :class:`EADCTLayer`; one logit chain runs through all.

    Parameters
    ----------
    config : EncoderConfig

    Examples
    --------
    >>> import torch
    >>> from eadct.networks import EADCTEncoder, EncoderConfig
    >>> enc = EADCTEncoder(EncoderConfig(n_channels=3, max_len=20, d_model=16, n_heads=2))
    >>> enc(torch.randn(4, 20, 3)).shape
    torch.Size([4, 20, 16])
    """

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        self.embedding = InputEmbedding(
            config.n_channels,
            config.d_model,
            config.max_len,
            config.dropout,
            config.input_differences,
            config.series_normalization,
            config.stem_kernel_size,
            config.positional_encoding,
        )
        per_layer = getattr(config, "dilation_per_layer", False)
        self.layers = nn.ModuleList(
            EADCTLayer(config, i, dilation=2 ** (i if per_layer else i // 2)) for i in range(config.n_layers)
        )

    @property
    def d_model(self) -> int:
        return self.config.d_model

    def forward(
        self,
        x: torch.Tensor,
        valid: torch.Tensor | None = None,
        return_logits: bool = False,
    ):
        """Encode ``x`` ``(B, N, C)`` into ``(B, N, d)``; padded steps are zero.

        With ``return_logits=True`` also return the list of each layer's ``A_logit``
        ``(B, K, N, N)`` (None entries when ``attention_ratio == 0``).
        """
        # A layer must hand its logits on only when the next one evolves them (or they are returned).
        layers = list(self.layers)
        wanted = [return_logits or (nxt.attention is not None and nxt.attention.uses_previous) for nxt in layers[1:]]
        wanted.append(return_logits)
        chain = []  # holds the maps only when they are returned (else each is freed after the next layer)
        for h, logits in self._run(x, valid, wanted):  # noqa: B007 (h: the last layer's output)
            if return_logits:
                chain.append(logits)
        return (h, chain) if return_logits else h

    def layer_outputs(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> list[torch.Tensor]:
        """Each layer's output ``(B, N, d)``, first to last (the last is :meth:`forward`'s)."""
        layers = list(self.layers)
        wanted = [nxt.attention is not None and nxt.attention.uses_previous for nxt in layers[1:]] + [False]
        return [h for h, _ in self._run(x, valid, wanted)]

    def attention_logits(self, x: torch.Tensor, valid: torch.Tensor | None = None):
        """Yield each layer's ``A_logit`` ``(B, K, M, M)`` in turn (None for a layer without attention): the
        logits the layer hands to the next one (Eq. 1), before the key-padding mask and the softmax.

        A generator, so that a caller keeping only some layers holds at most two layers' maps at a time.
        """
        for _, logits in self._run(x, valid, [True] * len(self.layers)):
            yield logits

    def _run(self, x, valid, wanted):
        """Yield ``(h, logits)`` after each layer; layer i returns its logits when ``wanted[i]``."""
        h = self.embedding(x, valid)
        logits = None
        for layer, need in zip(self.layers, wanted, strict=True):
            h, logits = layer(h, logits, valid, need)
            yield h, logits


#: Poolings of the step representations into one vector per series (the head's input).
POOLINGS = ("mean", "max", "mean-max", "segments", "segments-max", "segments-std", "segments-attention", "flatten")
#: Poolings with weights of their own (:class:`SegmentAttentionPooling`); the others are functions of the steps.
LEARNED_POOLINGS = ("segments-attention",)
#: Consecutive parts of a series that ``pooling="segments"`` (and its variants) averages separately,
#: unless told otherwise (the estimators' ``n_segments``).
N_SEGMENTS = 4


def pooled_width(how: str, d: int, n_steps: int | None = None, n_segments: int = N_SEGMENTS) -> int:
    """Width of :func:`pool_steps`' output for step representations of width ``d``."""
    if how not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {how!r}")
    factor = {"mean": 1, "max": 1, "mean-max": 2, "segments": n_segments + 1, "segments-max": n_segments + 2,
              "segments-std": n_segments + 2, "segments-attention": n_segments + 1}.get(how)  # fmt: skip
    if factor is None:  # flatten
        if n_steps is None:
            raise ValueError("pooling='flatten' needs n_steps, the series length the head was built for")
        factor = n_steps
    return factor * d


def _mean(h: torch.Tensor, valid: torch.Tensor | None) -> torch.Tensor:
    if valid is None:
        return h.mean(dim=1)
    counts = valid.sum(dim=1, keepdim=True).clamp_min(1).to(h.dtype)  # (B, 1)
    return (h * valid.unsqueeze(-1)).sum(dim=1) / counts


def _max(h: torch.Tensor, valid: torch.Tensor | None) -> torch.Tensor:
    if valid is None:
        return h.amax(dim=1)
    return h.masked_fill(~valid.unsqueeze(-1), float("-inf")).amax(dim=1)


#: Added to each variance before the root in ``pooling="segments-std"``: a feature constant over a series (or a
#: series of one step) gets ``sqrt(STD_EPS)`` and a finite gradient instead of the root's infinite slope at 0.
STD_EPS = 1e-5


def _std(h: torch.Tensor, valid: torch.Tensor | None) -> torch.Tensor:
    """Each feature's standard deviation over a series' valid steps (population form), ``(B, d)``."""
    centred = h - _mean(h, valid).unsqueeze(1)
    return torch.sqrt(_mean(centred * centred, valid) + STD_EPS)


def _segments(h: torch.Tensor, valid: torch.Tensor | None, n_segments: int) -> torch.Tensor:
    """Means over ``n_segments`` consecutive equal parts of each series' valid steps (relative to its own
    length, so unequal lengths work), after the mean over all of them: ``(B, (n_segments + 1) * d)``."""
    return torch.cat([_mean(h, valid), part_means(h, valid, n_segments)], dim=1)


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


class SegmentAttentionPooling(nn.Module):
    """``pooling="segments-attention"``: the layout of ``"segments"`` (the whole series, then ``n_segments``
    consecutive equal parts of its valid steps), each slot an attention-weighted mean of its steps instead of the
    plain mean. Slot ``j`` has a learned query ``q_j`` (width d); its steps weigh ``softmax(h_t . q_j / sqrt(d))``
    over the steps in the slot. The queries start at zero, where every weight is equal and the output is exactly
    ``"segments"``; training moves them towards the steps that tell the targets apart (attention pooling, the
    issue's candidate, with the coarse temporal layout kept). A slot with no step (a series shorter than
    ``n_segments``) gives zeros, as ``"segments"`` does."""

    def __init__(self, d_model: int, n_segments: int = N_SEGMENTS):
        super().__init__()
        self.n_segments = n_segments
        self.queries = nn.Parameter(torch.zeros(n_segments + 1, d_model))

    def forward(self, h: torch.Tensor, valid: torch.Tensor | None) -> torch.Tensor:
        """``(B, N, d)`` -> ``(B, (n_segments + 1) d)``."""
        real = torch.ones(h.shape[:2], dtype=torch.bool, device=h.device) if valid is None else valid
        parts = part_membership(h, valid, self.n_segments).bool() & real.unsqueeze(-1)  # (B, N, S)
        member = torch.cat([real.unsqueeze(-1), parts], dim=-1)  # (B, N, S + 1)
        scores = torch.einsum("bnd,sd->bns", h, self.queries.to(h.dtype)) / math.sqrt(h.shape[-1])
        scores = scores.masked_fill(~member, float("-inf"))
        top = scores.amax(dim=1, keepdim=True)
        top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))  # an empty slot: all weights 0
        weights = torch.exp(scores - top) * member
        weights = weights / weights.sum(dim=1, keepdim=True).clamp_min(torch.finfo(h.dtype).tiny)
        return torch.einsum("bns,bnd->bsd", weights, h).reshape(h.shape[0], -1)


def pool_steps(
    h: torch.Tensor,
    valid: torch.Tensor | None,
    how: str = "mean",
    n_steps: int | None = None,
    n_segments: int = N_SEGMENTS,
    pooler: nn.Module | None = None,
) -> torch.Tensor:
    """Pool ``(B, N, d)`` over valid steps into one vector per series.

    ``"mean"``, ``"max"``: ``(B, d)``; ``"mean-max"``: both, ``(B, 2d)``; ``"segments"``: the mean, then the
    means over ``n_segments`` consecutive equal parts of each series (the coarse temporal layout that
    flattening keeps, for any length), ``(B, (n_segments + 1) d)``; ``"segments-max"``: the mean, the max,
    then the same part means, ``(B, (n_segments + 2) d)``; ``"segments-std"``: the mean, the standard deviation
    over the valid steps (statistics pooling), then the part means, ``(B, (n_segments + 2) d)``;
    ``"segments-attention"``: the layout of ``"segments"``
    with attention-weighted means, computed by ``pooler`` (a :class:`SegmentAttentionPooling`, which holds the
    learned queries). ``"flatten"`` (TST's head input) zeroes
    the padded steps, right-pads with zeros to ``n_steps`` (or keeps the first ``n_steps`` steps of longer
    series) and returns ``(B, n_steps * d)``.
    """
    if how == "mean":
        return _mean(h, valid)
    if how == "max":
        return _max(h, valid)
    if how == "mean-max":
        return torch.cat([_mean(h, valid), _max(h, valid)], dim=1)
    if how == "segments":
        return _segments(h, valid, n_segments)
    if how == "segments-max":
        return torch.cat([_mean(h, valid), _max(h, valid), part_means(h, valid, n_segments)], dim=1)
    if how == "segments-std":
        return torch.cat([_mean(h, valid), _std(h, valid), part_means(h, valid, n_segments)], dim=1)
    if how in LEARNED_POOLINGS:
        if pooler is None:
            raise ValueError(f"pooling={how!r} has learned weights: pass its module as pooler")
        return pooler(h, valid)
    if how == "flatten":
        if n_steps is None:
            raise ValueError("pooling='flatten' needs n_steps, the series length the head was built for")
        if h.shape[1] > n_steps:
            h, valid = h[:, :n_steps], None if valid is None else valid[:, :n_steps]
        if valid is not None:
            h = h * valid.unsqueeze(-1).to(h.dtype)
        if h.shape[1] < n_steps:
            h = torch.nn.functional.pad(h, (0, 0, 0, n_steps - h.shape[1]))
        return h.reshape(h.shape[0], -1)
    raise ValueError(f"pooling must be one of {POOLINGS}, got {how!r}")

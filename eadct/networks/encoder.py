"""The EA-DC-Transformer encoder: input stem plus 2 * n_blocks EA-DC layers."""

from __future__ import annotations

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
        Dilation of the conv branch (``2 ** block``; ``2 ** layer_index`` with ``dilation_per_layer``).
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
            )
            if config.d_attention > 0
            else None
        )
        self.conv = (
            DilatedConvBranch(d, config.d_conv, config.conv_kernel_size, dilation) if config.d_conv > 0 else None
        )
        self.norm1 = make_norm(config.norm, d)
        self.norm2 = make_norm(config.norm, d)
        self.ff1 = nn.Linear(d, config.d_ff)
        self.ff2 = nn.Linear(config.d_ff, d)
        self.dropout1 = nn.Dropout(config.dropout)
        self.dropout2 = nn.Dropout(config.dropout)

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
            parts.append(self.conv(x))
        r = torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0]  # (B, N, d)
        x = self.norm1(x + self.dropout1(r), valid)
        x = self.norm2(x + self.dropout2(self.ff2(F.relu(self.ff1(x)))), valid)
        if valid is not None:
            x = x * valid.unsqueeze(-1)
        return x, logits


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

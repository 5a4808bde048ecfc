"""Looking inside a fitted estimator: its attention maps and the representation its task head reads.

The paper argues with pictures of both (Figs. 4 and 5); :mod:`eadct.plotting` draws them from these methods.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from sklearn.utils.validation import check_is_fitted

from ..networks import INFERENCE_HEADROOM, available_memory_bytes, get_architecture
from ..runtime import TorchThreads
from ._warn import warn_user

#: What :meth:`InspectsNetwork.attention_maps` returns: the softmax weights, or the logits passed on (Eq. 1).
MAP_KINDS = ("weights", "logits")
_ATTENTION_ROWS = sorted(("transformer", "dc-transformer", "ea-dc-transformer"))


class InspectsNetwork:
    """``attention_maps`` and ``transform`` of the fitted network (mixed into every estimator)."""

    def transform(self, X):
        """The fitted representation of each series: the input of the task head.

        Same inputs as ``predict``. One vector per series of width ``d_model`` for ``pooling="mean"`` or
        ``"max"``, ``2 * d_model`` for ``"mean-max"``, ``(n_segments + 1) * d_model`` for ``"segments"`` (the
        mean, then the means of ``n_segments`` consecutive parts) and ``"segments-attention"`` (the same slots,
        attention-weighted), ``(n_segments + 2) * d_model`` for ``"segments-max"`` and ``"segments-std"`` (the
        max or the standard deviation after the mean) and ``n_timepoints_ * d_model`` for ``"flatten"``; for the ResNet
        row ``d_model`` reads 128. With ``n_estimators > 1`` it is the first member's (``network_``):
        members' representations live in different spaces and are not averaged.

        Returns
        -------
        ndarray of shape (n_samples, width)
        """
        return self._forward(X, method="represent")

    def attention_maps(self, X, kind: str = "weights", layers=None) -> list[np.ndarray]:
        """Attention maps of the fitted encoder for each series of X, layer by layer (paper Fig. 5).

        X takes the same forms as ``predict`` (array, list of unequal-length series, nested DataFrame) and
        goes through the fitted preprocessing (missing-value handling, channel standardisation). Each
        series runs alone, so its maps cover its own steps only (no padding), and memory grows with the
        longest series, not with the number of series.

        Parameters
        ----------
        X : array-like, list of (n_channels, length_i) arrays, or nested DataFrame
        kind : {"weights", "logits"}, default="weights"
            ``"weights"``: the softmax attention weights (each row sums to 1 over the keys).
            ``"logits"``: ``A_logit`` of Eq. 1, the evolved logits each layer hands to the next one
            (layer 1's are the scaled scores ``q k^T / sqrt(d_head)``).
        layers : int, sequence of int or None, default=None
            0-based layer indices to return (all ``2 * n_blocks`` layers when None). Fewer layers, less
            memory.

        Returns
        -------
        list of ndarray
            One float32 array per series, of shape ``(n_layers, n_heads, M, M)`` (``n_layers`` = the number
            of layers asked for, in the order asked): ``maps[i][l]`` is layer l's ``(heads, M, M)`` map of
            series i, rows the queries, columns the keys. ``M`` is the series' length, or
            ``ceil(length / attention_downsample)`` when the encoder pools consecutive steps into tokens
            before attention (then a warning says so). With ``n_estimators > 1`` they are the first
            member's (``network_``).

        Raises
        ------
        ValueError
            For an architecture without attention (``lstm``, ``gru``, ``resnet``, ``dilated-conv`` or
            ``attention_ratio=0``), an unknown ``kind`` or layer, or maps that do not fit in memory.
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        """
        check_is_fitted(self, "network_")
        if kind not in MAP_KINDS:
            raise ValueError(f"kind must be one of {MAP_KINDS}, got {kind!r}.")
        encoder = self.network_.encoder
        config = self._attention_config(encoder)
        chosen = _chosen_layers(layers, config.n_layers)
        panel = self._panel(X, fitting=False)
        r = config.attention_downsample
        tokens = [math.ceil(int(n) / r) for n in panel.lengths]
        if r > 1:
            _warn_pooled_tokens(type(self).__name__, r)
        device = torch.device(self.device_)
        self._check_map_memory(tokens, len(chosen), config.n_heads, device)
        values = self._standardize(panel)
        was_training = encoder.training
        encoder.eval()
        try:
            with torch.no_grad(), TorchThreads(getattr(self, "n_jobs", None)):
                return [
                    self._series_maps(encoder, values[i, :n], chosen, kind, device) for i, n in enumerate(panel.lengths)
                ]
        finally:
            encoder.train(was_training)

    def _attention_config(self, encoder):
        """The encoder's configuration; a ValueError when it has no attention maps."""
        config = getattr(encoder, "config", None)
        if not get_architecture(self.architecture).attention or config is None or config.d_attention == 0:
            raise ValueError(
                f"{type(self).__name__}(architecture={self.architecture!r}, attention_ratio="
                f"{self.attention_ratio}) has no attention maps. Maps exist for the architectures "
                f"{_ATTENTION_ROWS} with attention_ratio > 0."
            )
        return config

    def _check_map_memory(self, tokens: list[int], n_layers: int, n_heads: int, device) -> None:
        """A ValueError, naming the fixes, when the maps asked for do not fit in memory."""
        per_map = 4 * n_heads  # float32 bytes per (query, key) pair of one layer, all heads
        returned = sum(n_layers * per_map * m * m for m in tokens)  # host memory of the result
        working = (n_layers + 3) * per_map * max(tokens) ** 2  # one series: kept layers, chain, softmax
        free = available_memory_bytes("cpu")
        if device.type == "cuda":
            free = min(free, available_memory_bytes(device))
        need = max(returned, working)
        if need > INFERENCE_HEADROOM * free:
            raise ValueError(
                f"The attention maps asked for need about {need / 2**30:.1f} GiB ({len(tokens)} series, up to "
                f"{max(tokens)} tokens, {n_layers} layers of {n_heads} heads), more than half of the "
                f"{free / 2**30:.1f} GiB free. Ask for fewer layers (layers=[0, 1]), fewer or shorter series "
                "(X[:k], or a crop), or fit with a larger attention_downsample."
            )

    @staticmethod
    def _series_maps(encoder, values: np.ndarray, chosen: list[int], kind: str, device) -> np.ndarray:
        """``(len(chosen), K, M, M)`` maps of one series ``(length, C)``."""
        x = torch.from_numpy(np.ascontiguousarray(values)).unsqueeze(0).to(device)
        kept = {}
        for index, logits in enumerate(encoder.attention_logits(x)):
            if index in chosen:
                maps = logits[0].float()
                kept[index] = (torch.softmax(maps, dim=-1) if kind == "weights" else maps).cpu().numpy()
            if len(kept) == len(set(chosen)):
                break  # later layers are not needed
        return np.stack([kept[i] for i in chosen])


def _warn_pooled_tokens(owner: str, r: int) -> None:
    warn_user(
        f"{owner} was fitted with attention_downsample={r}: the maps are over tokens that each average {r} "
        f"consecutive steps (a series of length L gives ceil(L / {r}) x ceil(L / {r}) maps). Fit with "
        "attention_downsample=1 for maps over single steps.",
    )


def _chosen_layers(layers, n_layers: int) -> list[int]:
    """``layers`` as a list of valid 0-based indices (negative ones count from the end)."""
    if layers is None:
        return list(range(n_layers))
    requested = [layers] if isinstance(layers, (int, np.integer)) else list(layers)
    chosen = []
    for layer in requested:
        if not isinstance(layer, (int, np.integer)) or isinstance(layer, bool) or not -n_layers <= layer < n_layers:
            raise ValueError(
                f"layers must be indices in [0, {n_layers}) (the encoder has {n_layers} layers), got {layers!r}."
            )
        chosen.append(int(layer) % n_layers)
    if not chosen:
        raise ValueError("layers is empty; pass None for all layers.")
    return chosen

"""Configuration of the EA-DC-Transformer encoder."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class EncoderConfig:
    """Hyperparameters of :class:`~eadct.networks.EADCTEncoder`.

    Parameters
    ----------
    n_channels : int
        Input channels C.
    max_len : int
        Length of the learnable positional table. Longer inputs reuse the last
        position's embedding (see :class:`InputEmbedding`).
    d_model : int
        Model width d.
    n_heads : int
        Attention heads K.
    n_blocks : int
        Blocks actually built; each block holds 2 EA-DC layers, so L = 2 * n_blocks.
    attention_ratio : float
        Share p of ``d_model`` given to the attention branch; ``1 - p`` goes to the
        dilated causal convolution branch. ``p * d_model`` must be a whole number
        divisible by ``n_heads`` (when ``p > 0``).
    alpha : float
        Paper's alpha: weight of the previous layer's attention logits in the
        input of the map convolution.
    beta : float
        Paper's beta: weight of the ReLU(Conv2d) path in the evolved logits.
    attention_kernel_size : int
        Kernel of the 2D convolution over the attention maps (odd: 1, 3, 5, ...).
    conv_kernel_size : int
        Kernel of the dilated causal convolutions.
    d_ff : int
        Hidden width of the position-wise feed-forward network.
    dropout : float
        Dropout of the embedding, the residual paths and the attention weights.
    norm : str
        ``"batch"`` (BatchNorm over valid steps, as TST) or ``"layer"``.
    checkpoint_attention : bool or "auto"
        Run the attention-map path in blocks of query rows and recompute it block by block in backward
        instead of storing its (B, K, N, N) tensors (True); store them (False); or block where a layer's
        maps hold at least ``AUTO_BLOCKED_ELEMENTS`` values on CPU, where blocking measured both faster and
        leaner ("auto"; on CUDA, and on CPU where the process keeps freed memory, "auto" stores the maps).
    attention_downsample : int
        Average-pool the tokens by this factor before attention (maps of (N / r)^2), repeat the
        result back to N steps after; 1 = off. The conv branch always runs at full length.
    fast_plain_attention : bool
        Use torch's fused ``scaled_dot_product_attention`` in layers that neither evolve a map nor
        pass one on (the DC-Transformer, TST); same results within float tolerance.
    """

    n_channels: int
    max_len: int
    d_model: int = 64
    n_heads: int = 8
    n_blocks: int = 2
    attention_ratio: float = 0.25
    alpha: float = 0.5
    beta: float = 0.3
    attention_kernel_size: int = 3
    conv_kernel_size: int = 3
    d_ff: int = 256
    dropout: float = 0.1
    norm: str = "batch"
    checkpoint_attention: bool | str = "auto"
    attention_downsample: int = 1
    fast_plain_attention: bool = True

    def __post_init__(self) -> None:
        problems = validate_encoder_config(asdict(self))
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def d_attention(self) -> int:
        """Width ``p * d`` of the attention branch."""
        return round(self.attention_ratio * self.d_model)

    @property
    def d_conv(self) -> int:
        """Width ``(1 - p) * d`` of the dilated convolution branch."""
        return self.d_model - self.d_attention

    @property
    def n_layers(self) -> int:
        """Number of EA-DC layers L = 2 * n_blocks."""
        return 2 * self.n_blocks

    def to_dict(self) -> dict:
        """Plain dict, for saving next to a state dict."""
        return asdict(self)


def validate_encoder_config(cfg: dict) -> list[str]:
    """Return human-readable problems with encoder settings (empty when valid).

    Kept separate from the dataclass so estimators can report every problem at
    once, with the estimator's parameter names.
    """
    problems = []
    d, k, p = cfg["d_model"], cfg["n_heads"], cfg["attention_ratio"]
    if not isinstance(d, int) or d < 1:
        problems.append(f"d_model must be a positive int, got {d!r}")
    if not isinstance(k, int) or k < 1:
        problems.append(f"n_heads must be a positive int, got {k!r}")
    if not isinstance(cfg["n_blocks"], int) or cfg["n_blocks"] < 1:
        problems.append(f"n_blocks must be a positive int, got {cfg['n_blocks']!r}")
    for name in ("alpha", "beta", "attention_ratio"):
        v = cfg[name]
        if not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            problems.append(f"{name} must be a number in [0, 1], got {v!r}")
    if not 0.0 <= cfg["dropout"] < 1.0:
        problems.append(f"dropout must be in [0, 1), got {cfg['dropout']!r}")
    ks = cfg["attention_kernel_size"]
    if not isinstance(ks, int) or ks < 1 or ks % 2 == 0:
        problems.append(f"attention_kernel_size must be a positive odd int (1, 3, 5), got {ks!r}")
    ds = cfg.get("attention_downsample", 1)
    if not isinstance(ds, int) or isinstance(ds, bool) or ds < 1:
        problems.append(f"attention_downsample must be an int >= 1, got {ds!r}")
    ckpt = cfg.get("checkpoint_attention", "auto")
    if not (isinstance(ckpt, bool) or ckpt == "auto"):
        problems.append(f"checkpoint_attention must be True, False or 'auto', got {ckpt!r}")
    if cfg["norm"] not in ("batch", "layer"):
        problems.append(f"norm must be 'batch' or 'layer', got {cfg['norm']!r}")
    if problems:
        return problems
    width = p * d
    if abs(width - round(width)) > 1e-9:
        problems.append(
            f"attention_ratio * d_model = {p} * {d} = {width:g} is not a whole number; "
            "choose attention_ratio as a multiple of 1/d_model"
        )
    elif round(width) > 0 and round(width) % k != 0:
        problems.append(
            f"attention_ratio * d_model = {round(width)} is not divisible by n_heads = {k}; "
            f"choose n_heads dividing {round(width)} or another attention_ratio/d_model"
        )
    return problems

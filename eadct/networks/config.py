"""Configuration of the EA-DC-Transformer encoder: the one definition of its hyperparameters.

Each field of :class:`EncoderConfig` carries its default, its check and its documentation; the estimators'
parameter lists, their numpydoc text and their validation are derived from these fields
(:func:`encoder_settings`, :func:`validate_encoder_config`), never restated.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .embedding import POSITIONAL_ENCODINGS, POSITIONAL_ENCODINGS_TEXT


def is_positive_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 1


def is_positive_odd_int(v) -> bool:
    return is_positive_int(v) and v % 2 == 1


def is_unit_interval(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and 0.0 <= v <= 1.0


def is_switch_or_auto(v) -> bool:
    """True, False (numpy's bools too: they come from parameter grids) or "auto"."""
    numpy_bool = type(v).__module__ == "numpy" and type(v).__name__ in ("bool", "bool_")
    return isinstance(v, bool) or numpy_bool or (isinstance(v, str) and v == "auto")


def is_switch(v) -> bool:
    """True or False (numpy's bools too: they come from parameter grids)."""
    return is_switch_or_auto(v) and not isinstance(v, str)


def setting(default: Any, check: Callable[[Any], bool], what: str, doc: str, *, exposed: bool = True):
    """A hyperparameter field: its default, its check (``what`` it must be, for the error) and its
    numpydoc text (first line the type, then the description). ``exposed`` ones are estimator parameters."""
    return field(default=default, metadata={"check": check, "what": what, "doc": doc, "exposed": exposed})


#: ``attention_downsample="auto"`` pools tokens so that attention sees at most this many (docs/model.md).
AUTO_ATTENTION_TOKENS = 128


def auto_downsample(length: int, tokens: int = AUTO_ATTENTION_TOKENS) -> int:
    """The factor of ``attention_downsample="auto"`` for series of ``length`` steps (the one rule): the
    smallest that leaves attention at most ``tokens`` tokens."""
    return max(1, math.ceil(length / tokens))


@dataclass(frozen=True)
class EncoderConfig:
    """Hyperparameters of :class:`~eadct.networks.EADCTEncoder` (and the encoder fields of the baselines).

    ``n_channels`` (input channels C) and ``max_len`` (length of the learnable positional table; longer
    inputs reuse the last position's embedding) come from the data; ``uses`` names the settings the encoder
    reads (an architecture's :attr:`~eadct.networks.Architecture.uses`, which
    :meth:`~eadct.networks.Architecture.resolve` passes; None: all of them), so that the validation holds it
    only to the rules between settings it reads (:func:`validate_encoder_config`). Every other field is
    documented in its ``setting`` below and in the estimators' docstrings, which are generated from it.
    """

    n_channels: int
    max_len: int
    d_model: int = setting(64, is_positive_int, "a positive int", "int, default=64\n    Model width d.")
    n_heads: int = setting(
        8, is_positive_int, "a positive int", "int, default=8\n    Attention heads K (channels of the map convolution)."
    )
    n_blocks: int = setting(
        2,
        is_positive_int,
        "a positive int",
        "int, default=2\n    Blocks of 2 EA-DC layers each (L = 2 * n_blocks); the conv dilation doubles per block.",
    )
    attention_ratio: float = setting(
        0.25,
        is_unit_interval,
        "a number in [0, 1]",
        "float, default=0.25\n"
        "    The paper's p: share of ``d_model`` given to the attention branch; the dilated causal convolution\n"
        "    branch gets ``1 - p``. 1 gives an EA-Transformer, 0 a dilated convolution network.\n"
        "    ``attention_ratio * d_model`` must be divisible by ``n_heads`` (in the architectures with attention).",
    )
    alpha: float = setting(
        0.5,
        is_unit_interval,
        "a number in [0, 1]",
        "float, default=0.5\n"
        "    Paper's alpha: weight of the previous layer's attention logits in the input of the\n"
        "    attention-map convolution (``A_in = alpha * A_prev + (1 - alpha) * S``). 0 cuts the skip\n"
        '    connection between maps ("w/o skip" ablation).',
    )
    beta: float = setting(
        0.3,
        is_unit_interval,
        "a number in [0, 1]",
        "float, default=0.3\n"
        "    Paper's beta: weight of the ``ReLU(Conv2d)`` path in the evolved logits\n"
        "    (``A = beta * ReLU(Conv(A_in)) + (1 - beta) * A_in``). 0 builds no map convolution\n"
        '    ("w/o convolution"); ``alpha = beta = 0`` is the DC-Transformer. The authors\' code calls these\n'
        "    two weights the other way round.",
    )
    attention_kernel_size: int = setting(
        3,
        is_positive_odd_int,
        "a positive odd int (1, 3, 5)",
        "int, default=3\n    Kernel of the 2D convolution over the attention maps (1, 3 or 5 in the paper).",
    )
    conv_kernel_size: int = setting(
        3,
        is_positive_int,
        "a positive int",
        "int, default=3\n"
        "    Kernel of the dilated causal convolutions (the paper's: 3). Each layer's two convolutions see\n"
        "    ``2 * (conv_kernel_size - 1) * dilation + 1`` steps, the dilation doubling per block.",
    )
    dilation_per_layer: bool = setting(
        False,
        is_switch,
        "True or False",
        "bool, default=False\n"
        "    Whether the convolutions' dilation doubles with every layer (1, 2, 4, 8 over two blocks: a receptive\n"
        "    field of 61 steps at kernel 3) instead of with every block (1, 1, 2, 2, the paper's: 25 steps;\n"
        "    docs/model.md).",
    )
    positional_encoding: str = setting(
        "learned",
        lambda v: v in POSITIONAL_ENCODINGS,
        POSITIONAL_ENCODINGS_TEXT,
        '{"learned", "learned-sinusoidal", "sinusoidal"}, default="learned"\n'
        "    The position signal added to the stem's output: a learned table of ``max_len`` rows (the paper's,\n"
        '    TST\'s; positions past it reuse its last row), started near 0 ("learned") or as the sine and\n'
        '    cosine waves of Vaswani et al. (2017) ("learned-sinusoidal"); or those waves fixed ("sinusoidal"),\n'
        "    amplitude 1, which hold no parameters and are defined at every length (docs/model.md).",
    )
    input_differences: bool = setting(
        False,
        is_switch,
        'True or False ("auto": EADCTClassifier and EADCTRegressor only)',
        "bool, default=False\n"
        "    The input stem also reads each channel's first differences ``x_t - x_{t-1}`` (0 at a series' first\n"
        "    step), scaled to unit standard deviation over the training series: the local slope beside the\n"
        "    level, which the series' standardisation leaves small on smooth channels (docs/model.md).",
    )
    series_normalization: bool = setting(
        False,
        is_switch,
        "True or False",
        "bool, default=False\n"
        "    The input stem reads each series' channels standardised by their own mean and standard deviation\n"
        "    over the series' steps, and beside them, as constant channels, that mean and the log of that\n"
        "    standard deviation: the shape apart from the level, so that a series far outside the training\n"
        "    range moves its two level inputs, not every step (docs/model.md).",
    )
    d_ff: int = setting(
        256, is_positive_int, "a positive int", "int, default=256\n    Hidden width of the feed-forward network."
    )
    dropout: float = setting(
        0.1,
        lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool) and 0.0 <= v < 1.0,
        "in [0, 1)",
        "float, default=0.1\n    Dropout of the embedding, residual paths, attention weights and classification head.",
    )
    norm: str = setting(
        "batch",
        lambda v: v in ("batch", "layer"),
        "'batch' or 'layer'",
        '{"batch", "layer"}, default="batch"\n    BatchNorm over valid steps (as TST) or LayerNorm.',
    )
    recompute_attention: bool | str = setting(
        "auto",
        is_switch_or_auto,
        "True, False or 'auto'",
        'bool or "auto", default="auto"\n'
        "    True: run the attention-map path in blocks of query rows and recompute it block by block in\n"
        "    backward instead of storing its (B, K, N, N) tensors (one map per layer stays). False: store\n"
        '    them. "auto": the rule of :func:`eadct.networks.attention.auto_blocks` (blocks on CPU for large\n'
        "    maps, stores them elsewhere). Results agree within float tolerance (dropout masks are drawn per\n"
        "    block). Measurements: docs/long_series.md. Formerly ``checkpoint_attention``.",
    )
    attention_downsample: int | str = setting(
        "auto",
        lambda v: v == "auto" or is_positive_int(v),
        "an int >= 1 or 'auto'",
        'int or "auto", default="auto"\n'
        "    Average-pool the time steps by this factor before attention (maps of (N / r)^2) and repeat the\n"
        "    result back to N steps, as the authors' code does for long series; the convolution branch keeps\n"
        '    full resolution. 1 = off (the paper\'s configuration). "auto": the smallest factor that leaves at\n'
        "    most ``attention_tokens`` tokens for the longest training series.",
    )
    attention_tokens: int = setting(
        AUTO_ATTENTION_TOKENS,
        is_positive_int,
        "an int >= 1",
        f"int, default={AUTO_ATTENTION_TOKENS}\n"
        '    The most tokens that ``attention_downsample="auto"`` leaves for attention (the cap of its rule; an int\n'
        "    ``attention_downsample`` ignores it). Fewer tokens: coarser maps, and a step whose map passes cost\n"
        "    about the square of the ratio. Measured choices: docs/accuracy.md.",
    )
    fast_plain_attention: bool = setting(
        True,
        lambda v: isinstance(v, bool),
        "True or False",
        "Use torch's fused ``scaled_dot_product_attention`` in layers that neither evolve a map nor pass one\n"
        "on (the DC-Transformer, TST); same results within float tolerance.",
        exposed=False,
    )
    uses: frozenset | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.uses is not None:
            object.__setattr__(self, "uses", frozenset(self.uses))
        problems = validate_encoder_config(asdict(self))
        if problems:
            raise ValueError("; ".join(problems))
        if self.attention_downsample == "auto":
            object.__setattr__(self, "attention_downsample", auto_downsample(self.max_len, self.attention_tokens))

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

    @property
    def evolving(self) -> bool:
        """Whether the attention maps evolve between layers (alpha > 0 or beta > 0)."""
        return self.alpha > 0 or self.beta > 0

    def to_dict(self) -> dict:
        """Plain dict, for saving next to a state dict."""
        return asdict(self)


def encoder_settings(exposed_only: bool = True) -> dict:
    """The hyperparameter fields of :class:`EncoderConfig`, ``name -> dataclasses.Field``, in order."""
    return {
        f.name: f
        for f in fields(EncoderConfig)
        if f.metadata.get("check") is not None and (f.metadata["exposed"] or not exposed_only)
    }


#: The settings of the rule between attention's widths: a row that does not read all three has no attention heads
#: to split ``attention_ratio * d_model`` over, and is not held to it.
ATTENTION_WIDTH_SETTINGS = frozenset({"attention_ratio", "d_model", "n_heads"})


def validate_encoder_config(cfg: Mapping) -> list[str]:
    """Return human-readable problems with encoder settings (empty when valid).

    Checks each value in ``cfg`` of a field of :class:`EncoderConfig` (missing ones are not checked), then
    the rule between settings that the row reads: ``attention_ratio * d_model`` is a whole number divisible by
    ``n_heads``, checked only where ``cfg["uses"]`` (the settings the architecture reads, as
    :meth:`~eadct.networks.Architecture.resolve` gives them; absent or None: all) holds
    :data:`ATTENTION_WIDTH_SETTINGS`. Kept apart from the dataclass so estimators can report every problem at
    once.
    """
    problems = []
    for name, f in encoder_settings(exposed_only=False).items():
        if name in cfg and not f.metadata["check"](cfg[name]):
            problems.append(f"{name} must be {f.metadata['what']}, got {cfg[name]!r}")
    uses = cfg.get("uses")
    read = set(cfg) if uses is None else set(uses)
    if problems or not ATTENTION_WIDTH_SETTINGS <= set(cfg) or not ATTENTION_WIDTH_SETTINGS <= read:
        return problems
    d, k, p = cfg["d_model"], cfg["n_heads"], cfg["attention_ratio"]
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

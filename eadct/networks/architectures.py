"""The registry of encoder architectures: the rows of the paper's tables (docs/model.md, "The other rows of the
paper's tables").

An :class:`Architecture` says how to build its encoder from an :class:`~eadct.networks.EncoderConfig`, which
settings it fixes (``overrides``), which it reads (``uses``; the others are ignored, as the docs table says),
how wide its step representations are and how much memory a training step needs. The estimators only look
names up here. To add a row: one :func:`register_architecture` call, a line in docs/model.md's table and, if
the tables should run it, a TOML row (docs/model.md, "Architecture of the code").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from torch import nn

from .baselines import RecurrentEncoder, ResNetEncoder
from .config import EncoderConfig, encoder_settings
from .encoder import EADCTEncoder
from .memory import estimate_stack_training_bytes

#: The settings of the EA-DC encoder family: every exposed field of EncoderConfig.
_EADCT_USES = frozenset(encoder_settings())


def _stack_training_bytes(config: EncoderConfig, batch: int, length: int, **memory) -> int:
    """Training peak of a stack of ``2 * n_blocks`` layers (attention maps only where there is attention)."""
    return estimate_stack_training_bytes(
        batch,
        length,
        d_model=config.d_model,
        n_heads=config.n_heads,
        n_layers=config.n_layers,
        evolving=config.evolving,
        recompute=config.recompute_attention,
        downsample=config.attention_downsample,
        d_attention=config.d_attention,
        d_ff=config.d_ff,
        **memory,
    )


def _no_attention_bytes(config: EncoderConfig, batch: int, length: int, **memory) -> int:
    """The step-activation term of the stack estimate, for encoders without attention maps."""
    return _stack_training_bytes(replace(config, attention_ratio=0.0), batch, length, **memory)


@dataclass(frozen=True)
class Architecture:
    """One encoder architecture.

    Parameters
    ----------
    name : str
        The estimators' ``architecture`` value.
    build : callable
        ``EncoderConfig -> nn.Module`` mapping ``(B, N, C)`` and ``valid`` to ``(B, N, width)``.
    uses : frozenset of str
        The exposed settings the encoder reads; the others are ignored by this row, and its configuration is
        not held to the rules between them (:func:`~eadct.networks.validate_encoder_config`).
    overrides : mapping
        Settings this row fixes, whatever the parameters say (e.g. the DC-Transformer's alpha = beta = 0).
    width : callable
        ``EncoderConfig -> int``: width of the step representations (the task head's input per step).
    training_bytes : callable
        ``(config, batch, length, *, bytes_per_value, device_type, keeps_freed) -> int``: estimated peak
        of a training step (:mod:`eadct.networks.memory`).
    attention : bool
        Whether the encoder has attention maps (inference memory, map inspection).
    description : str
        One line for the docs.
    """

    name: str
    build: Callable[[EncoderConfig], nn.Module]
    uses: frozenset = _EADCT_USES
    overrides: Mapping = field(default_factory=dict)
    width: Callable[[EncoderConfig], int] = lambda config: config.d_model
    training_bytes: Callable[..., int] = _stack_training_bytes
    attention: bool = True
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))
        object.__setattr__(self, "uses", frozenset(self.uses))

    def resolve(self, settings: Mapping) -> dict:
        """``settings`` with this row's overrides applied, each exposed setting the row does not read at its
        default (a value given for it is ignored, not validated: the LSTM is not held to attention's ``n_heads``),
        and ``"uses"``: what the row reads, for :func:`~eadct.networks.validate_encoder_config`."""
        exposed = encoder_settings()
        unread = {n: exposed[n].default for n in settings if n in exposed and n not in self.uses}
        return {**settings, **unread, **self.overrides, "uses": self.uses}


ARCHITECTURES: dict[str, Architecture] = {}


def register_architecture(architecture: Architecture) -> Architecture:
    """Add ``architecture`` to the registry (a name can be registered once)."""
    if architecture.name in ARCHITECTURES:
        raise ValueError(f"architecture {architecture.name!r} is registered already")
    ARCHITECTURES[architecture.name] = architecture
    return architecture


def get_architecture(name: str) -> Architecture:
    """The registered architecture ``name``; a ValueError lists the registered names otherwise."""
    try:
        return ARCHITECTURES[name]
    except (KeyError, TypeError):
        raise ValueError(f"architecture must be one of {sorted(ARCHITECTURES)}, got {name!r}") from None


def _recurrent(kind: str) -> Callable[[EncoderConfig], nn.Module]:
    return lambda c: RecurrentEncoder(kind, c.n_channels, c.d_model, c.n_blocks, c.dropout)


_RECURRENT_USES = frozenset({"d_model", "n_blocks", "dropout"})
#: The dilated convolution branch's settings, which a row without the branch (attention_ratio 1) does not read.
_CONV_SETTINGS = frozenset({"conv_kernel_size", "dilation_per_layer"})

for _architecture in (
    Architecture("ea-dc-transformer", EADCTEncoder, description="evolving attention beside a dilated causal conv"),
    Architecture("dc-transformer", EADCTEncoder, overrides={"alpha": 0.0, "beta": 0.0}, description="alpha = beta = 0"),
    Architecture(
        "transformer",
        EADCTEncoder,
        uses=_EADCT_USES - _CONV_SETTINGS,
        overrides={"alpha": 0.0, "beta": 0.0, "attention_ratio": 1.0},
        description="TST: attention_ratio 1, alpha = beta = 0, BatchNorm by default",
    ),
    Architecture(
        "dilated-conv",
        EADCTEncoder,
        overrides={"attention_ratio": 0.0},
        attention=False,
        description="attention_ratio 0: the Franceschi et al. encoder",
    ),
    Architecture(
        "lstm",
        _recurrent("lstm"),
        uses=_RECURRENT_USES,
        training_bytes=_no_attention_bytes,
        attention=False,
        description="n_blocks layers of width d_model, packed sequences",
    ),
    Architecture(
        "gru",
        _recurrent("gru"),
        uses=_RECURRENT_USES,
        training_bytes=_no_attention_bytes,
        attention=False,
        description="n_blocks layers of width d_model, packed sequences",
    ),
    Architecture(
        "resnet",
        lambda c: ResNetEncoder(c.n_channels),
        uses=frozenset(),
        width=lambda config: ResNetEncoder.WIDTH,
        training_bytes=_no_attention_bytes,
        attention=False,
        description="Wang et al. 2017: 3 residual blocks, Conv1d 8/5/3, 64-128-128 filters (width 128)",
    ),
):
    register_architecture(_architecture)

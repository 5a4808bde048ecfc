"""Pure torch building blocks of the EA-DC-Transformer (no numpy, no sklearn)."""

from .attention import EvolvingAttention
from .config import EncoderConfig, validate_encoder_config
from .dilated_conv import DilatedConvBranch
from .embedding import InputEmbedding
from .encoder import EADCTEncoder, EADCTLayer, pool_steps
from .heads import ClassificationHead, ReconstructionHead, RegressionHead
from .model import SeriesNetwork
from .norm import MaskedBatchNorm, MaskedLayerNorm

__all__ = [
    "ClassificationHead",
    "DilatedConvBranch",
    "EADCTEncoder",
    "EADCTLayer",
    "EncoderConfig",
    "EvolvingAttention",
    "InputEmbedding",
    "MaskedBatchNorm",
    "MaskedLayerNorm",
    "ReconstructionHead",
    "RegressionHead",
    "SeriesNetwork",
    "pool_steps",
    "validate_encoder_config",
]

"""Pure torch building blocks of the EA-DC-Transformer (no numpy, no sklearn)."""

from .architectures import ARCHITECTURES, Architecture, get_architecture, register_architecture
from .attention import EvolvingAttention
from .config import EncoderConfig, encoder_settings, validate_encoder_config
from .dilated_conv import DilatedConvBranch
from .embedding import InputEmbedding
from .encoder import EADCTEncoder, EADCTLayer
from .heads import ClassificationHead, ReconstructionHead, RegressionHead
from .memory import (
    INFERENCE_HEADROOM,
    MEMORY_GUARDS,
    MemoryPlan,
    available_memory_bytes,
    estimate_stack_inference_bytes,
    estimate_stack_training_bytes,
    explain_out_of_memory,
    inference_batch_size,
    out_of_memory_message,
    plan_training_memory,
)
from .model import SeriesNetwork
from .norm import MaskedBatchNorm, MaskedLayerNorm
from .pooling import (
    N_SEGMENTS,
    POOLINGS,
    Pooling,
    get_pooling,
    part_means,
    pool_steps,
    pooled_width,
    register_pooling,
)

__all__ = [
    "ARCHITECTURES",
    "Architecture",
    "ClassificationHead",
    "DilatedConvBranch",
    "EADCTEncoder",
    "EADCTLayer",
    "EncoderConfig",
    "EvolvingAttention",
    "INFERENCE_HEADROOM",
    "InputEmbedding",
    "MEMORY_GUARDS",
    "MaskedBatchNorm",
    "MaskedLayerNorm",
    "MemoryPlan",
    "ReconstructionHead",
    "Pooling",
    "RegressionHead",
    "SeriesNetwork",
    "available_memory_bytes",
    "encoder_settings",
    "estimate_stack_inference_bytes",
    "estimate_stack_training_bytes",
    "get_architecture",
    "get_pooling",
    "inference_batch_size",
    "explain_out_of_memory",
    "out_of_memory_message",
    "plan_training_memory",
    "N_SEGMENTS",
    "part_means",
    "pool_steps",
    "pooled_width",
    "POOLINGS",
    "register_architecture",
    "register_pooling",
    "validate_encoder_config",
]

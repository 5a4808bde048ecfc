"""Pure torch training: masking, masked loss, the epoch loop and checkpoints (no sklearn)."""

from .augment import augment_magnitude, augment_mask, augment_window_slice, mixup_batch
from .checkpoint import Checkpointer
from .data import SeriesTensors, batch_indices, length_sorted_batches
from .divergence import TrainingDivergedError
from .loop import StageSettings, autocast, run_stage
from .masking import make_geometric_mask, masked_mse
from .stages import REGRESSION_LOSSES, finetune, predict_outputs, pretrain, train_two_stage

__all__ = [
    "REGRESSION_LOSSES",
    "Checkpointer",
    "SeriesTensors",
    "StageSettings",
    "TrainingDivergedError",
    "augment_magnitude",
    "augment_mask",
    "augment_window_slice",
    "autocast",
    "batch_indices",
    "finetune",
    "length_sorted_batches",
    "make_geometric_mask",
    "masked_mse",
    "mixup_batch",
    "predict_outputs",
    "pretrain",
    "run_stage",
    "train_two_stage",
]

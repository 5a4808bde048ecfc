"""Pure torch training: masking, masked loss, the epoch loop and checkpoints (no sklearn)."""

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
    "autocast",
    "batch_indices",
    "finetune",
    "length_sorted_batches",
    "make_geometric_mask",
    "masked_mse",
    "predict_outputs",
    "pretrain",
    "run_stage",
    "train_two_stage",
]

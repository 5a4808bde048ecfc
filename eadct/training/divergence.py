"""When a training stage has diverged (:data:`DIVERGED_FACTOR`), and what the user is told about it."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from .data import SeriesTensors

#: An epoch has diverged when its mean training loss is not finite or exceeds ``DIVERGED_FACTOR`` times the
#: stage's reference loss: the loss of the stage's first batch, before any step, or 1 where that is lower. Both
#: stages' losses are on standardised scales: the masked MSE of standardised values and the regression loss on
#: standardised targets start near 1, the cross-entropy near ln(n_classes), and a working fit's epochs stay near
#: or below that start (``research/benchmarks/divergence_margin.py``: no epoch of the defaults above 2.9 times its
#: reference
#: on five bundled sets, at the default ``lr`` and at ten times it). A thousandfold leaves more than two orders of
#: magnitude for a fit that works, and ``lr=1e3`` passes it in the first epoch (about 8e8 on the tests' data). The
#: floor of 1 keeps a stage that starts almost solved (a probed head) from counting ordinary noise as growth.
DIVERGED_FACTOR = 1e3


class TrainingDivergedError(ValueError, FloatingPointError):
    """A training stage diverged (:data:`DIVERGED_FACTOR`) and no earlier state of it has finite outputs to keep.

    A ValueError, as for any setting that cannot work (the learning rate, mostly), and a FloatingPointError, the
    error numpy and Python give for floating-point overflow, so either handler catches it."""


def finite_state(network: nn.Module, state: dict | None = None) -> bool:
    """Whether every parameter in ``state`` (a state dict of ``network``; default: its own) is finite (one host
    sync). Buffers are left out: some hold infinities by design (the regressor's representation range is
    -inf..inf until fit sets it); what they do to the outputs, :func:`finite_outputs` checks."""
    state = network.state_dict() if state is None else state
    parameters = {name for name, _ in network.named_parameters()}
    checks = [torch.isfinite(v).all() for k, v in state.items() if k in parameters and v.is_floating_point()]
    return bool(torch.stack(checks).all()) if checks else True


@torch.no_grad()
def finite_outputs(network: nn.Module, data: SeriesTensors, outputs: Callable) -> bool:
    """Whether ``outputs(network, data)`` (the stage's outputs for every series) are all finite."""
    return bool(torch.isfinite(outputs(network, data)).all())


def diverged_record(name: str, epoch: int, loss: float, start_loss: float | None, finite_weights: bool) -> dict | None:
    """The record of epoch ``epoch`` (from 0) if the stage diverged in it: its mean training ``loss`` is not
    finite or exceeds :data:`DIVERGED_FACTOR` times the reference, or its weights ended not finite (a last step
    that overflowed); else None."""
    number = isinstance(start_loss, (int, float)) and not isinstance(start_loss, bool) and math.isfinite(start_loss)
    reference = max(1.0, float(start_loss)) if number else 1.0  # None: an epoch without batches
    if finite_weights and math.isfinite(loss) and loss <= DIVERGED_FACTOR * reference:
        return None
    record = {"stage": name, "epoch": epoch + 1, "train_loss": loss, "reference_loss": reference, "diverged": True}
    if not (finite_weights and math.isfinite(loss)):
        record["non_finite"] = True
    return {**record, "best": False}


def divergence_message(record: dict, lr: float, clip_grad_norm, kept: str | None = None, earlier: bool = False) -> str:
    """What a diverged epoch's ``record`` (:func:`eadct.training.loop.run_stage`) says to the user: what the loss
    did in which stage and epoch, what the stage kept (``kept``; None: nothing, it raises; ``earlier``: there were
    earlier states, none of them with finite outputs), and what to change."""
    loss = record["train_loss"]
    if not math.isfinite(loss):
        what = f"loss became {loss}"
    elif record.get("non_finite"):
        what = f"weights became non-finite (the epoch's loss was {loss:.3g})"
    else:
        what = (
            f"loss grew to {loss:.3g}, more than {DIVERGED_FACTOR:g} times the stage's starting loss "
            f"({record.get('reference_loss', 1.0):.3g})"
        )
    if kept is None and earlier:
        outcome = "and no earlier state of the stage has finite outputs on the training series, so none can be kept"
    elif kept is None:
        outcome = "with no earlier state of the stage to keep"
    else:
        outcome = f"so the stage stopped there and kept {kept}, whose outputs on the training series are finite"
    clip = "clip_grad_norm=None: unclipped" if clip_grad_norm is None else f"clip_grad_norm={clip_grad_norm:g}"
    return (
        f"The {record['stage']} {what} in epoch {record['epoch']}: training diverged, {outcome}. Lower the "
        f"learning rate (lr={lr:g}; the default is 1e-3), keep gradient clipping on ({clip}; it bounds each "
        "step's gradient, and with an adaptive optimizer such as RAdam the step size is set by lr), or look for "
        "extreme values in X."
    )

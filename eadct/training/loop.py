"""The epoch loop shared by pretraining and fine-tuning: best epoch or weight average, early stop, resume."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch
from torch import nn
from tqdm.auto import tqdm

from .checkpoint import Checkpointer
from .data import SeriesTensors, batch_indices
from .divergence import TrainingDivergedError, diverged_record, divergence_message, finite_outputs, finite_state

# step_loss(network, x, valid, y) -> scalar loss tensor
StepLoss = Callable[[nn.Module, torch.Tensor, "torch.Tensor | None", "torch.Tensor | None"], torch.Tensor]
# evaluate(network, data) -> (metrics dict, selection key; lower is better)
Evaluate = Callable[[nn.Module, SeriesTensors], "tuple[dict, tuple]"]
# outputs(network, data) -> the stage's outputs for every series of data (eval mode)
Outputs = Callable[[nn.Module, SeriesTensors], torch.Tensor]


@dataclass
class StageSettings:
    """How one training stage runs.

    Parameters
    ----------
    max_epochs : int
    batch_size : int
    lr : float
    optimizer : type
        Any ``torch.optim.Optimizer`` class (default ``torch.optim.RAdam``).
    optimizer_kwargs : dict
        Passed to the optimizer with ``lr``.
    clip_grad_norm : float or None
        Max gradient norm (None: no clipping).
    n_iter_no_change : int or None
        Stop after this many epochs without a better selection key.
    autocast_dtype : torch.dtype or None
        Mixed precision dtype (bf16 on CUDA), None for full precision.
    verbose : bool
        tqdm progress bar over epochs.
    mask_ratio, mask_length : float
        Pretraining only: share of the values masked and mean length of a masked run.
    average_epochs : int or None
        Keep the mean of the weights (and of the BatchNorm running statistics) after each of the last
        ``average_epochs`` epochs of ``max_epochs`` instead of the best epoch, and run every epoch
        (``n_iter_no_change`` is not applied): stochastic weight averaging over the tail of the run.
    max_steps : int or None
        At most this many optimizer steps in the stage, in whole epochs (at least one): where ``max_epochs``
        epochs of the training data's batches would take more, the stage runs fewer epochs, and
        ``average_epochs`` shrinks in the same proportion (:meth:`capped`). None: no cap.
    """

    max_epochs: int
    batch_size: int
    lr: float = 1e-3
    optimizer: type = torch.optim.RAdam
    optimizer_kwargs: dict = field(default_factory=lambda: {"betas": (0.9, 0.99)})
    clip_grad_norm: float | None = 4.0
    n_iter_no_change: int | None = None
    autocast_dtype: torch.dtype | None = None
    verbose: bool = False
    mask_ratio: float = 0.15
    mask_length: float = 3.0
    average_epochs: int | None = None
    max_steps: int | None = None

    def capped(self, n_series: int) -> StageSettings:
        """These settings for a stage over ``n_series`` training series under ``max_steps``: ``max_epochs``
        lowered to the whole epochs of ``ceil(n_series / batch_size)`` steps that fit in the cap (at least one),
        and ``average_epochs`` scaled by the same factor (rounded, at least one), so that the averaged share of
        the run stays what it was. Unchanged where the cap does not bind, and a stage of 0 epochs stays off."""
        if self.max_epochs == 0 or self.max_steps is None:
            return self
        steps = max(1, math.ceil(n_series / self.batch_size))
        epochs = max(1, min(self.max_epochs, self.max_steps // steps))
        if epochs == self.max_epochs:
            return self
        average = self.average_epochs
        if average:
            average = min(epochs, max(1, math.floor(average * epochs / self.max_epochs + 0.5)))
        return replace(self, max_epochs=epochs, average_epochs=average)


def autocast(device: torch.device, dtype: torch.dtype | None):
    """``torch.autocast`` for ``dtype`` on ``device``, or a no-op context."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def _snapshot(module: nn.Module) -> dict:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def rng_state(generator: torch.Generator) -> dict:
    """States of ``generator`` and of torch's global generators (dropout, init)."""
    state = {"generator": generator.get_state(), "cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(generator: torch.Generator, state: dict) -> None:
    generator.set_state(state["generator"])
    torch.set_rng_state(state["cpu"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def run_stage(
    network: nn.Module,
    *,
    name: str,
    parameters: list[nn.Parameter],
    step_loss: StepLoss,
    evaluate: Evaluate | None,
    train: SeriesTensors,
    valid: SeriesTensors | None,
    settings: StageSettings,
    generator: torch.Generator,
    history: list[dict],
    checkpointer: Checkpointer | None = None,
    resume: dict | None = None,
    outputs: Outputs | None = None,
) -> None:
    """Train ``parameters`` of ``network`` for one stage (``name``, recorded in ``history``) and leave it at its
    best epoch: the lowest key of ``evaluate(network, valid) -> (metrics, key)``, else of the training loss.
    ``step_loss(network, x, valid, y)`` is one batch's loss. Every epoch's state goes to ``checkpointer``; a run
    killed at any point and started again with ``resume`` ends with exactly the weights of an uninterrupted one.
    A diverging epoch (:mod:`.divergence`) stops the stage, which keeps its average or best epoch if their
    ``outputs(network, train)`` are finite (the record's ``kept``), else raises :class:`TrainingDivergedError`.
    """
    settings = settings.capped(len(train))
    optimizer = settings.optimizer(parameters, lr=settings.lr, **settings.optimizer_kwargs)
    progress = _Progress() if resume is None else _resume(resume, network, optimizer, generator, history)
    patience = settings.n_iter_no_change if not settings.average_epochs else None
    first_averaged = settings.max_epochs - (settings.average_epochs or 0)
    epochs = _epoch_bar(name, progress, settings)
    diverged = None
    for epoch in epochs:
        if patience is not None and progress.bad_epochs >= patience:
            break
        tic = time.perf_counter()
        loss, first = _train_epoch(network, optimizer, parameters, step_loss, train, settings, generator)
        if progress.start_loss is None:
            progress.start_loss = first
        if diverged := diverged_record(name, epoch, loss, progress.start_loss, finite_state(network)):
            history.append(diverged)
            break
        record = {"stage": name, "epoch": epoch + 1, "train_loss": loss, "threads": torch.get_num_threads()}
        _select(network, progress, record, evaluate, valid, settings)
        if settings.average_epochs and epoch >= first_averaged:
            progress.add_to_average(network)
        record["time_s"] = time.perf_counter() - tic
        history.append(record)
        if settings.verbose:
            epochs.set_postfix({k: f"{v:.4g}" for k, v in record.items() if isinstance(v, float)})
        if checkpointer is not None:
            _save_epoch(checkpointer, name, progress, network, optimizer, history, generator)
    epochs.close()
    _keep(network, progress, settings, train, diverged, outputs, history)
    if checkpointer is not None:
        done = {"stage": name, "stage_done": True, "network": _snapshot(network), "history": list(history)}
        checkpointer.save({**done, "rng": rng_state(generator)})


def _epoch_bar(name: str, progress: _Progress, settings: StageSettings) -> tqdm:
    """The stage's remaining epochs, as a tqdm bar named ``name`` shown when ``settings.verbose`` (a resumed stage's
    bar starts at the epoch it resumes)."""
    return tqdm(
        range(progress.epoch, settings.max_epochs),
        desc=name,
        disable=not settings.verbose,
        initial=progress.epoch,
        total=settings.max_epochs,
        leave=True,
    )


def _save_epoch(
    checkpointer: Checkpointer, name: str, progress: _Progress, network, optimizer, history, generator
) -> None:
    """The checkpoint after an epoch of stage ``name``: all that :func:`_resume` needs to go on exactly as an
    uninterrupted run would (progress, weights, optimizer, history, random states)."""
    checkpointer.save(
        {
            "stage": name,
            "stage_done": False,
            **progress.state(),
            "network": _snapshot(network),
            "optimizer": optimizer.state_dict(),
            "history": list(history),
            "rng": rng_state(generator),
        }
    )


def _select(network: nn.Module, progress: _Progress, record: dict, evaluate, valid, settings) -> None:
    """Score the epoch just trained (``record``) and mark whether it is the best so far: its key is ``evaluate``'s
    on ``valid``, else its training loss; the best epoch's weights are snapshotted."""
    key = (record["train_loss"],)
    if valid is not None and len(valid) and evaluate is not None:
        network.eval()
        with torch.no_grad(), autocast(valid.values.device, settings.autocast_dtype):
            metrics, key = evaluate(network, valid)
        record.update(metrics)
    record["best"] = progress.update(key, network, record["epoch"])


def _keep(
    network: nn.Module,
    progress: _Progress,
    settings: StageSettings,
    train,
    diverged=None,
    outputs: Outputs | None = None,
    history: list[dict] | None = None,
) -> None:
    """Leave ``network`` in eval mode with the weights the stage keeps: the average of its last epochs
    (``settings.average_epochs``), else its best epoch. After a divergence (``diverged``, its record), the first of
    those two whose outputs on ``train`` are finite, named in ``diverged["kept"]``; a :class:`TrainingDivergedError`
    where neither is."""
    averaged = progress.average(network) if settings.average_epochs else None
    if diverged is None:
        if averaged is not None or progress.best_state is not None:
            network.load_state_dict(averaged if averaged is not None else progress.best_state)
        network.eval()
        return
    best = [r["epoch"] for r in history or () if r["stage"] == diverged["stage"] and r.get("best")]
    first_averaged = max(1, settings.max_epochs - (settings.average_epochs or 0) + 1)
    candidates = [
        (averaged, f"the average of its epochs {first_averaged} to {first_averaged + progress.averaged - 1}"),
        (progress.best_state, f"epoch {best[-1]}" if best else "its best earlier epoch"),
    ]
    for state, label in candidates:
        if state is None or not finite_state(network, state):
            continue
        network.load_state_dict(state)
        network.eval()
        if outputs is None or finite_outputs(network, train, outputs):
            diverged["kept"] = label
            return
    earlier = any(state is not None for state, _ in candidates)
    raise TrainingDivergedError(divergence_message(diverged, settings.lr, settings.clip_grad_norm, earlier=earlier))


def _resume(resume: dict, network, optimizer, generator, history: list[dict]) -> _Progress:
    """Put the network, optimizer, generators and history back to a checkpoint's; its progress."""
    network.load_state_dict(resume["network"])
    optimizer.load_state_dict(resume["optimizer"])
    history[:] = resume["history"]
    set_rng_state(generator, resume["rng"])
    return _Progress(
        resume["best_state"],
        resume["best_key"],
        resume["bad_epochs"],
        resume["epoch"],
        resume.get("average_sum"),
        resume.get("averaged", 0),
        resume.get("start_loss"),
    )


def _train_epoch(network, optimizer, parameters, step_loss, train, settings, generator) -> tuple[float, float]:
    """One epoch: a pass over ``train`` in batches shuffled by ``generator``; returns the mean training loss and
    the loss of its first batch (before its step)."""
    network.train()
    total, count, first = 0.0, 0, None
    for index in batch_indices(len(train), settings.batch_size, generator):
        x, mask, y = train.batch(index)
        with autocast(train.values.device, settings.autocast_dtype):
            loss = step_loss(network, x, mask, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if settings.clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(parameters, settings.clip_grad_norm)
        optimizer.step()
        value = float(loss.detach())
        first = value if first is None else first
        total += value * len(index)
        count += len(index)
    return total / max(count, 1), first


@dataclass
class _Progress:
    """The best epoch so far and the epochs since: what early stopping and resuming need."""

    best_state: dict | None = None
    best_key: tuple | None = None
    bad_epochs: int = 0
    epoch: int = 0
    average_sum: dict | None = None
    averaged: int = 0
    start_loss: float | None = None  # the stage's first batch's loss, before any step (DIVERGED_FACTOR)

    def update(self, key: tuple, network: nn.Module, epoch: int) -> bool:
        """Record an epoch's selection key; returns whether it is the best so far."""
        self.epoch = epoch
        improved = self.best_key is None or key < self.best_key
        if improved:
            self.best_key, self.best_state, self.bad_epochs = key, _snapshot(network), 0
        else:
            self.bad_epochs += 1
        return improved

    def add_to_average(self, network: nn.Module) -> None:
        """Add the network's weights and floating-point buffers to the running sum (float64); integer
        buffers (BatchNorm's batch count) keep their latest value."""
        state = _snapshot(network)
        if self.average_sum is None:
            self.average_sum = {k: v.double() if v.is_floating_point() else v for k, v in state.items()}
        else:
            for k, v in state.items():
                self.average_sum[k] = self.average_sum[k] + v.double() if v.is_floating_point() else v
        self.averaged += 1

    def average(self, network: nn.Module) -> dict | None:
        """The mean of the states added, in the dtypes of ``network``'s state; None when none was added."""
        if not self.averaged:
            return None
        like = network.state_dict()
        return {
            k: (v / self.averaged).to(like[k].dtype) if v.is_floating_point() else v
            for k, v in self.average_sum.items()
        }

    def state(self) -> dict:
        return {
            "epoch": self.epoch,
            "best_state": self.best_state,
            "best_key": self.best_key,
            "bad_epochs": self.bad_epochs,
            "average_sum": self.average_sum,
            "averaged": self.averaged,
            "start_loss": self.start_loss,
        }

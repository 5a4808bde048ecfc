"""The epoch loop shared by pretraining and fine-tuning: best epoch, early stop, resume."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn
from tqdm.auto import tqdm

from .checkpoint import Checkpointer
from .data import SeriesTensors, batch_indices

# step_loss(network, x, valid, y) -> scalar loss tensor
StepLoss = Callable[[nn.Module, torch.Tensor, "torch.Tensor | None", "torch.Tensor | None"], torch.Tensor]
# evaluate(network, data) -> (metrics dict, selection key; lower is better)
Evaluate = Callable[[nn.Module, SeriesTensors], "tuple[dict, tuple]"]


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
    name: str,
    network: nn.Module,
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
) -> None:
    """Train ``parameters`` of ``network`` for one stage and leave it at its best epoch.

    The best epoch is the one with the lowest selection key from ``evaluate`` on the
    validation data (or the lowest training loss without validation data). The state
    after every epoch (weights, optimizer, best weights, counters, history and the
    random generators) goes to ``checkpointer``, so that a run killed at any point and
    started again with ``resume`` ends with exactly the weights of an uninterrupted one.

    Parameters
    ----------
    name : str
        Stage name recorded in ``history`` (``"pretrain"`` or ``"finetune"``).
    network : nn.Module
        Trained in place.
    parameters : list of Parameter
        What the optimizer updates.
    step_loss : callable
        ``(network, x, valid, y) -> loss`` for one batch.
    evaluate : callable or None
        ``(network, data) -> (metrics, key)``.
    train, valid : SeriesTensors
        Training and (optional) validation data, already on the device.
    settings : StageSettings
    generator : torch.Generator
        Shuffles batches (and draws masks inside ``step_loss``).
    history : list of dict
        One record per epoch is appended.
    checkpointer : Checkpointer, optional
    resume : dict, optional
        A checkpoint of this stage, from ``checkpointer.load()``.
    """
    device = train.values.device
    optimizer = settings.optimizer(parameters, lr=settings.lr, **settings.optimizer_kwargs)
    start, best_state, best_key, bad_epochs = 0, None, None, 0
    if resume is not None:
        network.load_state_dict(resume["network"])
        optimizer.load_state_dict(resume["optimizer"])
        best_state, best_key = resume["best_state"], resume["best_key"]
        bad_epochs, start = resume["bad_epochs"], resume["epoch"]
        history[:] = resume["history"]
        set_rng_state(generator, resume["rng"])

    stopped = settings.n_iter_no_change is not None and bad_epochs >= settings.n_iter_no_change
    epochs = tqdm(
        range(start, settings.max_epochs),
        desc=name,
        disable=not settings.verbose,
        initial=start,
        total=settings.max_epochs,
        leave=True,
    )
    for epoch in epochs:
        if stopped:
            break
        tic = time.perf_counter()
        network.train()
        total, count = 0.0, 0
        for index in batch_indices(len(train), settings.batch_size, generator):
            x, mask, y = train.batch(index)
            with autocast(device, settings.autocast_dtype):
                loss = step_loss(network, x, mask, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if settings.clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(parameters, settings.clip_grad_norm)
            optimizer.step()
            total += float(loss.detach()) * len(index)
            count += len(index)
        record = {"stage": name, "epoch": epoch + 1, "train_loss": total / max(count, 1)}
        if valid is not None and len(valid) and evaluate is not None:
            network.eval()
            with torch.no_grad(), autocast(device, settings.autocast_dtype):
                metrics, key = evaluate(network, valid)
            record.update(metrics)
        else:
            key = (record["train_loss"],)
        improved = best_key is None or key < best_key
        if improved:
            best_key, best_state, bad_epochs = key, _snapshot(network), 0
        else:
            bad_epochs += 1
        record["best"] = improved
        record["time_s"] = time.perf_counter() - tic
        history.append(record)
        if settings.verbose:
            epochs.set_postfix({k: f"{v:.4g}" for k, v in record.items() if isinstance(v, float)})
        stopped = settings.n_iter_no_change is not None and bad_epochs >= settings.n_iter_no_change
        if checkpointer is not None:
            checkpointer.save(
                {
                    "stage": name,
                    "stage_done": False,
                    "epoch": epoch + 1,
                    "network": _snapshot(network),
                    "optimizer": optimizer.state_dict(),
                    "best_state": best_state,
                    "best_key": best_key,
                    "bad_epochs": bad_epochs,
                    "history": list(history),
                    "rng": rng_state(generator),
                }
            )
    epochs.close()
    if best_state is not None:
        network.load_state_dict(best_state)
    network.eval()
    if checkpointer is not None:
        checkpointer.save(
            {
                "stage": name,
                "stage_done": True,
                "network": _snapshot(network),
                "history": list(history),
                "rng": rng_state(generator),
            }
        )

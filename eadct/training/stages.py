"""The two training stages: masked-MSE pretraining, then supervised fine-tuning."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .checkpoint import Checkpointer
from .data import SeriesTensors, length_sorted_batches
from .loop import StageSettings, autocast, run_stage, set_rng_state
from .masking import make_geometric_mask, masked_mse


def _pretrain_batch_loss(network, x, valid, mask):
    if valid is not None:
        mask = mask & valid.unsqueeze(-1)
    reconstruction = network.reconstruct(x.masked_fill(mask, 0.0), valid)
    return masked_mse(reconstruction.float(), x.float(), mask, valid)


def pretrain(
    network: nn.Module,
    train: SeriesTensors,
    valid: SeriesTensors | None = None,
    *,
    settings: StageSettings,
    generator: torch.Generator,
    history: list[dict],
    checkpointer: Checkpointer | None = None,
    resume: dict | None = None,
) -> None:
    """Masked-value pretraining of ``network.encoder`` and its reconstruction head.

    Inputs are masked per sample and channel with geometric runs (``settings.mask_ratio``,
    ``settings.mask_length``; re-drawn every batch from ``generator``), masked values are set to 0 (the
    channel mean after standardisation), and the loss is the MSE over masked, non-padded entries. The
    validation loss uses masks drawn once, so epochs are compared on the same task.
    """
    device = train.values.device
    ratio, length = settings.mask_ratio, settings.mask_length

    def step_loss(net, x, valid_steps, _y):
        mask = make_geometric_mask(x.shape, ratio, length, generator).to(device)
        return _pretrain_batch_loss(net, x, valid_steps, mask)

    evaluate = None
    if valid is not None and len(valid):
        fixed = torch.Generator().manual_seed(int(torch.randint(2**31 - 1, (1,), generator=generator)))
        valid_masks = make_geometric_mask(valid.values.shape, ratio, length, fixed).to(device)

        def evaluate(net, data):
            total, weight = 0.0, 0.0
            for index in length_sorted_batches(data.lengths, settings.batch_size):
                x, valid_steps, _ = data.batch(index)
                mask = valid_masks[index.to(device), : x.shape[1]]
                if valid_steps is not None:
                    mask = mask & valid_steps.unsqueeze(-1)
                n_masked = float(mask.sum())
                total += float(_pretrain_batch_loss(net, x, valid_steps, mask)) * n_masked
                weight += n_masked
            loss = total / max(weight, 1.0)
            return {"valid_loss": loss}, (loss,)

    def outputs(net, data):  # a diverged stage's kept state must give finite representations (run_stage)
        return predict_outputs(net, data, settings.batch_size, "represent", settings.autocast_dtype)

    stage = dict(name="pretrain", parameters=_pretrained(network), step_loss=step_loss, evaluate=evaluate)
    run_stage(
        network,
        **stage,
        train=train,
        valid=valid,
        settings=settings,
        generator=generator,
        history=history,
        checkpointer=checkpointer,
        resume=resume,
        outputs=outputs,
    )


def _pretrained(network) -> list:
    """The parameters pretraining trains: the encoder's and the reconstruction head's."""
    return [*network.encoder.parameters(), *network.reconstruction_head.parameters()]


#: Fine-tuning losses of regression on standardised targets, by name. ``"huber"``: quadratic within
#: ``HUBER_DELTA`` of the target, linear beyond it (``torch.nn.functional.huber_loss``), so a few extreme
#: targets cannot dominate the fit; 1.35 is the usual constant (scikit-learn's ``HuberRegressor.epsilon``),
#: in units of the robust target scale the regressor uses with it.
HUBER_DELTA = 1.35
REGRESSION_LOSSES = {
    "squared_error": F.mse_loss,
    "huber": lambda outputs, y: F.huber_loss(outputs, y, delta=HUBER_DELTA),
}


def _finetuned(network) -> list:
    """The parameters fine-tuning trains: the encoder's, the pooling's where it learns any (``network.pooler``) and
    the task head's."""
    pooler = getattr(network, "pooler", None)
    return [
        *network.encoder.parameters(),
        *(pooler.parameters() if pooler is not None else ()),
        *network.task_head.parameters(),
    ]


def finetune(
    network: nn.Module,
    train: SeriesTensors,
    valid: SeriesTensors | None = None,
    *,
    task: str,
    settings: StageSettings,
    loss: str = "squared_error",
    generator: torch.Generator,
    history: list[dict],
    checkpointer: Checkpointer | None = None,
    resume: dict | None = None,
) -> None:
    """Supervised training of the encoder and the task head, all parameters updated.

    ``task="classification"``: cross-entropy on class indices; the best epoch has the
    highest validation accuracy, ties broken by the lower validation loss.
    ``task="regression"``: ``loss`` (a name in ``REGRESSION_LOSSES``) on (standardised) targets; the best
    epoch has the lowest validation loss.
    """
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
    if loss not in REGRESSION_LOSSES:
        raise ValueError(f"loss must be one of {list(REGRESSION_LOSSES)}, got {loss!r}")
    regression_loss = REGRESSION_LOSSES[loss]

    def loss_of(outputs, y):
        if task == "classification":
            return F.cross_entropy(outputs.float(), y)
        return regression_loss(outputs.float(), y)

    def step_loss(net, x, valid_steps, y):
        return loss_of(net(x, valid_steps), y)

    def evaluate(net, data):
        outputs = predict_outputs(net, data, settings.batch_size)
        loss = float(loss_of(outputs, data.targets))
        if task == "classification":
            accuracy = float((outputs.argmax(dim=1) == data.targets).float().mean())
            return {"valid_loss": loss, "valid_accuracy": accuracy}, (-accuracy, loss)
        return {"valid_loss": loss}, (loss,)

    def outputs(net, data):  # a diverged stage's kept state must give finite outputs (run_stage)
        return predict_outputs(net, data, settings.batch_size, autocast_dtype=settings.autocast_dtype)

    stage = dict(name="finetune", parameters=_finetuned(network), step_loss=step_loss, evaluate=evaluate)
    run_stage(
        network,
        **stage,
        train=train,
        valid=valid,
        settings=settings,
        generator=generator,
        history=history,
        checkpointer=checkpointer,
        resume=resume,
        outputs=outputs,
    )


@torch.no_grad()
def predict_outputs(
    network: nn.Module,
    data: SeriesTensors,
    batch_size: int,
    method: str = "forward",
    autocast_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Run ``network.<method>`` in eval mode over ``data`` in length-sorted batches.

    Series of similar length share a batch, so little compute goes to padding; the
    result is put back in the original order. Returns float32 ``(n, ...)``.
    """
    network.eval()
    device = data.values.device
    pieces, order = [], []
    call = network if method == "forward" else getattr(network, method)
    for index in length_sorted_batches(data.lengths, batch_size):
        x, valid, _ = data.batch(index)
        with autocast(device, autocast_dtype):
            pieces.append(call(x, valid).float())
        order.append(index)
    outputs = torch.cat(pieces)
    inverse = torch.empty_like(torch.cat(order))
    inverse[torch.cat(order)] = torch.arange(len(inverse))
    return outputs[inverse.to(outputs.device)]


def train_two_stage(
    network: nn.Module,
    *,
    task: str | None,
    pretrain_data: tuple[SeriesTensors, SeriesTensors | None],
    finetune_data: tuple[SeriesTensors, SeriesTensors | None],
    pretrain_settings: StageSettings | None,
    finetune_settings: StageSettings | None,
    generator: torch.Generator,
    history: list[dict],
    checkpointer: Checkpointer | None = None,
    loss: str = "squared_error",
) -> None:
    """Pretrain then fine-tune, resuming from ``checkpointer`` where a run left off.

    ``pretrain_settings=None`` skips pretraining; ``task=None`` skips fine-tuning
    (representation learning). A finished stage in the checkpoint is not run again; a
    stage interrupted mid-way continues from its last finished epoch with the saved
    optimizer and random states, so the result equals an uninterrupted run's. ``loss``: the
    regression loss of fine-tuning (:func:`finetune`). Before any stage the network's input stem takes its
    scales from the pretraining series (``fit_input_scales``; a checkpoint's weights then replace them with
    the same values).
    """
    if hasattr(network, "fit_input_scales"):
        network.fit_input_scales(pretrain_data[0].values, pretrain_data[0].lengths)
    # the checkpoint is checked against the network and each stage's optimizer before anything is restored
    stages = {
        "pretrain": (pretrain_settings, _pretrained),
        "finetune": (finetune_settings if task else None, _finetuned),
    }
    state = checkpointer.load(network, stages) if checkpointer is not None else None
    stage = state["stage"] if state else None
    done = bool(state and state.get("stage_done"))
    if state is not None and (stage == "finetune" or done):
        # The saved weights already hold every finished stage.
        network.load_state_dict(state["network"])
        history[:] = state["history"]
        set_rng_state(generator, state["rng"])
    common = dict(generator=generator, history=history, checkpointer=checkpointer)
    if pretrain_settings is not None and stage in (None, "pretrain") and not done:
        resume = state if stage == "pretrain" else None
        pretrain(network, *pretrain_data, settings=pretrain_settings, resume=resume, **common)
    if task is not None and not (stage == "finetune" and done):
        resume = state if stage == "finetune" else None
        finetune(network, *finetune_data, task=task, settings=finetune_settings, loss=loss, resume=resume, **common)

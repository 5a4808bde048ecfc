"""Shared machinery of the EA-DC-Transformer estimators (the only sklearn-facing layer).

What a network is comes from :mod:`eadct.networks` (the architecture registry, the encoder configuration,
the memory planner); how it trains from :mod:`eadct.training`; the parameters from :mod:`._params`. This
class only connects them: validate, prepare the data, plan, build, train, predict.
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..networks import (
    ClassificationHead,
    EncoderConfig,
    RegressionHead,
    SeriesNetwork,
    available_memory_bytes,
    explain_out_of_memory,
    get_architecture,
    inference_batch_size,
    out_of_memory_message,
    plan_training_memory,
    pooled_width,
)
from ..runtime import TorchThreads, keeps_freed_memory
from ..training import Checkpointer, StageSettings, predict_outputs, train_two_stage
from ._data import check_finite_outputs, fit_fingerprint, input_statistics, network_input, to_tensors
from ._ensemble import MEMBER_SEED_STEP, combine_outputs, member_checkpointer, member_splits
from ._input import Panel, fill_missing, to_panel
from ._inspect import InspectsNetwork
from ._param import plain
from ._params import ENCODER_PARAMS
from ._persistence import PicklesWeights
from ._signature import HasOptions, check_params
from ._treatment import as_checked, chosen
from ._warn import warn_longer, warn_non_finite, warn_user


def resolve_device(device) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; otherwise ``torch.device(device)``."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device={device!r} is not a torch device ({err}); use 'auto', 'cpu' or 'cuda'.") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} but CUDA is not available here; use device='auto' or 'cpu'.")
    return resolved


class EADCTBase(HasOptions, InspectsNetwork, PicklesWeights, BaseEstimator):
    """Fit/predict plumbing shared by :class:`EADCTClassifier`, :class:`EADCTRegressor`
    and :class:`EADCTRepresentation`. Subclasses set ``_task`` and the task pieces."""

    _task: str | None = None  # "classification", "regression" or None (representation only)

    def _autocast_dtype(self, device: torch.device):
        precision = self._option("precision")
        if precision == "bfloat16" or (precision == "auto" and device.type == "cuda"):
            return torch.bfloat16
        return None

    def _stage_settings(self, max_epochs, device, batch_size, **fine_tuning) -> StageSettings:
        """One stage's settings; ``fine_tuning``: the fields only fine-tuning reads (``average_epochs``)."""
        optimizer = self.optimizer or torch.optim.RAdam
        default_kwargs = {"betas": (0.9, 0.99)} if optimizer is torch.optim.RAdam else {}
        kwargs = dict(self.optimizer_kwargs) if self.optimizer_kwargs is not None else default_kwargs
        return StageSettings(
            max_epochs=max_epochs,
            batch_size=batch_size,
            lr=self.lr,
            optimizer=optimizer,
            optimizer_kwargs=kwargs,
            clip_grad_norm=self._option("clip_grad_norm"),
            n_iter_no_change=self.n_iter_no_change,
            autocast_dtype=self._autocast_dtype(device),
            verbose=bool(self.verbose),
            mask_ratio=self._option("mask_ratio"),
            mask_length=self._option("mask_length"),
            max_steps=self._option("max_steps"),
            **fine_tuning,
        )

    # ------------------------------------------------------------------ data
    def _panel(self, X, fitting: bool) -> Panel:
        name, channels = type(self).__name__, None if fitting else self.n_channels_
        panel = to_panel(X, missing_values=self.missing_values, estimator_name=name, n_channels=channels)
        return fill_missing(panel) if self.missing_values == "interpolate" else panel

    def _start_supervised_fit(self, X, y) -> Panel:
        """Check the parameters, X and y given: every supervised fit's start."""
        check_params(as_checked(self._settings()), type(self).__name__)
        panel = self._panel(X, fitting=True)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        return panel

    @staticmethod
    def _check_n_samples(panel: Panel, y) -> None:
        if len(y) != len(panel.lengths):
            raise ValueError(f"X has {len(panel.lengths)} samples but y has {len(y)}; they must match.")

    # ------------------------------------------------------------------ network
    def _encoder_config(self, n_channels: int, max_len: int, plan: dict | None = None) -> EncoderConfig:
        """The encoder settings in effect: the parameters, the architecture's, what "auto" chose, a memory plan's."""
        given = self._settings()
        settings = get_architecture(self.architecture).resolve({k: given[k] for k in ENCODER_PARAMS})
        settings.update({k: v for k, v in {**chosen(self), **(plan or {})}.items() if k in ENCODER_PARAMS})
        return EncoderConfig(n_channels=n_channels, max_len=max_len, **{k: plain(v) for k, v in settings.items()})

    def _build_network(self, n_channels: int, max_len: int, n_outputs: int | None, plan: dict | None = None):
        """The network from the hyperparameters and a memory plan's overrides (``memory_plan_``).

        The head is built before the encoder: that order fixes how a ``random_state`` initialises the
        weights, and the measured benchmarks depend on it.
        """
        architecture = get_architecture(self.architecture)
        config = self._encoder_config(n_channels, max_len, plan)
        flat, n_segments = self.pooling == "flatten", self._option("n_segments")
        width = pooled_width(self.pooling, architecture.width(config), max_len, n_segments)
        head = None
        if self._task == "classification":
            head = ClassificationHead(width, n_outputs, self.dropout)
        elif self._task == "regression":
            head = RegressionHead(width, n_outputs)
        encoder, n_steps = architecture.build(config), max_len if flat else None
        return SeriesNetwork(encoder, n_channels, head, self.pooling, n_steps, n_segments)

    def _memory_args(self, config: EncoderConfig, n_train: int, device: torch.device) -> dict:
        """What :func:`eadct.networks.plan_training_memory` and its out-of-memory message need."""
        return dict(
            config=config,
            training_bytes=get_architecture(self.architecture).training_bytes,
            batch_size=self.batch_size,
            n_train=n_train,
            length=config.max_len,
            device=device,
            keeps_freed=keeps_freed_memory(),
            bytes_per_value=2 if self._autocast_dtype(device) is not None else 4,
            owner=type(self).__name__,
        )

    def _plan_memory(self, config: EncoderConfig, n_train: int, device: torch.device) -> dict:
        """Overrides to train with (``memory_plan_``), from :func:`eadct.networks.plan_training_memory`."""
        guard = self._option("memory_guard")
        free = available_memory_bytes(device) if guard != "off" else 0
        plan = plan_training_memory(**self._memory_args(config, n_train, device), guard=guard, free_bytes=free)
        if not plan.fits:
            raise ValueError(plan.message)
        if plan.message:
            warn_user(plan.message)
        return dict(plan.overrides)

    # ------------------------------------------------------------------ fit
    def _fit_network(self, panel: Panel, targets, n_outputs, stratify=None, X_unlabeled=None):
        """Pretrain (masked MSE) then fine-tune; sets ``network_``, ``history_`` and friends.

        ``panel`` comes from ``self._panel(X, fitting=True)``; ``targets`` is an array ready for the loss
        (class indices or standardised values), or None for representation learning (pretraining only).
        """
        device = resolve_device(self.device)
        self.n_channels_ = self.n_features_in_ = panel.n_channels
        extra = None if X_unlabeled is None else self._panel(X_unlabeled, fitting=False)  # channels as X's
        self.n_timepoints_ = int(max(panel.lengths.max(), 0 if extra is None else extra.lengths.max()))
        vars(self).update(input_statistics(panel, self._option("wide_scales")))  # the fitted attributes

        fingerprint = fit_fingerprint(self._settings(), panel, targets, extra) if self.checkpoint_path else None
        # a file at checkpoint_path that is not a checkpoint of eadct is a ValueError here, before any training
        checkpointer = Checkpointer(self.checkpoint_path, fingerprint, {"seed": 0}, warn_user) if fingerprint else None
        saved = checkpointer.load() if checkpointer is not None else None
        seed = saved["seed"] if saved else int(check_random_state(self.random_state).randint(2**31 - 1))
        rng, owner = np.random.RandomState(seed), type(self).__name__
        k = getattr(self, "n_estimators", 1) if targets is not None else 1
        if checkpointer is not None:
            checkpointer.extra["seed"] = seed  # the checkpoint's when it resumes; the members' files are checked too
            for member in range(1, k):
                member_checkpointer(checkpointer, member, k).load()
        splits = member_splits(len(panel.lengths), k, self.validation_fraction, rng, stratify, owner)
        self.networks_, self.history_ = [], []
        with TorchThreads(self.n_jobs):
            for member, (train_idx, valid_idx) in enumerate(splits):
                data = self._training_data(panel, targets, extra, train_idx, valid_idx, device)
                ckpt = member_checkpointer(checkpointer, member, k)
                network, history, plan = self._train_member(
                    data, n_outputs, device, seed + MEMBER_SEED_STEP * member, ckpt
                )
                self.networks_.append(network)
                self.history_ += [{**r, "member": member} for r in history] if k > 1 else history
        self.network_, self.device_, self.memory_plan_ = self.networks_[0], str(device), plan
        self._network_spec = dict(
            n_channels=panel.n_channels, max_len=self.n_timepoints_, n_outputs=n_outputs, plan=plan
        )
        return self

    def _train_member(self, data, n_outputs, device, seed, checkpointer):
        """Build and train one network on ``data`` = (train, valid, pretrain) tensors."""
        train, valid, pre_train = data
        supervised = train.targets is not None
        pretrain_epochs = self.pretrain_epochs if supervised else self.max_epochs
        history: list[dict] = []
        cuda_devices = [device.index or 0] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=cuda_devices):
            torch.manual_seed(seed)
            config = self._encoder_config(self.n_channels_, self.n_timepoints_)
            plan = self._plan_memory(config, len(train), device)
            network = self._build_network(self.n_channels_, self.n_timepoints_, n_outputs, plan).to(device)
            batch_size = plan.get("batch_size", self.batch_size)
            used = self._memory_args(
                self._encoder_config(self.n_channels_, self.n_timepoints_, plan), len(train), device
            )
            with explain_out_of_memory(lambda: out_of_memory_message(**{**used, "batch_size": batch_size})):
                train_two_stage(
                    network,
                    task=self._task if supervised else None,
                    pretrain_data=(pre_train, valid),
                    finetune_data=(train, valid),
                    pretrain_settings=self._stage_settings(pretrain_epochs, device, batch_size)
                    if pretrain_epochs
                    else None,
                    finetune_settings=self._stage_settings(
                        self.max_epochs, device, batch_size, average_epochs=self._option("average_epochs")
                    )
                    if supervised
                    else None,
                    generator=torch.Generator().manual_seed(seed + 1),
                    history=history,
                    checkpointer=checkpointer,
                    loss=self._settings().get("loss", "squared_error"),  # only the regressor has a loss to choose
                )
        warn_non_finite(history, self.lr, self._option("clip_grad_norm"))
        return network.eval(), history, plan

    def _standardize(self, panel: Panel) -> np.ndarray:
        """The network's input (:func:`network_input`); no log scales: a model saved without them."""
        scales = getattr(self, "channel_log_scale_", None)
        return network_input(panel, scales, self.channel_mean_, self.channel_std_)

    def _training_data(self, panel, targets, extra, train_idx, valid_idx, device):
        """(train, valid, pretrain) tensors; pretraining also sees the unlabeled ``extra`` series."""
        values = self._standardize(panel)
        data = to_tensors(panel, values, device, targets)
        train = data.subset(torch.from_numpy(train_idx))
        valid = data.subset(torch.from_numpy(valid_idx)) if len(valid_idx) else None
        if extra is None:
            return train, valid, train
        extra_values = self._standardize(extra)
        n_steps = max(values.shape[1], extra_values.shape[1])
        pad = lambda v: np.pad(v, ((0, 0), (0, n_steps - v.shape[1]), (0, 0)))  # noqa: E731
        both = Panel(
            np.concatenate([pad(values[train_idx]), pad(extra_values)]),
            np.concatenate([panel.lengths[train_idx], extra.lengths]),
        )
        return train, valid, to_tensors(both, both.values, device)

    # ------------------------------------------------------------------ inference
    def _forward(self, X, method: str = "forward", networks=None) -> np.ndarray:
        check_is_fitted(self, "network_")
        panel = self._panel(X, fitting=False)
        longest = int(panel.lengths.max())
        if longest > self.n_timepoints_:
            warn_longer(self, longest)
        device = torch.device(self.device_)
        standardized = self._standardize(panel)
        data = to_tensors(panel, standardized, device)
        chunk = inference_batch_size(
            self._encoder_config(self.n_channels_, self.n_timepoints_, self.memory_plan_),
            attention=get_architecture(self.architecture).attention,
            batch_size=self.batch_size,
            length=longest,
            free_bytes=available_memory_bytes(device),
        )
        # an ensemble averages its members' outputs; a representation is the first member's (not averaged)
        networks = networks or ([self.network_] if method == "represent" else self.networks_)
        dtype = self._autocast_dtype(device)
        with TorchThreads(getattr(self, "n_jobs", None)):
            outputs = [
                predict_outputs(net, data, chunk, method, dtype).cpu().numpy().astype(np.float64) for net in networks
            ]
        combined = combine_outputs(outputs, self._task if method == "forward" else None)
        return check_finite_outputs(combined, standardized, type(self).__name__)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        tags.input_tags.allow_nan = self.missing_values == "interpolate"
        return tags

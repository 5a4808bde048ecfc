"""Shared machinery of the EA-DC-Transformer estimators (the only sklearn-facing layer)."""

from __future__ import annotations

import hashlib
import json
import numbers
import warnings

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..networks import (
    ClassificationHead,
    EADCTEncoder,
    EncoderConfig,
    RegressionHead,
    SeriesNetwork,
    validate_encoder_config,
)
from ..networks.baselines import RecurrentEncoder, ResNetEncoder
from ..networks.memory import (
    available_memory_bytes,
    estimate_stack_inference_bytes,
    estimate_stack_training_bytes,
)
from ..training import Checkpointer, SeriesTensors, StageSettings, predict_outputs, train_two_stage
from ._input import Panel, fill_missing, to_panel

ENCODER_PARAMS = (
    "d_model",
    "n_heads",
    "n_blocks",
    "attention_ratio",
    "alpha",
    "beta",
    "attention_kernel_size",
    "d_ff",
    "dropout",
    "norm",
    "checkpoint_attention",
    "attention_downsample",
)
# The rows of the paper's Tables 1 and 2 (MODEL_SPEC section 3): the transformer family as settings of the
# EA-DC encoder (these override alpha, beta and attention_ratio), the others as their own encoders.
ARCHITECTURES = {
    "ea-dc-transformer": {},
    "dc-transformer": {"alpha": 0.0, "beta": 0.0},
    "transformer": {"alpha": 0.0, "beta": 0.0, "attention_ratio": 1.0},  # TST (BatchNorm by default)
    "dilated-conv": {"attention_ratio": 0.0},  # the Franceschi et al. encoder
    "lstm": None,
    "gru": None,
    "resnet": None,
}
PRECISIONS = {"auto", "float32", "bfloat16"}
MEMORY_GUARDS = {"raise", "auto", "off"}
MEMORY_HEADROOM = 0.9  # share of the free memory a fit may plan to use


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


class EADCTBase(BaseEstimator):
    """Fit/predict plumbing shared by :class:`EADCTClassifier`, :class:`EADCTRegressor`
    and :class:`EADCTRepresentation`. Subclasses set ``_task`` and the task pieces."""

    _task: str | None = None  # "classification", "regression" or None (representation only)

    # ------------------------------------------------------------------ parameters
    def _check_params(self) -> None:
        """Raise one ValueError naming every invalid hyperparameter."""
        params = self.get_params()
        if params["architecture"] not in ARCHITECTURES:
            raise ValueError(
                f"Invalid parameters for {type(self).__name__}: architecture must be one of "
                f"{sorted(ARCHITECTURES)}, got {params['architecture']!r}."
            )
        problems = validate_encoder_config(self._encoder_settings())

        def need(name, ok, what):
            if name in params and not ok(params[name]):
                problems.append(f"{name} must be {what}, got {params[name]!r}")

        pos_int = lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 1  # noqa: E731
        nonneg_int = lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0  # noqa: E731
        need("d_ff", pos_int, "a positive int")
        need("batch_size", pos_int, "a positive int")
        need("max_epochs", pos_int, "a positive int")
        need("pretrain_epochs", nonneg_int, "an int >= 0")
        need("lr", lambda v: isinstance(v, numbers.Real) and v > 0, "a positive number")
        need("mask_ratio", lambda v: isinstance(v, numbers.Real) and 0 < v < 1, "in (0, 1)")
        need("mask_length", lambda v: isinstance(v, numbers.Real) and v >= 1, "a number >= 1")
        need("validation_fraction", lambda v: isinstance(v, numbers.Real) and 0 <= v < 1, "in [0, 1)")
        need("n_iter_no_change", lambda v: v is None or pos_int(v), "None or a positive int")
        need(
            "clip_grad_norm",
            lambda v: v is None or (isinstance(v, numbers.Real) and v > 0),
            "None or a positive number",
        )
        need("pooling", lambda v: v in ("mean", "max", "flatten"), "'mean', 'max' or 'flatten'")
        need("missing_values", lambda v: v in ("raise", "interpolate"), "'raise' or 'interpolate'")
        need("precision", lambda v: v in PRECISIONS, f"one of {sorted(PRECISIONS)}")
        need("memory_guard", lambda v: v in MEMORY_GUARDS, f"one of {sorted(MEMORY_GUARDS)}")
        need(
            "checkpoint_attention",
            lambda v: isinstance(v, (bool, np.bool_)) or (isinstance(v, str) and v == "auto"),
            "True, False or 'auto'",
        )
        need("head_hidden_size", lambda v: v is None or pos_int(v), "None or a positive int")
        need(
            "optimizer",
            lambda v: v is None or (isinstance(v, type) and issubclass(v, torch.optim.Optimizer)),
            "None or a torch.optim.Optimizer subclass (e.g. torch.optim.AdamW)",
        )
        need("optimizer_kwargs", lambda v: v is None or isinstance(v, dict), "None or a dict")
        if problems:
            raise ValueError(f"Invalid parameters for {type(self).__name__}: " + "; ".join(problems) + ".")

    def _stage_settings(self, max_epochs: int, device: torch.device, batch_size: int) -> StageSettings:
        optimizer = self.optimizer or torch.optim.RAdam
        kwargs = (
            dict(self.optimizer_kwargs)
            if self.optimizer_kwargs is not None
            else ({"betas": (0.9, 0.99)} if optimizer is torch.optim.RAdam else {})
        )
        return StageSettings(
            max_epochs=max_epochs,
            batch_size=batch_size,
            lr=self.lr,
            optimizer=optimizer,
            optimizer_kwargs=kwargs,
            clip_grad_norm=self.clip_grad_norm,
            n_iter_no_change=self.n_iter_no_change,
            autocast_dtype=self._autocast_dtype(device),
            verbose=bool(self.verbose),
        )

    def _autocast_dtype(self, device: torch.device):
        precision = getattr(self, "precision", "auto")
        if precision == "bfloat16" or (precision == "auto" and device.type == "cuda"):
            return torch.bfloat16
        return None

    # ------------------------------------------------------------------ data
    def _panel(self, X, fitting: bool) -> Panel:
        panel = to_panel(
            X,
            missing_values=self.missing_values,
            estimator_name=type(self).__name__,
            n_channels=None if fitting else self.n_channels_,
        )
        return fill_missing(panel) if self.missing_values == "interpolate" else panel

    def _standardize(self, panel: Panel, fitting: bool) -> np.ndarray:
        """Per-channel standardisation with training statistics; NaN and padding -> 0."""
        valid = panel.valid_mask()
        if fitting:
            real = panel.values[valid]  # (M, C)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN channel
                mean = np.nanmean(real, axis=0)
                std = np.nanstd(real, axis=0)
            self.channel_mean_ = np.nan_to_num(mean)
            self.channel_std_ = np.where(np.isfinite(std) & (std > 1e-12), std, 1.0)
        values = (panel.values - self.channel_mean_) / self.channel_std_
        values = np.nan_to_num(values, nan=0.0)
        values[~valid] = 0.0
        return values.astype(np.float32)

    def _tensors(self, panel: Panel, values: np.ndarray, device, targets=None) -> SeriesTensors:
        y = None if targets is None else torch.as_tensor(targets).to(device)
        return SeriesTensors(torch.from_numpy(values).to(device), torch.from_numpy(panel.lengths).to(device), y)

    # ------------------------------------------------------------------ network
    def _encoder_settings(self, plan: dict | None = None) -> dict:
        """Encoder hyperparameters in effect: the parameters, the architecture's overrides, a memory plan's."""
        settings = {k: getattr(self, k) for k in ENCODER_PARAMS}
        settings.update(ARCHITECTURES.get(self.architecture) or {})
        settings.update({k: v for k, v in (plan or {}).items() if k in ENCODER_PARAMS})
        if not isinstance(settings["checkpoint_attention"], str):
            settings["checkpoint_attention"] = bool(settings["checkpoint_attention"])  # np.bool_ from a grid
        return settings

    def _build_network(self, n_channels: int, max_len: int, n_outputs: int | None, plan: dict | None = None):
        """The network from the hyperparameters, with a memory plan's overrides (see :meth:`_plan_memory`).

        The head is built before the encoder: that order fixes how a ``random_state`` initialises the
        weights, and the measured benchmarks (docs/benchmarks.md) depend on it.
        """
        width = ResNetEncoder.WIDTH if self.architecture == "resnet" else self.d_model
        if self.pooling == "flatten":
            width *= max_len
        head = None
        if self._task == "classification":
            head = ClassificationHead(width, n_outputs, self.head_hidden_size, self.dropout)
        elif self._task == "regression":
            head = RegressionHead(width, n_outputs)
        if self.architecture in ("lstm", "gru"):
            encoder = RecurrentEncoder(self.architecture, n_channels, self.d_model, self.n_blocks, self.dropout)
        elif self.architecture == "resnet":
            encoder = ResNetEncoder(n_channels)
        else:
            encoder = EADCTEncoder(
                EncoderConfig(n_channels=n_channels, max_len=max_len, **self._encoder_settings(plan))
            )
        return SeriesNetwork(encoder, n_channels, head, self.pooling, max_len if self.pooling == "flatten" else None)

    def _fingerprint(self, panel: Panel, targets, extra: Panel | None) -> str:
        params = {k: repr(v) for k, v in self.get_params().items() if k not in ("verbose", "checkpoint_path", "device")}
        h = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
        for arr in (
            panel.values,
            panel.lengths,
            targets,
            None if extra is None else extra.values,
            None if extra is None else extra.lengths,
        ):
            if arr is not None:
                h.update(np.ascontiguousarray(arr).tobytes())
        return h.hexdigest()

    def _split(self, n: int, rng: np.random.RandomState, stratify=None):
        """Indices (train, valid); ``validation_fraction`` of the training data, stratified by class
        when ``stratify`` is given (every class keeps at least one training sample)."""
        if self.validation_fraction <= 0 or n < 2:
            return np.arange(n), np.array([], dtype=int)
        if stratify is None:
            order = rng.permutation(n)
            n_valid = min(n - 1, max(1, int(round(self.validation_fraction * n))))
            return np.sort(order[n_valid:]), np.sort(order[:n_valid])
        train, valid = [], []
        for label in np.unique(stratify):
            members = rng.permutation(np.flatnonzero(stratify == label))
            n_valid = min(len(members) - 1, int(round(self.validation_fraction * len(members))))
            valid.extend(members[:n_valid])
            train.extend(members[n_valid:])
        return np.sort(np.array(train, dtype=int)), np.sort(np.array(valid, dtype=int))

    @staticmethod
    def _check_n_samples(panel: Panel, y) -> None:
        if len(y) != len(panel.lengths):
            raise ValueError(f"X has {len(panel.lengths)} samples but y has {len(y)}; they must match.")

    def _fit_network(self, panel: Panel, targets, n_outputs, stratify=None, X_unlabeled=None):
        """Pretrain (masked MSE) then fine-tune; sets ``network_``, ``history_`` and friends.

        ``panel`` comes from ``self._panel(X, fitting=True)``; ``targets`` is an array
        ready for the loss (class indices or standardised values), or None for
        representation learning (pretraining only).
        """
        device = resolve_device(self.device)
        extra = (
            None
            if X_unlabeled is None
            else to_panel(
                X_unlabeled,
                missing_values=self.missing_values,
                n_channels=panel.n_channels,
                estimator_name=type(self).__name__,
            )
        )
        if extra is not None and self.missing_values == "interpolate":
            extra = fill_missing(extra)
        self.n_channels_ = panel.n_channels
        self.n_features_in_ = panel.n_channels
        self.n_timepoints_ = int(panel.lengths.max())
        values = self._standardize(panel, fitting=True)

        fingerprint = self._fingerprint(panel, targets, extra) if self.checkpoint_path else None
        saved = Checkpointer(self.checkpoint_path, fingerprint).load() if fingerprint else None
        seed = saved["seed"] if saved else int(check_random_state(self.random_state).randint(2**31 - 1))
        checkpointer = Checkpointer(self.checkpoint_path, fingerprint, {"seed": seed}) if fingerprint else None
        rng = np.random.RandomState(seed)
        train_idx, valid_idx = self._split(len(panel.lengths), rng, stratify)

        data = self._tensors(panel, values, device, targets)
        train = data.subset(torch.from_numpy(train_idx))
        valid = data.subset(torch.from_numpy(valid_idx)) if len(valid_idx) else None
        pre_train = train
        if extra is not None:
            extra_values = self._standardize(extra, fitting=False)
            n_steps = max(values.shape[1], extra_values.shape[1])
            pad = lambda v: np.pad(v, ((0, 0), (0, n_steps - v.shape[1]), (0, 0)))  # noqa: E731
            both = Panel(
                np.concatenate([pad(values[train_idx]), pad(extra_values)]),
                np.concatenate([panel.lengths[train_idx], extra.lengths]),
            )
            pre_train = self._tensors(both, both.values, device)
            self.n_timepoints_ = max(self.n_timepoints_, int(extra.lengths.max()))

        supervised = targets is not None
        pretrain_epochs = self.pretrain_epochs if supervised else self.max_epochs
        history: list[dict] = []
        generator = torch.Generator().manual_seed(seed + 1)
        cuda_devices = [device.index or 0] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=cuda_devices):
            torch.manual_seed(seed)
            plan = self._plan_memory(len(train), self.n_timepoints_, device)
            network = self._build_network(panel.n_channels, self.n_timepoints_, n_outputs, plan).to(device)
            batch_size = plan.get("batch_size", self.batch_size)
            train_two_stage(
                network,
                self._task if supervised else None,
                (pre_train, valid),
                (train, valid),
                self._stage_settings(pretrain_epochs, device, batch_size) if pretrain_epochs > 0 else None,
                self._stage_settings(self.max_epochs, device, batch_size) if supervised else None,
                generator,
                history,
                self.mask_ratio,
                self.mask_length,
                checkpointer,
            )
        self.network_ = network.eval()
        self.device_ = str(device)
        self.history_ = history
        self.memory_plan_ = plan
        self._network_args = (panel.n_channels, self.n_timepoints_, n_outputs, plan)
        return self

    # ------------------------------------------------------------------ memory
    def _training_bytes(self, batch: int, length: int, device: torch.device, **overrides) -> int:
        s = self._encoder_settings() | overrides
        attention = ARCHITECTURES[self.architecture] is not None  # the EA-DC encoder family
        d_attention = round(s["attention_ratio"] * s["d_model"]) if attention else 0
        return estimate_stack_training_bytes(
            batch,
            length,
            s["d_model"],
            s["n_heads"],
            2 * s["n_blocks"],
            evolving=s["alpha"] > 0 or s["beta"] > 0,
            checkpoint=s["checkpoint_attention"],
            downsample=s["attention_downsample"],
            d_attention=d_attention,
            d_ff=s["d_ff"],
            bytes_per_value=2 if self._autocast_dtype(device) is not None else 4,
            device_type=device.type,
        )

    def _plan_memory(self, n_train: int, length: int, device: torch.device) -> dict:
        """Check the estimated training peak against the free memory of ``device``.

        Returns the overrides to train with ({} when the settings fit, or with ``memory_guard="off"``).
        Raises a ValueError naming the estimate and the settings that would fit when
        ``memory_guard="raise"``; with ``"auto"`` returns the first of those.
        """
        if self.memory_guard == "off":
            return {}
        batch = min(self.batch_size, max(n_train, 1))
        need = self._training_bytes(batch, length, device)
        free = available_memory_bytes(device)
        budget = MEMORY_HEADROOM * free
        if need <= budget:
            return {}
        candidates = []
        if self.checkpoint_attention is not True:
            candidates.append({"checkpoint_attention": True})
        for b in (16, 8, 4, 2, 1):
            if b < batch:
                candidates.append({"batch_size": b})
                candidates.append({"batch_size": b, "checkpoint_attention": True})
        for r in (2, 4, 8, 16):
            if r > self.attention_downsample:
                candidates.append({"attention_downsample": r})
                candidates.append(
                    {"attention_downsample": r, "batch_size": min(batch, 8), "checkpoint_attention": True}
                )
        fitting = []
        for option in candidates:
            est = self._training_bytes(option.get("batch_size", batch), length, device, **option)
            if est <= budget:
                fitting.append((option, est))
        gb = 2**30
        if self.memory_guard == "auto" and fitting:
            option, est = fitting[0]
            warnings.warn(
                f"{type(self).__name__}: training needs about {need / gb:.1f} GB but {device} has {free / gb:.1f} GB "
                f"free; training with {option} instead (about {est / gb:.1f} GB). The choice is in memory_plan_.",
                UserWarning,
                stacklevel=4,
            )
            return option
        shown = "; ".join(
            ", ".join(f"{k}={v}" for k, v in option.items()) + f" (about {est / gb:.1f} GB)"
            for option, est in fitting[:4]
        )
        raise ValueError(
            f"{type(self).__name__}: training would need about {need / gb:.1f} GB (batch {batch}, {length} steps, "
            f"{self.n_heads} heads, {2 * self.n_blocks} layers) but {device} has {free / gb:.1f} GB free. "
            + (f"Settings that would fit: {shown}. " if fitting else "No setting tried would fit. ")
            + "Pass one of them, or memory_guard='auto' to pick one, or memory_guard='off' to try anyway."
        )

    def _inference_batch_size(self, length: int, device: torch.device) -> int:
        """Largest chunk (at most max(batch_size, 256)) whose estimated inference peak fits in memory."""
        plan = getattr(self, "memory_plan_", None) or {}
        settings = self._encoder_settings(plan)
        attention = ARCHITECTURES[self.architecture] is not None  # the EA-DC encoder family
        budget = 0.5 * available_memory_bytes(device)
        chunk = max(self.batch_size, 256)
        while chunk > 1:
            est = estimate_stack_inference_bytes(
                chunk,
                length,
                settings["d_model"],
                settings["n_heads"],
                settings["attention_downsample"],
                round(settings["attention_ratio"] * settings["d_model"]) if attention else 0,
            )
            if est <= budget:
                break
            chunk //= 2
        return chunk

    # ------------------------------------------------------------------ inference
    def _forward(self, X, method: str = "forward") -> np.ndarray:
        check_is_fitted(self, "network_")
        panel = self._panel(X, fitting=False)
        if panel.lengths.max() > self.n_timepoints_:
            flat = self.pooling == "flatten"
            warnings.warn(
                f"X has series of up to {int(panel.lengths.max())} steps, longer than the longest seen in "
                f"fit ({self.n_timepoints_}); positions past {self.n_timepoints_} reuse the last learned "
                "positional embedding"
                + (
                    f", and the flattening head (pooling='flatten') reads only the first {self.n_timepoints_} "
                    "steps. Crop or resample X to the training length, or fit with pooling='mean'."
                    if flat
                    else "."
                ),
                UserWarning,
                stacklevel=3,
            )
        device = torch.device(self.device_)
        data = self._tensors(panel, self._standardize(panel, fitting=False), device)
        chunk = self._inference_batch_size(int(panel.lengths.max()), device)
        outputs = predict_outputs(self.network_, data, chunk, method, self._autocast_dtype(device))
        return outputs.cpu().numpy().astype(np.float64)

    # ------------------------------------------------------------------ persistence
    def __getstate__(self):
        state = self.__dict__.copy()
        if "network_" in state:
            # Weight-normed convs cannot be pickled as modules; save weights on CPU instead,
            # so a model fitted on a GPU also loads on a CPU-only machine.
            state["network_"] = {k: v.detach().cpu() for k, v in self.network_.state_dict().items()}
        return state

    def __setstate__(self, state):
        weights = state.get("network_")
        self.__dict__.update(state)
        if isinstance(weights, dict):
            device = self.device_
            if device.startswith("cuda") and not torch.cuda.is_available():
                device = self.device_ = "cpu"
            network = self._build_network(*self._network_args)
            network.load_state_dict(weights)
            self.network_ = network.to(device).eval()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        tags.input_tags.allow_nan = self.missing_values == "interpolate"
        return tags

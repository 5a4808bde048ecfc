"""The estimators' hyperparameters: one definition each (default, check, documentation).

The encoder's settings are defined by the fields of :class:`~eadct.networks.EncoderConfig`; the others
(task head, training, runtime) here. Each estimator lists the names it takes; its ``__init__`` (the usual
scikit-learn one: keyword arguments stored unchanged), its docstring and its validation are generated from
these definitions, so a parameter is never restated.
"""

from __future__ import annotations

import numbers

from ..networks import ARCHITECTURES, MEMORY_GUARDS, N_SEGMENTS, POOLINGS, encoder_settings
from ..networks.config import is_positive_int, is_switch_or_auto
from ._layers import POOL_LAYERS
from ._param import Param, _none_or, _number, _optimizer_class
from ._params_regressor import REGRESSOR_HEAD
from ._probe import HEAD_INIT
from ._sharpness import SAM_RHO

PRECISIONS = ("auto", "float32", "bfloat16")

_OTHER = {
    "architecture": Param(
        "ea-dc-transformer",
        lambda v: isinstance(v, str) and v in ARCHITECTURES,
        f"one of {sorted(ARCHITECTURES)}",
        'str, default="ea-dc-transformer"\n'
        '    The network, a row of the paper\'s tables: "ea-dc-transformer"; "dc-transformer" (alpha = beta = 0);\n'
        '    "transformer" (TST: attention_ratio 1, alpha = beta = 0); "dilated-conv" (attention_ratio 0);\n'
        '    "lstm" and "gru" (``n_blocks`` layers of width ``d_model``); "resnet" (Wang et al. 2017, width 128).\n'
        "    A row fixes the settings named in brackets and ignores those it does not use\n"
        "    (:data:`eadct.networks.ARCHITECTURES`, docs/model.md).",
    ),
    "pooling": Param(
        "segments",
        lambda v: v in POOLINGS,
        f"one of {list(POOLINGS)}",
        '{"mean", "max", "mean-max", "segments", "segments-max", "segments-std", "segments-attention",\n'
        '    "flatten"}, default="segments"\n'
        "    How the step representations become one vector per series (the head's input), over its valid\n"
        '    steps: their mean or max; "mean-max" both; "segments" the mean and the means of ``n_segments``\n'
        "    consecutive equal parts of each series (the coarse temporal layout, for any length);\n"
        '    "segments-max" / "segments-std" the mean, the max / each feature\'s standard deviation over the\n'
        '    series, then those part means; "segments-attention" the layout of "segments" with each part an\n'
        '    attention-weighted mean (learned queries, starting as "segments"). ``"flatten"`` is TST\'s head\n'
        "    input: the N x d step representations of the longest training series length N, concatenated\n"
        "    (shorter series zero-padded); the model then accepts series of at most N steps.\n"
        "    ``transform`` returns the pooled vector (docs/model.md).",
    ),
    "n_segments": Param(
        N_SEGMENTS,
        is_positive_int,
        "a positive int",
        f"int, default={N_SEGMENTS}\n"
        '    The consecutive equal parts of each series that ``pooling="segments"`` averages separately (the\n'
        "    head then reads ``(n_segments + 1) * d_model`` numbers); ignored by the other poolings.",
        before=N_SEGMENTS,
    ),
    "head_hidden_size": Param(
        None,
        _none_or(is_positive_int),
        "None or a positive int",
        "int or None, default=None\n"
        "    Hidden layer of the task head (None: the classification head is GELU, dropout, linear; the\n"
        "    regression head linear).",
    ),
    "max_epochs": Param(
        60,
        is_positive_int,
        "a positive int",
        "int, default=60\n    Fine-tuning epochs (at most; the paper's configuration: 100).",
    ),
    "pretrain_epochs": Param(
        20,
        lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0,
        "an int >= 0",
        "int, default=20\n    Pretraining epochs (at most; the paper's configuration: 50); 0 skips pretraining.",
    ),
    "max_steps": Param(
        None,
        _none_or(is_positive_int),
        "None or a positive int",
        "int or None, default=None\n"
        "    At most this many optimizer steps in each training stage, in whole epochs (at least one): on a\n"
        "    training set of more than ``max_steps / max_epochs`` batches, the stage runs fewer epochs\n"
        "    (``pretrain_epochs`` in pretraining) and ``average_epochs`` shrinks in the same proportion. A bound\n"
        "    on the fit time of large sets that leaves small ones as they are. None: no cap (docs/training.md).",
        before=None,
    ),
    "min_steps": Param(
        None,
        _none_or(is_positive_int),
        "None or a positive int",
        "int or None, default=None\n"
        "    Fine-tuning only: at least this many optimizer steps, in whole epochs. On a training set of fewer\n"
        "    than ``min_steps / max_epochs`` batches, fine-tuning runs more epochs and ``average_epochs`` grows in\n"
        "    the same proportion; ``max_steps`` still bounds it. More training for small sets that leaves large\n"
        "    ones as they are. None: no floor (docs/training.md).",
        before=None,
    ),
    "lr": Param(
        1e-3, _number(0), "a positive number", "float, default=1e-3\n    Learning rate (initial, see ``lr_schedule``)."
    ),
    "lr_schedule": Param(
        "constant",
        lambda v: v in ("constant", "cosine"),
        "'constant' or 'cosine'",
        '{"constant", "cosine"}, default="constant"\n'
        '    Learning rate over the epochs of each stage: constant, or ``"cosine"`` decay from ``lr`` towards 0\n'
        "    over ``max_epochs`` (``pretrain_epochs`` in pretraining).",
    ),
    "n_estimators": Param(
        1,
        is_positive_int,
        "a positive int",
        "int, default=1\n"
        "    Networks in the ensemble. 1: one network. k > 1 with ``validation_fraction`` > 0: a k-fold split of\n"
        "    the training data; member i trains on the other folds and chooses its best epochs on fold i. With\n"
        "    ``validation_fraction=0``: k networks from different seeds, each on all the training data\n"
        "    (InceptionTime's ensemble). Predictions average the members' probabilities (regression: outputs).\n"
        "    Costs about k times the fit and prediction time of one network (docs/training.md).",
    ),
    "batch_size": Param(
        16, is_positive_int, "a positive int", "int, default=16\n    Series per batch (the paper's configuration: 32)."
    ),
    "mask_ratio": Param(
        0.15, _number(0, 1), "in (0, 1)", "float, default=0.15\n    Share of input values masked in pretraining."
    ),
    "mask_length": Param(
        3.0,
        _number(1, low_open=False),
        "a number >= 1",
        "float, default=3.0\n    Mean length of a masked run (geometric run lengths).",
    ),
    "validation_fraction": Param(
        0.1,
        _number(0, 1, low_open=False),
        "in [0, 1)",
        "float, default=0.1\n"
        "    Share of the training data held out (stratified for classification) to choose the best epoch\n"
        "    (of pretraining; of fine-tuning with ``average_epochs=None``). 0: every series trains, and the\n"
        "    epoch with the lowest training loss is kept (also, with a warning, when the share rounds to no\n"
        "    series, e.g. classes of fewer than 5 members at 0.1). The paper's configuration: 0.1.",
    ),
    "average_epochs": Param(
        None,
        _none_or(is_positive_int),
        "None or a positive int",
        "int or None, default=None\n"
        "    Fine-tuning keeps the mean of the weights (and BatchNorm statistics) of its last ``average_epochs``\n"
        "    epochs instead of the best validation epoch, and runs all ``max_epochs`` (``n_iter_no_change``\n"
        "    then applies to pretraining only): stochastic weight averaging, no choice made on a small\n"
        "    validation split. None: the best epoch on the ``validation_fraction`` split, as in the paper\n"
        "    (docs/training.md).",
        before=None,
    ),
    "average_batch_norm": Param(
        "mean",
        lambda v: v in ("mean", "recompute"),
        "'mean' or 'recompute'",
        '{"mean", "recompute"}, default="mean"\n'
        "    With ``average_epochs``, the BatchNorm statistics of the averaged weights: the mean of the averaged\n"
        '    epochs\' running statistics, or "recompute": measured for the averaged weights in one more pass over\n'
        "    the training series (``torch.optim.swa_utils.update_bn``'s way; docs/training.md).",
        before="mean",
    ),
    "average_decay": Param(
        None,
        _none_or(_number(0, 1)),
        "None or a number in (0, 1)",
        "float or None, default=None\n"
        "    Fine-tuning keeps an exponential moving average of the weights (and BatchNorm statistics), updated\n"
        "    after every epoch with this weight on the average so far (0.9: about the last 10 epochs); the best\n"
        "    epoch on the ``validation_fraction`` split is chosen, and early stopping decided, with the averaged\n"
        "    weights, which are what is kept. Weight averaging that keeps the early stop, unlike\n"
        "    ``average_epochs`` (not together with it; docs/training.md).",
        before=None,
    ),
    "augmentation": Param(
        0.0,
        _number(0, low_open=False),
        "a number >= 0",
        "float, default=0.0\n"
        "    Strength of the magnitude augmentation of fine-tuning batches: each channel of each training\n"
        "    series is scaled by ``1 + augmentation * z`` (``z ~ N(0, 1)`` per series and channel, drawn anew\n"
        "    every batch) and gets noise of standard deviation ``0.3 * augmentation`` (standardised units).\n"
        "    Validation and prediction see the series as they are; 0 switches it off (docs/training.md).",
        before=0.0,
    ),
    "window_slicing": Param(
        0.0,
        _number(0, 1, low_open=False),
        "a number in [0, 1)",
        "float, default=0.0\n"
        "    Time augmentation of fine-tuning batches (window slicing): each training series is replaced by a\n"
        "    window of ``1 - window_slicing`` of its steps at a random place, stretched back to its length.\n"
        "    Validation and prediction see the series as they are; 0 switches it off (docs/training.md).",
        before=0.0,
    ),
    "mask_augmentation": Param(
        0.0,
        _number(0, 1, low_open=False),
        "a number in [0, 1)",
        "float, default=0.0\n"
        "    Masking of fine-tuning batches: a share ``mask_augmentation`` of each training series' values is set\n"
        "    to 0 (the channel mean) in runs of mean length ``mask_length`` per channel, the masks of pretraining,\n"
        "    drawn anew every batch. Validation and prediction see the series as they are; 0 switches it off\n"
        "    (docs/training.md).",
        before=0.0,
    ),
    "mixup": Param(
        0.0,
        _number(0, low_open=False),
        "a number >= 0",
        "float, default=0.0\n"
        "    Mixup of fine-tuning batches (Zhang et al. 2018): each batch trains on ``lam * x + (1 - lam) * x'``,\n"
        "    ``x'`` the batch in a random order and ``lam ~ Beta(mixup, mixup)`` drawn per batch, with the same\n"
        "    combination of the two targets' losses. Validation and prediction see the series as they are;\n"
        "    0 switches it off (docs/training.md).",
        before=0.0,
    ),
    "label_smoothing": Param(
        0.0,
        _number(0, 1, low_open=False),
        "a number in [0, 1)",
        "float, default=0.0\n"
        "    The classifier's fine-tuning loss is the cross-entropy against targets that spread this share of\n"
        "    the probability over all classes (``torch.nn.functional.cross_entropy``'s ``label_smoothing``);\n"
        "    the validation loss stays the plain cross-entropy. 0 switches it off (docs/training.md).",
        before=0.0,
    ),
    "n_iter_no_change": Param(
        20,
        _none_or(is_positive_int),
        "None or a positive int",
        "int or None, default=20\n"
        "    Stop a stage after this many epochs without a better validation result (the paper's configuration: 30).",
    ),
    "optimizer": Param(
        None,
        _none_or(_optimizer_class),
        "None or a torch.optim.Optimizer subclass (e.g. torch.optim.AdamW)",
        "torch.optim.Optimizer subclass or None, default=None\n"
        "    None means ``torch.optim.RAdam`` (the paper's optimizer). Any optimizer class taking\n"
        "    ``(params, lr=..., **optimizer_kwargs)`` works, torch-optimizer's too.",
    ),
    "optimizer_kwargs": Param(
        None,
        _none_or(lambda v: isinstance(v, dict)),
        "None or a dict",
        "dict or None, default=None\n    Extra optimizer arguments; None means ``betas=(0.9, 0.99)`` for RAdam.",
    ),
    "clip_grad_norm": Param(
        4.0,
        _none_or(_number(0)),
        "None or a positive number",
        "float or None, default=4.0\n    Gradient clipping by total norm.",
    ),
    "missing_values": Param(
        "raise",
        lambda v: v in ("raise", "interpolate", "trim"),
        "'raise', 'interpolate' or 'trim'",
        '{"raise", "interpolate", "trim"}, default="raise"\n'
        "    What to do with NaN in X: refuse with a ValueError; fill by linear interpolation along time (a\n"
        '    channel with no value in a series gets the channel\'s training mean); or, with "trim", read NaN after\n'
        "    a series' last value (in every channel) as padding, so that each series ends there: unequal lengths\n"
        "    padded with NaN, as tslearn writes them. Other NaN is then an error (docs/input.md).",
    ),
    "log_inputs": Param(
        False,
        is_switch_or_auto,
        "True, False or 'auto'",
        '{False, True, "auto"}, default=False\n'
        "    Before the channel standardisation, replace the channels' values x by the signed log\n"
        "    ``sign(x) * log1p(|x| / s)``, s the median of the channel's non-zero absolute values in TRAIN.\n"
        '    True: every channel; "auto": the channels whose TRAIN values are all non-negative with a heavy right\n'
        "    tail (skewness above 2: counts, volumes, rainfall), where a few series tens of standard deviations out\n"
        "    would otherwise drive the network; False: none. Fitted per channel as ``channel_log_scale_``\n"
        "    (docs/training.md).",
        before=False,
    ),
    "wide_scales": Param(
        False,
        lambda v: (isinstance(v, str) or not v) if is_switch_or_auto(v) else _number(1, float("inf"))(v),
        "False, 'auto' or a number above 1",
        '{False, "auto"} or float, default=False\n'
        "    What to do with a channel whose TRAIN series differ in scale by orders of magnitude (the 90th percentile\n"
        '    of their standard deviations more than a threshold times the 10th; "auto": 1,000 times,\n'
        "    ``eadct.estimators.SCALE_SPREAD``; a number: that ratio): appliance currents, counts, sensors of devices\n"
        "    that are off or on, where the channel standardisation would leave the quiet series near zero. Where\n"
        "    some channel does, that channel is logged as ``log_inputs=True`` logs it, and the network reads each\n"
        "    series standardised by its own level and spread as with ``series_normalization=True``; elsewhere\n"
        "    nothing changes. False: neither. Fitted as ``wide_scale_channels_`` (docs/training.md).",
        before=False,
    ),
    "device": Param(
        "auto",
        None,
        "",
        '{"auto", "cpu", "cuda", ...} or torch.device, default="auto"\n    "auto" takes CUDA when available.',
    ),
    "n_jobs": Param(
        None,
        _none_or(lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool) and v != 0),
        "None or a non-zero int",
        "int or None, default=None\n"
        "    CPU threads of torch in fit, predict and transform, set once when the call starts and restored\n"
        "    after (the process's count is never left changed). None: the limit in force when the call starts\n"
        "    (``torch.get_num_threads()``, which ``threadpoolctl.threadpool_limits``, ``OMP_NUM_THREADS`` and a\n"
        "    joblib worker's share lower), at most the cores the process may use (CPU affinity, container\n"
        "    quota); never the machine's momentary load, so the same call in the same environment gives the same\n"
        "    result. An int: joblib's meaning (k threads, at most the cores; -1 all cores; -2 all but one).\n"
        "    Results can differ in the last float digits between thread counts (docs/threads.md).",
    ),
    "precision": Param(
        "auto",
        lambda v: v in PRECISIONS,
        f"one of {sorted(PRECISIONS)}",
        '{"auto", "float32", "bfloat16"}, default="auto"\n    "auto" is bf16 autocast on CUDA and float32 on CPU.',
    ),
    "memory_guard": Param(
        "raise",
        lambda v: v in MEMORY_GUARDS,
        f"one of {sorted(MEMORY_GUARDS)}",
        '{"raise", "auto", "off"}, default="raise"\n'
        "    Before training, the peak memory is estimated from the data shape and settings\n"
        '    (:func:`eadct.networks.plan_training_memory`). Where it exceeds what the device has free, "raise"\n'
        '    stops with a ValueError naming the estimate and settings that would fit; "auto" picks the first of\n'
        "    them (recomputation, then a smaller batch, then downsampling) and records it in ``memory_plan_``;\n"
        '    "off" skips the check.',
    ),
    "checkpoint_path": Param(
        None,
        None,
        "",
        "str or path or None, default=None\n"
        "    Where to save the training state after every epoch. A fit started again with the same parameters\n"
        "    and data resumes from it (and a finished fit is loaded instead of retrained).",
    ),
    "random_state": Param(
        None,
        None,
        "",
        "int, RandomState or None, default=None\n"
        "    Seeds initialisation, the validation split, shuffling, masks and dropout; the same int gives\n"
        "    identical predictions on CPU.",
    ),
    "verbose": Param(False, None, "", "bool, default=False\n    Progress bars (tqdm) with per-epoch losses."),
}

#: Every parameter, ``name -> Param``: the encoder's from EncoderConfig, then the others.
PARAMS: dict[str, Param] = {
    **{
        # a model saved before a setting was exposed (conv_kernel_size) used its default
        name: Param(f.default, f.metadata["check"], f.metadata["what"], f.metadata["doc"], before=f.default)
        for name, f in encoder_settings().items()
    },
    **_OTHER,
    **REGRESSOR_HEAD,
    **HEAD_INIT,
    **POOL_LAYERS,
    **SAM_RHO,
}
ENCODER_PARAMS = tuple(encoder_settings())

#: The supervised estimators' parameters, in signature order.
SUPERVISED = (
    "architecture", "alpha", "beta", "attention_ratio", "d_model", "n_heads", "n_blocks", "attention_kernel_size",
    "conv_kernel_size", "conv_causal", "dilation_per_layer", "stem_kernel_size", "positional_encoding",
    "relative_positions",
    "input_differences", "series_normalization", "d_ff", "dropout", "drop_path", "norm", "recompute_attention",
    "attention_downsample", "attention_tokens", "pooling", "n_segments", "pool_layers", "head_hidden_size", "head_init",
    "max_epochs", "pretrain_epochs", "max_steps", "min_steps", "lr", "lr_schedule", "batch_size", "mask_ratio",
    "mask_length",
    "validation_fraction", "n_iter_no_change", "average_epochs", "average_batch_norm", "average_decay",
    "augmentation", "window_slicing", "mask_augmentation", "mixup", "sam_rho", "n_estimators", "optimizer",
    "optimizer_kwargs", "clip_grad_norm", "missing_values", "log_inputs", "wide_scales", "device", "n_jobs",
    "precision", "memory_guard", "checkpoint_path", "random_state", "verbose",
)  # fmt: skip
#: ``EADCTRegressor``'s parameters: the supervised ones, its loss, its head refit and the clips of its predictions and
#: of its representation.
REGRESSOR = (
    SUPERVISED[: SUPERVISED.index("head_hidden_size") + 1]
    + ("loss", "head_refit", "head_input_parts", "clip_predictions", "clip_representation")
    + SUPERVISED[SUPERVISED.index("head_hidden_size") + 1 :]
)
#: ``EADCTClassifier``'s parameters: the supervised ones and its label smoothing.
CLASSIFIER = (
    SUPERVISED[: SUPERVISED.index("window_slicing") + 1]
    + ("label_smoothing",)
    + SUPERVISED[SUPERVISED.index("window_slicing") + 1 :]
)
#: ``EADCTClassifier``'s own defaults where they differ from ``PARAMS`` (the representation's): weight averaging of the
#: last 20 fine-tuning epochs, every TRAIN series training, batches of 8, 8 segments, each chosen by the TRAIN screen
#: and the benchmark for classification; 40 fine-tuning epochs, a decision for time; the log and each series' own
#: standardisation where a channel's series' scales spread more than 10^2 times, which no shared classification set's do
#: (10^1.75 at most); and the first differences where X has one channel that ``wide_scales`` leaves as it is, as no
#: shared classification set has (docs/accuracy.md).
CLASSIFIER_DEFAULTS = {"average_epochs": 20, "validation_fraction": 0.0, "batch_size": 8, "n_segments": 8,
                       "max_epochs": 40, "wide_scales": 100.0, "input_differences": "auto"}  # fmt: skip
#: ``EADCTRegressor``'s own defaults where they differ from ``PARAMS``: the same averaging, within 900 optimizer
#: steps per stage (the cap bounds the time of the lost early stop on large sets), the input's treatment chosen on
#: TRAIN (by a kernel ridge proxy, then on an inner split where the cap does not bind), and the convolutions'
#: dilation doubling with every layer, not every block (docs/accuracy.md).
REGRESSOR_DEFAULTS = {"average_epochs": 20, "validation_fraction": 0.0, "max_steps": 900, "input_differences": "auto",
                      "dilation_per_layer": True}  # fmt: skip
#: The settings of fine-tuning's StageSettings that the estimators pass by name (the step floor, weight averaging,
#: augmentations, mixup, the classifier's label smoothing).
FINE_TUNING_ONLY = ("min_steps", "average_epochs", "average_batch_norm", "average_decay", "augmentation",
                    "window_slicing", "mask_augmentation", "mixup", "label_smoothing", "sam_rho")  # fmt: skip
#: The representation has no task head and no fine-tuning: ``max_epochs`` are its pretraining epochs.
_NO_HEAD = ("head_hidden_size", "head_init", "pretrain_epochs", "n_estimators", *FINE_TUNING_ONLY)
UNSUPERVISED = tuple(n for n in SUPERVISED if n not in _NO_HEAD)
#: Old names still accepted by ``__init__`` (with a FutureWarning), new name.
RENAMED = {"checkpoint_attention": "recompute_attention"}

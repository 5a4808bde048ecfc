"""The estimators' hyperparameters: one definition each (default, check, documentation), and which estimator
takes which, flat in its signature or as a field of its ``options``.

The encoder's settings are defined by the fields of :class:`~eadct.networks.EncoderConfig`; the others (pooling,
training, input, runtime, the regressor's head) here. Each estimator lists the names it takes; its ``__init__``
(the usual scikit-learn one: keyword arguments stored unchanged), its docstring, its ``options`` and its validation
are generated from these definitions (:mod:`._options`, :mod:`._signature`), so a parameter is never restated.
"""

from __future__ import annotations

import numbers

from ..networks import ARCHITECTURES, MEMORY_GUARDS, N_SEGMENTS, POOLINGS, encoder_settings
from ..networks.config import is_positive_int, is_switch_or_auto
from ..training import REGRESSION_LOSSES
from ._param import Param, _none_or, _number, _optimizer_class
from ._ridge import REFITS

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
        lambda v: isinstance(v, str) and v in POOLINGS,
        f"one of {list(POOLINGS)}",
        f'{{{", ".join(map(repr, POOLINGS))}}}, default="segments"\n'
        "    How the step representations become one vector per series (the head's input), over its valid\n"
        "    steps, a name in the pooling registry (:data:`eadct.networks.POOLINGS`):\n"
        + "".join(f"    {name!r}: {p.description}\n" for name, p in POOLINGS.items())
        + "    ``transform`` returns the pooled vector (docs/model.md).",
    ),
    "n_segments": Param(
        N_SEGMENTS,
        is_positive_int,
        "a positive int",
        f"int, default={N_SEGMENTS}\n"
        '    The consecutive equal parts of each series that ``pooling="segments"`` averages separately (the\n'
        "    head then reads ``(n_segments + 1) * d_model`` numbers); the other poolings do not read it.",
        before=N_SEGMENTS,
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
    "lr": Param(
        1e-3, _number(0), "a positive number", "float, default=1e-3\n    Learning rate (initial, see ``lr_schedule``)."
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
    "wide_scales": Param(
        False,
        lambda v: (isinstance(v, str) or not v) if is_switch_or_auto(v) else _number(1, float("inf"))(v),
        "False, 'auto' or a number above 1",
        '{False, "auto"} or float, default=False\n'
        "    What to do with a channel whose TRAIN series differ in scale by orders of magnitude (the 90th percentile\n"
        '    of their standard deviations more than a threshold times the 10th; "auto": 1,000 times,\n'
        "    ``eadct.estimators.SCALE_SPREAD``; a number: that ratio): appliance currents, counts, sensors of devices\n"
        "    that are off or on, where the channel standardisation would leave the quiet series near zero. Where\n"
        "    some channel does, that channel's values x become ``sign(x) * log1p(|x| / s)`` (s the median of its\n"
        "    non-zero absolute TRAIN values), and the network reads each series standardised by its own level and\n"
        "    spread as with ``series_normalization=True``; elsewhere\n"
        "    nothing changes. False: neither. Fitted as ``wide_scale_channels_`` (docs/training.md).",
        before=False,
    ),
    "options": Param(
        None,
        _none_or(lambda v: isinstance(v, dict)),
        "None or a dict",
        "dict or None, default=None\n    The settings most users leave at their defaults (listed by each estimator).",
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

_REGRESSOR_HEAD = {
    "loss": Param(
        "squared_error",
        lambda v: isinstance(v, str) and v in REGRESSION_LOSSES,
        f"one of {list(REGRESSION_LOSSES)}",
        '{"squared_error", "huber"}, default="squared_error"\n'
        "    The regressor's fine-tuning loss, which also chooses its best epoch on the validation split.\n"
        '    "squared_error": MSE on targets standardised by their mean and standard deviation (paper Eq. 9).\n'
        '    "huber": the Huber loss on targets centred on their median and scaled by their interquartile range\n'
        "    (/ 1.349): quadratic up to 1.35 such units from the target, linear beyond, so that a few extreme\n"
        "    targets in TRAIN cannot dominate the fit (docs/training.md).",
        before="squared_error",
    ),
    "head_refit": Param(
        "ridge",
        lambda v: v in REFITS,
        f"one of {list(REFITS)}",
        'None, "ridge" or "ridge-1se", default="ridge"\n'
        '    None: the regressor\'s linear head as fine-tuned. "ridge": after fine-tuning, fitted again by ridge\n'
        "    regression on the pooled representation of every TRAIN series, its strength the one with the lowest\n"
        '    leave-one-out error on TRAIN. "ridge-1se": the same, its strength the largest whose leave-one-out\n'
        "    error is within one standard error of the lowest (more shrinkage towards the mean target where the\n"
        '    errors cannot tell strengths apart). With loss="huber" the head stays as fine-tuned, whose robustness\n'
        "    a squared-error refit would undo (docs/training.md).",
        before=None,
    ),
}

#: Every setting, ``name -> Param``: the encoder's from EncoderConfig, then the others. The estimators' internals
#: read them flat (:func:`eadct.estimators._options.settings`), whether a user passes them flat or in ``options``.
PARAMS: dict[str, Param] = {
    **{
        # a model saved before a setting was exposed (conv_kernel_size) used its default
        name: Param(f.default, f.metadata["check"], f.metadata["what"], f.metadata["doc"], before=f.default)
        for name, f in encoder_settings().items()
    },
    **_OTHER,
    **_REGRESSOR_HEAD,
}
ENCODER_PARAMS = tuple(encoder_settings())

#: The supervised estimators' signature, in order: what users tune and grid-search, flat.
SUPERVISED = (
    "architecture",
    "alpha",
    "beta",
    "attention_ratio",
    "d_model",
    "n_heads",
    "n_blocks",
    "d_ff",
    "dropout",
    "pooling",
    "max_epochs",
    "pretrain_epochs",
    "batch_size",
    "lr",
    "optimizer",
    "optimizer_kwargs",
    "validation_fraction",
    "n_iter_no_change",
    "n_estimators",
    "missing_values",
    "options",
    "device",
    "n_jobs",
    "random_state",
    "verbose",
    "checkpoint_path",
)
#: The fields of ``options`` that every estimator has: settings that most users leave at their defaults.
OPTIONS = (
    "attention_kernel_size",
    "conv_kernel_size",
    "dilation_per_layer",
    "positional_encoding",
    "norm",
    "recompute_attention",
    "attention_downsample",
    "attention_tokens",
    "n_segments",
    "input_differences",
    "series_normalization",
    "wide_scales",
    "max_steps",
    "mask_ratio",
    "mask_length",
    "average_epochs",
    "clip_grad_norm",
    "precision",
    "memory_guard",
)
#: The representation has no task head and no fine-tuning: ``max_epochs`` are its pretraining epochs.
UNSUPERVISED = tuple(n for n in SUPERVISED if n not in ("pretrain_epochs", "n_estimators"))
UNSUPERVISED_OPTIONS = tuple(n for n in OPTIONS if n != "average_epochs")
#: ``EADCTRegressor``'s ``options`` add its loss and its head's refit.
REGRESSOR_OPTIONS = OPTIONS + tuple(_REGRESSOR_HEAD)

#: ``EADCTClassifier``'s own defaults where they differ from ``PARAMS`` (the representation's), flat or in
#: ``options``: weight averaging of the last 20 fine-tuning epochs, every TRAIN series training, batches of 8,
#: 8 segments, 40 fine-tuning epochs, the log and each series' own standardisation where a channel's series' scales
#: spread more than 10^2 times, and the first differences where X has one channel that ``wide_scales`` leaves as
#: it is. How each was chosen: docs/accuracy.md.
CLASSIFIER_DEFAULTS = {
    "average_epochs": 20,
    "validation_fraction": 0.0,
    "batch_size": 8,
    "n_segments": 8,
    "max_epochs": 40,
    "wide_scales": 100.0,
    "input_differences": "auto",
}
#: ``EADCTRegressor``'s own defaults where they differ from ``PARAMS``: the same averaging, the input's treatment
#: chosen on TRAIN by a kernel ridge proxy, and the convolutions' dilation doubling with every layer, not every block
#: (docs/accuracy.md). No step cap (``max_steps=None``, as the classifier): its only TRAIN-only measurement,
#: FloodModeling1's hold-outs, was x1.14 worse with the cap of 900, which had been kept on TEST scores, for time.
REGRESSOR_DEFAULTS = {
    "average_epochs": 20,
    "validation_fraction": 0.0,
    "input_differences": "auto",
    "dilation_per_layer": True,
}
#: The representation keeps mean pooling (one d_model vector per series, docs/model.md).
REPRESENTATION_DEFAULTS = {"pooling": "mean"}

#: Old names still accepted (with a FutureWarning), new name.
RENAMED = {"checkpoint_attention": "recompute_attention"}
#: Parameters removed in this release, each at the value that did nothing: passed at that value a FutureWarning
#: (for one release), at any other a TypeError; a saved model that used another value does not load
#: (CHANGELOG.md, "Removed").
REMOVED = {
    "relative_positions": False,
    "drop_path": 0.0,
    "conv_causal": True,
    "stem_kernel_size": 1,
    "pool_layers": "last",
    "head_init": "random",
    "head_hidden_size": None,
    "head_input_parts": None,
    "clip_predictions": False,
    "clip_representation": False,
    "log_inputs": False,
    "lr_schedule": "constant",
    "min_steps": None,
    "average_batch_norm": "mean",
    "average_decay": None,
    "augmentation": 0.0,
    "window_slicing": 0.0,
    "mask_augmentation": 0.0,
    "mixup": 0.0,
    "label_smoothing": 0.0,
    "sam_rho": 0.0,
}

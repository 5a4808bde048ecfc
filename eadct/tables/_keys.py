"""What a unit's key hashes of the estimator settings a profile starts from.

A unit's results are stored under a hash of everything that decides them (``TableConfig.model_key``), so a
changed configuration never reuses stale results and equal specifications share theirs. Defaults change
between versions, and two rows can ask for the same fit in different ways (a row that sets
``average_epochs=20`` before that is the default, and the default row after). So the key does not hash the
current defaults themselves: it hashes the reference below (the settings when result keys were last reset)
and, as if a row had set them, every setting whose value today differs from that reference.

The reference is a record, not a definition: the defaults are defined once, in ``eadct.estimators``. Never
edit an entry to follow a changed default (that would silently reuse results fitted under the old one). A new
estimator parameter is added here with the value that does what the estimators did before it existed (a test
asks for it), so that adding an option keeps every stored result.
"""

from __future__ import annotations

#: The estimators' defaults (``get_params()``; then the classifier's and the regressor's were equal) when the
#: keys were last reset, without the settings that do not decide a result or that each unit sets (``UNKEYED``).
REFERENCE_DEFAULTS = {
    "alpha": 0.5,
    "attention_downsample": "auto",
    "attention_kernel_size": 3,
    "attention_ratio": 0.25,
    "attention_tokens": 128,
    "augmentation": 0.0,
    "average_batch_norm": "mean",
    "average_decay": None,
    "average_epochs": None,
    "batch_size": 16,
    "beta": 0.3,
    "clip_grad_norm": 4.0,
    "clip_predictions": False,
    "clip_representation": False,
    "conv_causal": True,
    "conv_kernel_size": 3,
    "d_ff": 256,
    "d_model": 64,
    "dilation_per_layer": False,
    "dropout": 0.1,
    "drop_path": 0.0,
    "head_hidden_size": None,
    "head_init": "random",
    "head_refit": None,
    "head_input_parts": None,
    "input_differences": False,
    "label_smoothing": 0.0,
    "log_inputs": False,
    "lr": 0.001,
    "loss": "squared_error",
    "lr_schedule": "constant",
    "mask_augmentation": 0.0,
    "mask_length": 3.0,
    "mask_ratio": 0.15,
    "max_epochs": 60,
    "max_steps": None,
    "min_steps": None,
    "mixup": 0.0,
    "n_blocks": 2,
    "n_estimators": 1,
    "n_heads": 8,
    "n_iter_no_change": 20,
    "norm": "batch",
    "optimizer": None,
    "optimizer_kwargs": None,
    "pooling": "segments",
    "pool_layers": "last",
    "positional_encoding": "learned",
    "n_segments": 4,
    "precision": "auto",
    "pretrain_epochs": 20,
    "recompute_attention": "auto",
    "relative_positions": False,
    "sam_rho": 0.0,
    "series_normalization": False,
    "stem_kernel_size": 1,
    "validation_fraction": 0.1,
    "wide_scales": False,
    "window_slicing": 0.0,
}

#: The names in ``eadct.PAPER_CONFIGURATION`` when the keys were last reset: the base settings a key lists.
REFERENCE_BASE_NAMES = (
    "d_model",
    "n_heads",
    "n_blocks",
    "alpha",
    "beta",
    "attention_ratio",
    "attention_downsample",
    "pooling",
    "max_epochs",
    "pretrain_epochs",
    "n_iter_no_change",
    "lr",
    "lr_schedule",
    "batch_size",
    "validation_fraction",
    "n_estimators",
)

#: Settings that do not decide a result (where and how verbosely it runs) or that each unit sets itself.
UNKEYED = {
    "architecture",
    "checkpoint_path",
    "device",
    "memory_guard",
    "missing_values",
    "n_jobs",
    "random_state",
    "verbose",
}


def estimator_class(task: str):
    """The estimator of a task: ``EADCTClassifier`` or ``EADCTRegressor``."""
    from ..estimators import EADCTClassifier, EADCTRegressor

    return EADCTClassifier if task == "classification" else EADCTRegressor


def dataset_task(name: str) -> str:
    """The task of a dataset the registry knows (``eadct.datasets.get_info``); "classification" for one it
    does not (a key only: a unit's fit takes its task from the loaded data)."""
    from ..datasets import get_info

    info = get_info(name)
    return "classification" if info is None else info.task


def current_defaults(task: str = "classification") -> dict:
    """The defaults of the estimator of ``task`` today, without ``UNKEYED``."""
    return {k: v for k, v in estimator_class(task)()._settings().items() if k not in UNKEYED}


def _data_decisions(info, wide_scales) -> dict:
    """What each default whose "auto" decides from the data decides on the set of registry entry ``info``, where
    the entry says (a decision left out where it does not): ``wide_scales`` (its value in the defaults: "auto" or
    a threshold) from the set's measured scale spread, and on a
    classification set the classifier's ``input_differences`` from its channels and ``wide_scales``' decision
    (``differences_rule``: never with several channels)."""
    from ..estimators import differences_rule, spread_threshold

    out = {}
    threshold = spread_threshold(wide_scales)
    if threshold is None or info.scale_spread is not None:
        out["wide_scales"] = threshold is not None and bool(10**info.scale_spread > threshold)
    if info.task == "classification" and (info.n_channels > 1 or "wide_scales" in out):
        out["input_differences"] = differences_rule(info.n_channels, out.get("wide_scales", False))
    return out


def decided(changed: dict, dataset: str | None) -> dict:
    """``changed`` less each data-dependent default (an "auto", or ``wide_scales``' threshold) that decides the
    reference's value on ``dataset`` (by its registry entry, ``eadct.datasets.get_info``): there the fit is the
    reference's to every bit, so the key stays the one of the fit before the default changed (``wide_scales="auto"``
    on a set whose scales are not wide). A set the registry does not know keeps the default in its key."""
    from ..datasets import get_info

    info = None if dataset is None else get_info(dataset)
    decisions = {} if info is None else _data_decisions(info, changed.get("wide_scales", False))
    data_dependent = {k for k, v in changed.items() if v == "auto" or (k == "wide_scales" and v is not False)}
    return {
        k: v
        for k, v in changed.items()
        if not (k in data_dependent and k in decisions and decisions[k] == REFERENCE_DEFAULTS[k])
    }


def key_base(base: str, task: str = "classification", dataset: str | None = None) -> tuple[dict, dict]:
    """``(base settings, changed settings)`` a unit's key hashes for a profile whose fits start from ``base``
    ("paper": ``eadct.PAPER_CONFIGURATION`` over the defaults; "defaults": the estimators' defaults), on a
    dataset of ``task``.

    The base settings are the reference's names with the base's values as the reference has them (the paper's
    values for "paper"); the changed settings are those whose value today differs from that. While nothing
    has changed since the reference this is the key's former content, so stored results keep their keys; nor
    does a default whose "auto" decides the reference's value on ``dataset`` (:func:`decided`)."""
    from ..estimators import flatten, paper_configuration

    now = current_defaults(task)
    if base == "paper":
        paper = flatten(paper_configuration(task))  # a setting removed since keeps the reference's value
        listed = {k: paper.get(k, REFERENCE_DEFAULTS[k]) for k in REFERENCE_BASE_NAMES}
        now.update(paper)
    else:
        listed = {k: REFERENCE_DEFAULTS[k] for k in REFERENCE_BASE_NAMES}
    reference = {**REFERENCE_DEFAULTS, **listed}
    changed = {k: v for k, v in now.items() if k not in reference or reference[k] != v}
    return listed, decided(changed, dataset)


#: Encoder settings that the estimators read too (the regressor chooses ``input_differences="auto"`` on TRAIN's
#: series and targets), so that a row whose network ignores them can still fit differently: they stay in every key.
READ_OUTSIDE_THE_ENCODER = frozenset({"input_differences"})


def unread(changed: dict, architecture: str) -> dict:
    """``changed`` less the encoder settings that ``architecture``'s network does not read (its registry entry's
    ``uses``): there a changed default leaves the fit as it was to every bit, so the key stays the one of the fit
    before the default changed (the Transformer row has no convolution branch, so the regressor's
    ``dilation_per_layer`` does not move its units). The recurrent rows' memory estimates still read the stack's
    widths, which changes a fit only where the planner finds memory short (never on the 2-core CPU's sets)."""
    from ..networks import get_architecture
    from ..networks.config import encoder_settings

    ignored = set(encoder_settings()) - get_architecture(architecture).uses - READ_OUTSIDE_THE_ENCODER
    return {k: v for k, v in changed.items() if k not in ignored}


def key_params(listed: dict, changed: dict, row: dict) -> dict:
    """The settings a unit's key hashes beside its base: the defaults ``changed`` since the reference, then the
    row's own ``row``. A row that sets a changed default back to the reference's value (with the base's ``listed``
    values) asks for the fit the reference made, so that entry leaves the key: ``wide_scales=False`` on a
    classification set is the classifier's fit before ``wide_scales`` existed, and shares its results. A row's
    other settings stay in the key as they are, equal to the reference or not (stored keys do not move)."""
    reference = {**REFERENCE_DEFAULTS, **listed}
    back = {
        k
        for k, v in row.items()
        if k in changed and k in reference and reference[k] == v and type(reference[k]) is type(v)
    }
    return {k: v for k, v in {**changed, **row}.items() if k not in back}

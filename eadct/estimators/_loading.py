"""An estimator from the state in a model file, read as data: the reading side of :func:`eadct.load`.

:func:`estimator_from_state` takes the JSON state of a file's header and the file's tensor table, and builds the
estimator through its declared schema (:mod:`._state`): parameters as ``fit`` checks them, fitted attributes of
their declared types and shapes, networks whose weights' shapes and dtypes were checked against the network that
the settings declare, built on torch's "meta" device first. Nothing named in the file selects a class, a function
or a method, and nothing is allocated for a network before its size is known to match the file's tensors.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from ._options import settings as flat_settings
from ._params import REMOVED, RENAMED
from ._persistence import _upgrade_state
from ._signature import check_params
from ._state import FITTED_STATE, check_fitted, is_device, is_int, is_scalar
from ._treatment import as_checked
from ._warn import warn_user


def estimator_from_state(cls: type, state: dict, file, fail: Callable[[str], Exception], device: str | None):
    """The ``cls`` estimator that ``state`` (the header's decoded JSON) declares, its arrays and weights read from
    ``file`` (``file.info``: each tensor's safetensors dtype and shape; ``file.tensor(name)`` reads one) only after
    every check passed; ``fail(problem)`` builds the error to raise; ``device`` (checked by the caller) or where
    the networks were fitted, when this machine has that device."""
    params, fitted = _split_state(state, cls, fail)
    estimator = cls(**params)
    if not fitted:
        _no_tensors_left(file, set(), fail)
        return estimator
    sizes = check_fitted(fitted, cls.__name__, fail)
    if cls.__name__ != "EADCTRepresentation" and sizes["M"] != estimator.n_estimators:
        raise fail(f"it holds {sizes['M']} network(s) for n_estimators={estimator.n_estimators}")
    _no_tensors_left(file, _tensor_refs(fitted, cls.__name__, sizes, file, fail), fail)
    for name, value in fitted.items():
        if name == "classes_":
            value = _labels(value, file, sizes["O"], fail)
        elif isinstance(value, _TensorRef):
            value = file.tensor(value.name).numpy()
        if name not in ("network_", "networks_"):
            setattr(estimator, name, value)
    estimator.device_ = device or device_here(fitted["device_"])
    estimator.networks_ = _networks(estimator, [fitted["network_"], *fitted["networks_"]], file, fail)
    estimator.network_ = estimator.networks_[0]
    return estimator


#: Bounds on what no weight of a loaded network accounts for but every predict pays, per series (float32 values
#: of the network's width): the length it was fitted on (``n_timepoints_``; the learned positional table bounds
#: it, but a sinusoidal one does not), the steps its dilated convolutions pad a series by (a fit never needs a
#: dilation beyond its series: the taps there read only zeros; 12 blocks whose dilation doubles with every layer
#: pad by 2**24) and the window attention pools its tokens over (each series is padded to a multiple of it).
#: Each is far above any fit docs/long_series.md measures (series of up to 10**4 steps).
MAX_STEPS, MAX_PADDING, MAX_DOWNSAMPLE = 2**22, 2**16, 2**13
#: How deep a setting's JSON may nest (a model's settings nest a few levels).
MAX_DEPTH = 32
#: A model file's tensor dtypes (safetensors' names): torch's dtype, numpy's kind, bytes per value.
_DTYPES = {
    "F64": (torch.float64, "f", 8),
    "F32": (torch.float32, "f", 4),
    "F16": (torch.float16, "f", 2),
    "BF16": (torch.bfloat16, "f", 2),
    "I64": (torch.int64, "i", 8),
    "I32": (torch.int32, "i", 4),
    "I16": (torch.int16, "i", 2),
    "I8": (torch.int8, "i", 1),
    "U8": (torch.uint8, "u", 1),
    "BOOL": (torch.bool, "b", 1),
}


class _TensorRef:
    """A tensor of the file that the state names, before it is read."""

    def __init__(self, name: str):
        self.name = name


def short_text(value, limit: int = 120) -> str:
    """Text from a file, for a message: its ``repr`` (no control characters reach the terminal), shortened."""
    text = repr(value) if not isinstance(value, Exception) else repr(str(value))[1:-1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _split_state(state: dict, cls: type, fail) -> tuple[dict, dict]:
    """The parameters (old names renamed, those added since filled in as for a pickle) and the fitted attributes,
    each decoded by what it is; any other key is refused."""
    names = set(cls._get_param_names())
    schema = FITTED_STATE[cls.__name__]
    known = names | set(RENAMED) | set(REMOVED) | set(cls._option_names)  # old flat names: ``_upgrade_state``
    unknown = sorted(k for k in state if k not in known and k not in schema)
    if unknown:
        raise fail(f"{cls.__name__} has no setting or fitted attribute {', '.join(map(short_text, unknown[:5]))}")
    params = {k: _decode_setting(k, v, 0, fail) for k, v in state.items() if k not in schema}
    try:
        _upgrade_state(params, cls)
    except ValueError as err:
        raise fail(short_text(err, 600).removesuffix(".")) from None
    bad = [f"{n}={short_text(params[n])}" for n, check in _UNCHECKED.items() if n in params and not check(params[n])]
    if bad:
        raise fail(f"invalid parameters {', '.join(bad)}")
    if params.get("checkpoint_path") is not None:
        warn_user(
            f"The loaded model's checkpoint_path={short_text(params['checkpoint_path'])} is set to None: a file never "
            "chooses where eadct writes. Set it again before a refit that should write checkpoints."
        )
        params["checkpoint_path"] = None
    try:
        check_params(as_checked(flat_settings(params, cls)), cls.__name__)
    except (ValueError, TypeError, ArithmeticError) as err:
        raise fail(short_text(err, 600).removesuffix(".")) from None
    fitted = {k: _decode_fitted(k, v, schema[k].kind, fail) for k, v in state.items() if k in schema}
    return params, fitted


#: What a file may set the parameters to that ``check_params`` leaves to the code that reads them.
_UNCHECKED = {
    "device": lambda v: v is None or v == "auto" or is_device(v),
    "checkpoint_path": lambda v: v is None or isinstance(v, str),
    "random_state": lambda v: v is None or is_int(v),
    "verbose": lambda v: isinstance(v, bool) or (is_int(v) and v >= 0),
}


def _decode_setting(name: str, value, depth: int, fail):
    """A parameter's value: JSON, tuples, dicts with other keys, torch dtypes, and (for ``optimizer`` only) an
    optimizer class that this process has defined; never an array, a tensor or any other class."""
    if depth > MAX_DEPTH:
        raise fail(f"{name} nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, list):
        return [_decode_setting(name, v, depth + 1, fail) for v in value]
    if not isinstance(value, dict):
        return value
    marker = next((k for k in value if k.startswith("__")), None)
    if marker is None:
        return {k: _decode_setting(name, v, depth + 1, fail) for k, v in value.items()}
    content = value[marker]
    if len(value) != 1 or marker not in ("__tuple__", "__items__", "__torch_dtype__", "__class__"):
        raise fail(f"{name} holds {marker!r}, which a setting cannot hold")
    if marker == "__tuple__" and isinstance(content, list):
        return tuple(_decode_setting(name, v, depth + 1, fail) for v in content)
    if marker == "__items__" and isinstance(content, list):
        if not all(isinstance(p, list) and len(p) == 2 and is_scalar(p[0]) for p in content):
            raise fail(f"{name} holds a malformed __items__ entry")
        if len({repr(p[0]) for p in content}) != len(content):
            raise fail(f"{name} gives a key twice")
        return {k: _decode_setting(name, v, depth + 1, fail) for k, v in content}
    if marker == "__torch_dtype__":
        dtype = {str(d).removeprefix("torch."): d for d, _, _ in _DTYPES.values()}.get(content)
        if dtype is None:
            raise fail(f"{name} names an unknown torch dtype {content!r}")
        return dtype
    if marker == "__class__" and name == "optimizer":
        return _optimizer_class(content, fail)
    raise fail(f"{name} holds {marker!r} with {content!r}, which a setting cannot hold")


def _optimizer_class(spec, fail) -> type:
    """The ``torch.optim.Optimizer`` subclass named ``module:qualname`` among those this process has already
    defined: matched by name among the subclasses, so nothing is imported and no attribute of a module is read."""
    found, todo = {}, [torch.optim.Optimizer]
    while todo:
        cls = todo.pop()
        found.setdefault(f"{cls.__module__}:{cls.__qualname__}", cls)
        todo.extend(cls.__subclasses__())
    if not isinstance(spec, str) or spec not in found:
        module = spec.partition(":")[0] if isinstance(spec, str) else spec
        raise fail(
            f"optimizer {spec!r} is not a torch.optim.Optimizer subclass defined in this process; if the model was "
            f"fitted with an optimizer of your own, import its module ({module!r}) first"
        )
    return found[spec]


def _decode_fitted(name: str, value, kind: str, fail):
    """A fitted attribute by its declared ``kind``: arrays and weights as :class:`_TensorRef`, the rest plain JSON."""

    def ref(v, marker):
        if not (isinstance(v, dict) and len(v) == 1 and isinstance(v.get(marker), str)):
            raise fail(f"{name} must refer to a tensor of the file")
        return _TensorRef(v[marker])

    def member(m):
        if not isinstance(m, dict):
            raise fail(f"{name} must hold dicts of tensor references (one per network)")
        return {k: ref(t, "__tensor__") for k, t in m.items()}

    if kind == "array" or (kind == "labels" and isinstance(value, dict) and "__array__" in value):
        return ref(value, "__array__")
    if kind == "labels":
        return value  # string or mixed labels: checked by _labels
    if kind == "networks":
        if name == "network_":
            return member(value)
        if not isinstance(value, list):
            raise fail(f"{name} must be a list of the ensemble's further members")
        return [member(m) for m in value]
    if not _plain(value, 0):
        raise fail(f"{name} must hold plain values only")
    return value


def _plain(value, depth: int) -> bool:
    """JSON without eadct's type markers, at most :data:`MAX_DEPTH` deep."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, list):
        return all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(not k.startswith("__") and _plain(v, depth + 1) for k, v in value.items())
    return is_scalar(value)


def _tensor_refs(fitted: dict, cls_name: str, sizes: dict, file, fail) -> set[str]:
    """Check each array's tensor for its declared shape and dtype (from the file's header: nothing is read) and
    return the names of all the tensors the state refers to."""
    used = set()
    for name, attribute in FITTED_STATE[cls_name].items():
        value = fitted.get(name)
        if not isinstance(value, _TensorRef):
            continue
        dtype, shape = _info(file, value.name, name, fail)
        want = tuple(sizes[s] for s in attribute.shape)
        kinds = attribute.dtypes if attribute.kind == "array" else "biuf"
        if shape != want or dtype == "BF16" or _DTYPES[dtype][1] not in kinds:
            allowed = "/".join(k for k, (_, kind, _) in _DTYPES.items() if kind in kinds and k != "BF16")
            raise fail(
                f"{name} has shape {list(shape)} and dtype {dtype}; it must have shape {list(want)} and dtype {allowed}"
            )
        used.add(value.name)
    for member in [fitted["network_"], *fitted["networks_"]]:
        for key, value in member.items():
            _info(file, value.name, key, fail)
            if value.name in used:
                raise fail(f"tensor {value.name!r} is named twice")
            used.add(value.name)
    return used


def _info(file, tensor: str, name: str, fail) -> tuple[str, tuple]:
    if tensor not in file.info:
        raise fail(f"{name} refers to a tensor {tensor!r} that the file does not have")
    if file.info[tensor][0] not in _DTYPES:
        raise fail(f"tensor {tensor!r} has dtype {file.info[tensor][0]}, which eadct.save never writes")
    return file.info[tensor]


def _no_tensors_left(file, used: set, fail) -> None:
    extra = sorted(set(file.info) - used)
    if extra:
        raise fail(f"it holds {len(extra)} tensor(s) that no part of the model uses, such as {extra[0]!r}")


def _labels(value, file, n_outputs: int, fail) -> np.ndarray:
    """``classes_``: a numeric tensor, or the JSON of string or mixed labels; one per output, all distinct."""
    if isinstance(value, _TensorRef):
        labels = file.tensor(value.name).numpy()
    else:
        if not (isinstance(value, dict) and set(value) == {"__ndarray__", "dtype", "shape"}):
            raise fail("classes_ must be an array of labels")
        items, shape = value["__ndarray__"], value["shape"]
        try:
            dtype = np.dtype(value["dtype"]) if isinstance(value["dtype"], str) else None
        except TypeError:
            dtype = None
        if dtype is None or dtype.kind not in "OUbiuf" or dtype.itemsize > 4096:
            raise fail(f"classes_ has dtype {value['dtype']!r}; labels are strings or numbers")
        if not isinstance(items, list) or shape != [len(items)] or not all(is_scalar(v) for v in items):
            raise fail("classes_ must be one list of plain labels with its shape")
        labels = np.empty(len(items), dtype=dtype)
        try:
            labels[:] = items
        except (TypeError, ValueError, ArithmeticError) as err:
            raise fail(f"classes_ does not fit its dtype ({short_text(err)})") from None
    floats = [v for v in labels.tolist() if isinstance(v, float)]
    if any(v != v for v in floats):
        raise fail("classes_ holds NaN, which no fit gives as a label")
    if labels.shape != (n_outputs,) or len(set(labels.tolist())) != n_outputs:
        raise fail(f"classes_ must hold {n_outputs} distinct labels, one per output of the network")
    return labels


def device_here(device: str) -> str:
    """Where the networks go: ``device``, or the CPU when it is a CUDA device that this machine does not have."""
    if not device.startswith("cuda"):
        return device
    index = int(device.partition(":")[2] or 0)
    return device if torch.cuda.is_available() and index < torch.cuda.device_count() else "cpu"


def _check_work(shaped: torch.nn.Module, fail) -> None:
    """The padding of the dilated convolutions and the pooling window of attention in the network (on "meta"),
    against :data:`MAX_PADDING` and :data:`MAX_DOWNSAMPLE`: no weight depends on them, every predict pays them."""
    padding = max((getattr(m, "left_pad", 0) for m in shaped.modules()), default=0)
    if padding > MAX_PADDING:
        raise fail(
            f"its convolutions pad each series by {padding} steps, more than {MAX_PADDING} (dilations that large "
            "read only zeros); refit with fewer blocks or dilation_per_layer=False"
        )
    window = max((m.downsample for m in shaped.modules() if isinstance(getattr(m, "downsample", None), int)), default=1)
    if window > MAX_DOWNSAMPLE:
        raise fail(f"its attention pools tokens over windows of {window} steps, more than {MAX_DOWNSAMPLE}")


def _networks(estimator, members: list[dict], file, fail) -> list:
    """Each member's network, built from the estimator's settings once its weights were checked against the
    network those settings declare: shapes and dtypes from the file's header against a network built on torch's
    "meta" device (which takes no memory), and the memory that network needs against what the tensors hold."""
    spec = estimator._network_spec
    try:
        config = estimator._encoder_config(spec["n_channels"], spec["max_len"], spec["plan"])
    except (ValueError, TypeError, ArithmeticError) as err:
        raise fail(f"its settings are not an encoder's ({short_text(err, 600)})") from None
    settings = f"the {estimator.architecture} network of {config.n_blocks} block(s) of width {config.d_model}"
    non_empty = min(sum(math.prod(file.info[ref.name][1]) > 0 for ref in m.values()) for m in members)
    if config.n_blocks > non_empty:  # every block has weights: a bound before building anything
        raise fail(f"it declares {settings}, more blocks than the {non_empty} non-empty tensors of a network hold")
    if spec["max_len"] > MAX_STEPS:
        raise fail(f"it declares series of {spec['max_len']} steps in fit, more than {MAX_STEPS}")
    downsample = config.attention_downsample
    if isinstance(downsample, int) and downsample > max(1, spec["max_len"]):
        raise fail(f"attention_downsample={downsample} exceeds the {spec['max_len']} steps it was fitted on")
    try:
        with torch.device("meta"):
            shaped = estimator._build_network(**spec)
    except (ValueError, TypeError, RuntimeError, ArithmeticError) as err:
        raise fail(f"its settings do not build a network ({type(err).__name__}: {short_text(err)})") from None
    _check_work(shaped, fail)
    expected = {k: (v.dtype, tuple(v.shape)) for k, v in shaped.state_dict().items()}
    need = sum(t.numel() * t.element_size() for t in (*shaped.parameters(), *shaped.buffers()))
    for i, member in enumerate(members):
        where = "network_" if i == 0 else f"networks_[{i - 1}]"
        if set(member) != set(expected):
            odd = sorted(set(member) ^ set(expected))[0]
            raise fail(f"{where}'s weights are not those of {settings} (first difference: {short_text(odd)})")
        have = 0
        for key, ref in member.items():
            dtype, shape = file.info[ref.name]
            if (_DTYPES[dtype][0], shape) != expected[key]:
                want = f"{list(expected[key][1])} ({str(expected[key][0]).removeprefix('torch.')})"
                raise fail(f"{where}.{short_text(key)} has shape {list(shape)} ({dtype}); {settings} needs {want}")
            have += math.prod(shape) * _DTYPES[dtype][2]
        if need > have:
            raise fail(f"{settings} needs {need} bytes, more than the {have} its tensors hold")
    networks = []
    with torch.random.fork_rng(devices=[]):  # building initialises weights: leave the caller's random state alone
        for member in members:
            network = estimator._build_network(**spec)
            network.load_state_dict({k: file.tensor(ref.name) for k, ref in member.items()})
            networks.append(network.to(estimator.device_).eval())
    return networks

"""Safe persistence of fitted estimators: data only, never code.

:func:`save` writes one `safetensors <https://huggingface.co/docs/safetensors>`_ file: the networks' weights
and every numeric array (channel statistics, targets' scale, numeric classes) as tensors, and everything
else (hyperparameters, history, string or mixed labels, the network's settings, the versions that wrote it)
as JSON in the file's header. :func:`load` reads it without unpickling anything, so a file from elsewhere
cannot run code; it rebuilds the networks from the declared settings and refuses a file whose weights do not
match them. Pickle (and ``joblib``) keep working as scikit-learn users expect, for files you wrote yourself.
See docs/persistence.md for which format to use when.

The JSON form of the estimator's state (``__getstate__``, the same state pickle stores) is typed: tuples,
arrays, tensors, dicts with non-string keys and classes (a custom ``optimizer``) are marked, so that
:func:`load` gives back exactly the types that were saved.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import torch

from . import estimators
from .estimators._params import RENAMED
from .estimators._persistence import _upgrade_state
from .estimators._signature import check_params
from .estimators._state import FITTED_STATE, check_fitted, is_device, is_int, is_scalar
from .estimators._treatment import as_checked
from .estimators._warn import warn_user
from .provenance import VERSIONS_KEY, model_versions, warn_if_other_version

__all__ = ["FORMAT_VERSION", "load", "save"]

#: Version of the file layout; :func:`load` refuses files of a newer layout with a message naming both.
FORMAT_VERSION = 1
_KEY = "eadct"  # the header entry that holds the JSON
_VERSION = re.compile(r"[0-9A-Za-z.+!_-]{1,64}")  # a package version as PEP 440 and local builds write it
_CLASSES = ("EADCTClassifier", "EADCTRegressor", "EADCTRepresentation")


def save(estimator, path) -> Path:
    """Write the fitted ``estimator`` to ``path`` (a ``.safetensors`` file) as data only.

    Parameters
    ----------
    estimator : EADCTClassifier, EADCTRegressor or EADCTRepresentation
        Fitted or not (an unfitted one stores its hyperparameters). For :mod:`eadct.sktime` and
        :mod:`eadct.aeon` estimators, save their fitted ``estimator_``.
    path : str or Path

    Returns
    -------
    Path
        ``path``. The file is written to a temporary name and renamed, so a crash never leaves half a file.
    """
    from safetensors.torch import save_file

    name = type(estimator).__name__
    if name not in _CLASSES or type(estimator) is not _class(name):
        inner = getattr(estimator, "estimator_", None)
        hint = f" Save its fitted `estimator_` ({type(inner).__name__}) instead." if inner is not None else ""
        raise TypeError(
            f"eadct.save stores eadct's EADCTClassifier, EADCTRegressor or EADCTRepresentation, got "
            f"{type(estimator).__module__}.{name}.{hint} Other objects (subclasses too) persist with pickle."
        )
    tensors: dict[str, torch.Tensor] = {}
    state = estimator.__getstate__()
    versions = state.pop(VERSIONS_KEY)
    header = {"format": FORMAT_VERSION, "class": name, "versions": versions, "state": _encode(state, tensors, "state")}
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    save_file(tensors, str(tmp), metadata={_KEY: json.dumps(header)})
    tmp.replace(path)
    return path


def load(path, device: str | None = None):
    """Read an estimator written by :func:`save`, as data only: nothing in the file is executed or chosen as code.

    The file is read through a declared schema (:mod:`eadct.estimators._state`): the class is one of the three
    estimators, the parameters are the class's own (checked as ``fit`` checks them), the fitted attributes are
    the declared ones with their types and shapes, and every tensor is one that the declared network has, with
    its exact shape and dtype. The network's size is computed from its settings before any memory is taken for
    it, so a file cannot make ``load`` allocate more than its own tensors hold. docs/persistence.md says what
    this guarantees and what it does not.

    Parameters
    ----------
    path : str or Path
    device : str, optional
        Where the networks go (``"cpu"``, ``"cuda"``, ``"cuda:1"``); default: where they were fitted, or the
        CPU when that device is missing here.

    Raises
    ------
    ValueError
        Naming the file and the problem: the file is not an eadct model file (not safetensors, truncated, no
        eadct header), was written by a newer file format, names a class that is not an eadct estimator, holds
        a setting, attribute or tensor that the estimator does not have or of the wrong type, shape or dtype,
        or declares a network that its weights do not match.
    """
    path = Path(path)
    if device is not None and not is_device(device):
        raise ValueError(f"device={device!r}: eadct.load puts the networks on 'cpu', 'cuda' or 'cuda:N'.")
    if device is not None and _device(device) != device:
        raise ValueError(f"device={device!r}: this machine has no such device; use 'cpu' or leave device out.")
    with _SafetensorsFile(path) as file:
        header = _header(path, file.metadata)
        versions = header["versions"]

        def fail(problem: str) -> ValueError:
            return ValueError(
                f"{path} does not match its declared settings: {problem}. It was written by eadct "
                f"{versions.get('eadct')} (this is eadct {model_versions()['eadct']}); refit, or load it with that "
                "version."
            )

        cls = _class(header["class"])
        params, fitted = _split_state(header["state"], cls, fail)
        estimator = cls(**params)
        if not fitted:
            _no_tensors_left(file, set(), fail)
            warn_if_other_version(versions, str(path))
            return estimator
        sizes = check_fitted(fitted, cls.__name__, fail, getattr(estimator, "clip_predictions", False))
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
        estimator.device_ = device or _device(fitted["device_"])
        estimator.networks_ = _networks(estimator, [fitted["network_"], *fitted["networks_"]], file, fail)
        estimator.network_ = estimator.networks_[0]
    warn_if_other_version(versions, str(path))
    return estimator


#: The largest safetensors header :func:`load` reads: the eadct JSON (settings and history; the weights are not in
#: it) and the tensor table. A fit of 1,000 epochs per stage with 10 ensemble members writes about 4 MB; parsing
#: JSON takes about 25 times its size in memory, so the bound also bounds what a file can make load take.
MAX_HEADER_BYTES = 8 * 2**20
#: The largest integer magnitude a header may hold (a 64-bit int: every size, seed and count eadct writes).
MAX_INT = 2**63
#: The most steps a loaded network's dilated convolutions may pad a series by, beyond the length it was fitted on:
#: a fit never needs a dilation beyond its series (the taps there read only zeros), but a file could declare one
#: that makes every predict allocate gigabytes (12 blocks with the dilation doubling per layer: 2**24 steps).
MAX_PADDING = 2**16
#: How deep a setting's JSON may nest (a model's settings nest a few levels).
MAX_DEPTH = 32
#: A model file's tensor dtypes (safetensors' names): torch's dtype, numpy's kind, bytes per value.
_DTYPES = {
    "F64": (torch.float64, "f", 8), "F32": (torch.float32, "f", 4), "F16": (torch.float16, "f", 2),
    "BF16": (torch.bfloat16, "f", 2), "I64": (torch.int64, "i", 8), "I32": (torch.int32, "i", 4),
    "I16": (torch.int16, "i", 2), "I8": (torch.int8, "i", 1), "U8": (torch.uint8, "u", 1),
    "BOOL": (torch.bool, "b", 1),
}  # fmt: skip


class _SafetensorsFile:
    """A safetensors file open for reading: its metadata, and each tensor's dtype and shape from the header
    without reading any tensor; :meth:`tensor` reads one."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> _SafetensorsFile:
        from safetensors import SafetensorError, safe_open

        not_ours = f"{self.path} is not an eadct model file (a safetensors file written by eadct.save)"
        try:
            with open(self.path, "rb") as fh:
                size = int.from_bytes(fh.read(8), "little")
        except OSError as err:
            raise ValueError(f"{not_ours}: {err}") from err
        if size > MAX_HEADER_BYTES:
            raise ValueError(f"{not_ours}: its header declares {size} bytes, more than eadct.save ever writes.")
        try:
            self._file = safe_open(str(self.path), framework="pt", device="cpu")
            self._file.__enter__()
            self.metadata = self._file.metadata() or {}
            self.info = {}
            for key in self._file.keys():  # noqa: SIM118 (safe_open has no iterator)
                piece = self._file.get_slice(key)
                self.info[key] = (piece.get_dtype(), tuple(piece.get_shape()))
        except (SafetensorError, OSError, ValueError, RuntimeError) as err:
            raise ValueError(f"{not_ours}: {err}") from err
        return self

    def tensor(self, key: str) -> torch.Tensor:
        return self._file.get_tensor(key)

    def __exit__(self, *exc) -> None:
        self._file.__exit__(*exc)


class _TensorRef:
    """A tensor of the file that the state names, before it is read."""

    def __init__(self, name: str):
        self.name = name


def _header(path: Path, metadata: dict) -> dict:
    if _KEY not in metadata:
        raise ValueError(f"{path} is a safetensors file but not an eadct model (no '{_KEY}' header entry).")
    try:
        header = json.loads(metadata[_KEY], parse_int=_int, object_pairs_hook=_no_repeated_keys)
    except RecursionError:
        raise ValueError(f"{path}: the '{_KEY}' header entry is not valid JSON (it nests too deeply).") from None
    except ValueError as err:  # json.JSONDecodeError included
        raise ValueError(f"{path}: the '{_KEY}' header entry is not valid eadct JSON ({_short(err)}).") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the '{_KEY}' header entry is a JSON {type(header).__name__}, not an eadct header.")
    versions = header.get("versions", {})
    if not isinstance(versions, dict) or not all(
        v is None or (isinstance(v, str) and _VERSION.fullmatch(v)) for v in versions.values()
    ):
        raise ValueError(f"{path}: the eadct header's versions must map package names to version strings.")
    fmt = header.get("format")
    if type(fmt) is not int or not 1 <= fmt <= FORMAT_VERSION:
        raise ValueError(
            f"{path} uses file format {_short(fmt)} of eadct {versions.get('eadct')}; this eadct "
            f"{model_versions()['eadct']} reads format {FORMAT_VERSION} and older. Upgrade eadct to load it."
        )
    if header.get("class") not in _CLASSES:
        raise ValueError(
            f"{path} declares class {_short(header.get('class'))}; eadct.load reads only {', '.join(_CLASSES)}."
        )
    if set(header) - {"format", "class", "versions", "state"} or not isinstance(header.get("state"), dict):
        raise ValueError(f"{path}: an eadct header holds format, class, versions and a state dict, and nothing else.")
    return {**header, "versions": versions}  # files of 0.1.0 on record versions; none is read as unknown


def _int(text: str) -> int:
    """``json.loads``' ``parse_int``: integers within :data:`MAX_INT`, refused before Python converts a long one."""
    if len(text) > 20 or abs(int(text)) > MAX_INT:
        raise ValueError(f"an integer of {len(text)} digits, beyond 64 bits")
    return int(text)


def _no_repeated_keys(pairs: list) -> dict:
    """``json.loads``' ``object_pairs_hook``: a key given twice is refused (JSON keeps the last one silently)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("a key is given twice in one object")
    return out


def _short(value, limit: int = 120) -> str:
    """Text from a file, for a message: its ``repr`` (no control characters reach the terminal), shortened."""
    text = repr(value) if not isinstance(value, Exception) else repr(str(value))[1:-1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _class(name: str) -> type:
    return getattr(estimators, name)


def _split_state(state: dict, cls: type, fail) -> tuple[dict, dict]:
    """The parameters (old names renamed, those added since filled in as for a pickle) and the fitted attributes,
    each decoded by what it is; any other key is refused."""
    names = set(cls._get_param_names())
    schema = FITTED_STATE[cls.__name__]
    unknown = sorted(k for k in state if k not in names and k not in RENAMED and k not in schema)
    if unknown:
        raise fail(f"{cls.__name__} has no setting or fitted attribute {', '.join(map(_short, unknown[:5]))}")
    params = {RENAMED.get(k, k): _decode_setting(k, v, 0, fail) for k, v in state.items() if k not in schema}
    _upgrade_state(params, cls)
    bad = [f"{n}={_short(params[n])}" for n, check in _UNCHECKED.items() if n in params and not check(params[n])]
    if bad:
        raise fail(f"invalid parameters {', '.join(bad)}")
    if params.get("checkpoint_path") is not None:
        warn_user(
            f"The loaded model's checkpoint_path={_short(params['checkpoint_path'])} is set to None: a file never "
            "chooses where eadct writes. Set it again before a refit that should write checkpoints."
        )
        params["checkpoint_path"] = None
    try:
        check_params(as_checked(params), cls.__name__)
    except (ValueError, TypeError, ArithmeticError) as err:
        raise fail(_short(err, 600).removesuffix(".")) from None
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


def _tensor_refs(fitted: dict, cls_name: str, sizes: dict, file: _SafetensorsFile, fail) -> set[str]:
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


def _info(file: _SafetensorsFile, tensor: str, name: str, fail) -> tuple[str, tuple]:
    if tensor not in file.info:
        raise fail(f"{name} refers to a tensor {tensor!r} that the file does not have")
    if file.info[tensor][0] not in _DTYPES:
        raise fail(f"tensor {tensor!r} has dtype {file.info[tensor][0]}, which eadct.save never writes")
    return file.info[tensor]


def _no_tensors_left(file: _SafetensorsFile, used: set, fail) -> None:
    extra = sorted(set(file.info) - used)
    if extra:
        raise fail(f"it holds {len(extra)} tensor(s) that no part of the model uses, such as {extra[0]!r}")


def _labels(value, file: _SafetensorsFile, n_outputs: int, fail) -> np.ndarray:
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
            raise fail(f"classes_ does not fit its dtype ({_short(err)})") from None
    floats = [v for v in labels.tolist() if isinstance(v, float)]
    if any(v != v for v in floats):
        raise fail("classes_ holds NaN, which no fit gives as a label")
    if labels.shape != (n_outputs,) or len(set(labels.tolist())) != n_outputs:
        raise fail(f"classes_ must hold {n_outputs} distinct labels, one per output of the network")
    return labels


def _device(device: str) -> str:
    """Where the networks go: ``device``, or the CPU when it is a CUDA device that this machine does not have."""
    if not device.startswith("cuda"):
        return device
    index = int(device.partition(":")[2] or 0)
    return device if torch.cuda.is_available() and index < torch.cuda.device_count() else "cpu"


def _networks(estimator, members: list[dict], file: _SafetensorsFile, fail) -> list:
    """Each member's network, built from the estimator's settings once its weights were checked against the
    network those settings declare: shapes and dtypes from the file's header against a network built on torch's
    "meta" device (which takes no memory), and the memory that network needs against what the tensors hold."""
    spec = estimator._network_spec
    try:
        config = estimator._encoder_config(spec["n_channels"], spec["max_len"], spec["plan"])
    except (ValueError, TypeError, ArithmeticError) as err:
        raise fail(f"its settings are not an encoder's ({_short(err, 600)})") from None
    settings = f"the {estimator.architecture} network of {config.n_blocks} block(s) of width {config.d_model}"
    non_empty = min(sum(math.prod(file.info[ref.name][1]) > 0 for ref in m.values()) for m in members)
    if config.n_blocks > non_empty:  # every block has weights: a bound before building anything
        raise fail(f"it declares {settings}, more blocks than the {non_empty} non-empty tensors of a network hold")
    downsample = config.attention_downsample
    if isinstance(downsample, int) and downsample > max(1, spec["max_len"]):
        raise fail(f"attention_downsample={downsample} exceeds the {spec['max_len']} steps it was fitted on")
    try:
        with torch.device("meta"):
            shaped = estimator._build_network(**spec)
    except (ValueError, TypeError, RuntimeError, ArithmeticError) as err:
        raise fail(f"its settings do not build a network ({type(err).__name__}: {_short(err)})") from None
    padding = max((getattr(m, "left_pad", 0) for m in shaped.modules()), default=0)
    if padding > max(MAX_PADDING, spec["max_len"]):
        raise fail(
            f"its convolutions pad each series by {padding} steps, more than {MAX_PADDING} and the {spec['max_len']} "
            "steps it was fitted on (dilations that large read only zeros); refit with fewer blocks or "
            "dilation_per_layer=False"
        )
    expected = {k: (v.dtype, tuple(v.shape)) for k, v in shaped.state_dict().items()}
    need = sum(t.numel() * t.element_size() for t in (*shaped.parameters(), *shaped.buffers()))
    for i, member in enumerate(members):
        where = "network_" if i == 0 else f"networks_[{i - 1}]"
        if set(member) != set(expected):
            odd = sorted(set(member) ^ set(expected))[0]
            raise fail(f"{where}'s weights are not those of {settings} (first difference: {_short(odd)})")
        have = 0
        for key, ref in member.items():
            dtype, shape = file.info[ref.name]
            if (_DTYPES[dtype][0], shape) != expected[key]:
                want = f"{list(expected[key][1])} ({str(expected[key][0]).removeprefix('torch.')})"
                raise fail(f"{where}.{_short(key)} has shape {list(shape)} ({dtype}); {settings} needs {want}")
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


def _encode(value, tensors: dict, where: str):
    """``value`` as JSON, with tensors and numeric arrays moved to ``tensors`` (named by ``where``)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.bool_, np.integer, np.floating)):
        return value.item()
    if isinstance(value, torch.Tensor):
        tensors[where] = value.detach().cpu().contiguous().clone()
        return {"__tensor__": where}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf":
            tensors[where] = torch.from_numpy(np.ascontiguousarray(value).copy())
            return {"__array__": where}
        items = [_encode(v, tensors, f"{where}.{i}") for i, v in enumerate(value.ravel().tolist())]
        return {"__ndarray__": items, "dtype": value.dtype.str, "shape": list(value.shape)}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, tensors, f"{where}.{i}") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(v, tensors, f"{where}.{i}") for i, v in enumerate(value)]
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in value):
            return {k: _encode(v, tensors, f"{where}.{k}") for k, v in value.items()}
        items = [[_encode(k, tensors, f"{where}.k{i}"), _encode(v, tensors, f"{where}.v{i}")]
                 for i, (k, v) in enumerate(value.items())]  # fmt: skip
        return {"__items__": items}
    if isinstance(value, torch.dtype):
        return {"__torch_dtype__": str(value).removeprefix("torch.")}
    if isinstance(value, type):
        return {"__class__": f"{value.__module__}:{value.__qualname__}"}
    raise TypeError(
        f"eadct.save cannot store {where} of type {type(value).__name__} as data; pass a JSON-able value, an "
        "array or a class there, or persist this estimator with pickle."
    )

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
import sys
from pathlib import Path

import numpy as np
import torch

from . import estimators
from .provenance import VERSIONS_KEY, VERSIONS_OF, model_versions

__all__ = ["FORMAT_VERSION", "load", "save"]

#: Version of the file layout; :func:`load` refuses files of a newer layout with a message naming both.
FORMAT_VERSION = 1
_KEY = "eadct"  # the header entry that holds the JSON
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
    """Read an estimator written by :func:`save`, without running code from the file.

    Parameters
    ----------
    path : str or Path
    device : str, optional
        Where the networks go (``"cpu"``, ``"cuda"``, ``"cuda:1"``); default: where they were fitted, or the
        CPU when that device is missing here.

    Raises
    ------
    ValueError
        The file is not an eadct model file, was written by a newer file format, names a class that is not an
        eadct estimator, or holds weights that do not match its declared settings.
    """
    from safetensors import SafetensorError, safe_open

    path = Path(path)
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            metadata = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 (safe_open has no iterator)
    except (SafetensorError, OSError, ValueError) as err:
        raise ValueError(
            f"{path} is not an eadct model file (a safetensors file written by eadct.save): {err}"
        ) from err
    header = _header(path, metadata)
    versions = header.get("versions", {})
    try:
        state = {**_decode(header["state"], tensors), VERSIONS_KEY: versions, VERSIONS_OF: str(path)}
        if device is not None:
            state["device_"] = device
        estimator = _class(header["class"]).__new__(_class(header["class"]))
        estimator.__setstate__(state)
    except Exception as err:
        raise ValueError(
            f"{path} does not match its declared settings ({type(err).__name__}: {err}). It was written by eadct "
            f"{versions.get('eadct')} (this is eadct {model_versions()['eadct']}); refit, or load it with that version."
        ) from err
    return estimator


def _header(path: Path, metadata: dict) -> dict:
    if _KEY not in metadata:
        raise ValueError(f"{path} is a safetensors file but not an eadct model (no '{_KEY}' header entry).")
    try:
        header = json.loads(metadata[_KEY])
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: the '{_KEY}' header entry is not valid JSON ({err}).") from err
    fmt, versions = header.get("format"), header.get("versions", {})
    if not isinstance(fmt, int) or fmt > FORMAT_VERSION:
        raise ValueError(
            f"{path} uses file format {fmt!r} of eadct {versions.get('eadct')}; this eadct "
            f"{model_versions()['eadct']} reads format {FORMAT_VERSION} and older. Upgrade eadct to load it."
        )
    if header.get("class") not in _CLASSES or "state" not in header:
        raise ValueError(f"{path} declares class {header.get('class')!r}; eadct.load reads only {', '.join(_CLASSES)}.")
    return header


def _class(name: str) -> type:
    return getattr(estimators, name)


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


def _decode(value, tensors: dict):
    if isinstance(value, list):
        return [_decode(v, tensors) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tensor__" in value:
        return tensors[value["__tensor__"]]
    if "__array__" in value:
        return tensors[value["__array__"]].numpy()
    if "__ndarray__" in value:
        out = np.empty(len(value["__ndarray__"]), dtype=np.dtype(value["dtype"]))
        out[:] = [_decode(v, tensors) for v in value["__ndarray__"]] if len(out) else []
        return out.reshape(value["shape"])
    if "__tuple__" in value:
        return tuple(_decode(v, tensors) for v in value["__tuple__"])
    if "__items__" in value:
        return {_decode(k, tensors): _decode(v, tensors) for k, v in value["__items__"]}
    if "__torch_dtype__" in value:
        dtype = getattr(torch, value["__torch_dtype__"], None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"unknown torch dtype {value['__torch_dtype__']!r}")
        return dtype
    if "__class__" in value:
        return _imported_class(value["__class__"])
    return {k: _decode(v, tensors) for k, v in value.items()}


def _imported_class(spec: str) -> type:
    """The class ``module:qualname`` from a module that is already imported (loading never imports a module:
    an import can run code)."""
    module_name, _, qualname = spec.partition(":")
    module = sys.modules.get(module_name)
    if module is None:
        raise ValueError(f"the model was fitted with {qualname} from {module_name}; import {module_name} first.")
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type):
        raise ValueError(f"{module_name} has no class {qualname}")
    return obj

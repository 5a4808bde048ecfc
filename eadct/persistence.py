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
import re
from pathlib import Path

import numpy as np
import torch

from . import estimators
from .estimators import device_here, estimator_from_state, is_device, short_text, stray_state
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
    stray = stray_state(estimator, state)
    if stray:
        raise ValueError(
            f"eadct.save: this {name} has attributes that are neither its parameters nor its fitted state "
            f"({', '.join(stray[:5])}), which eadct.load would refuse. Delete them (del estimator.{stray[0]}), or "
            "persist the estimator with pickle."
        )
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
    if device is not None and device_here(device) != device:
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

        estimator = estimator_from_state(_class(header["class"]), header["state"], file, fail, device)
    warn_if_other_version(versions, str(path))
    return estimator


#: The largest safetensors header :func:`load` reads: the eadct JSON (settings and history; the weights are not in
#: it) and the tensor table. A fit of 1,000 epochs per stage with 10 ensemble members writes about 4 MB; parsing
#: JSON takes about 25 times its size in memory, so the bound also bounds what a file can make load take.
MAX_HEADER_BYTES = 8 * 2**20
#: The largest integer magnitude a header may hold (a 64-bit int: every size, seed and count eadct writes).
MAX_INT = 2**63


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


def _header(path: Path, metadata: dict) -> dict:
    if _KEY not in metadata:
        raise ValueError(f"{path} is a safetensors file but not an eadct model (no '{_KEY}' header entry).")
    try:
        header = json.loads(metadata[_KEY], parse_int=_int, object_pairs_hook=_no_repeated_keys)
    except RecursionError:
        raise ValueError(f"{path}: the '{_KEY}' header entry is not valid JSON (it nests too deeply).") from None
    except ValueError as err:  # json.JSONDecodeError included
        raise ValueError(f"{path}: the '{_KEY}' header entry is not valid eadct JSON ({short_text(err)}).") from None
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
            f"{path} uses file format {short_text(fmt)} of eadct {versions.get('eadct')}; this eadct "
            f"{model_versions()['eadct']} reads format {FORMAT_VERSION} and older. Upgrade eadct to load it."
        )
    if header.get("class") not in _CLASSES:
        raise ValueError(
            f"{path} declares class {short_text(header.get('class'))}; eadct.load reads only {', '.join(_CLASSES)}."
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
        items = [
            [_encode(k, tensors, f"{where}.k{i}"), _encode(v, tensors, f"{where}.v{i}")]
            for i, (k, v) in enumerate(value.items())
        ]
        return {"__items__": items}
    if isinstance(value, torch.dtype):
        return {"__torch_dtype__": str(value).removeprefix("torch.")}
    if isinstance(value, type):
        return {"__class__": f"{value.__module__}:{value.__qualname__}"}
    raise TypeError(
        f"eadct.save cannot store {where} of type {type(value).__name__} as data; pass a JSON-able value, an "
        "array or a class there, or persist this estimator with pickle."
    )

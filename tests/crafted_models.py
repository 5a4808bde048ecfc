"""A corpus of crafted eadct model files, as an attacker or a careless tool would write them.

``crafted_files(valid, out, sentinel)`` writes, from one valid model file, one folder of files per family and
returns ``{family: [path, ...]}``. Every file in it must be refused by :func:`eadct.load` with a ValueError, fast,
without side effects (no file at ``sentinel``) and without taking memory that its own tensors do not account
for (tests/test_load_attacks.py). The families:

- ``code``: every field of the header (the class, each setting, each fitted attribute, new keys named after the
  estimator's methods) set to a reference to ``subprocess.Popen``, ``os.system`` or ``builtins.eval``, in each of the
  encoder's type markers, with arguments that would create ``sentinel``;
- ``size``: every integer setting that sizes the networks, and every size of the fitted model, set to huge values;
- ``json``: the eadct header as JSON that is deep, not a dict, not JSON, or with fields of the wrong type;
- ``container``: empty, short, truncated, appended and lying safetensors files;
- ``format``: a future or invalid format number;
- ``extra``: keys and tensors that the model does not have (one of 120 MB);
- ``tensors``: tensors of the wrong shape or dtype, missing, shared or misnamed;
- ``values``: fitted attributes of the wrong type or inconsistent with each other, devices that are not devices.
"""

from __future__ import annotations

import copy
import json
import struct
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from eadct.estimators._params import ENCODER_PARAMS, OPTIONS, PARAMS
from eadct.estimators._state import FITTED_STATE

TARGETS = ("subprocess:Popen", "os:system", "builtins:eval")
MARKERS = ("__class__", "__torch_dtype__", "__tensor__", "__array__", "__tuple__", "__items__", "__ndarray__")
HUGE = (20_000, 32_768, 10**9, 2**62, -1)


def read(path: Path) -> tuple[dict, dict]:
    """The eadct header (a dict) and the tensors of a model file."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(json.loads(raw[8 : 8 + n])["__metadata__"]["eadct"])
    return header, load_file(str(path))


def write(path: Path, tensors: dict, eadct_header: str, other_metadata: dict | None = None) -> Path:
    """A safetensors file with ``eadct_header`` (already text) as its eadct metadata."""
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata={"eadct": eadct_header, **(other_metadata or {})})
    return path


def crafted_files(valid: Path, out: Path, sentinel: Path) -> dict[str, list[Path]]:
    header, tensors = read(valid)
    files: dict[str, list[Path]] = {}

    def add(family: str, edit: Callable[[dict, dict], object] | None = None, text: str | None = None) -> None:
        h, t = copy.deepcopy(header), dict(tensors)
        if edit is not None:
            edit(h, t)
        path = out / family / f"{len(files.setdefault(family, []))}.safetensors"
        files[family].append(write(path, t, json.dumps(h) if text is None else text))

    touch = ["touch", str(sentinel)]
    payloads = [{"__class__": target} for target in TARGETS]
    payloads += [{"__class__": "subprocess:Popen", "args": touch}, {"__torch_dtype__": "load"}]
    payloads += [{marker: target} for marker, target in zip(MARKERS, TARGETS * 3, strict=False)]
    state_keys = list(header["state"])

    def option(h, changes):  # fields of the state's options (the current format), the others kept
        h["state"]["options"] = {**(h["state"].get("options") or {}), **changes}

    # code: the exploit of the issue first, then every key (and the class) pointed at a callable
    def exploit(h, _):
        h["state"]["_build_network"] = {"__class__": "subprocess:Popen"}
        h["state"]["_network_spec"] = {"args": touch}

    add("code", exploit)
    for target in TARGETS:
        add("code", lambda h, _, t=target: h.update({"class": t}))
        add("code", lambda h, _, t=target: h.update({"class": t.partition(":")[2]}))
    for key in [*state_keys, "predict", "fit", "_build_network", "__class__", "__dict__", "__setstate__"]:
        for payload in payloads:
            add("code", lambda h, _, k=key, p=payload: h["state"].update({k: p}))
    for key in ("optimizer", "pooling"):  # the settings a class or a name could plausibly sit in
        for target in TARGETS:
            add("code", lambda h, _, k=key, t=target: h["state"].update({k: {"__class__": t, "args": touch}}))
    for key in ("loss", "precision", "memory_guard"):  # the same, as fields of options
        for target in TARGETS:
            add("code", lambda h, _, k=key, t=target: option(h, {k: {"__class__": t, "args": touch}}))
    add("code", lambda h, _: h["state"]["history_"].append({"__class__": "subprocess:Popen", "args": touch}))
    add("code", lambda h, _: h["state"]["network_"].update({"x": {"__class__": "builtins:eval"}}))

    # size: every integer setting and size of the model, huge
    sized = {*ENCODER_PARAMS, "n_segments", "n_estimators", *FITTED_STATE[header["class"]]}
    sized.discard("attention_tokens")  # how many tokens attention sees in a call: no weights depend on it
    sizes = [k for k, v in header["state"].items() if type(v) is int and k in sized]
    for key in sizes:
        for value in HUGE:
            add("size", lambda h, _, k=key, v=value: h["state"].update({k: v}))
    for key in [k for k in OPTIONS if type(PARAMS[k].default) is int and k in sized]:  # fields of options
        for value in HUGE:
            add("size", lambda h, _, k=key, v=value: option(h, {k: v}))
    for key in ("n_channels", "max_len", "n_outputs"):
        for value in HUGE:

            def spec(h, _, k=key, v=value):
                h["state"]["_network_spec"][k] = v
                h["state"].update({"n_channels_": v, "n_features_in_": v} if k == "n_channels" else {})
                h["state"].update({"n_timepoints_": v} if k == "max_len" else {})

            add("size", spec)
    for value in HUGE[:3]:  # a consistent model declared huge: settings, sizes and plan agree, weights do not
        add("size", lambda h, _, v=value: h["state"].update({"d_model": v, "n_blocks": v}))
        add("size", lambda h, _, v=value: h["state"]["memory_plan_"].update({"d_model": v}))

    def planned(h, changes):  # a memory plan's overrides, in both places a fitted state holds the plan
        h["state"]["memory_plan_"].update(changes)
        h["state"]["_network_spec"]["plan"].update(changes)

    for value in (10**6, 10**8):  # work at predict that no weight accounts for: pooling windows, dilations
        add("size", lambda h, _, v=value: option(h, {"attention_downsample": v}))
        add("size", lambda h, _, v=value: planned(h, {"attention_downsample": v}))
    add("size", lambda h, _: h["state"].update({"n_blocks": 12}) or option(h, {"dilation_per_layer": True}))
    add("size", lambda h, _: planned(h, {"n_blocks": 20_000}))  # the block count a plan overrides

    def empties(h, t):  # many zero-size tensors, for a block count that counts tensors
        h["state"]["n_blocks"] = 5_000
        for i in range(10_000):
            t[f"state.network_.empty{i}"] = torch.zeros(0)
            h["state"]["network_"][f"empty{i}"] = {"__tensor__": f"state.network_.empty{i}"}

    add("size", empties)
    add("size", lambda h, _: h["state"].update({"history_": [{}] * 3_000_000}))  # a 9 MB header
    void = {"__ndarray__": [], "dtype": "V2000000000", "shape": [10**6]}  # 2 GB per label, a million labels
    add("size", lambda h, _: h["state"].update({"classes_": void}))

    # json: deep, not a dict, not JSON, fields of the wrong type
    deep = 200_000
    for text in ("[" * deep + "]" * deep, '{"a":' * deep + "1" + "}" * deep, "[]", '"x"', "1", "null", "{", ""):
        add("json", text=text)
    nested = json.dumps(header)
    add("json", text=nested.replace('"history_": [', '"history_": [' + "[" * deep + "]" * deep + ",", 1))
    nest = 1
    for _ in range(40):  # deeper than a setting may nest, far from Python's recursion limit
        nest = [nest]
    add("json", lambda h, _: h["state"].update({"optimizer_kwargs": {"a": nest}}))
    for field, value in (("class", None), ("class", 1), ("state", []), ("state", "x"), ("versions", [1]), ("x", 1)):
        add("json", lambda h, _, f=field, v=value: h.update({f: v}))
    add("json", lambda h, _: h.pop("state"))
    for key in ("d_model", "random_state", "n_timepoints_"):  # integers beyond 64 bits, up to Python's digit limit
        add("json", text=nested.replace(f'"{key}": ', f'"{key}": 1{"0" * 400}, "x{key}": ', 1))
        add("json", text=nested.replace(f'"{key}": ', f'"{key}": 1{"0" * 5000}, "x{key}": ', 1))
    add("json", text=nested.replace('"d_model": ', '"d_model": 8, "d_model": ', 1))  # a key given twice
    add("json", lambda h, _: h.pop("class"))

    # container: the safetensors file itself
    raw = valid.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    for name, blob in [
        ("empty", b""),
        ("short", raw[:4]),
        ("header-cut", raw[: 8 + n // 2]),
        ("data-cut", raw[:-100]),
        ("appended", raw + b"\x00" * 4096),
        ("huge-header-length", struct.pack("<Q", 2**62) + raw[8:]),
        ("header-longer-than-file", struct.pack("<Q", len(raw) * 2) + raw[8:]),
        ("pickle", b"\x80\x04\x95" + raw),
        ("zeros", b"\x00" * 1024),
    ]:
        path = out / "container" / f"{name}.safetensors"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob)
        files.setdefault("container", []).append(path)
    path = out / "container" / "no-eadct-metadata.safetensors"
    save_file(dict(tensors), str(path), metadata={"other": "x"})
    files["container"].append(path)

    # format
    for value in (True, False, 2, 999, 0, -1, 1.0, "1", None, [1]):
        add("format", lambda h, _, v=value: h.update({"format": v}))
    add("format", lambda h, _: h.pop("format"))

    # extra keys and tensors
    for key in ("predict", "_build_network", "_network_args", "__dict__", "unknown_attribute_", "n_outputs_"):
        add("extra", lambda h, _, k=key: h["state"].update({k: 1}))
    add("extra", lambda h, t: t.update({"unused": torch.zeros(30_000_000)}))  # 120 MB that nothing uses
    add("extra", lambda h, t: t.update({"state.network_.extra": torch.zeros(4)}))
    add("extra", lambda h, _: h["state"]["network_"].update({"extra.weight": {"__tensor__": "state.channel_mean_"}}))

    # tensors: every network tensor with a wrong shape, then dtypes, missing and shared tensors
    weights = [k for k in tensors if k.startswith("state.network_.")]
    for key in weights:
        add("tensors", lambda h, t, k=key: t.update({k: torch.zeros(*t[k].shape, 2)}))
    for key in weights[:3] + ["state.channel_mean_", "state.channel_std_"]:
        for dtype in (torch.float64, torch.int64, torch.bfloat16, torch.bool):
            if tensors[key].dtype != dtype:
                add("tensors", lambda h, t, k=key, d=dtype: t.update({k: t[k].to(d)}))
    for key in ("state.channel_mean_", "state.channel_std_"):
        add("tensors", lambda h, t, k=key: t.update({k: torch.zeros(10**6, dtype=torch.float64)}))
        add("tensors", lambda h, t, k=key: t.pop(k))
    add("tensors", lambda h, t: t.pop(weights[0]))
    add("tensors", lambda h, _: h["state"]["network_"].pop(weights[0].removeprefix("state.network_.")))
    add("tensors", lambda h, _: h["state"].update({"channel_std_": {"__array__": "state.channel_mean_"}}))
    second = weights[1].removeprefix("state.network_.")
    add("tensors", lambda h, _: h["state"]["network_"].update({second: {"__tensor__": weights[0]}}))
    add("tensors", lambda h, _: h["state"].update({"networks_": [h["state"]["network_"]]}))

    # values: wrong types, inconsistent sizes, devices that are not devices
    for key, value in [
        ("device_", "meta"),
        ("device_", "mps"),
        ("device_", "cuda:99999"),
        ("device_", "cpu; rm -rf"),
        ("device_", 0),
        ("n_channels_", True),
        ("n_channels_", "2"),
        ("n_channels_", 1.5),
        ("n_channels_", 0),
        ("n_features_in_", 99),
        ("n_timepoints_", -3),
        ("history_", "x"),
        ("history_", [[1]]),
        ("history_", [{"a": {"b": 1}}]),
        ("memory_plan_", {"__import__": 1}),
        ("memory_plan_", {"batch_size": [1]}),
        ("memory_plan_", []),
        ("_network_spec", {}),
        ("_network_spec", []),
        ("networks_", {}),
        ("network_", []),
        ("classes_", {"__ndarray__": ["a", "a", "b"], "dtype": "<U1", "shape": [3]}),
        ("classes_", {"__ndarray__": ["a"], "dtype": "<U1", "shape": [1]}),
        ("classes_", {"__ndarray__": ["a", "b", "c"], "dtype": "<U1", "shape": [1, 3]}),
        ("classes_", {"__ndarray__": [{"a": 1}, "b", "c"], "dtype": "O", "shape": [3]}),
        ("classes_", [1, 2, 3]),
        ("checkpoint_path", 3),
        ("random_state", "x"),
        ("device", "meta"),
        ("verbose", -1),
        ("architecture", "subprocess.Popen"),
        ("d_model", "64"),
        ("n_estimators", 2),
    ]:
        add("values", lambda h, _, k=key, v=value: h["state"].update({k: v}))
    add("values", lambda h, _: h["state"].pop("network_"))
    for changes in ({"precision": "float64"}, {"memory_guard": 3}, {"n_segments": "8"}, {"unknown_field": 1}):
        add("values", lambda h, _, c=changes: option(h, c))  # fields of options of the wrong type, or none
    add("values", lambda h, _: option(h, {"drop_path": 0.2}))  # a removed setting, at a value that did something
    add("values", lambda h, _: h["state"].update({"options": "x"}))
    add(
        "values",
        lambda h, _: h["state"].update({"clip_predictions": True, "_y_ndim": 1}) or h["state"].pop("target_min_", 0),
    )
    add("values", lambda h, _: h["state"].update({"versions": {"eadct": "\x1b[2J\nloaded"}}))
    add("values", lambda h, _: h.update({"versions": {"eadct": "\x1b[2J\nloaded"}}))
    add("values", lambda h, _: h["state"]["_network_spec"].update({"n_outputs": 2}))
    add("values", lambda h, _: h["state"]["_network_spec"].update({"plan": {"batch_size": 2}}))
    return files

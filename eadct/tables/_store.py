"""Result storage of the tables runner: where a unit's files live, atomic writes, append-only logs.

Knows nothing about models: it stores and finds JSON.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ._config import TableConfig

RESULT_VERSION = 1


def atomic_write_json(path: Path, obj) -> None:
    """Write ``obj`` to ``path`` through a temporary file and a rename: never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as fh:
        json.dump(obj, fh, indent=1, default=_json_default)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def append_jsonl(path: Path, record: dict) -> None:
    """Append one JSON line and sync it to disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write(json.dumps(record, default=_json_default) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_jsonl(path: Path) -> list[dict]:
    """The records of a JSON-lines file; a line cut by a kill is skipped (that trial reruns)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def unit_dir(out_dir, table: TableConfig, model: str, dataset: str, profile: str) -> Path:
    """The folder of a (model, dataset, profile): its seeds' results, its search and its checkpoints."""
    return Path(out_dir) / profile / dataset / table.model_key(model, dataset, profile)


def result_path(out_dir, table: TableConfig, model: str, dataset: str, profile: str, seed: int) -> Path:
    return unit_dir(out_dir, table, model, dataset, profile) / f"seed{seed}.json"

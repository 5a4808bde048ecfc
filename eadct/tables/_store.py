"""Result storage of the tables runner: where a unit's files live, atomic writes, append-only logs, and the
locks that keep two drivers on one results folder from running the same unit or search.

Knows nothing about models: it stores and finds JSON.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import socket
import tempfile
import uuid
import warnings
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ._config import TableConfig

RESULT_VERSION = 1
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)  # a file system without flock


def atomic_write_json(path: Path, obj) -> None:
    """Write ``obj`` to ``path`` through a temporary file and a rename: never a half-written file."""
    atomic_write_bytes(path, json.dumps(obj, indent=1, default=_json_default).encode())


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file of a unique name in the same folder and a rename:
    never a half-written file, and two writers (threads or processes) never share a temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


class FolderBusy(RuntimeError):
    """Another driver, still running, runs some of the units this one was asked to run in the same folder."""


def _holder(command) -> dict:
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "command": command,
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _describe(holder: dict) -> str:
    where = f"process {holder.get('pid', '?')} on {holder.get('host', '?')} since {holder.get('started', '?')}"
    return where + (f" ({holder['command']})" if holder.get("command") else "")


def _try_flock(fd: int) -> bool:
    """Take the exclusive lock of ``fd`` without waiting; False where another open file holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def claim_units(out_dir, units: Iterable[str], command=None) -> Iterator[None]:
    """Record, for as long as the block runs, that this process runs ``units`` (paths of result files relative to
    ``out_dir``); :class:`FolderBusy` naming the other driver if one still running has claimed one of them.

    Each driver holds a lock file of its own under ``<out_dir>/.drivers`` (``fcntl.flock``, released by the
    system when the process ends, however it ends) beside a JSON file of its host, pid, command and units. A
    driver's claims count while its lock is held; the files of a driver that died are removed by the next one.
    ``<out_dir>/.lock`` makes each check-and-claim atomic. Drivers with disjoint units (one process per seed)
    run side by side. Where the file system has no locks, a warning says so and nothing is claimed.
    """
    out, units = Path(out_dir), sorted(set(units))
    drivers = out / ".drivers"
    drivers.mkdir(parents=True, exist_ok=True)
    me = drivers / "{}-{}-{}".format(
        re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()), os.getpid(), uuid.uuid4().hex[:8]
    )
    mine = None
    try:
        with _mutex(out / ".lock"):
            wanted = set(units)
            for holder in _live_drivers(drivers):
                taken = sorted(wanted.intersection(holder.get("units", ())))
                if taken:
                    raise FolderBusy(
                        f"{out} is in use: another driver runs {len(taken)} of the units this run would run "
                        f"(e.g. {taken[0]}), {_describe(holder)}. Wait for it to end and run this command again "
                        "(finished units are skipped), or choose units it does not run (--seeds, --models, --datasets)."
                    )
            mine = os.open(f"{me}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            _try_flock(mine)
            atomic_write_json(Path(f"{me}.json"), {**_holder(command), "units": units})
    except OSError as err:
        if err.errno not in _NO_LOCKS:
            raise
        warnings.warn(
            f"{out} does not support file locks ({err}); nothing keeps a second driver from running the "
            "same units in it.",
            stacklevel=3,
        )
    try:
        yield
    finally:
        if mine is not None:
            for path in (f"{me}.json", f"{me}.lock"):
                Path(path).unlink(missing_ok=True)
            os.close(mine)


@contextlib.contextmanager
def _mutex(path: Path) -> Iterator[None]:
    """Hold ``path``'s exclusive lock for the block (waiting for it: every holder keeps it for milliseconds)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _live_drivers(drivers: Path) -> list[dict]:
    """The records of the drivers whose lock is held; the files of the others (they died) are removed."""
    live = []
    for lock in sorted(drivers.glob("*.lock")):
        record = lock.with_name(lock.name[: -len(".lock")] + ".json")
        try:
            fd = os.open(lock, os.O_RDWR)
        except FileNotFoundError:  # its driver just ended
            continue
        try:
            if _try_flock(fd):  # nobody holds it: its driver is gone
                record.unlink(missing_ok=True)
                lock.unlink(missing_ok=True)
                continue
        finally:
            os.close(fd)
        try:
            live.append(json.loads(record.read_text()))
        except (FileNotFoundError, json.JSONDecodeError):  # ending: its claims are being withdrawn
            continue
    return live


@contextlib.contextmanager
def search_lock(folder: Path, log, what: str, command=None) -> Iterator[None]:
    """Hold the lock of the search whose trials are written in ``folder`` for the block; while another driver
    holds it, say whose it is through ``log`` and wait (its search, once done, is then read, not rerun). The lock
    file (``.search.lock``, holding its holder's host, pid and command) stays: removing it could let two
    processes lock two different files of one name."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".search.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            if not _try_flock(fd):
                try:
                    holder = _describe(json.loads(path.read_text()))
                except (OSError, json.JSONDecodeError):
                    holder = "a process that is starting"
                log(f"    waiting for the search of {what}: another driver runs it, {holder}")
                fcntl.flock(fd, fcntl.LOCK_EX)
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(_holder(command)).encode(), 0)
        except OSError as err:
            if err.errno not in _NO_LOCKS:
                raise
        yield
    finally:
        os.close(fd)

"""A table's units and search trials as tasks of a backend (:mod:`._backends`), results written by the driver.

The driver (the process that runs ``eadct-tables run``) loads each dataset, runs the searches (their trials in
parallel, rung by rung) and submits the units; a worker gets the data with its task, fits in a temporary
folder of its own and returns the unit's files, which the driver writes atomically into the results folder as
they arrive. Workers need no shared disk with the driver; a crash of the driver loses only the tasks in flight,
and a rerun skips every unit whose result exists, as with ``backend="none"``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ._backends import Failure, Session, Task
from ._search import _trial
from ._store import atomic_write_bytes, unit_dir

__all__ = ["trial_runner", "write_unit_files"]


def trial_runner(session: Session):
    """A ``run_trials(spec, data, profile, split, jobs)`` for the search that runs the jobs of a rung as tasks
    of ``session`` and yields each trial as it finishes (see :func:`eadct.tables._search.run_search`)."""

    def run_trials(spec, data, profile, split, jobs):
        common = dict(spec=spec, task=data.task, name=data.name, profile=profile, split=split)
        tasks = [Task((job["rung"], job["candidate"]), _remote_trial, {**common, "job": job}, gpu=True) for job in jobs]
        for task, trial in session.run(tasks):
            if isinstance(trial, Failure):
                raise RuntimeError(f"search trial {task.key} failed: {trial.describe()}")
            yield trial

    return run_trials


class _TaskData:
    """What a search trial needs of a dataset (its task and name): the split travels apart, TEST not at all."""

    def __init__(self, task: str, name: str):
        self.task, self.name = task, name


def _remote_trial(spec, task, name, profile, job, split):
    with tempfile.TemporaryDirectory(prefix="eadct-trial-") as tmp:
        where = dict(rung=job["rung"], candidate=job["candidate"], epochs=job["epochs"], split=split)
        return _trial(spec, _TaskData(task, name), profile, job["params"], **where, ckpt=Path(tmp) / "trial.pt")


def write_unit_files(out_dir, table, model, dataset, profile_name, files: dict) -> None:
    """Write a unit's files atomically (each through a temporary file of a unique name), the result
    (``seed<k>.json``) last: its presence marks the unit done."""
    folder = unit_dir(out_dir, table, model, dataset, profile_name)
    for name in sorted(files, key=lambda n: n.endswith(".json")):
        atomic_write_bytes(folder / name, files[name])

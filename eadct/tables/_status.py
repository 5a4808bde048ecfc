"""Where a table's run stands, read from its results folder alone: which units finished, and how far each
hyperparameter search has gone, rung by rung (``eadct-tables status``).

Nothing is loaded or fitted, so it answers in a second while a sweep runs beside it, on the machine that runs
it or on any machine that sees its results folder. A search's state is in its unit folder (:mod:`._search`):
``search.json`` once it has chosen, ``search_trials.jsonl`` as its trials finish, and
``ckpt/search_r<rung>_c<candidate>.pt`` for the trial running now or stopped mid-fit by a kill (the next run
of the same command resumes it); ``ckpt/seed<k>.pt`` is a refit in the same state.
"""

from __future__ import annotations

import json
import re

from ._config import Profile, TableConfig
from ._data import higher_is_better
from ._keys import dataset_task
from ._search import candidates, rungs, searches, trial_epochs
from ._store import read_jsonl, result_path, unit_dir

_TRIAL_CKPT = re.compile(r"search_r(\d+)_c(\d+)\.pt")


def table_status(table: TableConfig, profile: str, out_dir, datasets=None, models=None, seeds=None) -> list[dict]:
    """One record per (dataset, model): the seeds asked for, those whose unit file exists, the refits with a
    checkpoint (running or stopped) and the search's state (:func:`search_status`)."""
    prof = table.profile(profile)
    seeds = list(seeds or prof.seeds)
    rows = []
    for dataset in datasets or table.datasets:
        for model in models or table.models:
            folder = unit_dir(out_dir, table, model, dataset, prof.name)
            done = [s for s in seeds if result_path(out_dir, table, model, dataset, prof.name, s).is_file()]
            refits = sorted(int(p.stem[4:]) for p in folder.glob("ckpt/seed*.pt") if p.stem[4:].isdigit())
            search = search_status(table, model, dataset, prof, out_dir)
            rows.append(dict(dataset=dataset, model=model, seeds=seeds, done=done, refits=refits, search=search))
    return rows


def search_status(table: TableConfig, model: str, dataset: str, profile: Profile, out_dir) -> dict:
    """The search of ``model`` on ``dataset``: ``state`` ("none", "inherited", "not started", "running" or
    "done"), and for a halving search each rung's planned and finished trials with their best validation score,
    the trials' seconds, the trials with a checkpoint, the chosen candidate once done, and a rough estimate of
    the seconds left (the finished trials' seconds per epoch times the epochs of the trials still to run)."""
    spec = table.models[model]
    if spec.inherit is not None:
        return {"state": "inherited", "from": spec.inherit}
    folder = unit_dir(out_dir, table, model, dataset, profile.name)
    task = _task(folder, dataset)
    cands = candidates(table, spec, profile, task)
    if not searches(spec, profile, cands):
        return {"state": "none"}
    done_path = folder / "search.json"
    chosen = json.loads(done_path.read_text()) if done_path.is_file() else None
    trials = chosen["trials"] if chosen else read_jsonl(folder / "search_trials.jsonl")
    names = [p.name for p in folder.glob("ckpt/*.pt")]
    running = sorted(tuple(map(int, m.groups())) for n in names if (m := _TRIAL_CKPT.fullmatch(n)))
    plan, by_rung = rungs(profile, len(cands)), []
    sign = 1.0 if higher_is_better(task) else -1.0
    for r, (n, epochs) in enumerate(plan):
        scores = [t["score"] for t in trials if t["rung"] == r]
        best = max(scores, key=lambda s: sign * s) if scores else None
        by_rung.append({"rung": r, "planned": n, "epochs": epochs, "done": len(scores), "best": best})
        keep = plan[r + 1][0] if r + 1 < len(plan) else 1
        if len(scores) == n > keep:
            by_rung[-1]["cut_tie"] = _cut_tie([sign * x for x in scores], keep)
    spent = sum(t["time_s"] for t in trials)
    run_epochs = sum(t["epochs"] + t.get("pretrain_epochs", 0) for t in trials)
    left_epochs = sum((x["planned"] - x["done"]) * sum(trial_epochs(profile, x["epochs"])) for x in by_rung)
    state = "done" if chosen else ("running" if trials or running else "not started")
    out = {"state": state, "candidates": len(cands), "rungs": by_rung, "time_s": round(spent, 1)}
    out.update(running=running, left_s=round(spent / run_epochs * left_epochs) if run_epochs and not chosen else None)
    if chosen:
        out.update(best_candidate=chosen.get("best_candidate"), best=chosen["best"])
    return out


def _cut_tie(scores: list[float], keep: int) -> tuple[int, int] | None:
    """Where a finished rung's cut falls inside a tie of score (higher better): (the trials at the cut's
    score, the places left to them), which the tie-breaker of ``rank_key`` filled; None where the score alone
    decided."""
    cut = sorted(scores, reverse=True)[keep - 1]
    tied, above = sum(x == cut for x in scores), sum(x > cut for x in scores)
    return (tied, keep - above) if tied > keep - above else None


def _task(folder, dataset: str) -> str:
    """The unit's task: from a finished unit's file where there is one (an unregistered dataset has no other
    record of it), else from the dataset registry."""
    for path in sorted(folder.glob("seed*.json")):
        task = json.loads(path.read_text()).get("task")
        if task:
            return task
    return dataset_task(dataset)


def format_status(table: TableConfig, profile: str, out_dir, rows: list[dict]) -> str:
    """The records of :func:`table_status` as lines of text, one per (dataset, model)."""
    header = f"{table.name} / {profile}, results in {out_dir}"
    lines = [header, ""]
    width_d = max([len("dataset"), *(len(r["dataset"]) for r in rows)])
    width_m = max([len("model"), *(len(r["model"]) for r in rows)])
    lines.append(f"{'dataset':<{width_d}}  {'model':<{width_m}}  units   search")
    for r in rows:
        units = f"{len(r['done'])}/{len(r['seeds'])}"
        if r["refits"]:
            units += f" (refit checkpoint: seed {', '.join(map(str, r['refits']))})"
        lines.append(f"{r['dataset']:<{width_d}}  {r['model']:<{width_m}}  {units:<6}  {_search_text(r['search'])}")
    return "\n".join(lines)


def _search_text(s: dict) -> str:
    if s["state"] == "none":
        return "no search"
    if s["state"] == "inherited":
        return f"inherits {s['from']}'s"
    rungs_text = "; ".join(
        f"rung {x['rung']} ({x['epochs']} epoch{'s' * (x['epochs'] != 1)}) {x['done']}/{x['planned']}"
        + ("" if x["best"] is None else f" best {x['best']:.4g}")
        + ("" if not x.get("cut_tie") else " (the cut within a tie: {} trials for {} place(s))".format(*x["cut_tie"]))
        for x in s["rungs"]
    )
    text = f"{s['state']}: {rungs_text}; {s['time_s']:,.0f} s of trials"
    if s["running"]:
        text += "; checkpoint of " + ", ".join(f"rung {r} candidate {c}" for r, c in s["running"])
    if s["left_s"] is not None:
        text += f"; about {s['left_s']:,} s left at the finished trials' pace"
    if s["state"] == "done":
        text += f"; chose candidate {s['best_candidate']}: {json.dumps(s['best'])}"
    return text

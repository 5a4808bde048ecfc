"""What the search's log-loss tie-break changed: finished searches replayed with ties broken by index alone.

Since 2026-11-27 the table runner's successive halving breaks ties of accuracy by the validation log-loss, then by
candidate index (``eadct.tables._search.rank_key``); before, by index alone. This copies the searches' trials of the
given rows from ``--from`` into ``--out`` without their losses, and runs the table there under
``eadct.tables.ties_by_index`` (new trials record no loss), so every rung is ranked as before: the trials that
the old rule needs and the loss rule never ran are run (resumable, like any search), then the refits of the
seeds asked for. ``--compare`` prints, per row, both rules' choices and the
TEST scores of the units both folders hold. The TEST file is read only by the refits, as in any unit.

    python benchmarks/search_ties.py --from results/gpu/tables --out results/search_ties --datasets JapaneseVowels \\
        --models DC-Transformer EA-DC-Transformer --data-dir ../shared/datasets/UEA --search-only
    python benchmarks/search_ties.py ... --seeds 0 2 4        # the refits, one process per lane
    python benchmarks/search_ties.py ... --compare
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from eadct.tables import load_table, result_path, ties_by_index


def _folder(out, table, model: str, dataset: str, profile: str) -> Path:
    """The folder of a row's units and search in the results folder ``out``."""
    return result_path(out, table, model, dataset, profile, 0).parent


def copy_without_losses(source: Path, target: Path) -> None:
    """The trials of ``source`` into ``target`` without ``valid_loss`` (only where ``target`` has none yet)."""
    trials_out = target / "search_trials.jsonl"
    if trials_out.is_file():
        return
    target.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in (source / "search_trials.jsonl").read_text().splitlines():
        trial = json.loads(line)
        trial.pop("valid_loss", None)
        lines.append(json.dumps(trial))
    trials_out.write_text("".join(f"{x}\n" for x in lines))


def compare(table, profile: str, src: Path, out: Path, datasets, models) -> str:
    """Markdown: per (dataset, row), both rules' chosen candidates and the TEST scores of the common seeds."""
    rows = [
        "| dataset | row | chosen: log-loss / index | seeds | TEST: log-loss | TEST: index |",
        "|---|---|---|---|---|---|",
    ]
    for dataset in datasets:
        for model in models:
            a, b = _folder(src, table, model, dataset, profile), _folder(out, table, model, dataset, profile)
            if not (a / "search.json").is_file() or not (b / "search.json").is_file():
                continue
            chosen = [json.loads((d / "search.json").read_text()).get("best_candidate") for d in (a, b)]
            seeds = sorted(
                int(p.stem[4:]) for p in b.glob("seed*.json") if (a / p.name).is_file() and p.stem[4:].isdigit()
            )
            scores = [[json.loads((d / f"seed{s}.json").read_text())["value"] for s in seeds] for d in (a, b)]
            cells = [f"{np.mean(v):.4f} ({', '.join(f'{x:.4f}' for x in v)})" if v else "n/a" for v in scores]
            rows.append(f"| {dataset} | {model} | {chosen[0]} / {chosen[1]} | {seeds} | {cells[0]} | {cells[1]} |")
    return "\n".join(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from", dest="src", required=True, help="results folder of the runs with the loss rule")
    parser.add_argument("--out", required=True, help="results folder for the replay")
    parser.add_argument("--table", default="table2")
    parser.add_argument("--profile", default="full")
    parser.add_argument("--datasets", nargs="+", required=True)
    parser.add_argument("--models", nargs="+", required=True)
    parser.add_argument("--data-dir", action="append", default=[])
    parser.add_argument("--seeds", nargs="+", default=None)
    parser.add_argument("--threads", default="1")
    parser.add_argument("--search-only", action="store_true")
    parser.add_argument("--compare", action="store_true", help="print the comparison and run nothing")
    args = parser.parse_args(argv)
    table = load_table(args.table)
    src, out = Path(args.src), Path(args.out)
    if args.compare:
        print(compare(table, args.profile, src, out, args.datasets, args.models))
        return
    for dataset in args.datasets:
        for model in args.models:
            source = _folder(src, table, model, dataset, args.profile)
            if not (source / "search_trials.jsonl").is_file():
                raise SystemExit(f"no search trials of {model} on {dataset} in {source}: run the table there first")
            copy_without_losses(source, _folder(out, table, model, dataset, args.profile))
    from eadct.tables.cli import main as tables_main

    cmd = ["run", args.table, "--profile", args.profile, "--out", str(out), "--backend", "none"]
    cmd += ["--threads", args.threads, "--datasets", *args.datasets, "--models", *args.models]
    for folder in args.data_dir:
        cmd += ["--data-dir", folder]
    if args.seeds:
        cmd += ["--seeds", *args.seeds]
    if args.search_only:
        cmd.append("--search-only")
    with ties_by_index():  # every trial of the replay without a loss: ties go by index
        code = tables_main(cmd)
    raise SystemExit(code)


if __name__ == "__main__":
    main()

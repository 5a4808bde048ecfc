"""``eadct-tables`` / ``python -m eadct.tables``: run a paper table's units and write its report."""

from __future__ import annotations

import argparse
import shlex
import sys

DEFAULT_OUT = "results/tables"


def _threads(n):
    if n:
        import torch

        torch.set_num_threads(n)


def _parser() -> argparse.ArgumentParser:
    from . import available_tables

    parser = argparse.ArgumentParser(prog="eadct-tables", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the shipped tables and profiles")

    run = sub.add_parser("run", help="run the missing units of a table (finished ones are skipped)")
    run.add_argument("table", help=f"one of {available_tables()} or a .toml path")
    run.add_argument("--profile", default="quick", help="run profile (quick: 2-core CPU; full: the paper's, GPU)")
    run.add_argument("--data-dir", action="append", default=[], help="folder of <Name>/<Name>_TRAIN.ts; repeatable")
    run.add_argument("--out", default=DEFAULT_OUT, help=f"results folder (default {DEFAULT_OUT})")
    run.add_argument("--datasets", nargs="+", help="only these datasets of the table")
    run.add_argument("--models", nargs="+", help="only these models of the table")
    run.add_argument("--seeds", nargs="+", type=int, help="only these seeds (default: the profile's)")
    run.add_argument("--download", action="store_true", help="download datasets that are not on disk")
    run.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    run.add_argument("--no-keep-freed-memory", action="store_true", help="do not apply eadct.runtime.keep_freed_memory")

    rep = sub.add_parser("report", help="write the Markdown + PNG report of a table from its results")
    rep.add_argument("table")
    rep.add_argument("--profile", default="quick")
    rep.add_argument("--out", default=DEFAULT_OUT, help="results folder the runs wrote")
    rep.add_argument("--report-dir", default="reports", help="where <table>_<profile>.md/.png go")
    rep.add_argument("--note", default=None, help="text (e.g. the commands and hardware) put under the title")
    rep.add_argument("--no-figure", action="store_true")
    return parser


def main(argv=None) -> int:
    from . import available_tables, build_report, load_table, run_table

    args = _parser().parse_args(argv)
    if args.command == "list":
        for name in available_tables():
            t = load_table(name)
            print(f"{name}: {t.title} | {len(t.datasets)} datasets, models {list(t.models)}")
        t = load_table(available_tables()[0])
        for p in t.profiles.values():
            print(f"profile {p.name}: {p.description}")
        return 0
    table = load_table(args.table)
    if args.command == "run":
        _threads(args.threads)
        if not args.no_keep_freed_memory:
            from ..runtime import keep_freed_memory

            keep_freed_memory()
        command = "eadct-tables " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
        counts = run_table(
            table,
            args.profile,
            args.out,
            data_dirs=args.data_dir,
            datasets=args.datasets,
            models=args.models,
            seeds=args.seeds,
            download=args.download,
            command=command,
        )
        print(
            f"{table.name}/{args.profile}: {counts['run']} run, {counts['skipped']} already done, "
            f"{counts['missing_data']} missing data"
        )
        return 0
    paths = build_report(table, args.profile, args.out, args.report_dir, note=args.note, figure=not args.no_figure)
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

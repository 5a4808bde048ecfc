"""``eadct-tables`` / ``python -m eadct.tables``: run a paper table's units and write its report."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
import warnings
from pathlib import Path

from ._backends import BACKENDS

DEFAULT_OUT = "results/tables"


def _threads(n):
    """``--threads``: the limit the estimators' ``n_jobs=None`` respects (eadct.runtime.resolve_threads)."""
    if n is not None:
        import torch

        torch.set_num_threads(n)


def _positive_int(text: str) -> int:
    """An argparse type: a positive int (``--threads 0`` is an error, not "automatic")."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive int, got {text!r}")
    return value


def _seed(text: str) -> int:
    """An argparse type: a non-negative int (numpy's seeds)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative int, got {text!r}")
    return value


def _selection(parser, out_help: str, units: bool = True) -> None:
    """The arguments that name a table's results: the table, the profile, the results folder, the datasets and
    seeds, and (``units``) the models."""
    from . import available_tables

    parser.add_argument("table", help=f"one of {available_tables()} or a .toml path")
    parser.add_argument("--profile", default="quick", help="run profile (quick: 2-core CPU; full: the paper's, GPU)")
    parser.add_argument("--out", default=DEFAULT_OUT, help=f"{out_help} (default {DEFAULT_OUT})")
    parser.add_argument("--datasets", nargs="+", help="only these datasets of the table")
    parser.add_argument("--seeds", nargs="+", type=_seed, help="only these seeds (default: the profile's)")
    if units:
        parser.add_argument("--models", nargs="+", help="only these models of the table")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="eadct-tables", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the shipped tables and profiles")

    run = sub.add_parser("run", help="run the missing units of a table (finished ones are skipped)")
    _selection(run, "results folder")
    run.add_argument("--data-dir", action="append", default=[], help="folder of <Name>/<Name>_TRAIN.ts; repeatable")
    run.add_argument("--download", action="store_true", help="download datasets that are not on disk")
    run.add_argument(
        "--threads",
        type=_positive_int,
        default=None,
        help="at most this many torch threads per fit (default: as the environment sets them, docs/threads.md)",
    )
    run.add_argument(
        "--backend",
        default="none",
        choices=BACKENDS,
        help="where units and search trials run: none (this process), loky, dask, ray (docs/cluster.md)",
    )
    run.add_argument(
        "--backend-params",
        default=None,
        metavar="JSON",
        help='the backend\'s settings as JSON, e.g. \'{"address": "tcp://host:8786"}\' or \'{"n_workers": 2}\'',
    )
    run.add_argument(
        "--search-only",
        action="store_true",
        help="run the hyperparameter searches of the missing units (trials on the backend) and stop before the units",
    )
    run.add_argument("--no-keep-freed-memory", action="store_true", help="do not apply eadct.runtime.keep_freed_memory")

    st = sub.add_parser("status", help="how far a run has gone: finished units and each search's rungs")
    _selection(st, "results folder the runs write")
    st.add_argument("--json", action="store_true", help="print the records as JSON instead of text")

    rep = sub.add_parser("report", help="write the Markdown + PNG report of a table from its results")
    _selection(rep, "results folder the runs wrote", units=False)
    rep.add_argument("--report-dir", default="reports", help="where <table>_<profile>.md/.png go")
    rep.add_argument("--note", default=None, help="text (e.g. the commands and hardware) put under the title")
    rep.add_argument("--no-figure", action="store_true")
    rep.add_argument("--force", action="store_true", help="replace a report even when it held more results")
    return parser


class UsageError(ValueError):
    """A mistake in the command line (a name not in the table, a folder that does not exist)."""


def _check_run_args(table, args) -> None:
    """Every name and folder of a ``run`` command, checked before anything runs."""
    _check_selection(table, args)
    missing = [d for d in args.data_dir if not Path(d).is_dir()]
    if missing:
        raise UsageError(f"--data-dir {missing[0]} is not a folder; pass the folder that holds <Name>/<Name>_TRAIN.ts.")
    args.backend_params = _backend_params(args.backend_params)
    from ._backends import Session

    try:  # the backend's extra, gpus_per_task, retries and a GPU claim no local worker could meet; nothing starts
        Session(args.backend, args.backend_params)
    except (ImportError, ValueError) as err:
        raise UsageError(str(err)) from None


def _check_selection(table, args) -> None:
    """The profile, datasets and models a command names, checked against the table."""
    table.profile(args.profile)  # TableConfigError naming the profiles
    _check_names(table, args.datasets, table.datasets, "dataset")
    _check_names(table, args.models, table.models, "model")


def _check_names(table, given, pool, kind: str) -> None:
    """A UsageError naming the ``given`` names that are not in ``pool`` (the table's datasets or models)."""
    unknown = [x for x in given or () if x not in pool]
    if unknown:
        raise UsageError(f"{table.name} has no {kind} {unknown}; its {kind}s are {list(pool)}.")


def _report_datasets(table, datasets):
    """``table`` restricted to ``datasets`` (in the table's order), or as it is without them."""
    if not datasets:
        return table
    _check_names(table, datasets, table.datasets, "dataset")
    return dataclasses.replace(table, datasets=tuple(d for d in table.datasets if d in datasets))


def _report_seeds(table, profile: str, seeds):
    """``table`` whose ``profile`` reports ``seeds`` instead of its own, or as it is without them. Seeds are not
    part of a unit's key, so units run with ``run --seeds`` beyond the profile's are found in the same folders."""
    if not seeds:
        return table
    if len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise UsageError(f"--seeds must be distinct non-negative seeds, got {seeds}.")
    p = dataclasses.replace(table.profile(profile), seeds=tuple(seeds))
    return dataclasses.replace(table, profiles={**table.profiles, profile: p})


def _backend_params(text: str | None) -> dict | None:
    if text is None:
        return None
    try:
        params = json.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(
            f"--backend-params is not valid JSON ({err}); pass an object, e.g. '{{\"n_workers\": 2}}'."
        ) from None
    if not isinstance(params, dict):
        raise UsageError(f"--backend-params must be a JSON object, got {text!r}; e.g. '{{\"n_workers\": 2}}'.")
    return params


def _run(table, args, argv) -> int:
    from . import run_table

    _check_run_args(table, args)
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
        backend=args.backend,
        backend_params=args.backend_params,
        search_only=args.search_only,
    )
    if args.search_only:
        print(f"{table.name}/{args.profile}: searches of the missing units run; {counts['failed']} unit(s) failed")
        return 1 if counts["failed"] else 0
    print(
        f"{table.name}/{args.profile}: {counts['run']} run, {counts['skipped']} already done, "
        f"{counts['missing_data']} missing data, {counts['failed']} failed"
    )
    return 1 if counts["failed"] else 0


def _status(table, args) -> int:
    """Print where a run stands (eadct.tables._status); reads the results folder only."""
    from ._status import format_status, table_status

    _check_selection(table, args)
    if not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is not a folder; pass the results folder the run writes (its --out).")
    rows = table_status(table, args.profile, args.out, args.datasets, args.models, args.seeds)
    print(json.dumps(rows, indent=1) if args.json else format_status(table, args.profile, args.out, rows))
    return 0


def _list() -> int:
    from . import available_tables, load_table

    for name in available_tables():
        t = load_table(name)
        print(f"{name}: {t.title} | {len(t.datasets)} datasets, models {list(t.models)}")
    t = load_table(available_tables()[0])
    for p in t.profiles.values():
        print(f"profile {p.name}: {p.description}")
    return 0


def _plots_installed() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        note = 'matplotlib is not installed, so the report has no figures (pip install "eadct[plots]").'
        print(f"eadct-tables: note: {note}", file=sys.stderr)
        return False
    return True


def main(argv=None) -> int:
    """Run the command; a user mistake (or a results folder whose units another driver runs) prints one line
    naming the problem and the fix and returns 2."""
    from . import ReportNotReplaced, TableConfigError, build_report, load_table
    from ._store import FolderBusy

    args = _parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = lambda message, *a, **k: print(f"eadct-tables: warning: {message}", file=sys.stderr)
        try:
            if args.command == "list":
                return _list()
            table = load_table(args.table)
            if args.command == "run":
                return _run(table, args, argv)
            if args.command == "status":
                return _status(table, args)
            table = _report_seeds(_report_datasets(table, args.datasets), args.profile, args.seeds)
            figure = not args.no_figure and _plots_installed()
            paths = build_report(
                table, args.profile, args.out, args.report_dir, note=args.note, figure=figure, force=args.force
            )
        except (TableConfigError, ReportNotReplaced, UsageError, FolderBusy) as err:
            print(f"eadct-tables: error: {err}", file=sys.stderr)
            return 2
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

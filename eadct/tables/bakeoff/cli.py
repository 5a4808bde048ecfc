"""``eadct-bakeoff``: run resampled benchmarks in tsml-eval's format, collect their tables, report them.

    eadct-bakeoff run --data-dir DIR [--datasets A B] [--methods EA-DC QUANT] [--folds 0-9] [--out results/bakeoff]
    eadct-bakeoff collect [--out results/bakeoff] [--summary reports/bakeoff]
    eadct-bakeoff report [--summary reports/bakeoff] [--published DIR] [--task all]

``run`` skips every unit whose predictions file exists, so a killed run is resumed by running it again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..cli import _positive_int
from ._methods import METHODS


def _folds(text: str) -> list[int]:
    """``"0-9"``, ``"3"`` or ``"0,2,5-7"`` as a sorted list of folds."""
    folds = set()
    try:
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            folds.update(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"folds are like 0-9 or 0,2,5-7, got {text!r}") from None
    if not folds or min(folds) < 0:
        raise argparse.ArgumentTypeError(f"folds must be integers >= 0, got {text!r}")
    return sorted(folds)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="eadct-bakeoff", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="fit and predict the units not done yet")
    run.add_argument(
        "--data-dir",
        action="append",
        required=True,
        type=Path,
        help="folder of <name>/<name>_TRAIN.ts and _TEST.ts (repeatable; the first with a set is used)",
    )
    run.add_argument("--datasets", nargs="+", help="default: every dataset folder in the --data-dir folders")
    run.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    run.add_argument("--folds", type=_folds, default=_folds("0-9"), help="default 0-9; fold 0 is the archive's split")
    run.add_argument("--out", type=Path, default=Path("results/bakeoff"), help="where the predictions files go")
    run.add_argument("--threads", type=_positive_int, default=None, help="threads per unit (default: all)")
    run.add_argument("--backend", default="none", choices=["none", "loky", "dask", "ray"])
    collect = sub.add_parser("collect", help="write the <method>_<measure>.csv tables from the predictions files")
    collect.add_argument("--out", type=Path, default=Path("results/bakeoff"))
    collect.add_argument("--summary", type=Path, default=Path("reports/bakeoff"))
    sub.add_parser(
        "report", help="the report from the tables (see python -m eadct.tables.bakeoff.report --help)", add_help=False
    )
    return parser


def _datasets(dirs) -> list[str]:
    names = {p.parent.name for d in dirs for p in Path(d).glob("*/*_TRAIN.ts")}
    return sorted(names)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["report"]:
        from .report import main as report

        return report(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == "collect":
        from ._results import collect

        for path in collect(args.out, args.summary):
            print(path)
        return 0
    from .._store import FolderBusy
    from ._run import run_bakeoff

    datasets = args.datasets or _datasets(args.data_dir)
    if not datasets:
        raise SystemExit(f"no <name>/<name>_TRAIN.ts under {[str(d) for d in args.data_dir]}: give --data-dir")
    try:
        counts = run_bakeoff(
            datasets, args.methods, args.folds, args.out, args.data_dir, backend=args.backend, threads=args.threads
        )
    except (ValueError, FolderBusy) as err:  # stale units, a busy folder: said in one line, no traceback
        print(f"eadct-bakeoff: {err}", file=sys.stderr)
        return 2
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""``eadct-datasets``: list the registry, or check which datasets a data directory holds.

eadct-datasets list [--table 2]
eadct-datasets check --data-dir ../shared/datasets/UEA [--data-dir ...] [NAME ...]

Exit status: 0 when every dataset checked is valid (or, without names, valid or absent); 1 when one is
invalid, or one named is missing; 2 for a usage mistake (an unknown name, a folder that does not exist).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ._load import DATA_DIR_ENV, DatasetNotFoundError, load_dataset
from ._registry import REGISTRY, get_info


def _length(info) -> str:
    return str(info.length[0]) if info.equal_length else f"{info.length[0]}..{info.length[1]}"


def cmd_list(args) -> int:
    rows = [i for i in REGISTRY.values() if args.table is None or args.table in i.tables]
    print("| dataset | archive | task | train | test | channels | length | classes | missing | tables | source |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for i in rows:
        print(
            f"| {i.name} | {i.archive} | {i.task} | {i.n_train} | {i.n_test} | {i.n_channels} | {_length(i)} | "
            f"{i.n_classes or '-'} | {'yes' if i.missing else 'no'} | {','.join(i.tables)} | {i.source} |"
        )
    return 0


def _load_both_splits(name: str, data_dirs: list) -> None:
    """Load TRAIN and TEST from the first of ``data_dirs`` that has them (each also searches the default places)."""
    for i, data_dir in enumerate(data_dirs or [None]):
        try:
            for split in ("train", "test"):
                load_dataset(name, split, data_dir, download=False, progress=False)
            return
        except DatasetNotFoundError:
            if i == len(data_dirs or [None]) - 1:
                raise


def cmd_check(args) -> int:
    names = args.names or list(REGISTRY)
    unknown = [n for n in names if get_info(n) is None]
    if unknown:
        print(
            f"eadct-datasets: error: unknown dataset(s) {unknown}; `eadct-datasets list` shows the registry.",
            file=sys.stderr,
        )
        return 2
    missing_dirs = [d for d in args.data_dir if not Path(d).is_dir()]
    if missing_dirs:
        print(f"eadct-datasets: error: --data-dir {missing_dirs[0]} is not a folder.", file=sys.stderr)
        return 2
    bad = 0
    print("| dataset | status | load time (s) | detail |\n|---|---|---|---|")
    for name in names:
        tic = time.perf_counter()
        try:
            _load_both_splits(name, args.data_dir)
            status, detail = "valid", ""
        except DatasetNotFoundError:
            status, detail = "missing", ""
            bad += bool(args.names)  # a dataset asked for by name and not found is a failure
        except ValueError as err:  # DatasetCheckError or an unparsable file
            status, detail = "INVALID", str(err).splitlines()[0]
            bad += 1
        print(f"| {name} | {status} | {time.perf_counter() - tic:.2f} | {detail} |")
    return 1 if bad else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="eadct-datasets", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("list", help="the registry as a Markdown table")
    p_list.add_argument("--table", choices=["1", "2", "3", "4", "extra"], default=None)
    p_list.set_defaults(run=cmd_list)
    p_check = sub.add_parser("check", help="which registered datasets are present and valid (no download)")
    p_check.add_argument(
        "--data-dir",
        action="append",
        default=[],
        help=f"folder to check; repeatable (also searched: ${DATA_DIR_ENV}, sktime's bundled copies, the cache)",
    )
    p_check.add_argument("names", nargs="*", help="datasets to check (default: the whole registry)")
    p_check.set_defaults(run=cmd_check)
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

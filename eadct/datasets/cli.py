"""``eadct-datasets``: list the registry, or check which datasets a data directory holds.

eadct-datasets list [--table 2]
eadct-datasets check --data-dir ../shared/datasets/UEA [NAME ...]
"""

from __future__ import annotations

import argparse
import sys
import time

from ._load import DATA_DIR_ENV, DatasetNotFoundError, load_dataset
from ._registry import REGISTRY


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


def cmd_check(args) -> int:
    names = args.names or list(REGISTRY)
    bad = 0
    print("| dataset | status | load time (s) | detail |\n|---|---|---|---|")
    for name in names:
        tic = time.perf_counter()
        try:
            for split in ("train", "test"):
                load_dataset(name, split, args.data_dir, download=False, progress=False)
            status, detail = "valid", ""
        except DatasetNotFoundError:
            status, detail = "missing", ""
        except ValueError as err:  # DatasetCheckError or an unparsable file
            status, detail = "INVALID", str(err).splitlines()[0]
            bad += 1
        print(f"| {name} | {status} | {time.perf_counter() - tic:.2f} | {detail} |")
    return 1 if bad else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="eadct-datasets", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("list", help="the registry as a Markdown table")
    p_list.add_argument("--table", choices=["1", "2", "3", "4", "extra"], default=None)
    p_list.set_defaults(run=cmd_list)
    p_check = sub.add_parser("check", help="which registered datasets are present and valid (no download)")
    p_check.add_argument(
        "--data-dir",
        default=None,
        help=f"folder to check (also searched: ${DATA_DIR_ENV}, sktime's bundled copies, the cache)",
    )
    p_check.add_argument("names", nargs="*", help="datasets to check (default: the whole registry)")
    p_check.set_defaults(run=cmd_check)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

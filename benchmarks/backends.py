"""Wall time of one small table sweep on each backend, side by side in one run (issue 18).

A synthetic two-class dataset (written as .ts files into a temporary folder) and a table of two models plus an
inherited variant, searched by halving and refit with three seeds, as ``eadct-tables run`` does: first with
``--backend none`` (this process, one torch thread, one unit after another), then on a local Dask cluster of
``--workers`` single-threaded worker processes (started by the sweep, its start-up included in the time),
then on Ray when it is installed. Checks that every backend wrote the same accuracies and hyperparameters.

    python benchmarks/backends.py            # prints a Markdown table
    python benchmarks/backends.py --backends none dask ray

Time it alone: on 2 cores a second CPU-bound process distorts every number (stop other work first).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from eadct.provenance import cpu_name, git_commit
from eadct.runtime import keep_freed_memory
from eadct.tables import load_table, run_table

PROFILES = """
[bench]
description = "backends benchmark: 2 candidates halved at 3 -> 6 epochs, 3 seeds of 8 + 3 epochs"
search = "halving"
n_candidates = 2
eta = 2
search_epochs = [3, 6]
pretrain_share = 0.5
search_validation = 0.3
search_seed = 0
seeds = [0, 1, 2]
max_epochs = 8
pretrain_epochs = 3
n_iter_no_change = 10

[bench.params]
d_ff = 64
n_heads = 2
batch_size = 16
device = "cpu"
"""

TABLE = """
[table]
name = "backends"
title = "Backends benchmark"
published = "table2.csv"
datasets = ["SynthBench"]

[space]
d_model = [32, 64]
n_blocks = [2]

[models.Transformer]
architecture = "transformer"
search = ["d_model"]

[models.EA-DC-Transformer]
architecture = "ea-dc-transformer"
search = ["d_model"]

[models."w/o Convolution"]
inherit = "EA-DC-Transformer"
params = { beta = 0.0 }
"""


def write_dataset(folder: Path, n: int = 320, channels: int = 3, length: int = 96) -> None:
    rng = np.random.default_rng(0)
    y = np.arange(n) % 2
    t = np.linspace(0, 1, length)
    X = 0.5 * rng.normal(size=(n, channels, length))
    X[:, 0] += np.sin(2 * np.pi * (1 + y[:, None]) * t)
    head = ["@problemName SynthBench", "@timeStamps false", "@missing false", "@univariate false"]
    head += [f"@dimensions {channels}", "@equalLength true", f"@seriesLength {length}", "@classLabel true a b", "@data"]
    target = folder / "SynthBench"
    target.mkdir(parents=True)
    for split, rows in (("TRAIN", [i for i in range(n) if i % 4 < 2]), ("TEST", [i for i in range(n) if i % 4 >= 2])):
        lines = [
            ":".join(",".join(f"{v:.4f}" for v in X[i, c]) for c in range(channels)) + f":{'ab'[y[i]]}" for i in rows
        ]
        (target / f"SynthBench_{split}.ts").write_text("\n".join(head + lines) + "\n")


def _failures(line: str) -> None:
    if "FAILED" in line:
        print(line)


def sweep(table, out: Path, data: Path, backend: str, params: dict | None) -> tuple[float, dict]:
    tic = time.perf_counter()
    counts = run_table(table, "bench", out, data_dirs=[data], log=_failures, backend=backend, backend_params=params)
    wall = time.perf_counter() - tic
    assert counts["failed"] == 0 and counts["run"] == 9, counts
    results = {p.parent.name + "/" + p.name: json.loads(p.read_text()) for p in sorted(out.rglob("seed*.json"))}
    fit_s = float(np.mean([r["fit_s"] for r in results.values()]))
    threads = sorted({r["machine"]["torch_threads"] for r in results.values()})
    return wall, {k: (r["value"], r["hyperparameters"]) for k, r in results.items()}, fit_s, threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", nargs="+", default=["none", "dask", "ray"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--series", type=int, default=320, help="series in the synthetic set (half for TRAIN)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # backend none: one thread, as each single-threaded worker
    keep_freed_memory()  # as eadct-tables run does (and its workers, after it)
    rows, reference = [], None
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_dataset(root / "data", n=args.series)
        (root / "cfg").mkdir()
        (root / "cfg" / "profiles.toml").write_text(PROFILES)
        (root / "cfg" / "table.toml").write_text(TABLE)
        table = load_table(root / "cfg" / "table.toml")
        settings = {
            "none": None,
            "dask": {"n_workers": args.workers, "threads_per_worker": 1},
            "ray": {"num_cpus": args.workers, "include_dashboard": False},
        }
        for backend in args.backends:
            if backend == "ray":
                try:
                    import ray  # noqa: F401
                except ImportError:
                    print("ray is not installed; skipped (pip install 'eadct[ray]')")
                    continue
            wall, values, fit_s, threads = sweep(table, root / backend, root / "data", backend, settings[backend])
            reference = reference or values
            rows.append((backend, settings[backend], wall, fit_s, threads, values == reference))
    base = rows[0][2]
    print(f"9 units (3 models x 3 seeds) and 2 searches of 3 trials; CPU {cpu_name()}, commit {git_commit()['commit']}")
    print("\n| backend | settings | wall (s) | speed-up vs none | mean unit fit (s) | torch threads | same results |")
    print("|---|---|---|---|---|---|---|")
    for backend, params, wall, fit_s, threads, same in rows:
        print(f"| {backend} | {json.dumps(params) if params else 'this process, 1 thread'} | {wall:.1f} | "
              f"{base / wall:.2f}x | {fit_s:.2f} | {threads} | {'yes' if same else 'NO'} |")  # fmt: skip


if __name__ == "__main__":
    main()

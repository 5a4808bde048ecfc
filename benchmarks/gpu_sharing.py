"""How many small fits one GPU serves at once, with and without NVIDIA's Multi-Process Service (MPS).

A table's search trials and refits are small networks whose time goes into launching kernels, so one process
leaves most of a GPU idle; the question is how close N processes come to N times one's throughput, and whether
MPS, which lets their kernels run together, adds to it (research/tables-diary.md, "Many small fits on one GPU"). This
runs N identical fits as N processes that start their fits together (Handwriting-sized random data: 150 series, 3
channels, 152 steps, 26 classes; d_model 64, 4 blocks, batch 32; a fixed number of epochs, no early stopping), for
each N, once with plain sharing and once under MPS, and prints a table: the seconds from the first fit's start to
the last one's end, the epochs per second of all the processes together, and that throughput against one process
alone in the same mode. Rows are printed as they finish, so a run cut short keeps the rows before.

Usage: python benchmarks/gpu_sharing.py [--processes 1 8] [--epochs 20] [--modes plain mps] [--device cuda]
The mps rows start and stop an MPS daemon of their own (nvidia-cuda-mps-control, with its pipes in a temporary
folder); the GPU's compute mode is left as it is. ``--device cpu`` rehearses the plumbing without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def worker(folder: Path, index: int, epochs: int, device: str) -> None:
    """One fit: build everything, say ready, wait for the go, fit, print the fit's start and end."""
    import numpy as np
    import torch

    from eadct import EADCTClassifier

    rng = np.random.default_rng(index)
    X, y = rng.normal(size=(150, 3, 152)).astype("float32"), np.arange(150) % 26
    pretrain = epochs // 2
    model = EADCTClassifier(
        d_model=64, n_blocks=4, batch_size=32, max_epochs=epochs - pretrain, pretrain_epochs=pretrain,
        n_iter_no_change=epochs, device=device, n_jobs=1, random_state=index,
    )  # fmt: skip
    if device.startswith("cuda"):
        torch.ones(1, device=device).sum().item()  # the CUDA context, before the clock starts
    (folder / f"ready{index}").touch()
    while not (folder / "go").exists():
        time.sleep(0.01)
    start = time.time()
    model.fit(X, y)
    print(json.dumps({"start": start, "end": time.time()}), flush=True)


def run_row(n: int, epochs: int, device: str, env: dict) -> float:
    """Seconds from the first fit's start to the last one's end, for ``n`` processes fitting at once."""
    with tempfile.TemporaryDirectory(prefix="gpu-sharing-") as tmp:
        folder = Path(tmp)
        argv = [sys.executable, __file__, "--worker", str(folder), "--epochs", str(epochs), "--device", device]
        procs = [subprocess.Popen([*argv, "--index", str(i)], stdout=subprocess.PIPE, env=env) for i in range(n)]
        try:
            while len(list(folder.glob("ready*"))) < n:
                if any(p.poll() is not None for p in procs):
                    raise RuntimeError("a fitting process ended before its fit; its error is above")
                time.sleep(0.05)
            (folder / "go").touch()
            spans = []
            for p in procs:
                out = p.communicate()[0].decode().strip().splitlines()
                if p.returncode != 0 or not out:
                    raise RuntimeError(f"a fitting process exited with {p.returncode}; its error is above")
                spans.append(json.loads(out[-1]))
        finally:
            for p in procs:
                if p.poll() is None:  # the others of a row that failed
                    p.kill()
    return max(s["end"] for s in spans) - min(s["start"] for s in spans)


def mps_env(folder: str) -> dict:
    """Start an MPS daemon whose pipes are in ``folder``; the environment its clients need."""
    env = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=folder, CUDA_MPS_LOG_DIRECTORY=folder)
    subprocess.run(["nvidia-cuda-mps-control", "-d"], env=env, check=True)
    return env


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--modes", nargs="+", choices=["plain", "mps"], default=["plain", "mps"])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker, args.index, args.epochs, args.device)
    if args.epochs < 2 or min(args.processes) < 1:
        parser.error("--epochs must be at least 2 (pretraining and fine-tuning) and --processes at least 1")
    print(f"{args.epochs} epochs per fit on {args.device}\n")
    print("| mode | processes | seconds | epochs/s, all together | throughput vs one alone |")
    print("|---|---|---|---|---|", flush=True)
    for mode in args.modes:
        with tempfile.TemporaryDirectory(prefix="mps-") as pipes:
            env = mps_env(pipes) if mode == "mps" else dict(os.environ)
            try:
                alone = None
                for n in args.processes:
                    seconds = run_row(n, args.epochs, args.device, env)
                    rate = n * args.epochs / seconds
                    alone = rate if n == 1 else alone
                    ratio = f"{rate / alone:.2f}x" if alone else "n/a (no row of 1)"
                    print(f"| {mode} | {n} | {seconds:.1f} | {rate:.1f} | {ratio} |", flush=True)
            finally:
                if mode == "mps":
                    subprocess.run(["nvidia-cuda-mps-control"], input=b"quit\n", env=env, timeout=30)


if __name__ == "__main__":
    main()

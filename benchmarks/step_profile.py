"""Where a default training step spends its time, and what bf16 autocast does to it on the CPU.

Builds the default network of ``EADCTClassifier`` (or ``EADCTRegressor``) for series of the given shape with one
short fit, then runs training steps (forward, loss, backward, RAdam step) on random series in the estimator's
batch size:

1. a table of the steps' time under each ``--precisions`` value (``float32``, ``bfloat16``: the autocast of
   ``precision="bfloat16"``), the variants alternating within each repeat, median ms per step and the ratio to
   the first;
2. torch.profiler's operators that take the most of the first precision's CPU time.

A measurement to decide where a faster step should come from, not a target (docs/benchmarks.md).

    python benchmarks/step_profile.py --threads 2                      # UWaveGestureLibrary's shape
    python benchmarks/step_profile.py --task regression --length 266 --channels 1 --batch 16
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

from eadct import EADCTClassifier, EADCTRegressor
from eadct.training.loop import autocast

DTYPES = {"float32": None, "bfloat16": torch.bfloat16}


def default_network(task: str, X: np.ndarray, threads: int) -> torch.nn.Module:
    """The estimator's default network for series shaped as ``X``, built by a fit of one epoch."""
    rng = np.random.default_rng(0)
    if task == "classification":
        est = EADCTClassifier(max_epochs=1, pretrain_epochs=0, random_state=0, n_jobs=threads)
        y = np.arange(len(X)) % 4
    else:
        # without the choice of input_differences="auto" (two more fits): the network as the fit without it builds it
        est = EADCTRegressor(
            max_epochs=1, pretrain_epochs=0, random_state=0, n_jobs=threads, options={"input_differences": False}
        )
        y = rng.normal(size=len(X))
    return est.fit(X, y).network_, est.batch_size


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=["classification", "regression"], default="classification")
    parser.add_argument("--length", type=int, default=315)
    parser.add_argument("--channels", type=int, default=3)
    parser.add_argument("--batch", type=int, default=None, help="default: the estimator's batch size")
    parser.add_argument("--steps", type=int, default=20, help="timed or profiled steps (after 5 unmeasured)")
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds, each precision once per round")
    parser.add_argument("--precisions", nargs="+", choices=list(DTYPES), default=["float32", "bfloat16"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(32, args.channels, args.length)).cumsum(axis=2)
    network, batch_size = default_network(args.task, X, args.threads)
    batch_size = args.batch or batch_size
    x = torch.as_tensor(X.transpose(0, 2, 1), dtype=torch.float32)
    optimizer = torch.optim.RAdam(network.parameters(), lr=1e-4)
    network.train()
    generator = torch.Generator().manual_seed(0)

    def step(dtype):
        batch = x[torch.randint(len(x), (batch_size,), generator=generator)]
        with autocast(torch.device("cpu"), dtype):
            loss = network(batch).float().pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    times = {name: [] for name in args.precisions}
    for _ in range(args.repeats):
        for name in args.precisions:
            for i in range(5 + args.steps):
                tic = time.perf_counter()
                step(DTYPES[name])
                if i >= 5:
                    times[name].append(time.perf_counter() - tic)
    print(
        f"Training step of the {args.task} default network: batch {batch_size}, {args.length} steps, "
        f"{args.channels} channel(s), {args.threads} torch thread(s); median of {args.repeats} x {args.steps} "
        f"steps per precision\n"
    )
    base = float(np.median(times[args.precisions[0]]))
    print("| precision | ms per step | ratio |\n|---|---|---|")
    for name, values in times.items():
        print(f"| {name} | {1e3 * np.median(values):.1f} | {np.median(values) / base:.2f} |")
    _profile_table(step, DTYPES[args.precisions[0]], args)


def _profile_table(step, dtype, args) -> None:
    """torch.profiler over ``args.steps`` steps: the operators with the most self CPU time, as a table."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(args.steps):
            step(dtype)
    events = [e for e in prof.key_averages() if e.self_cpu_time_total > 0]
    total = sum(e.self_cpu_time_total for e in events)
    events.sort(key=lambda e: -e.self_cpu_time_total)
    print(f"\nOperators of the {args.precisions[0]} step (torch.profiler, {args.steps} steps):\n")
    print("| operator | calls per step | self CPU ms per step | share |\n|---|---|---|---|")
    for e in events[: args.top]:
        ms = e.self_cpu_time_total / 1e3 / args.steps
        print(f"| {e.key} | {e.count / args.steps:.0f} | {ms:.2f} | {e.self_cpu_time_total / total:.1%} |")


if __name__ == "__main__":
    main()

"""The CPU map dropout's mask applied by a product or by ``torch.where``: time of one training step, side by side.

``eadct.networks.maps.map_dropout`` zeroes the dropped attention weights with a 1-byte mask in forward and in
backward, by a product with the bool mask, which first copies the mask to a float map of the attention maps' size
(``docs/benchmarks.md``, "Where a training step's time goes": 8 such copies a step). ``torch.where`` selects
without that copy and is faster on one map alone; this asks whether a training step gains. It times a step
(forward, backward, RAdam step) of the estimator's default network on random series of the given shape with the
mask applied both ways, alternating the two in each repeat (default: UWaveGestureLibrary's shape and the
classifier's network and batches of 8; ``--task regression --length 266 --channels 1`` for FloodModeling1's). It
first checks that both ways give the same output and gradients from the same seed (docs/benchmarks.md: measured,
not adopted).

    python benchmarks/map_dropout_cost.py --threads 2
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

import numpy as np
import torch
from step_profile import default_network

from eadct.networks import maps


class _WhereDropout(torch.autograd.Function):
    """The package's map dropout with its mask applied by ``torch.where`` instead of a product."""

    @staticmethod
    def forward(ctx, x, keep):
        mask = maps._keep_mask(x, keep)  # the package's mask, drawn the same way
        ctx.save_for_backward(mask)
        ctx.scale = 65536.0 / keep
        return torch.where(mask, x, 0.0).mul_(ctx.scale)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return torch.where(mask, grad, 0.0).mul_(ctx.scale), None


VARIANTS = {"product with the bool mask (the package)": maps._MapDropout, "torch.where (candidate)": _WhereDropout}


def _step(network, optimizer, batch) -> None:
    loss = network(batch).pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def same_results(network, batch) -> bool:
    """Whether both ways give bit-identical outputs and gradients from the same seed."""
    results = []
    for function in VARIANTS.values():
        with mock.patch.object(maps, "_MapDropout", function):
            torch.manual_seed(0)
            network.zero_grad(set_to_none=True)
            out = network(batch)
            out.pow(2).mean().backward()
            grads = [p.grad.clone() for p in network.parameters() if p.grad is not None]
            results.append([out.detach().clone(), *grads])
    return all(torch.equal(a, b) for a, b in zip(*results, strict=True))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=["classification", "regression"], default="classification")
    parser.add_argument("--length", type=int, default=315)
    parser.add_argument("--channels", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20, help="timed steps per variant and repeat (after 3 unmeasured)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(32, args.channels, args.length)).cumsum(axis=2)
    network, batch_size = default_network(args.task, X, args.threads)
    x = torch.as_tensor(X.transpose(0, 2, 1), dtype=torch.float32)
    network.train()
    identical = same_results(network, x[:batch_size])
    optimizer = torch.optim.RAdam(network.parameters(), lr=1e-4, betas=(0.9, 0.99))
    times = {name: [] for name in VARIANTS}
    for _ in range(args.repeats):
        for name, function in VARIANTS.items():
            with mock.patch.object(maps, "_MapDropout", function):
                for step in range(3 + args.steps):
                    batch = x[torch.randint(len(x), (batch_size,))]
                    tic = time.perf_counter()
                    _step(network, optimizer, batch)
                    if step >= 3:
                        times[name].append(time.perf_counter() - tic)
    first = float(np.median(times[next(iter(VARIANTS))]))
    print(f"Training step of the {args.task} default network: batch {batch_size}, {args.length} steps, "
          f"{args.channels} channel(s), {args.threads} torch thread(s); median of {args.repeats} x {args.steps} steps "
          f"per variant; outputs and gradients bit-identical between the two: {identical}\n")  # fmt: skip
    print("| map dropout's mask | ms per step | ratio |\n|---|---|---|")
    for name, values in times.items():
        median = float(np.median(values))
        print(f"| {name} | {1e3 * median:.1f} | {median / first:.3f} |")


if __name__ == "__main__":
    main()

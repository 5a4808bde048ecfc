"""What would the CPU's faster dropout mask save on the steps' dropouts? Time of one training step, side by side.

On the CPU the attention maps' dropout already draws its mask from 16-bit slices of 64-bit random integers
(``eadct.networks.maps.map_dropout``), several times faster than ``F.dropout``'s ``bernoulli_``. The step
representations' dropouts (the embedding's, the two residual paths' of every layer and the head's) still use
``nn.Dropout``. This times a training step (forward, backward, RAdam step) of the estimators' network as it is and
with those dropouts replaced by ``map_dropout``, alternating the two in each repeat, on random series of the given
shape (default: FloodModeling1's, 266 steps of one channel, in the regressor's batches of 16). The same
distribution of masks, but other draws: a fit would not repeat its numbers exactly (docs/accuracy.md).

    python benchmarks/step_dropout_cost.py --threads 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from step_profile import default_network
from torch import nn

from eadct.networks.maps import map_dropout


class _MaskDropout(nn.Module):
    """``nn.Dropout`` with the CPU map dropout's mask."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x):
        return map_dropout(x, self.p, self.training)


def _swap(network: nn.Module, fast: bool) -> None:
    """Put ``_MaskDropout`` in place of every ``nn.Dropout`` (``fast``), or back."""
    for module in network.modules():
        for name, child in list(module.named_children()):
            if fast and type(child) is nn.Dropout:
                setattr(module, name, _MaskDropout(child.p))
            elif not fast and isinstance(child, _MaskDropout):
                setattr(module, name, nn.Dropout(child.p))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--length", type=int, default=266)
    parser.add_argument("--channels", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per variant and repeat (after 5 unmeasured)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4 * args.batch, args.channels, args.length)).cumsum(axis=2)
    network, _ = default_network("regression", X, args.threads)  # the regressor's default network for this shape
    x = torch.as_tensor(X.transpose(0, 2, 1), dtype=torch.float32)
    optimizer = torch.optim.RAdam(network.parameters(), lr=1e-4, betas=(0.9, 0.99))
    n_drop = sum(type(m) is nn.Dropout for m in network.modules())
    times = {"nn.Dropout": [], "map_dropout": []}
    network.train()
    for _ in range(args.repeats):
        for variant in times:
            _swap(network, variant == "map_dropout")
            for step in range(5 + args.steps):
                batch = x[torch.randint(len(x), (args.batch,))]
                tic = time.perf_counter()
                loss = network(batch).pow(2).mean()
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                if step >= 5:
                    times[variant].append(time.perf_counter() - tic)
    base = float(np.median(times["nn.Dropout"]))
    print(
        f"Training step of the regressor's default network: batch {args.batch}, {args.length} steps, "
        f"{args.channels} channel(s), {args.threads} torch thread(s), {n_drop} step dropouts; median of "
        f"{args.repeats} x {args.steps} steps per variant\n"
    )
    print("| step dropouts | ms per step | ratio |\n|---|---|---|")
    for variant, values in times.items():
        median = float(np.median(values))
        print(f"| {variant} | {1e3 * median:.1f} | {median / base:.2f} |")


if __name__ == "__main__":
    main()

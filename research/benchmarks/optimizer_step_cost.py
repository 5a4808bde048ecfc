"""What does RAdam's foreach implementation save on the CPU? Time of one training step, side by side.

On the CPU ``torch.optim.RAdam`` runs its for-loop implementation unless told ``foreach=True``: about ten small
tensor operations per parameter tensor and step, each a Python call (the estimators' networks have about 95
tensors). The foreach implementation makes each of those operations one call over all the tensors. Both compute
the same update; the rounding differs in the last bits, so a fit does not repeat its numbers exactly
(docs/accuracy.md, section "RAdam's foreach implementation on the CPU").

This times a training step (forward, backward, gradient clipping as in fit, RAdam step) of the estimators'
default network with the two implementations, alternating them in each repeat, and the RAdam step alone (on the
gradients of the last step), on random series of three shapes:
JapaneseVowels' (12 channels, 29 steps, the classifier's batches of 8), UWaveGestureLibrary's (3 channels, 315
steps, batches of 8) and FloodModeling1's (1 channel, 266 steps, the regressor's batches of 16).

    python benchmarks/optimizer_step_cost.py --threads 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from eadct import EADCTClassifier, EADCTRegressor

SHAPES = {  # name: (estimator, channels, steps, batch)
    "JapaneseVowels": (EADCTClassifier, 12, 29, 8),
    "UWaveGestureLibrary": (EADCTClassifier, 3, 315, 8),
    "FloodModeling1": (EADCTRegressor, 1, 266, 16),
}


def _network(estimator, channels: int, length: int, batch: int, threads: int, rng):
    """The estimator's default network for series of this shape (one short fit builds it) and a batch pool."""
    X = rng.normal(size=(4 * batch, channels, length)).cumsum(axis=2)
    y = rng.integers(0, 4, len(X)) if estimator is EADCTClassifier else rng.normal(size=len(X))
    fitted = estimator(max_epochs=1, pretrain_epochs=0, random_state=0, n_jobs=threads).fit(X, y)
    return fitted.network_, torch.as_tensor(X.transpose(0, 2, 1), dtype=torch.float32)


def _time_steps(network, x, batch: int, optimizer, steps: int, clip: float) -> list[float]:
    out = []
    for step in range(5 + steps):
        chosen = x[torch.randint(len(x), (batch,))]
        tic = time.perf_counter()
        loss = network(chosen).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(network.parameters(), clip)
        optimizer.step()
        if step >= 5:
            out.append(time.perf_counter() - tic)
    return out


def _time_optimizer(network, optimizer, steps: int) -> list[float]:
    """The RAdam step alone, on the gradients of the network's last step."""
    out = []
    for _ in range(steps):
        tic = time.perf_counter()
        optimizer.step()
        out.append(time.perf_counter() - tic)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--steps", type=int, default=30, help="timed steps per variant and repeat (after 5 unmeasured)")
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(
        f"Training step of the estimators' default network, RAdam for-loop against foreach; {args.threads} torch "
        f"thread(s); median of {args.repeats} x {args.steps} steps per variant, alternating\n"
    )
    print(
        "| shape | tensors | for-loop ms per step | foreach ms per step | ratio | RAdam step alone, for-loop ms "
        "| RAdam step alone, foreach ms |\n|---|---|---|---|---|---|---|"
    )
    for name in args.shapes:
        estimator, channels, length, batch = SHAPES[name]
        network, x = _network(estimator, channels, length, batch, args.threads, rng)
        network.train()
        times, alone = {False: [], True: []}, {False: [], True: []}
        optimizers = {
            foreach: torch.optim.RAdam(network.parameters(), lr=1e-4, betas=(0.9, 0.99), foreach=foreach)
            for foreach in times
        }
        for repeat in range(args.repeats):
            for foreach in (False, True) if repeat % 2 == 0 else (True, False):
                times[foreach] += _time_steps(network, x, batch, optimizers[foreach], args.steps, 4.0)
                alone[foreach] += _time_optimizer(network, optimizers[foreach], args.steps)
        loop, fast, loop_alone, fast_alone = (float(np.median(t[k])) for t in (times, alone) for k in (False, True))
        n_tensors = sum(1 for _ in network.parameters())
        print(
            f"| {name} | {n_tensors} | {1e3 * loop:.1f} | {1e3 * fast:.1f} | {fast / loop:.2f} | "
            f"{1e3 * loop_alone:.1f} | {1e3 * fast_alone:.1f} |"
        )


if __name__ == "__main__":
    main()

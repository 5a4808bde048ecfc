"""Sharpness-aware minimisation (SAM; Foret et al., "Sharpness-Aware Minimization for Efficiently Improving
Generalization", ICLR 2021) as a second pass of a training step.

The step's gradient ``g`` is replaced by the gradient at the weights moved ``rho * g / ||g||`` (the first-order
worst case within a ball of radius ``rho``), then the weights are moved back and the optimizer steps with it, so
the optimizer (RAdam or any other) sees a gradient that favours flat minima. Each step costs two forward and
backward passes. The second pass sees the same batch with the same augmentation draws (the generator is rewound),
and does not update the BatchNorm running statistics (the first pass did).
"""

from __future__ import annotations

import torch
from torch import nn


def sharpness_aware_gradient(network: nn.Module, parameters, loss_at_weights, generator, rho: float, state) -> None:
    """Replace the ``.grad`` of ``parameters`` (set by the first pass) with SAM's: the gradient of
    ``loss_at_weights()`` at the weights moved ``rho`` along the normalised gradient. ``state`` is
    ``generator``'s state before the first pass (rewound for the second)."""
    moved = [(p, p.grad) for p in parameters if p.grad is not None]
    if not moved:
        return
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g.detach().float()) for _, g in moved]))
    if not torch.isfinite(norm) or float(norm) == 0.0:
        return  # no direction to move along: the plain gradient stands (a non-finite loss is caught by the loop)
    scale = rho / norm
    steps = []
    with torch.no_grad():
        for p, g in moved:
            e = (g * scale.to(g.dtype)).to(p.dtype)
            p.add_(e)
            steps.append(e)
    norms = [m for m in network.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    momenta = [m.momentum for m in norms]
    tracked = [None if m.num_batches_tracked is None else m.num_batches_tracked.clone() for m in norms]
    for m in norms:
        m.momentum = 0.0  # running = (1 - 0) * running + 0 * batch: unchanged by the second pass
    after_first = generator.get_state()
    generator.set_state(state)
    try:
        for p, _ in moved:
            p.grad = None
        loss_at_weights().backward()
    finally:
        generator.set_state(after_first)
        with torch.no_grad():
            for (p, _), e in zip(moved, steps, strict=True):
                p.sub_(e)
        for m, momentum, count in zip(norms, momenta, tracked, strict=True):
            m.momentum = momentum
            if count is not None:
                m.num_batches_tracked.copy_(count)

"""Padded series kept on the training device, and batches cut from them."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class SeriesTensors:
    """Right-padded series with their lengths, on one device.

    Attributes
    ----------
    values : Tensor ``(n, N_max, C)``, float
        Padded steps hold 0.
    lengths : Tensor ``(n,)``, long
    targets : Tensor ``(n,)`` long (classes) or ``(n, T)`` float, or None
    """

    values: torch.Tensor
    lengths: torch.Tensor
    targets: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.values.shape[0]

    def subset(self, index: torch.Tensor) -> SeriesTensors:
        """Rows ``index`` (a LongTensor on any device)."""
        index = index.to(self.values.device)
        targets = None if self.targets is None else self.targets[index]
        return SeriesTensors(self.values[index], self.lengths[index], targets)

    def batch(self, index: torch.Tensor):
        """Cut a batch cropped to its longest series.

        Returns
        -------
        x : Tensor ``(B, N_b, C)``
        valid : Tensor ``(B, N_b)`` of bool, or None when no step is padded
        y : Tensor or None
        """
        index = index.to(self.values.device)
        lengths = self.lengths[index]
        n_steps = int(lengths.max())
        x = self.values[index, :n_steps]
        valid = torch.arange(n_steps, device=x.device)[None, :] < lengths[:, None]
        if bool(valid.all()):
            valid = None
        y = None if self.targets is None else self.targets[index]
        return x, valid, y


def batch_indices(n: int, batch_size: int, generator: torch.Generator | None = None):
    """Yield index tensors covering ``range(n)``, shuffled when a generator is given."""
    order = torch.randperm(n, generator=generator) if generator is not None else torch.arange(n)
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


def length_sorted_batches(lengths: torch.Tensor, batch_size: int):
    """Yield index tensors grouping series of similar length (less padding at inference)."""
    order = torch.argsort(lengths.cpu(), stable=True)
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]

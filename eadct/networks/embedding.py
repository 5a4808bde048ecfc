"""Input stem: a per-step linear projection plus a learnable absolute position table."""

from __future__ import annotations

import math

import torch
from torch import nn

#: ``series_normalization`` divides by a series' standard deviation, at least this (the channels are standardised
#: over the training series first, so a series whose spread is under 1% of the channel's is treated as flat).
SERIES_STD_FLOOR = 0.01

#: The values of ``positional_encoding`` (the one list; ``EncoderConfig`` validates against it).
POSITIONAL_ENCODINGS = ("learned", "learned-sinusoidal", "sinusoidal")
#: Those values as an error message names them.
POSITIONAL_ENCODINGS_TEXT = ", ".join(map(repr, POSITIONAL_ENCODINGS[:-1])) + f" or {POSITIONAL_ENCODINGS[-1]!r}"


def sinusoidal_positions(n_steps: int, d_model: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """The fixed positional waves of Vaswani et al. (2017), ``(n_steps, d_model)``: column ``2i`` is
    ``sin(t / 10000^(2i / d))``, column ``2i + 1`` the cosine of the same angle (float32, amplitude 1)."""
    t = torch.arange(n_steps, dtype=torch.float64, device=device).unsqueeze(1)
    rates = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64, device=device) / d_model)
    out = torch.zeros(n_steps, d_model, dtype=torch.float64, device=device)
    out[:, 0::2] = torch.sin(t * rates)
    out[:, 1::2] = torch.cos(t * rates[: d_model // 2])
    return out.float()


class InputEmbedding(nn.Module):
    """``Linear(C -> d) * sqrt(d)`` per time step plus a learnable positional embedding (TST stem, the paper's).

    Parameters
    ----------
    n_channels : int
        Input channels C.
    d_model : int
        Output width d.
    max_len : int
        Rows of the positional table. Positions at or past ``max_len`` (series longer
        than any seen in training) reuse the last row: the model has never been trained
        on those positions, and the last learned position is the closest it knows.
    dropout : float
        Dropout after the sum.
    differences : bool
        Also project each channel's first differences ``x_t - x_{t-1}`` (0 at a series' first step), each
        multiplied by the buffer ``difference_scale`` ``(C,)`` (1 until :meth:`fit_difference_scale` sets it
        from training data): the projection then reads ``2 C`` values per step.
    positional_encoding : {"learned", "learned-sinusoidal", "sinusoidal"}
        "learned": the table ``position`` of ``max_len`` rows (the paper's); "learned-sinusoidal": the same table
        started as the waves of :func:`sinusoidal_positions`; "sinusoidal": those waves fixed, no parameters, any
        length.
    series_normalization : bool
        Read each series' channels standardised by their own mean and standard deviation over the series' real
        steps (:meth:`normalized_series`), then, as constant channels, that mean and the log of that standard
        deviation: ``2 C`` values more per step. With ``differences`` the differences stay those of the
        input as given.
    """

    def __init__(
        self,
        n_channels: int,
        d_model: int,
        max_len: int,
        dropout: float = 0.1,
        differences: bool = False,
        series_normalization: bool = False,
        positional_encoding: str = "learned",
    ):
        super().__init__()
        self.differences = bool(differences)
        self.series_normalization = bool(series_normalization)
        width = n_channels * (1 + self.differences + 2 * self.series_normalization)
        self.projection = nn.Linear(width, d_model)
        if self.differences:
            self.register_buffer("difference_scale", torch.ones(n_channels))
        self.positional_encoding = positional_encoding
        if positional_encoding == "learned":
            self.position = nn.Parameter(torch.empty(max_len, d_model).uniform_(-0.02, 0.02))
        elif positional_encoding == "learned-sinusoidal":
            self.position = nn.Parameter(sinusoidal_positions(max_len, d_model))
        elif positional_encoding not in POSITIONAL_ENCODINGS:
            raise ValueError(f"positional_encoding must be {POSITIONAL_ENCODINGS_TEXT}, got {positional_encoding!r}")
        self.d_model = d_model
        self.scale = math.sqrt(d_model)
        self.dropout = nn.Dropout(dropout)

    def positions(self, n_steps: int) -> torch.Tensor:
        """Positional rows for ``n_steps`` steps, shape ``(N, d)``."""
        if self.positional_encoding == "sinusoidal":
            return sinusoidal_positions(n_steps, self.d_model, self.projection.weight.device)
        max_len = self.position.shape[0]
        if n_steps <= max_len:
            return self.position[:n_steps]
        extra = self.position[-1:].expand(n_steps - max_len, -1)
        return torch.cat([self.position, extra], dim=0)

    @staticmethod
    def first_differences(x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``x_t - x_{t-1}`` of ``(B, N, C)`` steps: 0 at the first step and at padded steps."""
        d = torch.cat([torch.zeros_like(x[:, :1]), x[:, 1:] - x[:, :-1]], dim=1)
        return d if valid is None else d * valid.unsqueeze(-1)

    @staticmethod
    def normalized_series(x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, N, 3 C)``: each series' channels of ``x`` ``(B, N, C)`` standardised by their own mean ``m`` and
        standard deviation ``s`` over the series' real steps, then ``m`` and ``log s`` repeated at every step
        (``s`` floored at :data:`SERIES_STD_FLOOR`, so that a constant series reads 0 and a finite log); padded
        steps are 0."""
        real = torch.ones_like(x[..., :1]) if valid is None else valid.unsqueeze(-1).to(x.dtype)
        count = real.sum(dim=1, keepdim=True).clamp_min(1.0)
        mean = (x * real).sum(dim=1, keepdim=True) / count
        std = (((x - mean) ** 2 * real).sum(dim=1, keepdim=True) / count).sqrt().clamp_min(SERIES_STD_FLOOR)
        levels = torch.cat([mean, std.log()], dim=-1).expand(-1, x.shape[1], -1)
        return torch.cat([(x - mean) / std, levels], dim=-1) * real

    @torch.no_grad()
    def fit_difference_scale(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> None:
        """Set ``difference_scale`` to 1 / the standard deviation of each channel's first differences over
        the real steps of ``x`` ``(B, N, C)`` (series standardised as the network will see them), so that the
        differences enter the projection on the scale of the values (a constant channel keeps 1)."""
        real = torch.ones_like(x[..., 0], dtype=torch.bool) if valid is None else valid
        pairs = (real[:, 1:] & real[:, :-1]).unsqueeze(-1)  # steps with a real predecessor
        d = (x[:, 1:] - x[:, :-1]).double() * pairs
        count = pairs.sum(dim=(0, 1)).clamp_min(1).double()
        mean = d.sum(dim=(0, 1)) / count
        std = ((d - mean) ** 2 * pairs).sum(dim=(0, 1)).div(count).sqrt()
        scale = torch.where(std > 1e-12, 1.0 / std.clamp_min(1e-12), torch.ones_like(std))
        self.difference_scale.copy_(scale.to(self.difference_scale.dtype))

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Embed ``x`` of shape ``(B, N, C)``; ``valid`` ``(B, N)`` is True at real steps."""
        if valid is not None:
            x = x * valid.unsqueeze(-1)  # padded steps carry no signal
        parts = [self.normalized_series(x, valid) if self.series_normalization else x]
        if self.differences:
            parts.append(self.first_differences(x, valid) * self.difference_scale.to(x.dtype))
        x = torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0]
        h = self.projection(x) * self.scale + self.positions(x.shape[1])
        h = self.dropout(h)
        if valid is not None:
            h = h * valid.unsqueeze(-1)
        return h

"""The report's section of chosen hyperparameters: for each (model, dataset) unit, the search that chose them
and the settings its seed-0 refit used, as stored in its result (``hyperparameters``).

Only the settings that tell rows apart are shown (:data:`_SHOWN_HYPERPARAMETERS`), and an option that did
nothing is left out; a unit with none of them to show gives all it recorded.
"""

from __future__ import annotations

#: The settings worth a word on each line, in this order.
_SHOWN_HYPERPARAMETERS = (
    "architecture",
    "d_model",
    "n_blocks",
    "alpha",
    "beta",
    "attention_ratio",
    "attention_kernel_size",
    "attention_downsample",
    "head_alpha",
    "head_input_parts",
    "head_input_weight",
    "input_differences_chosen",
    "input_differences_decided_by",
    "wide_scale_channels",
)


def _did_nothing(name: str, value) -> bool:
    """An option that did nothing (the regressor's ``head_input_parts=None``, ``wide_scales="auto"`` on no channel):
    not worth a word on each line."""
    return (name == "head_input_parts" and value is None) or (name == "wide_scale_channels" and not value)


def report_lines(results: dict) -> list[str]:
    """The report's last section: each unit's search method and the hyperparameters its seed-0 refit used,
    the settings of :data:`_SHOWN_HYPERPARAMETERS` it holds (all it recorded where none of those is shown)."""
    md = [
        "## Chosen hyperparameters (seed 0 refit)",
        "",
        "| model | dataset | search | hyperparameters |",
        "|---|---|---|---|",
    ]
    for (m, d), runs in results.items():
        h = runs[0]["hyperparameters"]
        shown = ", ".join(f"{k}={h[k]}" for k in _SHOWN_HYPERPARAMETERS if k in h and not _did_nothing(k, h[k]))
        shown = shown or ", ".join(f"{k}={v}" for k, v in h.items())
        md.append(f"| {m} | {d} | {runs[0]['search'].get('method', '')} | {shown} |")
    return md + [""]

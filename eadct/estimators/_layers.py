"""``pool_layers="all"``: the head reads every encoder layer's output, pooled, not only the last one's.

By default the task head reads the pooled output of the encoder's last layer. With ``"all"`` each of the
``2 * n_blocks`` layers' step representations is pooled the same way and the results are concatenated (the
"multi-layer aggregation" of ELMo and of layer-wise probing: lower layers keep more local, input-like features
that the last layer may have mixed away), so the head's input is ``n_layers`` times as wide. Pretraining is
unchanged (the reconstruction head reads the last layer). Only the encoders of the EA-DC family (``architecture``
in ``"ea-dc-transformer"``, ``"dc-transformer"``, ``"transformer"``, ``"dilated-conv"``) have layers to read. Its
measured effect: docs/accuracy.md, section "Candidate: every layer's output in the classifier's head".
"""

from __future__ import annotations

from ..networks import ARCHITECTURES, get_architecture
from ._param import Param

POOL_LAYERS_VALUES = ("last", "all")

POOL_LAYERS = {
    "pool_layers": Param(
        "last",
        lambda v: v in POOL_LAYERS_VALUES,
        f"one of {list(POOL_LAYERS_VALUES)}",
        '{"last", "all"}, default="last"\n'
        '    Which encoder layers the head reads. "last": the last layer\'s output, pooled. "all": each of the\n'
        "    ``2 * n_blocks`` layers' outputs pooled the same way and concatenated (multi-layer aggregation; the\n"
        "    head's input ``2 * n_blocks`` times as wide). The EA-DC family of architectures only\n"
        "    (docs/model.md).",
        before="last",
    ),
}


def pooled_layer_count(estimator, config) -> int:
    """How many layers' outputs the head reads: 1, or the encoder's ``n_layers`` with ``pool_layers="all"`` (a
    ValueError for an architecture whose encoder has no layers to read)."""
    if getattr(estimator, "pool_layers", "last") != "all":  # a model saved before pool_layers has none
        return 1
    if not hasattr(get_architecture(estimator.architecture).build, "layer_outputs"):
        layered = [name for name, a in ARCHITECTURES.items() if hasattr(a.build, "layer_outputs")]
        raise ValueError(
            f"{type(estimator).__name__}: pool_layers='all' reads each layer of an encoder of the EA-DC family, but "
            f"architecture={estimator.architecture!r} has no such layers. Set pool_layers='last', or an architecture "
            f"in {layered}."
        )
    return config.n_layers

"""One-way dependencies: networks and training never import sklearn; datasets never import torch."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "module,forbidden",
    [("eadct.networks", "sklearn"), ("eadct.training", "sklearn"), ("eadct.datasets", "torch")],
)
def test_layer_does_not_import(module, forbidden):
    code = f"import sys, {module}; print({forbidden!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

"""Record, or compare against a record, the predictions of every architecture row on tiny seeded data.

A refactor that claims "no behaviour change" runs ``record`` on the commit before it and ``compare`` after:
for fixed ``random_state`` every output must be bit-identical (CPU, one torch thread). The rows cover each
``architecture`` for the classifier (``predict_proba``), the regressor (``predict``) and the representation
(``transform``), on equal and unequal lengths, plus the options that change the network's path
(flattening head, blocked map path, token downsampling, LayerNorm, a validation split).

    python benchmarks/prediction_fingerprint.py record before.json
    python benchmarks/prediction_fingerprint.py compare before.json      # exit 1 on any difference
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings

import numpy as np
import torch

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation

ARCHITECTURES = ["ea-dc-transformer", "dc-transformer", "transformer", "dilated-conv", "lstm", "gru", "resnet"]
TINY = dict(d_model=16, n_heads=2, n_blocks=1, d_ff=16, attention_ratio=0.5, batch_size=8, max_epochs=3,
            pretrain_epochs=2, device="cpu", random_state=0)  # fmt: skip
OPTIONS = {
    "flatten": {"pooling": "flatten"},
    "blocked": {"options": {"recompute_attention": True}, "n_blocks": 2},
    "downsample": {"options": {"attention_downsample": 2}, "n_blocks": 2},
    "layer-norm": {"options": {"norm": "layer"}, "pooling": "max"},
    "no-validation": {"validation_fraction": 0.0},
    "kernel-5": {"options": {"attention_kernel_size": 5}, "alpha": 0.2, "beta": 0.7, "n_blocks": 2},
}


def _data():
    rng = np.random.default_rng(0)
    n, channels, length = 24, 2, 20
    y = np.arange(n) % 3
    t = np.linspace(0, 1, length)
    X = 0.3 * rng.normal(size=(n, channels, length))
    for k in range(3):
        X[y == k, 0] += np.sin(2 * np.pi * (k + 1) * t)
    unequal = [X[i, :, : 10 + (i % 10)] for i in range(n)]
    return X, unequal, y, X[:, 0].mean(axis=1)


def _rows():
    X, unequal, y, target = _data()
    for arch in ARCHITECTURES:
        for name, data in (("equal", X), ("unequal", unequal)):
            p = {**TINY, "architecture": arch}
            yield f"classifier/{arch}/{name}", lambda p=p, d=data: EADCTClassifier(**p).fit(d, y).predict_proba(d)
            yield f"regressor/{arch}/{name}", lambda p=p, d=data: EADCTRegressor(**p).fit(d, target).predict(d)
            q = {k: v for k, v in p.items() if k != "pretrain_epochs"}
            yield f"representation/{arch}/{name}", lambda q=q, d=data: EADCTRepresentation(**q).fit(d).transform(d)
    for option, extra in OPTIONS.items():
        p = {**TINY, **extra}
        yield f"classifier/option-{option}", lambda p=p: EADCTClassifier(**p).fit(X, y).predict_proba(X)
        yield f"regressor/option-{option}", lambda p=p: EADCTRegressor(**p).fit(X, target).predict(X)


def measure() -> dict:
    torch.set_num_threads(1)
    out = {}
    for key, run in _rows():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = np.ascontiguousarray(run(), dtype=np.float64)
        out[key] = {"sha256": hashlib.sha256(values.tobytes()).hexdigest(), "values": values.ravel()[:6].tolist()}
        print(f"{key:45s} {out[key]['sha256'][:16]}", flush=True)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["record", "compare"])
    parser.add_argument("path")
    args = parser.parse_args(argv)
    got = measure()
    if args.action == "record":
        with open(args.path, "w") as fh:
            json.dump({"torch": torch.__version__, "rows": got}, fh, indent=1)
        return 0
    with open(args.path) as fh:
        want = json.load(fh)["rows"]
    differ = [k for k in want if k not in got or got[k]["sha256"] != want[k]["sha256"]]
    print(f"{len(want) - len(differ)} of {len(want)} rows bit-identical")
    for k in differ:
        print(f"DIFFERS {k}: {want[k]['values']} -> {got.get(k, {}).get('values')}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

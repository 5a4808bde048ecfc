"""Why the transformer rows trailed on UWaveGestureLibrary in the quick profile: four fits, one line each.

1. ResNet under the quick settings (is the gap in the data pipeline or in the attention encoder?)
2. EA-DC-Transformer, quick settings but 150 epochs and no early stopping (is it the epoch budget?)
3. EA-DC-Transformer without token pooling and without pretraining (is it attention_downsample=2?)
4. EA-DC-Transformer with TST's flattening head, pooling="flatten" (is it the mean pooling?)

    python benchmarks/uwave_diagnostics.py --data-dir ../shared/datasets/UEA [--only 1 3]

Each fit uses one torch thread (as the table lanes do); about 2, 10, 10 and 3 minutes on the 2-core CPU.
"""

from __future__ import annotations

import argparse
import time

import torch

from eadct import EADCTClassifier
from eadct.datasets import load_dataset
from eadct.runtime import keep_freed_memory

QUICK = dict(batch_size=16, max_epochs=60, pretrain_epochs=15, n_iter_no_change=15, random_state=0)
RUNS = {
    1: ("resnet, quick settings", dict(QUICK, architecture="resnet")),
    2: ("ea-dc, 150 epochs, no early stop", dict(QUICK, attention_downsample=2, max_epochs=150, n_iter_no_change=150)),
    3: ("ea-dc, no downsampling, no pretraining", dict(QUICK, attention_downsample=1, pretrain_epochs=0)),
    4: ("ea-dc, flattening head", dict(QUICK, attention_downsample=2, pooling="flatten")),
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--only", nargs="+", type=int, default=sorted(RUNS))
    args = parser.parse_args(argv)
    keep_freed_memory()
    torch.set_num_threads(1)
    X_tr, y_tr = load_dataset("UWaveGestureLibrary", "train", args.data_dir)
    X_te, y_te = load_dataset("UWaveGestureLibrary", "test", args.data_dir)
    for k in args.only:
        name, params = RUNS[k]
        tic = time.perf_counter()
        model = EADCTClassifier(**params).fit(X_tr, y_tr)
        fit_s = time.perf_counter() - tic
        ft = [h for h in model.history_ if h["stage"] == "finetune"]
        best = [h["epoch"] for h in ft if h.get("best")]
        print(
            f"{k}. {name}: test accuracy {model.score(X_te, y_te):.4f}, fit {fit_s:.0f} s, "
            f"{len(ft)} fine-tuning epochs (best {best[-1] if best else '-'}), "
            f"last train loss {ft[-1]['train_loss']:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()

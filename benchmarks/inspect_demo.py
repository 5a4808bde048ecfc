"""The figures of docs/inspect.md, on data that ships with the install (sktime's JapaneseVowels).

Fits the default EADCTClassifier with three architectures (Transformer, DC-Transformer, EA-DC-Transformer) on
TRAIN, then draws from the fitted models: the attention maps of one TEST series layer by layer and their change
(paper Fig. 5), the t-SNE of the TEST representations (Fig. 4) and the training curves; prints accuracy and the
AvgWCD (Eq. 13) of each model, and writes reports/inspect_demo.md with the PNGs beside it.

    python benchmarks/inspect_demo.py [--out reports] [--seed 0] [--threads 1]

One seed and one data set: these are pictures of what the methods show, not evidence for a claim (for that see
reports/representations_defaults.md, `bash benchmarks/inspect_reports_cpu.sh`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from eadct import EADCTClassifier
from eadct.datasets import load_dataset
from eadct.metrics import average_within_class_distance
from eadct.plotting import plot_attention_maps, plot_history, plot_representations
from eadct.provenance import machine_info

ARCHITECTURES = {
    "Transformer": "transformer",
    "DC-Transformer": "dc-transformer",
    "EA-DC-Transformer": "ea-dc-transformer",
}


def fit_models(seed: int):
    X_train, y_train = load_dataset("JapaneseVowels", "train")
    X_test, y_test = load_dataset("JapaneseVowels", "test")
    models, rows = {}, []
    for name, architecture in ARCHITECTURES.items():
        tic = time.perf_counter()
        model = EADCTClassifier(architecture=architecture, random_state=seed).fit(X_train, y_train)
        fit_s = time.perf_counter() - tic
        Z = model.transform(X_test)
        rows.append((name, model.score(X_test, y_test), average_within_class_distance(Z, y_test),
                     average_within_class_distance(Z, y_test, normalize=True), fit_s))  # fmt: skip
        models[name] = model
    return models, rows, X_test, y_test


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="reports")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    models, rows, X_test, y_test = fit_models(args.seed)
    ea = models["EA-DC-Transformer"]
    figures = {
        "inspect_demo_maps.png": plot_attention_maps(ea, X_test[0], heads=[0, 1, 2]),
        "inspect_demo_maps_difference.png": plot_attention_maps(ea, X_test[0], heads=[0, 1, 2], difference=True),
        "inspect_demo_representations.png": plot_representations(
            list(models.values()), X_test, y_test, titles=list(models)
        ),  # fmt: skip
        "inspect_demo_history.png": plot_history(ea),
    }
    for name, fig in figures.items():
        fig.savefig(out / name, dpi=90)
    table = ["| model | test accuracy | AvgWCD (Eq. 13) | AvgWCD normalised | fit time |", "|---|---|---|---|---|"]
    table += [f"| {n} | {acc:.3f} | {raw:.3f} | {norm:.3f} | {s:.0f} s |" for n, acc, raw, norm, s in rows]
    info = machine_info()
    lines = [
        "# Looking inside: the demo figures (JapaneseVowels, one seed)",
        "",
        f"Command: `python benchmarks/inspect_demo.py --seed {args.seed}"
        + (f" --threads {args.threads}`" if args.threads else "`")
        + f". Machine: {info.get('cpu', info.get('machine', '?'))}, torch threads {torch.get_num_threads()}.",
        "Default `EADCTClassifier` with each architecture, fitted on TRAIN; representations (`transform`, the task "
        "head's input) and maps of TEST. One seed on one data set: pictures of what the methods show, not evidence.",
        "",
        *table,
        "",
        "Attention weights of TEST series 0, EA-DC-Transformer, heads 0-2 (rows), layers 0-3 (columns, 0-based as "
        "`layers=` counts):",
        "",
        "![maps](inspect_demo_maps.png)",
        "",
        "The same, each layer after the first drawn as its change from the previous layer:",
        "",
        "![maps difference](inspect_demo_maps_difference.png)",
        "",
        "t-SNE of the TEST representations, one colour per class:",
        "",
        "![representations](inspect_demo_representations.png)",
        "",
        "Training curves of the EA-DC-Transformer (vertical line: the chosen epoch):",
        "",
        "![history](inspect_demo_history.png)",
        "",
    ]
    (out / "inspect_demo.md").write_text("\n".join(lines))
    print("\n".join(table))


if __name__ == "__main__":
    main()

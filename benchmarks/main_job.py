"""Accuracy / RMSE and fit time of the default estimator on a bundled dataset, over seeds.

    python benchmarks/main_job.py --dataset JapaneseVowels --seeds 0 1 2 3 4

Each seed's result is one JSON line in ``--out`` (default results/main_job_<dataset>.jsonl); a
seed already there with the same settings (the estimators' defaults and ``--param``) is not run again, so a
killed run resumes where it stopped, and a change of the defaults is measured afresh. Prints a Markdown
table with the mean and standard deviation. Uses only the public API (``eadct.demo.run``).
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import numpy as np
import torch

from eadct import EADCTClassifier, EADCTRegressor
from eadct.demo import run


def _settings(params: dict) -> str:
    """What decides a seed's result besides the seed: both estimators' defaults and the given parameters."""
    defaults = {cls.__name__: cls().get_params() for cls in (EADCTClassifier, EADCTRegressor)}
    return json.dumps({"defaults": defaults, "params": params}, sort_keys=True, default=repr)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="JapaneseVowels")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--out", default=None)
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="estimator parameter (JSON value), e.g. --param d_model=128",
    )
    args = parser.parse_args(argv)
    params = {}
    for p in args.param:
        name, _, value = p.partition("=")
        try:
            params[name] = json.loads(value)
        except json.JSONDecodeError:
            parser.error(f'--param {p}: the value must be JSON (true, 0.5, "segments", null): --param {name}=true')
    tag = "_".join(f"{k}-{v}" for k, v in sorted(params.items()))
    out = Path(args.out or f"results/main_job_{args.dataset}{'_' + tag if tag else ''}.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = _settings(params)
    done = {}
    if out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                if rec.get("settings") == settings:
                    done[rec["seed"]] = rec
    for seed in args.seeds:
        if seed in done:
            continue
        rec = run(args.dataset, args.data_dir, random_state=seed, **params)
        rec["seed"], rec["settings"] = seed, settings
        with out.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        done[seed] = rec
        print(f"seed {seed}: {rec.get('test_accuracy', rec.get('test_rmse')):.4f} in {rec['fit_s']:.1f} s", flush=True)

    rows = [done[s] for s in args.seeds]
    metric = "test_accuracy" if "test_accuracy" in rows[0] else "test_rmse"
    scores = np.array([r[metric] for r in rows])
    fits = np.array([r["fit_s"] for r in rows])
    print(
        f"\n{rows[0]['estimator']} on {args.dataset}, params {params or 'default'}; "
        f"{platform.machine()}, {torch.get_num_threads()} torch threads, device {rows[0]['device']}\n"
    )
    print(f"| seed | {metric} | fit (s) | pretrain epochs | fine-tune epochs |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['seed']} | {r[metric]:.4f} | {r['fit_s']:.1f} | {r['epochs']['pretrain']} | "
            f"{r['epochs']['finetune']} |"
        )
    print(f"| mean +- std | {scores.mean():.4f} +- {scores.std():.4f} | {fits.mean():.1f} +- {fits.std():.1f} | | |")


if __name__ == "__main__":
    main()

"""Fit time alone and beside busy CPU processes, by ``n_jobs`` (issue 17: thread control).

    python benchmarks/threads.py                      # JapaneseVowels (bundled), 3 + 1 epochs
    python benchmarks/threads.py --busy 2 --epochs 5  # beside two busy processes


Every fit runs in a fresh Python process (so torch's thread state starts as a user's does), first alone, then
while ``--busy`` other processes spin on the CPU (plain Python loops, one core each). The rows compare
``n_jobs=-1`` (every core: what torch does by itself, the behaviour before ``n_jobs`` existed), the default
``n_jobs=None`` and ``n_jobs=1``, and ``GridSearchCV(n_jobs=1)`` against ``GridSearchCV(n_jobs=2)`` over a
4-point grid alone. Run it with nothing else on the machine: it refuses to start when other processes already
keep cores busy (``--force`` to go on). Results: docs/threads.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

FIT = """
import json, sys, time
import numpy as np, torch
from eadct import EADCTClassifier
from eadct.datasets import load_dataset
X, y = load_dataset("JapaneseVowels", "train")
n_jobs, epochs = json.loads(sys.argv[1])
clf = EADCTClassifier(n_jobs=n_jobs, max_epochs=epochs, pretrain_epochs=1, random_state=0)
tic = time.perf_counter(); clf.fit(X, y); fit_s = time.perf_counter() - tic
print(json.dumps({"fit_s": fit_s, "threads_after": torch.get_num_threads()}))
"""

SEARCH = """
import json, sys, time
import numpy as np
from sklearn.model_selection import GridSearchCV
from eadct import EADCTClassifier
from eadct.datasets import load_dataset
X, y = load_dataset("JapaneseVowels", "train")
n_jobs, epochs = json.loads(sys.argv[1])
grid = {"alpha": [0.3, 0.7], "beta": [0.1, 0.5]}
est = EADCTClassifier(max_epochs=epochs, pretrain_epochs=1, random_state=0)
tic = time.perf_counter(); GridSearchCV(est, grid, cv=2, n_jobs=n_jobs).fit(X, y)
print(json.dumps({"fit_s": time.perf_counter() - tic}))
"""

SPIN = "while True:\n    pass\n"


def _once(code: str, arg) -> float:
    out = subprocess.run([sys.executable, "-c", code, json.dumps(arg)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["fit_s"]


def _timed(code: str, arg, repeats: int = 1) -> float:
    return statistics.median(_once(code, arg) for _ in range(repeats))


def _beside_busy(code: str, arg, n_busy: int, repeats: int) -> float:
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(n_busy)]
    try:
        time.sleep(0.5)
        return _timed(code, arg, repeats)
    finally:
        for p in spinners:
            p.kill()
            p.wait()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3, help="fine-tuning epochs (pretraining: 1)")
    parser.add_argument("--busy", type=int, default=1, help="busy processes beside the fit")
    parser.add_argument("--repeats", type=int, default=3, help="fits per cell (the median is shown)")
    parser.add_argument("--force", action="store_true", help="run even when the machine is already busy")
    args = parser.parse_args(argv)

    from eadct.runtime import available_cores

    busy_now = _other_running()
    if busy_now and not args.force:
        sys.exit(f"{busy_now} other process(es) keep cores busy now; the timings would be wrong. Stop them or --force.")
    rows = []
    for label, n_jobs in (("n_jobs=-1 (every core; before)", -1), ("n_jobs=None (default)", None), ("n_jobs=1", 1)):
        alone = _timed(FIT, [n_jobs, args.epochs], args.repeats)
        beside = _beside_busy(FIT, [n_jobs, args.epochs], args.busy, args.repeats)
        rows.append((label, alone, beside))
        print(f"# {label}: alone {alone:.2f} s, beside {args.busy} busy {beside:.2f} s", file=sys.stderr)
    searches = [(f"GridSearchCV(n_jobs={k}), 4 candidates x cv=2", _timed(SEARCH, [k, args.epochs], args.repeats))
                for k in (1, 2)]  # fmt: skip

    omp = os.environ.get("OMP_NUM_THREADS", "not set")
    print(f"Machine: {platform.machine()}, {available_cores()} cores; python {platform.python_version()}; "
          f"OMP_NUM_THREADS {omp}; median of {args.repeats} run(s), each in a fresh process")  # fmt: skip
    print(f"Fit: EADCTClassifier defaults, {args.epochs} + 1 epochs, JapaneseVowels TRAIN (270 series)\n")
    print(f"| setting | alone (s) | beside {args.busy} busy process(es) (s) | beside / alone |")
    print("|---|---|---|---|")
    for label, alone, beside in rows:
        print(f"| {label} | {alone:.2f} | {beside:.2f} | {beside / alone:.1f}x |")
    print("\n| search (alone) | time (s) |\n|---|---|")
    for label, t in searches:
        print(f"| {label} | {t:.2f} |")


def _other_running() -> int:
    """Threads of other processes running or waiting for a core now (Linux ``procs_running`` less this one); 0
    where ``/proc/stat`` does not say."""
    try:
        with open("/proc/stat") as fh:
            running = next(int(line.split()[1]) for line in fh if line.startswith("procs_running"))
    except (OSError, StopIteration, ValueError):
        return 0
    return max(0, running - 1)


if __name__ == "__main__":
    main()

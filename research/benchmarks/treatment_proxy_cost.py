"""What the regressor's kernel ridge proxy (``input_differences="auto"``'s first judge) costs on large shapes.

Random series of a few shapes that the shared sets do not have (many series, long series, many channels) are scored
by ``eadct.estimators.treatment_proxy_scores``, the proxy that ``EADCTRegressor``'s default consults before any
network fit. Above ``MAX_SERIES`` series it scores a seeded subset, so its cost stops growing with the series' count;
it grows with the length and the channels through the part means and the kernel. Prints a table; trains nothing.

    python benchmarks/treatment_proxy_cost.py [--shapes 5550x2x4000 2000x963x144 20000x3x24] [--threads 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from eadct.estimators import treatment_proxy_scores

#: n series x channels x steps: BIDMC32HR's size, PEMS-SF's channels at 2,000 series, a large set of short series.
SHAPES = ("5550x2x4000", "2000x963x144", "20000x3x24")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), help="n x channels x steps")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print("| series | channels | steps | seconds |\n|---|---|---|---|")
    for shape in args.shapes:
        n, c, length = (int(v) for v in shape.split("x"))
        rng = np.random.default_rng(0)
        X, y = rng.normal(size=(n, c, length)).astype(np.float32), rng.normal(size=n)
        tic = time.perf_counter()
        treatment_proxy_scores(X, y, random_state=0)
        print(f"| {n} | {c} | {length} | {time.perf_counter() - tic:.2f} |")


if __name__ == "__main__":
    main()

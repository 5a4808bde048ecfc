"""Which torch operations round differently with another number of threads, in eadct's fits (docs/threads.md).

    python benchmarks/thread_rounding.py                 # sktime's test settings, 1 against 2 threads
    python benchmarks/thread_rounding.py --threads 1 16  # 16 threads, or every usable core where fewer

Each row fits one configuration twice with the same ``random_state``, once per thread count, on sktime's test
scenario data (10 series), with every torch operation of the fit logged (a ``TorchDispatchMode``): an operation
"rounds by threads" when it got bit-identical inputs in both fits and gave different outputs. Only the first such
operation of each kind is seen (everything after it differs anyway), so a row lists where the fits part, not every
operation that would. The last column: the largest difference of the predictions (``predict_proba`` for the
classifier), which sktime's ``test_multiprocessing_idempotent`` requires to be 0.
"""

from __future__ import annotations

import argparse
import copy
import json
import warnings

CONFIGS = {
    "classifier, test params 0 (EA-DC, BatchNorm)": ("classifier", 0, {}),
    "classifier, test params 1 (Transformer, BatchNorm)": ("classifier", 1, {}),
    "regressor, test params 1 + norm='layer'": ("regressor", 1, {"norm": "layer"}),
    "classifier, test params 0 + use_deterministic_algorithms": ("classifier", 0, {"deterministic": True}),
}


def _fingerprint(t):
    import torch

    t = t.detach()
    if t.numel() == 0:
        return (tuple(t.shape), str(t.dtype))
    flat = t.contiguous().view(-1)
    if flat.dtype == torch.float32:
        flat = flat.view(torch.int32)
    elif flat.dtype == torch.float64:
        flat = flat.view(torch.int64)
    flat = flat.long()
    weights = torch.arange(1, flat.numel() + 1, dtype=torch.int64) % 1000003
    return (tuple(t.shape), str(t.dtype), int((flat * weights).sum()), int(flat.sum()))


def logged_fit(kind: str, params_index: int, extra: dict, threads: int):
    """The predictions of one fit on ``threads`` threads and its log: (op, input fingerprints, output fingerprints,
    input shapes) per operation."""
    import numpy as np
    import torch
    from sktime.utils._testing.scenarios_getter import retrieve_scenarios
    from sktime.utils.random_state import set_random_state
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    from eadct.sktime import EADCTClassifier, EADCTRegressor

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func)
            tensors = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
            skip = "empty" in name or "rand" in name  # uninitialised memory, random draws
            before = [] if skip else [_fingerprint(a) for a in tensors]
            out = func(*args, **(kwargs or {}))
            if not skip:  # outputs and in-place results
                after = [_fingerprint(o) for o in tree_flatten((out, args))[0] if isinstance(o, torch.Tensor)]
                self.ops.append((name, before, after, [tuple(a.shape) for a in tensors]))
            return out

    extra = dict(extra)
    deterministic = extra.pop("deterministic", False)
    cls = EADCTClassifier if kind == "classifier" else EADCTRegressor
    estimator = cls(**{**cls.get_test_params()[params_index], **extra})
    scenario = next(s for s in retrieve_scenarios(estimator) if type(s).__name__ == "ClassifierFitPredict")
    estimator = copy.deepcopy(estimator)
    estimator.set_params(n_jobs=threads)
    set_random_state(estimator)
    method = "predict_proba" if kind == "classifier" else "predict"
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(deterministic)
    log = Log()
    try:
        with log:
            out = scenario.run(estimator, method_sequence=["fit", method])
    finally:
        torch.use_deterministic_algorithms(before)
    return np.asarray(out, dtype=float), log.ops


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", nargs=2, type=int, default=[1, 2])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    a, b = args.threads
    print(f"| configuration | operations that round by threads ({a} against {b}) | largest prediction difference |")
    print("|---|---|---|")
    for label, (kind, index, extra) in CONFIGS.items():
        (out_a, ops_a), (out_b, ops_b) = (logged_fit(kind, index, extra, n) for n in (a, b))
        parted = {}
        for x, y in zip(ops_a, ops_b, strict=False):
            if x[1] == y[1] and x[2] != y[2]:
                parted.setdefault(x[0].removeprefix("aten."), x[3])
        ops = "; ".join(f"`{op}` {json.dumps(shapes)}" for op, shapes in parted.items()) or "none"
        print(f"| {label} | {ops} | {float(abs(out_a - out_b).max()):.3g} |", flush=True)


if __name__ == "__main__":
    main()

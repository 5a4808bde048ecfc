"""Speed and peak memory of attention stacks: plain (materialised), evolving, evolving variants, torch fused.

    python benchmarks/attention_speed_memory.py                       # N in {24, 144, 405, 896, 1751, 2500}
    python benchmarks/attention_speed_memory.py --lengths 144 405 --rounds 3   # variants interleaved, 3 times
    python benchmarks/attention_speed_memory.py --resume results/bench/sweep.jsonl   # rerun after a crash: goes on

Each row is measured in a fresh subprocess (so its peak memory is its own): a training step (forward +
backward + optimizer step) and an inference pass of a 3-layer stack, d_model 64, 8 heads, batch 32,
attention width = d_model (attention_ratio 1, no conv branch), as in the issue's reference measurement. Rows:

- ``plain``: softmax(QK^T / sqrt(d_head)) V materialised, no map convolution (alpha = beta = 0);
- ``evolving``: the EA layer (alpha 0.5, beta 0.3, 3x3 map convolution);
- ``evolving+recompute``: the same with ``recompute_attention=True``: the map path in blocks of query rows,
  recomputed block by block in backward (what ``"auto"``, the default, picks for maps of 2**24 values and more);
- ``evolving+ds4``: the evolving layer with the tokens pooled by 4 before attention;
- ``plain+recompute``: plain attention through the same blocked path as ``evolving+recompute`` (what
  blocking alone does);
- ``torch-fused``: ``nn.TransformerEncoder`` (dropout 0, its fused attention kernel), same width/heads/FFN;
- ``map-conv``: the map convolutions alone (forward, then the input and weight gradients, for the
  ``layers - 1`` layers that evolve a map; channels-last, as ``evolve_maps`` runs them): what no evolving
  step can avoid, so ``1 + `` its ``x plain`` is the least ratio an evolving step can reach.

A configuration whose estimated training peak exceeds the memory available is skipped with its estimate.
Peak memory on CPU is the process's peak RSS growth over its state before the step; on CUDA it is
``torch.cuda.max_memory_allocated``. ``--precision bf16`` runs every row under bf16 autocast (what the
estimators' ``precision="auto"`` does on CUDA; the maps are then stored in 2 bytes). Prints a Markdown table with
the ratios to ``plain``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import torch
from torch import nn

VARIANTS = ("plain", "evolving", "evolving+recompute", "evolving+ds4", "plain+recompute", "torch-fused", "map-conv")


def build(variant: str, length: int, d_model: int, n_heads: int, n_layers: int):
    from eadct.networks import EADCTEncoder, EncoderConfig

    if variant == "torch-fused":
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=256, dropout=0.0, batch_first=True)
        return nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
    alpha, beta = (0.0, 0.0) if variant.startswith("plain") else (0.5, 0.3)
    cfg = EncoderConfig(
        n_channels=d_model,
        max_len=length,
        d_model=d_model,
        n_heads=n_heads,
        attention_ratio=1.0,
        alpha=alpha,
        beta=beta,
        dropout=0.1,
        norm="layer",
        recompute_attention=variant.endswith("+recompute"),
        attention_downsample=4 if variant == "evolving+ds4" else 1,
        fast_plain_attention=False,  # "plain" is the materialised reference
    )
    cfg = EncoderConfig(**{**cfg.to_dict(), "n_blocks": (n_layers + 1) // 2})  # 2 layers per block
    encoder = EADCTEncoder(cfg)
    encoder.layers = encoder.layers[:n_layers]
    return encoder


def map_conv_step(length, batch, n_heads, n_layers, device, bf16):
    """Training step and inference pass of the ``map-conv`` row: the map convolutions and nothing else."""
    dtype = torch.bfloat16 if bf16 else torch.float32
    cl = torch.channels_last
    maps = torch.randn(batch, n_heads, length, length, device=device, dtype=dtype).contiguous(memory_format=cl)
    weight = torch.randn(n_heads, n_heads, 3, 3, device=device, dtype=dtype).contiguous(memory_format=cl)
    bias = torch.randn(n_heads, device=device, dtype=dtype)
    grad = torch.randn_like(maps)
    conv_args = ([1, 1], [1, 1], [1, 1], False, [0, 0], 1)

    def step():
        for _ in range(n_layers - 1):  # the first layer seeds the chain without a convolution
            torch.nn.functional.conv2d(maps, weight, bias, padding=1)
            torch.ops.aten.convolution_backward(grad, maps, weight, None, *conv_args, [True, False, False])
            torch.ops.aten.convolution_backward(grad, maps, weight, [n_heads], *conv_args, [False, True, True])

    def infer():
        for _ in range(n_layers - 1):
            torch.nn.functional.conv2d(maps, weight, bias, padding=1)

    return step, infer


def measure(variant, length, batch, d_model, n_heads, n_layers, repeats, device, precision="float32", compile=False):
    torch.manual_seed(0)
    bf16 = precision == "bf16"
    if variant == "map-conv":
        step, infer = map_conv_step(length, batch, n_heads, n_layers, device, bf16)
    else:
        model = build(variant, length, d_model, n_heads, n_layers).to(device)
        if compile:
            model = torch.compile(model)
        opt = torch.optim.RAdam(model.parameters(), lr=1e-3)
        x = torch.randn(batch, length, d_model, device=device)

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                loss = model(x).float().pow(2).mean()
            loss.backward()
            opt.step()

        def infer():
            with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                model.eval()
                model(x)
                model.train()

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    if device.type == "cuda":
        base = torch.cuda.memory_allocated()
    else:
        base = _rss_now()  # before the first step: the peak RSS below is this process' own growth
    tic = time.perf_counter()
    step()  # warm-up (allocator, kernels, compilation); on CPU the peak covers it too (same shapes)
    sync()
    first_s = time.perf_counter() - tic
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(repeats):
        sync()
        tic = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - tic)
    peak_train = (torch.cuda.max_memory_allocated() - base) if device.type == "cuda" else _peak_rss() - base
    infer()  # warm-up, after the training peak is read (peak RSS only grows)
    infer_times = []
    for _ in range(repeats):
        sync()
        tic = time.perf_counter()
        infer()
        sync()
        infer_times.append(time.perf_counter() - tic)
    return {"train_s": min(times), "infer_s": min(infer_times), "peak_gb": peak_train / 2**30, "first_s": first_s}


def _rss_now() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def estimate_gb(variant, length, batch, d_model, n_heads, n_layers, device_type="cpu", precision="float32") -> float:
    from eadct.networks import estimate_stack_training_bytes

    if variant == "torch-fused":
        return 0.0
    if variant == "map-conv":  # the maps, their gradient, the forward output and the input gradient
        return 4 * batch * n_heads * length**2 * (2 if precision == "bf16" else 4) / 2**30
    return (
        estimate_stack_training_bytes(
            batch,
            length,
            d_model=d_model,
            n_heads=n_heads,
            n_layers=n_layers,
            evolving=not variant.startswith("plain"),
            recompute=variant.endswith("+recompute"),
            downsample=4 if variant == "evolving+ds4" else 1,
            bytes_per_value=2 if precision == "bf16" else 4,
            device_type=device_type,
        )
        / 2**30
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[24, 144, 405, 896, 1751, 2500])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every row of a length this many times, the variants interleaved, and keep the fastest "
        "times and the highest peak (timings on a shared CPU drift by up to 2x between minutes)",
    )
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--precision",
        choices=("float32", "bf16"),
        default="float32",
        help="bf16: every row under bf16 autocast (the estimators' precision='auto' on CUDA)",
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="torch.compile each model (the first, untimed step compiles; its time is 'first_s' in --resume files)",
    )
    parser.add_argument("--memory-gb", type=float, default=None, help="skip rows estimated above this")
    parser.add_argument(
        "--keep-freed-memory", action="store_true", help="eadct.runtime.keep_freed_memory() in each measured process"
    )
    parser.add_argument(
        "--resume",
        metavar="FILE",
        help="append each measured row to FILE (JSON lines) and reuse the rows already there that have the same "
        "settings, round and git commit, so a sweep that crashed or was stopped goes on where it was",
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one row, print JSON
    return parser


def main(argv=None) -> None:
    args = _parser().parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if args.one:
        if args.keep_freed_memory:
            from eadct.runtime import keep_freed_memory

            keep_freed_memory()
        variant, length = args.one.split("@")
        shape = (args.batch, args.d_model, args.heads, args.layers, args.repeats)
        print(json.dumps(measure(variant, int(length), *shape, device, args.precision, args.compile)))
        return
    from eadct.networks import available_memory_bytes

    limit = args.memory_gb or 0.8 * available_memory_bytes(device) / 2**30
    name = torch.cuda.get_device_name() if device.type == "cuda" else platform.processor() or platform.machine()
    print(
        f"device {device} ({name}), "
        f"{args.threads} threads, torch {torch.__version__}; batch {args.batch}, d_model {args.d_model}, "
        f"{args.heads} heads, {args.layers} layers, {args.precision}{', torch.compile' if args.compile else ''}; "
        f"memory limit {limit:.1f} GB; allocator: "
        f"{'keep freed memory' if args.keep_freed_memory else 'glibc default'}\n",
        flush=True,
    )
    print(
        "| N | variant | train step (s) | x plain | inference (s) | x plain | peak train memory (GB) | x plain "
        "| estimate (GB) |"
    )
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    for length in args.lengths:
        _print_rows(args, length, _measure_length(args, length, limit))


def _measure_length(args, length: int, limit: float) -> dict:
    """Every variant at ``length``, ``--rounds`` times interleaved: fastest times, highest peak."""
    results: dict[str, dict | str] = {}
    for round_ in range(args.rounds):
        for variant in args.variants:
            if isinstance(results.get(variant), str):
                continue  # skipped or failed
            r = _resumable_row(args, variant, length, limit, round_)
            old = results.get(variant)
            if isinstance(r, dict) and isinstance(old, dict):
                r = {
                    "train_s": min(r["train_s"], old["train_s"]),
                    "infer_s": min(r["infer_s"], old["infer_s"]),
                    "peak_gb": max(r["peak_gb"], old["peak_gb"]),
                }
            results[variant] = r
    return results


def _print_rows(args, length: int, results: dict) -> None:
    ref = None
    for variant in args.variants:
        est = _estimate(args, variant, length)
        r = results[variant]
        if isinstance(r, str):
            print(f"| {length} | {variant} | {r} | | | | | | {est:.1f} |", flush=True)
            continue
        if variant == "plain":
            ref = r
        ratio = lambda k, r=r, ref=ref: f"{r[k] / ref[k]:.2f}" if ref and ref[k] > 0 else "-"  # noqa: E731
        print(
            f"| {length} | {variant} | {r['train_s']:.3f} | {ratio('train_s')} | {r['infer_s']:.3f} | "
            f"{ratio('infer_s')} | {r['peak_gb']:.2f} | {ratio('peak_gb')} | {est:.2f} |",
            flush=True,
        )


def _estimate(args, variant: str, length: int) -> float:
    device_type = torch.device(args.device).type
    return estimate_gb(variant, length, args.batch, args.d_model, args.heads, args.layers, device_type, args.precision)


def _row_key(args, variant: str, length: int, round_: int) -> str:
    """What identifies a measured row in a ``--resume`` file: settings, round, torch and the git commit."""
    from eadct.provenance import git_commit  # read once per process

    code = git_commit()
    settings = (
        variant,
        length,
        round_,
        args.batch,
        args.d_model,
        args.heads,
        args.layers,
        args.repeats,
        args.device,
        args.threads,
        args.keep_freed_memory,
        args.precision,
        args.compile,
        torch.__version__,
        code["commit"],
        code["dirty"],
    )
    return json.dumps(settings)


def _resumable_row(args, variant: str, length: int, limit: float, round_: int):
    """A row from the ``--resume`` file when it holds one for these settings, else measured (and appended)."""
    if not args.resume:
        return _run_row(args, variant, length, limit)
    key = _row_key(args, variant, length, round_)
    if os.path.exists(args.resume):
        with open(args.resume) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash
                if record.get("key") == key:
                    return record["row"]
    row = _run_row(args, variant, length, limit)
    if not isinstance(row, dict):
        return row  # skipped or failed: not kept, so a rerun tries again
    with open(args.resume, "a") as f:
        f.write(json.dumps({"key": key, "row": row}) + "\n")
        f.flush()
        os.fsync(f.fileno())
    return row


def _run_row(args, variant: str, length: int, limit: float):
    """One row in a fresh subprocess: its measurements, or why there are none."""
    est = _estimate(args, variant, length)
    if est > limit:
        return f"skipped: estimate {est:.1f} GB > {limit:.1f} GB"
    cmd = [
        sys.executable,
        __file__,
        "--one",
        f"{variant}@{length}",
        "--batch",
        str(args.batch),
        "--d-model",
        str(args.d_model),
        "--heads",
        str(args.heads),
        "--layers",
        str(args.layers),
        "--repeats",
        str(args.repeats),
        "--device",
        args.device,
        "--threads",
        str(args.threads),
        "--precision",
        args.precision,
    ]
    cmd += (["--keep-freed-memory"] if args.keep_freed_memory else []) + (["--compile"] if args.compile else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return f"failed: {out.stderr.strip().splitlines()[-1][:80]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()

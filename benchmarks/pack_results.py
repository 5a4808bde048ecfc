"""Pack a results folder into tar parts that fit what a lent machine returns (a few files of limited size).

Every file but the fits' checkpoints (``*.pt``) and their unfinished writes (``*.tmp``) goes in. Then the
checkpoints, the fit furthest along first (fine-tuning before pretraining, then more epochs), while the parts'
total stays under ``--total-mb``; a checkpoint left out is named, and its fit starts from the beginning when the
same command runs again (docs/tables.md, "Results files and resuming"). The paths stay as given, so that
unpacking from the same folder puts each file back in its place.

Usage: python benchmarks/pack_results.py RESULTS_DIR PREFIX [--part-mb 15] [--total-mb 60]
Writes PREFIX.00, PREFIX.01, ...; unpack with ``cat PREFIX.* | tar -xf -``.
"""

from __future__ import annotations

import argparse
import io
import os
import tarfile
from pathlib import Path

import torch

MB = 1 << 20


def progress(checkpoint: Path) -> tuple | None:
    """How far the fit behind ``checkpoint`` is: (in fine-tuning, stage done, epoch); None when unreadable."""
    try:
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        return (state.get("stage") == "finetune", bool(state.get("stage_done")), int(state.get("epoch", 0)))
    except Exception:  # a file cut short by the limit that stopped its writer
        return None


def choose(results: Path, total_mb: float) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The files to pack, and the checkpoints left out with the reason, keeping the total under ``total_mb``."""
    files = sorted(p for p in results.rglob("*") if p.is_file())
    unfinished = [(p, "a write cut short") for p in files if p.suffix == ".tmp"]  # the checkpointer's temporary
    files = [p for p in files if p.suffix != ".tmp"]
    kept = [p for p in files if p.suffix != ".pt"]
    room = total_mb * MB - sum(p.stat().st_size + 1024 for p in kept)
    ranked = [(progress(p), p) for p in files if p.suffix == ".pt"]
    left = unfinished + [(p, "unreadable") for key, p in ranked if key is None]
    for _, ckpt in sorted(((k, p) for k, p in ranked if k is not None), key=lambda kp: kp[0], reverse=True):
        size = ckpt.stat().st_size + 1024
        if size <= room:
            kept.append(ckpt)
            room -= size
        else:
            left.append((ckpt, "no room"))
    return kept, left


def pack(results: Path, prefix: str, part_mb: float = 15, total_mb: float = 60) -> list[str]:
    """Write the parts; return their names."""
    kept, left = choose(results, total_mb)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in kept:
            tar.add(path, arcname=os.fspath(path), recursive=False)
    data, size, names = buffer.getvalue(), int(part_mb * MB), []
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    for i, start in enumerate(range(0, len(data), size)):
        names.append(f"{prefix}.{i:02d}")
        Path(names[-1]).write_bytes(data[start : start + size])
    print(f"packed {len(kept)} files of {results} into {len(names)} parts of {prefix} ({len(data) / MB:.1f} MB)")
    for ckpt, why in left:
        print(f"left out ({why}; its fit starts again): {ckpt} ({ckpt.stat().st_size / MB:.1f} MB)")
    return names


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("prefix")
    parser.add_argument("--part-mb", type=float, default=15)
    parser.add_argument("--total-mb", type=float, default=60)
    args = parser.parse_args(argv)
    if not args.results.is_dir():
        parser.error(f"{args.results} is not a folder")
    pack(args.results, args.prefix, args.part_mb, args.total_mb)


if __name__ == "__main__":
    main()

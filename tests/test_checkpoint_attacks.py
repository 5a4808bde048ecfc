"""Files at ``checkpoint_path`` as an attacker or a careless user would leave them.

A generator crafts files per family (``crafted``); one test per family fits with each file at ``checkpoint_path``
and asserts a ValueError naming the file, before any training epoch, with the file unchanged, no side effect (a
sentinel file that the crafted code would create never appears), in under a second and under 100 MB of extra
memory (peak resident memory, reset before each file where Linux allows it).
"""

from __future__ import annotations

import builtins
import copy
import os
import pickle
import re
import resource
import subprocess
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel

import eadct
from eadct import EADCTClassifier
from eadct.provenance import VERSIONS_KEY
from eadct.training import loop

PARAMS = {**TINY, "max_epochs": 3, "pretrain_epochs": 1}
FAMILIES = ("strangers", "code", "truncated", "empty", "appended", "compressed", "views", "wrong_structure")


class _Calls:
    """Unpickling this calls ``func(*args)``: what a crafted pickle does to run code."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """This fit's data and two real checkpoints of it, as bytes: one killed in fine-tuning's second epoch (a
    running stage, with its optimizer) and one of the finished fit."""
    folder = tmp_path_factory.mktemp("real")
    X, y = make_panel(n=20)
    calls, original = [], loop._train_epoch

    def dying(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    loop._train_epoch = dying
    try:
        with pytest.raises(KeyboardInterrupt):
            EADCTClassifier(**PARAMS, checkpoint_path=str(folder / "running.pt")).fit(X, y)
    finally:
        loop._train_epoch = original
    model = EADCTClassifier(**PARAMS, checkpoint_path=str(folder / "done.pt")).fit(X, y)
    eadct.save(model, folder / "model.safetensors")
    files = {name: (folder / name).read_bytes() for name in ("running.pt", "done.pt", "model.safetensors")}
    return dict(X=X, y=y, **files)


def _saved(state, path: Path) -> Path:
    torch.save(state, path)
    return path


def _rezipped(data: bytes, path: Path, compress=zipfile.ZIP_DEFLATED) -> Path:
    """The torch archive ``data`` written again with its entries compressed."""
    source = path.with_suffix(".source")
    source.write_bytes(data)
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(path, "w", compress) as new:
        for entry in old.infolist():
            new.writestr(entry.filename, old.read(entry.filename))
    source.unlink()
    return path


def _pickle_bomb(path: Path, n_bytes: int) -> Path:
    """A torch-like archive whose data.pkl (a dict with a fingerprint and an ``n_bytes`` string) is deflated
    to a few hundred kilobytes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("archive/data.pkl", "w", force_zip64=True) as f:
            f.write(b"\x80\x02}q\x00(X\x0b\x00\x00\x00fingerprintq\x01X\x01\x00\x00\x00xX\x05\x00\x00\x00stageq\x02")
            f.write(b"X" + n_bytes.to_bytes(4, "little"))
            chunk = b"a" * 2**20
            for _ in range(n_bytes // len(chunk)):
                f.write(chunk)
            f.write(b"u.")
        archive.writestr("archive/version", "3\n")
    return path


def _mutations(running: dict, done: dict, sentinel: Path) -> list[tuple[str, dict, str]]:
    """(name, state, what the message names): this fit's checkpoints (right fingerprint, version and seed) with
    one entry wrong."""
    name0 = next(iter(running["network"]))
    shape = running["network"][name0].shape
    optimizer_state = running["optimizer"]["state"][0]
    cases = [
        ("network shape", ("network", name0), torch.zeros(shape[::-1] + (1,)), "network entry"),
        ("network dtype", ("network", name0), running["network"][name0].double(), "network entry"),
        ("network extra", ("network", "evil.weight"), torch.zeros(3), "evil.weight"),
        ("network missing", ("network", name0), None, name0),
        ("network not tensors", ("network", name0), [1.0, 2.0], "not a dense tensor"),
        ("network sparse", ("network", name0), torch.zeros(shape).to_sparse(), "not a dense tensor"),
        ("best_state shape", ("best_state", name0), torch.zeros(2, 2), "best_state entry"),
        ("average_sum float32", ("average_sum", name0), running["average_sum"][name0].float(), "average_sum"),
        ("optimizer exp_avg shape", ("optimizer", "state", 0, "exp_avg"), torch.zeros(2, 2), "'exp_avg'"),
        ("optimizer exp_avg dtype", ("optimizer", "state", 0, "exp_avg"), optimizer_state["exp_avg"].half(), "exp_avg"),
        ("optimizer step missing", ("optimizer", "state", 0, "step"), None, "'step'"),
        ("optimizer extra parameter", ("optimizer", "state", 10**6), {"step": torch.zeros(())}, "numbered"),
        ("optimizer params", ("optimizer", "param_groups", 0, "params"), [5, 2], "number their parameters"),
        ("optimizer setting", ("optimizer", "param_groups", 0, "betas"), "evil", "'betas'"),
        ("optimizer group count", ("optimizer", "param_groups"), [], "numbered"),
        ("optimizer setting missing", ("optimizer", "param_groups", 0, "betas"), None, "'betas' is missing"),
        ("rng length", ("rng", "generator"), torch.zeros(10, dtype=torch.uint8), "rng generator"),
        ("rng dtype", ("rng", "cpu"), torch.zeros(5056), "rng cpu"),
        ("rng bytes", ("rng", "cpu"), torch.full((5056,), 255, dtype=torch.uint8), "not a valid generator state"),
        ("history tensor", ("history",), [{"loss": torch.zeros(2)}], "history"),
        ("seed type", ("seed",), "0", "seed"),
        ("seed range", ("seed",), -1, "seed"),
        ("seed missing", ("seed",), None, "seed"),
        ("stage", ("stage",), "evil", "stage"),
        ("stage_done", ("stage_done",), "yes", "stage_done"),
        ("unknown entry", ("predict",), "evil", "'predict'"),
        ("versions", (VERSIONS_KEY, "eadct"), torch.zeros(2), "versions"),
        ("missing rng", ("rng",), None, "'rng'"),
        ("epoch", ("epoch",), -1, "epoch"),
        ("best_key", ("best_key",), ("a",), "best_key"),
        ("averaged", ("averaged",), 0, "averaged"),
    ]
    out = []
    for name, where, value, named in cases:
        state = copy.deepcopy(running)
        target = state
        for key in where[:-1]:
            target = target[key]
        if value is None:
            del target[where[-1]]
        else:
            target[where[-1]] = value
        out.append((name, state, named))
    broken_done = copy.deepcopy(done)
    broken_done["network"][name0] = torch.zeros(1)
    out.append(("finished network shape", broken_done, "network entry"))
    return out


def crafted(family: str, real: dict, folder: Path, sentinel: Path) -> list[tuple[str, Path, str]]:
    """The files of ``family``: (name, path, what the ValueError must say)."""
    folder.mkdir(exist_ok=True)
    running = torch.load(_path(folder, "r.pt", real["running.pt"]), weights_only=True)
    done = torch.load(_path(folder, "d.pt", real["done.pt"]), weights_only=True)
    fp = running["fingerprint"]
    stranger, ours = "not an eadct checkpoint", "belongs to this fit but cannot be resumed"
    files: list[tuple[str, Path, str]] = []

    def add(name, path, message):
        files.append((name, path, message))

    if family == "strangers":
        add("text", _path(folder, "notes.txt", b"my notes\n"), "not a zip archive")
        add("csv", _path(folder, "data.csv", b"a,b\n1,2\n"), "not a zip archive")
        add("eadct model", _path(folder, "model.safetensors", real["model.safetensors"]), "not a zip archive")
        add("folder", folder / "a_folder", "is a folder")
        (folder / "a_folder").mkdir(exist_ok=True)
        add("torch tensor", _saved(torch.zeros(3), folder / "tensor.pt"), "holds a Tensor")
        add("torch state dict", _saved({"weight": torch.zeros(3)}, folder / "weights.pt"), "without a checkpoint's")
        add("fingerprint only", _saved({"fingerprint": fp}, folder / "fp.pt"), "without a checkpoint's")
        add("npy", _path(folder, "a.npy", _npy_bytes()), "not a zip archive")
        with zipfile.ZipFile(folder / "docs.zip", "w") as z:
            z.writestr("readme.txt", "hello")
        add("zip of text", folder / "docs.zip", "torch cannot read it")
        add(
            "legacy pickle",
            _path(folder, "legacy.pt", pickle.dumps({"fingerprint": fp, "stage": "pretrain"})),
            "not a zip",
        )
    elif family == "code":
        payloads = {
            "os.system": _Calls(os.system, f"touch {sentinel}"),
            "subprocess.Popen": _Calls(subprocess.Popen, ["touch", str(sentinel)]),
            "builtins.eval": _Calls(builtins.eval, f"open({str(sentinel)!r}, 'w')"),
            "builtins.exec": _Calls(builtins.exec, f"open({str(sentinel)!r}, 'w')"),
            "Path.touch": _Calls(Path(sentinel).touch),
            "torch.load": _Calls(torch.load, str(sentinel)),
        }
        for label, payload in payloads.items():
            add(f"{label} alone", _saved(payload, folder / f"{label}-alone.pt"), "(?i)unsupported global")
            add(
                f"{label} in an entry",
                _saved({**running, "payload": payload}, folder / f"{label}-in.pt"),
                "(?i)unsupported global",
            )
            add(
                f"{label} as the fingerprint",
                _saved({**running, "fingerprint": payload}, folder / f"{label}-fp.pt"),
                "(?i)unsupported global",
            )
        add("os.system as a plain pickle", _path(folder, "plain.pt", pickle.dumps(payloads["os.system"])), stranger)
    elif family == "truncated":
        data = real["running.pt"]
        for cut in (4, 100, len(data) // 2, len(data) - 22, len(data) - 1):
            add(f"first {cut} bytes", _path(folder, f"cut{cut}.pt", data[:cut]), "truncated|not a zip")
    elif family == "empty":
        add("no bytes", _path(folder, "empty.pt", b""), "it is empty")
        with zipfile.ZipFile(folder / "empty.zip", "w"):
            pass
        add("an empty archive", folder / "empty.zip", "not a zip archive")
        add("an empty torch archive", _saved({}, folder / "empty_dict.pt"), "holds a dict without")
    elif family == "appended":
        data = real["running.pt"]
        add("one byte", _path(folder, "plus1.pt", data + b"x"), "bytes appended")
        add("itself", _path(folder, "twice.pt", data + data), stranger)
        add("a megabyte", _path(folder, "plusmb.pt", data + bytes(2**20)), "bytes appended")
        add("an archive end", _path(folder, "plusend.pt", data + data[-22:]), stranger)
    elif family == "compressed":
        add("deflated checkpoint", _rezipped(real["running.pt"], folder / "deflated.pt"), "compressed entries")
        add("deflated finished checkpoint", _rezipped(real["done.pt"], folder / "deflated_done.pt"), "compressed")
        add("pickle bomb (150 MB)", _pickle_bomb(folder / "bomb.pt", 150 * 2**20), "compressed entries")
    elif family == "views":
        huge = torch.zeros(1).expand(10_000, 10_000)  # 400 MB when copied, one number in the file
        name0 = next(iter(running["network"]))
        add(
            "in the finished network",
            _saved({**done, "network": {**done["network"], name0: huge}}, folder / "view_done.pt"),
            ours,
        )
        add(
            "in the running network",
            _saved({**running, "network": {**running["network"], name0: huge}}, folder / "view_run.pt"),
            ours,
        )
        add("an unknown entry", _saved({**running, "evil": huge}, folder / "view_unknown.pt"), ours)
        long_rng = {**running["rng"], "cpu": torch.zeros(1, dtype=torch.uint8).expand(10**9)}
        add("rng", _saved({**running, "rng": long_rng}, folder / "view_rng.pt"), ours)
    elif family == "wrong_structure":
        assert fp == done["fingerprint"]
        for name, state, named in _mutations(running, done, sentinel):
            add(name, _saved(state, folder / (re.sub(r"\W", "_", name) + ".pt")), f"{ours}.*{re.escape(named)}")
    else:
        raise AssertionError(family)
    return files


def _path(folder: Path, name: str, data: bytes) -> Path:
    (folder / name).write_bytes(data)
    return folder / name


def _npy_bytes() -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.zeros(3))
    return buffer.getvalue()


def _peak_resettable() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _memory_kb(field: str) -> int:
    """VmRSS or VmHWM (peak resident memory) of this process, in kB; ru_maxrss where /proc has neither."""
    try:
        return int(re.search(rf"{field}:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))
    except (OSError, AttributeError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _attack(path: Path, real: dict, message: str, sentinel: Path) -> None:
    """Fit with ``path`` as the checkpoint: a ValueError naming it and matching ``message``, no epoch trained, the
    file unchanged, no sentinel, under a second and 100 MB of extra memory."""
    before = path.read_bytes() if path.is_file() else None
    resettable = _peak_resettable()
    rss = _memory_kb("VmRSS") if resettable else _memory_kb("VmHWM")
    tic = time.perf_counter()
    with pytest.raises(ValueError) as info:
        EADCTClassifier(**PARAMS, checkpoint_path=str(path)).fit(real["X"], real["y"])
    seconds = time.perf_counter() - tic
    grown_mb = (_memory_kb("VmHWM") - rss) / 1024
    text = str(info.value)
    assert str(path) in text and "Delete the file" in text and "choose another checkpoint_path" in text, text
    assert re.search(message, text), text
    assert not sentinel.exists()
    assert (path.read_bytes() if path.is_file() else None) == before  # never overwritten, nor deleted
    assert seconds < 1.0, (path.name, seconds)
    assert grown_mb < 100, (path.name, grown_mb)


@pytest.fixture
def no_training(monkeypatch):
    def trained(*args, **kwargs):
        raise AssertionError("a training epoch ran")

    monkeypatch.setattr(loop, "_train_epoch", trained)


@pytest.mark.parametrize("family", FAMILIES)
def test_crafted_checkpoints_are_refused_without_side_effect(family, real, tmp_path, no_training):
    sentinel = tmp_path / "sentinel"
    files = crafted(family, real, tmp_path / "crafted", sentinel)
    assert len(files) >= {"empty": 3, "compressed": 3, "appended": 4, "views": 4}.get(family, 5)
    for _name, path, message in files:
        _attack(path, real, message, sentinel)


def test_the_families_refuse_what_the_real_checkpoints_do_not(real, tmp_path):
    """The crafted files are refused for what was changed: the real checkpoints they come from resume."""
    for name in ("running.pt", "done.pt"):
        path = _path(tmp_path, name, real[name])
        model = EADCTClassifier(**PARAMS, checkpoint_path=str(path)).fit(real["X"], real["y"])
        assert np.isfinite(model.predict_proba(real["X"])).all()


def test_another_fits_checkpoint_is_deleted_with_a_warning_and_replaced(real, tmp_path):
    path = _path(tmp_path, "fit.pt", real["done.pt"])
    old = torch.load(path, weights_only=True)["fingerprint"]
    model = EADCTClassifier(**{**PARAMS, "alpha": 0.2}, checkpoint_path=str(path))
    with pytest.warns(UserWarning, match="belongs to another fit .* deleted and this fit starts afresh") as record:
        model.fit(real["X"], real["y"])
    assert len([w for w in record if "belongs to another fit" in str(w.message)]) == 1  # said once, not per load
    new = torch.load(path, weights_only=True)
    assert new["stage_done"] is True and new["fingerprint"] != old  # this fit's own checkpoint took its place


def test_a_checkpoint_from_before_versions_were_recorded_resumes(real, tmp_path):
    state = torch.load(_path(tmp_path, "d.pt", real["done.pt"]), weights_only=True)
    del state[VERSIONS_KEY]
    path = _saved(state, tmp_path / "old.pt")
    fresh = EADCTClassifier(**PARAMS).fit(real["X"], real["y"])
    calls = []
    original = loop._train_epoch

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    loop._train_epoch = counted
    try:
        resumed = EADCTClassifier(**PARAMS, checkpoint_path=str(path)).fit(real["X"], real["y"])
    finally:
        loop._train_epoch = original
    assert not calls  # loaded, not trained
    np.testing.assert_array_equal(resumed.predict_proba(real["X"]), fresh.predict_proba(real["X"]))


def test_a_stranger_file_is_refused_before_the_data_is_even_split(tmp_path, monkeypatch):
    """The check comes before any training member is built (``_train_member`` never runs)."""
    from eadct.estimators._base import EADCTBase

    path = _path(tmp_path, "results.csv", b"a,b\n")

    def built(*args, **kwargs):
        raise AssertionError("a network was built")

    monkeypatch.setattr(EADCTBase, "_train_member", built)
    X, y = make_panel(n=20)
    with pytest.raises(ValueError, match=r"results.csv' is an existing file that is not an eadct checkpoint"):
        EADCTClassifier(**PARAMS, checkpoint_path=str(path)).fit(X, y)
    assert path.read_bytes() == b"a,b\n"


def test_an_ensembles_member_file_is_checked_before_any_member_trains(tmp_path, no_training):
    path = tmp_path / "fit.pt"
    member = _path(tmp_path, "fit.pt.member1", b"not a checkpoint")
    X, y = make_panel(n=20)
    with pytest.raises(ValueError, match=r"fit.pt.member1' is an existing file that is not an eadct checkpoint"):
        EADCTClassifier(**PARAMS, n_estimators=2, checkpoint_path=str(path)).fit(X, y)
    assert member.read_bytes() == b"not a checkpoint" and not path.exists()


def test_a_large_torch_file_that_is_not_a_checkpoint_is_refused_without_being_read(real, tmp_path, no_training):
    """Its tensors are mapped while it is identified: 160 MB of weights cost far less than 100 MB of memory."""
    path = _saved({"weights": torch.ones(40 * 2**20)}, tmp_path / "big_model.pt")
    _attack(path, real, "without a checkpoint's fingerprint and stage", tmp_path / "sentinel")


def _running(real: dict, tmp_path: Path) -> dict:
    return torch.load(_path(tmp_path, "r.pt", real["running.pt"]), weights_only=True)


def test_a_torch_file_with_a_fingerprint_but_not_eadcts_entries_is_not_deleted(real, tmp_path, no_training):
    """Only a file with eadct's signature (exactly a checkpoint's entries, versions naming eadct's) is deleted as
    another fit's: a user's file that happens to hold a fingerprint and a stage is refused and left as it is."""
    users = _saved({"fingerprint": "my-dataset-v2", "stage": "raw", "data": torch.arange(10)}, tmp_path / "user.pt")
    _attack(users, real, "not an eadct checkpoint.*'data', 'fingerprint', 'stage'", tmp_path / "sentinel")
    other = {**_running(real, tmp_path), "fingerprint": "another fit"}
    extra_entry = _saved({**other, "notes": "mine"}, tmp_path / "extra.pt")
    _attack(extra_entry, real, "not an eadct checkpoint", tmp_path / "sentinel")
    odd_versions = _saved({**other, VERSIONS_KEY: {"eadct": 5}}, tmp_path / "versions.pt")
    _attack(odd_versions, real, "not an eadct checkpoint", tmp_path / "sentinel")


def test_shared_references_and_long_histories_are_refused(real, tmp_path, no_training):
    """A container that appears twice (a 20000-record history of one 200-entry record is a 700 KB file and 330 MB
    in memory), more history records than the fit's epochs can make, and records of too many entries."""
    running = _running(real, tmp_path)
    record = {f"k{i}": float(i) for i in range(200)}
    cases = [
        ("shared record", {**running, "history": [record] * 20_000}, "the same dict more than once"),
        (
            "long history",
            {**running, "history": [dict(running["history"][0]) for _ in range(13)]},
            "history holds 13 records, more than the 12",
        ),
        ("wide record", {**running, "history": [{**running["history"][0], **record}]}, "at most 32 names"),
    ]
    for name, state, message in cases:
        _attack(_saved(state, tmp_path / f"{name}.pt"), real, f"cannot be resumed.*{message}", tmp_path / "sentinel")


def test_odd_history_records_are_refused_naming_the_file(real, tmp_path, no_training):
    """Records that would pass and then crash after the restore (in the divergence warnings) without naming it."""
    running = _running(real, tmp_path)
    good = running["history"][0]
    cases = [
        ("no stage", {"diverged": True}, "stage is None"),
        ("huge loss", {**good, "train_loss": 10**400}, "not a record"),
        ("text loss", {**good, "train_loss": "x"}, "train_loss is 'x', not a float"),
        ("int loss", {**good, "train_loss": 1}, "train_loss is 1, not a float"),
        ("text epoch", {**good, "epoch": "1"}, "epoch is '1', not a count"),
        ("other stage", {**good, "stage": "evil"}, "stage is 'evil'"),
        ("reference", {**good, "diverged": True, "reference_loss": None}, "reference_loss is None"),
        ("huge int", {**good, "threads": 2**64}, "not a record"),
    ]
    for name, record, message in cases:
        path = _saved({**running, "history": [record]}, tmp_path / f"{name}.pt")
        _attack(path, real, f"cannot be resumed.*{re.escape(message)}", tmp_path / "sentinel")


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_meta_and_nested_tensors_are_refused(real, tmp_path, no_training):
    running = _running(real, tmp_path)
    name0 = next(iter(running["network"]))
    like = running["network"][name0]
    meta = {**running["network"], name0: torch.empty(like.shape, dtype=like.dtype, device="meta")}
    nested = torch.nested.nested_tensor([torch.zeros(5056, dtype=torch.uint8)])
    cases = [
        ("meta", {**running, "network": meta}, "network entry .* meta tensor, not a dense tensor"),
        ("nested", {**running, "rng": {**running["rng"], "cpu": nested}}, "rng cpu state is a nested tensor"),
    ]
    for name, state, message in cases:
        _attack(_saved(state, tmp_path / f"{name}.pt"), real, f"cannot be resumed.*{message}", tmp_path / "sentinel")


def test_a_symlink_swapped_in_for_the_temporary_file_is_not_written_through(tmp_path, monkeypatch):
    """The state is written to the file ``mkstemp`` opened, not to whatever its name points to afterwards."""
    from eadct.training import checkpoint

    victim = _path(tmp_path, "victim.txt", b"precious")
    original = checkpoint.tempfile.mkstemp

    def swapped(*args, **kwargs):
        fd, name = original(*args, **kwargs)
        os.remove(name)
        os.symlink(victim, name)
        return fd, name

    monkeypatch.setattr(checkpoint.tempfile, "mkstemp", swapped)
    checkpoint.Checkpointer(tmp_path / "fit.pt", "fp").save({"stage": "pretrain", "network": {}})
    assert victim.read_bytes() == b"precious"


@pytest.mark.parametrize("problem", ["parent is a file", "name too long", "NUL byte", "read-only folder"])
def test_a_checkpoint_path_that_cannot_be_written_is_refused_before_training(problem, tmp_path, no_training):
    if problem == "read-only folder" and os.geteuid() == 0:
        pytest.skip("root writes in a read-only folder")
    folder = tmp_path / "folder"
    folder.mkdir()
    path = {
        "parent is a file": _path(tmp_path, "afile", b"x") / "fit.pt",
        "name too long": folder / ("x" * 250 + ".pt"),
        "NUL byte": folder / "fit\x00.pt",
        "read-only folder": folder / "fit.pt",
    }[problem]
    folder.chmod(0o555 if problem == "read-only folder" else 0o755)
    X, y = make_panel(n=20)
    try:
        with pytest.raises(ValueError, match="cannot be written") as info:
            EADCTClassifier(**PARAMS, checkpoint_path=str(path)).fit(X, y)
    finally:
        folder.chmod(0o755)
    assert repr(str(path)) in str(info.value) and "Choose another checkpoint_path" in str(info.value)
    assert sorted(p.name for p in folder.iterdir()) == []  # the trial file is removed


def test_a_member_file_of_another_seed_is_replaced_not_resumed(tmp_path):
    """An ensemble's member file holds the fit's seed; one of a fit with another seed (random_state=None draws one
    per fit) is another fit's: deleted with a warning, and the member trains afresh with this fit's seed."""
    X, y = make_panel(n=20)
    params = {**PARAMS, "n_estimators": 2, "random_state": 0, "checkpoint_path": str(tmp_path / "fit.pt")}
    first = EADCTClassifier(**params).fit(X, y)
    member = tmp_path / "fit.pt.member1"
    state = torch.load(member, weights_only=True)
    seed = state["seed"]
    _saved({**state, "seed": seed + 1}, member)
    with pytest.warns(UserWarning, match=rf"member1 was written with another seed \({seed + 1}; this fit's is {seed}"):
        again = EADCTClassifier(**params).fit(X, y)
    assert torch.load(member, weights_only=True)["seed"] == seed
    np.testing.assert_allclose(again.predict_proba(X), first.predict_proba(X), rtol=1e-5, atol=1e-6)

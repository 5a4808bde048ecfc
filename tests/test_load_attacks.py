"""eadct.load against a corpus of crafted files (tests/crafted_models.py): each family refused with a ValueError that
names the file, without a side effect, in well under a second each, and without taking memory that the file's
tensors do not account for.

The files are loaded in a fresh interpreter, so that its peak memory (``ru_maxrss``) measures what loading them
took: the peak after loading a valid model first (every import done) against the peak after the whole corpus.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel
from crafted_models import crafted_files

import eadct
from eadct import EADCTClassifier, EADCTRegressor
from eadct.estimators._params import OPTIONS

FAMILIES = ("code", "size", "json", "container", "format", "extra", "tensors", "values")
#: Each file is refused within this many seconds, and the corpus takes at most this much more memory (MB).
SECONDS, MEGABYTES = 1.0, 100

_LOADER = r"""
import json, resource, sys, time, warnings
import eadct
warnings.simplefilter("ignore")
valid, listing = sys.argv[1], json.loads(open(sys.argv[2]).read())
eadct.load(valid).predict_proba  # every import and first-use cost paid before the baseline
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MB (Linux: KB)
results = {}
for family, paths in listing.items():
    before, rows = peak(), []
    for path in paths:
        start = time.perf_counter()
        try:
            eadct.load(path)
            outcome, message = "loaded", ""
        except Exception as err:
            outcome, message = type(err).__name__, str(err)
        rows.append({"path": path, "outcome": outcome, "message": message[:300],
                     "seconds": time.perf_counter() - start})
    results[family] = {"rows": rows, "extra_mb": peak() - before}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    X, y = make_panel(n=24)
    root = tmp_path_factory.mktemp("attacks")
    sentinel = root / "SENTINEL"
    clf = EADCTClassifier(**TINY).fit(X, np.array(["low", "mid", "high"])[y])
    reg = EADCTRegressor(**TINY).fit(X, X[:, 0].mean(axis=1))
    files: dict[str, list[Path]] = {}
    for est in (clf, reg):
        valid = eadct.save(est, root / f"{type(est).__name__}.safetensors")
        for family, paths in crafted_files(valid, root / type(est).__name__, sentinel).items():
            files.setdefault(family, []).extend(paths)
    listing = root / "listing.json"
    listing.write_text(json.dumps({f: [str(p) for p in ps] for f, ps in files.items()}))
    done = subprocess.run(
        [sys.executable, "-c", _LOADER, str(root / "EADCTClassifier.safetensors"), str(listing)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=Path(__file__).parent,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), sentinel


@pytest.mark.parametrize("family", FAMILIES)
def test_every_crafted_file_is_refused_fast_without_side_effects(corpus, family):
    results, sentinel = corpus
    rows = results[family]["rows"]
    assert len(rows) >= 10, f"the {family} family has only {len(rows)} files"
    wrong = [r for r in rows if r["outcome"] != "ValueError" or r["path"] not in r["message"]]
    assert not wrong, f"{len(wrong)} of {len(rows)} {family} files not refused as they should be: {wrong[:3]}"
    slow = [r for r in rows if r["seconds"] > SECONDS]
    assert not slow, f"{family}: refusing took more than {SECONDS} s: {slow[:3]}"
    assert results[family]["extra_mb"] < MEGABYTES, f"{family}: loading took {results[family]['extra_mb']:.0f} MB"
    assert not sentinel.exists(), "a crafted file ran code while it was loaded"


def test_the_exploit_of_the_issue_is_refused_without_running(corpus):
    """``_build_network`` pointed at subprocess.Popen with ``_network_spec`` holding its arguments: before the
    schema, load created the sentinel file and only then raised."""
    results, sentinel = corpus
    first = results["code"]["rows"][0]
    assert first["outcome"] == "ValueError" and "_build_network" in first["message"]
    assert not sentinel.exists()


def test_load_refuses_a_device_that_is_not_a_device(fitted_classifier, tmp_path):
    path = eadct.save(fitted_classifier, tmp_path / "m.safetensors")
    for device in ("meta", "mps", "cuda;x", 0):
        with pytest.raises(ValueError, match="'cpu', 'cuda' or 'cuda:N'"):
            eadct.load(path, device=device)


def test_a_loaded_model_never_writes_where_the_file_says(panel, tmp_path):
    """``checkpoint_path`` comes back as None (with a warning): a downloaded model refitted by its user must not
    write to a path chosen by whoever wrote the file."""
    X, y = panel
    est = EADCTClassifier(**TINY, checkpoint_path=str(tmp_path / "ck.pt")).fit(X, y)
    with pytest.warns(UserWarning, match="checkpoint_path"):
        restored = eadct.load(eadct.save(est, tmp_path / "m.safetensors"))
    assert restored.checkpoint_path is None
    np.testing.assert_array_equal(restored.predict(X), est.predict(X))


def test_a_file_that_asks_for_a_million_threads_predicts_on_this_machines_cores(fitted_classifier, panel, tmp_path):
    """``n_jobs=10**6`` is a valid int setting, so it loads; before the cap, the first predict aborted the process
    (libgomp could not allocate a million threads' state). Now the call runs on at most the usable cores."""
    from crafted_models import read, write

    from eadct.runtime import available_cores

    X, _ = panel
    header, tensors = read(eadct.save(fitted_classifier, tmp_path / "m.safetensors"))
    header["state"]["n_jobs"] = 10**6
    restored = eadct.load(write(tmp_path / "threads.safetensors", tensors, json.dumps(header)))
    seen = []
    original = torch.set_num_threads
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(torch, "set_num_threads", lambda n: (seen.append(n), original(n))[1])
        np.testing.assert_array_equal(restored.predict(X), fitted_classifier.predict(X))
    assert seen and max(seen) <= available_cores()


@pytest.mark.parametrize(
    "edit,message",
    [
        ({"dilation_per_layer": True}, "pad each series by 262144 steps"),
        ({"n_timepoints_": 2**40, "max_len": 2**40}, "series of 1099511627776 steps"),
        (
            {"attention_downsample": "auto", "attention_tokens": 1, "n_timepoints_": 2**20, "max_len": 2**20},
            "windows of",
        ),
    ],
)
def test_work_that_no_weight_accounts_for_is_bounded(panel, tmp_path, edit, message):
    """A network whose weights do not depend on its length (sinusoidal positions) or its dilations: a file could
    declare a fitted length of 2**40 steps, or dilations doubling over 18 layers, with the weights of a real fit,
    and the first predict would ask for hundreds of gigabytes. Each is refused at load, against fixed bounds."""
    from crafted_models import read, write

    X, y = panel
    est = EADCTClassifier(**{**TINY, "d_model": 8, "n_blocks": 9}, options={"positional_encoding": "sinusoidal"})
    header, tensors = read(eadct.save(est.fit(X, y), tmp_path / "m.safetensors"))
    for key, value in edit.items():
        state = header["state"]
        target = state["_network_spec"] if key == "max_len" else state["options"] if key in OPTIONS else state
        target[key] = value
    with pytest.raises(ValueError, match=message):
        eadct.load(write(tmp_path / "edited.safetensors", tensors, json.dumps(header)))

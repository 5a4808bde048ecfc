"""Archive loading: layouts, resolution order, registry checks, downloads, offline errors (all offline)."""

from __future__ import annotations

import hashlib
import http.server
import io
import math
import os
import socket
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from eadct import EADCTClassifier, EADCTRegressor
from eadct.datasets import (
    CACHE_ENV,
    DATA_DIR_ENV,
    REGISTRY,
    DatasetCheckError,
    DatasetInfo,
    DatasetNotFoundError,
    load_dataset,
    register_dataset,
)
from eadct.datasets.cli import main as cli_main

CLASSIFICATION_UNEQUAL = """# The Tiny dataset: a comment header
# spanning two lines
@problemName TinyC
@timeStamps false
@missing true
@univariate false
@dimensions 2
@equalLength false
@classLabel true a b
@data
1,2,3:4,5,6:a
1,?,3,4:5,6,7,8:b
0,0,1:1,1,1:a
"""

REGRESSION_EQUAL = """@problemName TinyR
@timeStamps false
@missing true
@univariate true
@equalLength true
@seriesLength 4
@targetLabel true
@data
1,2,3,4:0.5
2,NaN,4,5:1.5
3,4,5,6:2.5
"""

MALFORMED = """@problemName Broken
@univariate true
@classLabel true a b
@data
1,2,3:a
1,2,x,4:b
"""


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No environment folders, a private cache, and registry changes undone."""
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    saved = dict(REGISTRY)
    yield tmp_path
    REGISTRY.clear()
    REGISTRY.update(saved)


def write(folder: Path, name: str, text: str, nested=True):
    target = folder / name if nested else folder
    target.mkdir(parents=True, exist_ok=True)
    for split in ("TRAIN", "TEST"):
        (target / f"{name}_{split}.ts").write_text(text)


def test_unequal_classification_with_missing_values_and_comments(isolated):
    write(isolated / "data", "TinyC", CLASSIFICATION_UNEQUAL)
    X, y = load_dataset("TinyC", "train", isolated / "data")
    assert isinstance(X, list) and [x.shape for x in X] == [(2, 3), (2, 4), (2, 3)]
    assert np.isnan(X[1][0, 1]) and list(y) == ["a", "b", "a"]
    # the estimators take this form, with their documented missing-value option
    clf = EADCTClassifier(
        d_model=8, n_heads=2, n_blocks=1, max_epochs=1, pretrain_epochs=0, missing_values="interpolate", device="cpu"
    ).fit(X, y)
    assert clf.predict(X).shape == (3,)


def test_equal_regression_flat_layout(isolated):
    write(isolated / "data", "TinyR", REGRESSION_EQUAL, nested=False)
    X, y = load_dataset("TinyR", "test", isolated / "data")
    assert X.shape == (3, 1, 4) and y.dtype == float and list(y) == [0.5, 1.5, 2.5]
    assert np.isnan(X[1, 0, 1])
    with pytest.raises(ValueError, match="missing_values='interpolate'"):
        EADCTRegressor(device="cpu").fit(X, y)


def test_malformed_file_names_the_file(isolated):
    write(isolated / "data", "Broken", MALFORMED)
    with pytest.raises(ValueError, match="Broken_TRAIN.ts is not a valid .ts file"):
        load_dataset("Broken", "train", isolated / "data")


def test_truncated_file_fails_registry_check(isolated):
    register_dataset(DatasetInfo("TinyC", "UEA", "classification", 4, 3, 2, (3, 4), 2, source="files"))
    write(isolated / "data", "TinyC", CLASSIFICATION_UNEQUAL)  # 3 series where 4 are expected
    with pytest.raises(DatasetCheckError, match=r"TinyC_TRAIN.ts does not match .* 3 series, .* has 4"):
        load_dataset("TinyC", "train", isolated / "data")
    X, _ = load_dataset("TinyC", "train", isolated / "data", check=False)
    assert len(X) == 3
    assert len(load_dataset("TinyC", "test", isolated / "data")[0]) == 3


def test_zip_layout_is_unpacked_into_cache(isolated):
    (isolated / "zips").mkdir()
    with zipfile.ZipFile(isolated / "zips" / "TinyR.zip", "w") as zf:
        zf.writestr("TinyR/TinyR_TRAIN.ts", REGRESSION_EQUAL)
        zf.writestr("TinyR/TinyR_TEST.ts", REGRESSION_EQUAL)
    X, _ = load_dataset("TinyR", "train", isolated / "zips")
    assert X.shape == (3, 1, 4)
    assert (isolated / "cache" / "TinyR" / "TinyR_TEST.ts").is_file()


def test_resolution_order(isolated, monkeypatch):
    first, second = isolated / "first", isolated / "second"
    write(first, "TinyR", REGRESSION_EQUAL)
    write(second, "TinyR", REGRESSION_EQUAL.replace(":0.5", ":9.5"))
    monkeypatch.setenv(DATA_DIR_ENV, f"{second}{os.pathsep}{first}")
    assert load_dataset("TinyR", "train")[1][0] == 9.5  # the environment folders, in order
    assert load_dataset("TinyR", "train", first)[1][0] == 0.5  # an explicit data_dir comes first
    # sktime's bundled copies come before the cache
    write(isolated / "cache", "BasicMotions", "garbage")
    X, _ = load_dataset("BasicMotions", "train")
    assert X.shape == (40, 6, 100)


def test_cache_is_used_before_download(isolated):
    write(isolated / "cache", "TinyR", REGRESSION_EQUAL)
    X, _ = load_dataset("TinyR", "train", download=False)
    assert X.shape == (3, 1, 4)


# ----------------------------------------------------------------- downloads from 127.0.0.1


def _zip_bytes(name: str, text: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"{name}/{name}_TRAIN.ts", text)
        zf.writestr(f"{name}/{name}_TEST.ts", text)
    return buf.getvalue()


@pytest.fixture
def server():
    """HTTP server on 127.0.0.1: /good.zip whole, /cut.zip announces the full size and stops halfway."""
    payload = _zip_bytes("TinyR", REGRESSION_EQUAL)
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            if self.path not in ("/good.zip", "/cut.zip"):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            body = payload if self.path == "/good.zip" else payload[: len(payload) // 2]
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", payload, hits
    httpd.shutdown()
    httpd.server_close()


def _register_remote(url: str, sha256: str | None):
    register_dataset(
        DatasetInfo("TinyR", "TSER", "regression", 3, 3, 1, (4, 4), url=url, sha256=sha256), overwrite=True
    )


def test_download_success(isolated, server):
    base, payload, hits = server
    _register_remote(base + "/good.zip", hashlib.sha256(payload).hexdigest())
    X, y = load_dataset("TinyR", "train", progress=False)
    assert X.shape == (3, 1, 4) and hits == ["/good.zip"]
    cache = isolated / "cache"
    assert sorted(p.name for p in (cache / "TinyR").iterdir()) == ["TinyR_TEST.ts", "TinyR_TRAIN.ts"]
    assert not list(cache.rglob("*.part")) and not list(cache.rglob("*.zip"))
    load_dataset("TinyR", "test", progress=False)
    assert hits == ["/good.zip"]  # the second split comes from the cache


def _nothing_written(cache: Path) -> bool:
    return not (cache / "TinyR").exists() and not [p for p in cache.rglob("*") if p.is_file()]


def test_interrupted_download_leaves_nothing(isolated, server):
    base, _, _ = server
    _register_remote(base + "/cut.zip", None)
    with pytest.raises(DatasetNotFoundError, match="interrupted|could not download"):
        load_dataset("TinyR", "train", progress=False)
    assert _nothing_written(isolated / "cache")


def test_checksum_mismatch_leaves_nothing(isolated, server):
    base, _, _ = server
    _register_remote(base + "/good.zip", "0" * 64)
    with pytest.raises(DatasetNotFoundError, match="checksum mismatch"):
        load_dataset("TinyR", "train", progress=False)
    assert _nothing_written(isolated / "cache")


def test_offline_error_is_fast_and_says_where(isolated, monkeypatch):
    def unreachable(*args, **kwargs):
        raise OSError(101, "Network is unreachable")

    monkeypatch.setattr(socket, "create_connection", unreachable)
    monkeypatch.setattr(socket, "getaddrinfo", unreachable)
    tic = time.perf_counter()
    with pytest.raises(DatasetNotFoundError) as err:
        load_dataset("EthanolConcentration", "train", isolated / "data", progress=False)
    assert time.perf_counter() - tic < 5
    message = str(err.value)
    for part in (
        "'EthanolConcentration'",
        str(isolated / "data"),
        "sktime bundled",
        str(isolated / "cache"),
        "timeseriesclassification.com",
        "Network is unreachable",
        "data_dir=<dir>",
        DATA_DIR_ENV,
    ):
        assert part in message


def test_cli_list_and_check(isolated, capsys):
    assert cli_main(["list", "--table", "1"]) == 0
    out = capsys.readouterr().out
    assert "BenzeneConcentration" in out and "Handwriting" not in out
    write(isolated / "data", "Handwriting", MALFORMED)
    assert cli_main(["check", "--data-dir", str(isolated / "data"), "Handwriting", "BasicMotions", "Heartbeat"]) == 1
    out = capsys.readouterr().out
    assert "| Handwriting | INVALID |" in out and "| BasicMotions | valid |" in out and "| Heartbeat | missing |" in out


SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, i in REGISTRY.items() if i.source == "files"])
def test_shared_archive_dataset_matches_registry(name):
    """Every dataset in ../shared/datasets loads through the public API and matches the registry."""
    info = REGISTRY[name]
    folder = SHARED / info.archive
    if not folder.is_dir():
        pytest.skip(f"{folder} not present")
    tic = time.perf_counter()
    for split in ("train", "test"):
        X, y = load_dataset(name, split, folder, download=False)
        assert len(X) == info.n_samples(split) == len(y)
    print(f"{name}: {time.perf_counter() - tic:.2f} s")


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, i in REGISTRY.items() if i.scale_spread is not None])
def test_shared_archive_dataset_scale_spread_matches_registry(name):
    """The registry's scale spread (what ``wide_scales="auto"`` decides, for the tables' keys) is the one that
    ``benchmarks/scale_spread.py`` reads off the set's TRAIN file."""
    from eadct.estimators import scale_spread, to_panel

    folder = SHARED / REGISTRY[name].archive
    if not folder.is_dir():
        pytest.skip(f"{folder} not present")
    X, _ = load_dataset(name, "train", folder, download=False)
    spread = scale_spread(to_panel(X, missing_values="interpolate")).max()
    assert round(math.log10(spread), 2) == REGISTRY[name].scale_spread


def test_cli_check_reads_every_data_dir_and_refuses_unknown_names(isolated, capsys):
    first, second = isolated / "a", isolated / "b"
    write(first, "Handwriting", MALFORMED)
    second.mkdir()
    # the last folder used to win alone: the malformed file in the first one must still be found
    assert cli_main(["check", "--data-dir", str(second), "--data-dir", str(first), "Handwriting"]) == 1
    assert "| Handwriting | INVALID |" in capsys.readouterr().out
    assert cli_main(["check", "Handwritting"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown dataset(s) ['Handwritting']" in err and "eadct-datasets list" in err
    assert cli_main(["check", "--data-dir", str(isolated / "nope"), "BasicMotions"]) == 2
    assert "is not a folder" in capsys.readouterr().err

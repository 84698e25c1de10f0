"""Build the NLTK_DATA layout of WordNet 3.0 from Debian's ``/usr/share/wordnet`` files.

NLTK reads WordNet only from ``$NLTK_DATA/corpora/wordnet/``. Debian's ``wordnet-base``
and ``wordnet-sense-index`` packages hold the database files but not ``lexnames``, which
textrobust ships. Files are copied, not symlinked: NLTK 3.10 rejects symlinks.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

from textrobust.assets.catalog import ASSETS, resource_path
from textrobust.assets.checks import WORDNET_FILES
from textrobust.errors import AssetMissingError

__all__ = ["DEBIAN_WORDNET", "build_dir", "build_wordnet_layout", "replace_path"]

#: Where Debian's wordnet-base and wordnet-sense-index packages put the database.
DEBIAN_WORDNET = Path("/usr/share/wordnet")

#: Optional files NLTK uses when present (sense keys, lemma counts).
_OPTIONAL = ("index.sense", "cntlist.rev")


def build_dir(parent: Path, prefix: str) -> Path:
    """A new, uniquely named hidden folder in ``parent`` to build in (permissions follow
    the umask, unlike ``tempfile.mkdtemp``'s private 0700, so a shared cache stays readable)."""
    parent.mkdir(parents=True, exist_ok=True)
    folder = parent / f".{prefix}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    return folder


def replace_path(built: Path, final: Path) -> None:
    """Move a freshly built file or folder into place, replacing an older one."""
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.is_dir() and not final.is_symlink():
        shutil.rmtree(final)
    elif final.exists() or final.is_symlink():
        final.unlink()
    built.replace(final)


def build_wordnet_layout(
    nltk_root: Path,
    source: Path = DEBIAN_WORDNET,
    *,
    log: Callable[[str], None] = print,
) -> Path:
    """Copy WordNet from ``source`` into ``nltk_root/corpora/wordnet`` and add ``lexnames``.

    Copied: ``data.*`` and ``index.*`` of the four parts of speech, their ``*.exc``
    exception lists, and ``index.sense`` and ``cntlist.rev`` when present.

    Returns ``nltk_root``, an NLTK_DATA root. Raises :class:`AssetMissingError` when
    ``source`` lacks the database files. The folder is built beside its final place and
    moved in at the end, so an interrupted run never leaves a half-built corpus.
    """
    spec = ASSETS.get("wordnet")
    needed = [n for n in WORDNET_FILES if n != "lexnames"]
    absent = [n for n in needed if not (source / n).is_file()]
    if absent:
        raise AssetMissingError(
            "wordnet",
            [f"WordNet source folder {source}: missing {', '.join(absent)}"],
            spec.hint(),
        )
    corpora = nltk_root / "corpora"
    corpora.mkdir(parents=True, exist_ok=True)
    building = build_dir(corpora, "wordnet")
    try:
        for name in [*needed, *(n for n in _OPTIONAL if (source / n).is_file())]:
            # copyfile follows symlinks: NLTK 3.10 rejects links, so these are real copies
            shutil.copyfile(source / name, building / name)
        shutil.copyfile(resource_path("lexnames"), building / "lexnames")
        replace_path(building, corpora / "wordnet")
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    missing_optional = [n for n in _OPTIONAL if not (source / n).is_file()]
    if missing_optional:
        log(
            f"  note: {', '.join(missing_optional)} not in {source} (install "
            "wordnet-sense-index for sense keys); synonyms and antonyms work without it"
        )
    return nltk_root

"""What an offline asset is (:class:`AssetSpec`) and what was found of it (:class:`AssetStatus`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["AssetKind", "AssetSpec", "AssetStatus", "PackageLocation", "Source"]

#: Where a resolved asset came from, in resolution order ("bundled" ships inside textrobust).
Source = Literal["argument", "environment", "package", "cache", "bundled"]

#: Whether an asset is a single file or a folder.
AssetKind = Literal["file", "dir"]


@dataclass(frozen=True)
class PackageLocation:
    """Where an installed Python package keeps an asset, found without importing it.

    ``module`` is the import name; ``member`` is a path inside the package folder and may
    hold one ``*`` (spaCy packages keep their pipeline in ``<name>-<version>/``).
    ``distribution`` is the name to ``pip install``, or ``None`` when the package must not
    be installed (its wheel is only read by ``textrobust assets prepare``).
    """

    module: str
    member: str
    distribution: str | None = None


@dataclass(frozen=True)
class AssetSpec:
    """One external resource: how to recognise it, where to look and how to get it.

    ``check`` returns ``None`` when a candidate path is a usable copy of the asset, or a
    short reason why not ("no config.json"). ``cache_subpath`` is relative to
    :func:`textrobust.assets.cache_dir`. ``prepared`` is true when ``textrobust assets
    prepare`` builds the cached copy; ``extra`` names the optional dependency group
    (``pip install 'textrobust[extra]'``) the asset needs, if any.
    """

    name: str
    description: str
    kind: AssetKind
    env_var: str
    install_hint: str
    check: Callable[[Path], str | None]
    package: PackageLocation | None = None
    cache_subpath: str | None = None
    bundled: str | None = None
    prepared: bool = False
    extra: str | None = None

    def hint(self, install: str | None = None) -> str:
        """The full advice printed when the asset is missing (``install`` overrides the first part)."""
        what = "file" if self.kind == "file" else "folder"
        return (
            f"{install or self.install_hint} Or point textrobust at your own copy: pass its "
            f"{what} path explicitly, or set the environment variable {self.env_var}=<path>."
        )


@dataclass(frozen=True)
class AssetStatus:
    """What :func:`textrobust.assets.status` found for one asset.

    ``source`` is ``None`` and ``detail`` holds the install hint when ``found`` is false;
    otherwise ``detail`` is a short description of what was found ("12,808 rows").
    """

    name: str
    description: str
    found: bool
    path: str | None
    source: Source | None
    size_bytes: int | None
    detail: str

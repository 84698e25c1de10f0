"""One entry point for every data source: a bundled set's name or a user's file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textrobust.data.bundled import DATASETS, load_bundled
from textrobust.data.examples import Dataset
from textrobust.data.files import load_file
from textrobust.errors import DataError

__all__ = ["load_dataset"]


def load_dataset(name_or_path: str | Path, split: str | None = None, **options: Any) -> Dataset:
    """Load a registered data set by name, or a user's file or ``datasets`` folder by path.

    ``split`` defaults to ``"test"`` for a bundled set and to ``"all"`` for a user file
    (a DatasetDict folder then needs an explicit split). ``options`` go to
    :func:`~textrobust.data.bundled.load_bundled` (e.g. ``path``, ``max_words``) or to
    :func:`~textrobust.data.files.load_file` (column mapping, ``label_names``,
    ``on_bad_rows``...).

    >>> load_dataset("rotten_tomatoes", "dev")  # doctest: +SKIP
    >>> load_dataset("reviews.jsonl", label_column="stars")  # doctest: +SKIP
    """
    if isinstance(name_or_path, str) and name_or_path in DATASETS:
        return load_bundled(name_or_path, "test" if split is None else split, **options)
    path = Path(name_or_path).expanduser()
    if path.exists():
        return load_file(path, split="all" if split is None else split, **options)
    raise DataError(
        f"{str(name_or_path)!r} is neither a registered data set "
        f"(known: {', '.join(DATASETS.names())}) nor an existing file or folder."
    )

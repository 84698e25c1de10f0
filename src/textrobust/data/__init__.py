"""Data: labelled examples, the bundled data sets and loaders for user files.

>>> from textrobust.data import load_dataset
>>> test = load_dataset("rotten_tomatoes")  # the fixed test split  # doctest: +SKIP
>>> mine = load_dataset("my.csv", text_column="review", label_column="stars")  # doctest: +SKIP

Importing this package is light: pandas, pyarrow and datasets are imported only by the
loader that needs them.
"""

from __future__ import annotations

from textrobust.data.bundled import DATASETS, load_bundled
from textrobust.data.examples import Dataset, Example
from textrobust.data.files import BadRowPolicy, FileFormat, load_file
from textrobust.data.sources import load_dataset
from textrobust.data.splits import SPLIT_FRACTIONS, SPLIT_SEED, SPLITS, split_dataset

__all__ = [
    "DATASETS",
    "SPLITS",
    "SPLIT_FRACTIONS",
    "SPLIT_SEED",
    "BadRowPolicy",
    "Dataset",
    "Example",
    "FileFormat",
    "load_bundled",
    "load_dataset",
    "load_file",
    "split_dataset",
]

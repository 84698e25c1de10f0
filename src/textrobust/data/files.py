"""Load a user's labelled data from CSV/TSV, JSON Lines, Parquet or a saved
Hugging Face ``datasets`` folder.

Every row is checked; a row that cannot be used (missing or empty text, text without a
word, missing or unknown label, missing or duplicate id, a line that is not JSON...) is
reported as a :class:`~textrobust.errors.BadRow` with its 1-based row number:

* CSV/TSV: the record number after the header (blank lines are not counted); the reason
  also gives the line of the file where the record ends, which differs when texts hold
  line breaks.
* JSON Lines: the line number in the file. A ``.json`` file holding one JSON array:
  the position in the array.
* Parquet and Hugging Face folders: the position in the table (of the chosen split).

By default bad rows raise :class:`~textrobust.errors.DataError` listing them. With
``on_bad_rows="skip"`` they are skipped, and listed in ``dataset.meta["bad_rows"]`` so
that a caller can warn about them. Nothing is dropped silently.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, cast

from textrobust.data.examples import Dataset, Example
from textrobust.data.splits import SPLIT_SEED, normalize_split, split_dataset
from textrobust.errors import BadRow, ConfigError, DataError, MissingDependencyError
from textrobust.text import Text

__all__ = ["BadRowPolicy", "FileFormat", "detect_format", "load_file"]


class BadRowPolicy(str, Enum):
    """What :func:`load_file` does with rows it cannot use."""

    ERROR = "error"  # raise DataError listing every bad row
    SKIP = "skip"  # skip them, list them in dataset.meta["bad_rows"]


class FileFormat(str, Enum):
    """The input formats :func:`load_file` reads."""

    CSV = "csv"
    TSV = "tsv"
    JSONL = "jsonl"
    JSON = "json"
    PARQUET = "parquet"
    HF = "hf"  # a folder written by datasets' save_to_disk


_SUFFIXES: dict[str, FileFormat] = {
    ".csv": FileFormat.CSV,
    ".tsv": FileFormat.TSV,
    ".jsonl": FileFormat.JSONL,
    ".ndjson": FileFormat.JSONL,
    ".json": FileFormat.JSON,
    ".parquet": FileFormat.PARQUET,
    ".pq": FileFormat.PARQUET,
}
_COMPRESSIONS = (".gz", ".bz2")
_ACCEPTED = (
    ".csv, .tsv, .jsonl/.ndjson, .json (JSON Lines or one array of objects), "
    ".parquet/.pq (text formats may end in .gz or .bz2), or a folder saved with "
    "datasets' save_to_disk"
)
_INT = re.compile(r"[+-]?\d+")
_MAX_INFERRED_INT_LABELS = 1000
_PAIR_COLUMNS = ("premise", "hypothesis")


@dataclass
class _Table:
    """Rows read from a source: (row number, record), plus read-level problems."""

    columns: list[str]
    records: list[tuple[int, Mapping[str, Any]]]
    problems: list[BadRow] = field(default_factory=list)
    label_names: tuple[str, ...] | None = None  # from a datasets ClassLabel feature
    split: str | None = None  # the DatasetDict split that was read, if any
    lines: dict[int, int] = field(default_factory=dict)  # CSV: row -> last line in the file
    row_note: str = "rows counted from 1"


# ---- public -----------------------------------------------------------------------------


def detect_format(path: str | Path) -> FileFormat:
    """The :class:`FileFormat` of ``path`` from its suffix (a folder is a ``datasets`` folder)."""
    path = Path(path)
    if path.is_dir():
        return FileFormat.HF
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSIONS:
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _SUFFIXES:
        return _SUFFIXES[suffixes[-1]]
    raise DataError(
        f"Cannot tell the format of {path} from its name. Accepted: {_ACCEPTED}. "
        f"Or pass file_format= one of {[f.value for f in FileFormat]}."
    )


def load_file(
    path: str | Path,
    *,
    text_column: str = "text",
    label_column: str = "label",
    pair_column: str | None = None,
    frozen_column: str | None = "premise",
    label_names: Sequence[str] | None = None,
    id_column: str | None = None,
    split: str = "all",
    file_format: str | FileFormat | None = None,
    on_bad_rows: str | BadRowPolicy = "error",
    name: str | None = None,
    encoding: str = "utf-8",
    seed: int = SPLIT_SEED,
) -> Dataset:
    """Load a labelled data set from a user file or a saved ``datasets`` folder.

    Args:
        path: the file, or a folder written by ``datasets``' ``save_to_disk``.
        text_column: the column holding the text (the premise, for pairs).
        label_column: the column holding the label: a name (str) or an index (int).
        pair_column: for sentence pairs, the column holding the second text
            (hypothesis); the example then is ``Text.from_pair(text, pair)``.
        frozen_column: for pairs, which side attacks may not change: ``"premise"``
            (default), ``"hypothesis"`` or ``None``; the column names given as
            ``text_column``/``pair_column`` are accepted too.
        label_names: the label names, index order. String labels are looked up by name,
            int labels (or digit strings not among the names) used as indices. When
            omitted: a ``datasets`` ClassLabel's names; else, when every label is an
            integer, ``"0"`` .. ``str(max)``; else the distinct strings, sorted.
        id_column: a column of unique ids; when omitted ids are ``row-<row number>``
            (stable as long as the file's rows keep their order).
        split: ``"all"`` (default) for the whole file. For a ``datasets`` DatasetDict
            folder, the split to read (``"dev"`` finds ``"validation"``). For any other
            source, ``"train"``/``"dev"``/``"test"`` take the seeded stratified split of
            :mod:`textrobust.data.splits` (80/10/10 with ``seed``).
        file_format: override the format guessed from the suffix (see :class:`FileFormat`).
        on_bad_rows: ``"error"`` raises DataError listing the bad rows; ``"skip"`` skips
            them and lists them in ``dataset.meta["bad_rows"]``.
        name: the data set's name (default: the file name without suffixes).
        encoding: the encoding of CSV/TSV/JSON files.
        seed: the seed of the split of a source that has none.

    Returns:
        A :class:`Dataset`; ``meta`` holds ``bad_rows``, ``source_rows``, ``format``,
        ``label_names_from``, ``duplicate_texts`` (texts seen more than once, kept) and
        ``rows`` (each example's row number, by id, so that a later check can report a
        row by its number). A ``split`` with no rows in it is a ConfigError naming the
        splits that have some.

    >>> ds = load_file("reviews.csv", label_names=["negative", "positive"])  # doctest: +SKIP
    """
    source = Path(path).expanduser()
    policy = _policy(on_bad_rows)
    frozen = _frozen(frozen_column, text_column, pair_column)
    names = _given_label_names(label_names)
    _check_column_args(text_column, label_column, pair_column, id_column)
    if not source.exists():
        raise DataError(f"The data file {source} does not exist.")
    fmt = _format(source, file_format)
    if fmt is not FileFormat.HF:
        normalize_split(split)  # fail before reading the file

    needed = [c for c in (text_column, pair_column, label_column, id_column) if c is not None]
    table = _read(source, fmt, needed, encoding, split, label_column)
    _check_columns(source, table, text_column, label_column, pair_column, id_column)

    examples, bad, final_names, names_from, rows = _examples(
        table, text_column, pair_column, frozen, label_column, names, id_column
    )
    duplicates = len(examples) - len({e.text.key for e in examples})
    if bad and policy is BadRowPolicy.ERROR:
        raise DataError(
            f"{len(bad)} of {len(table.records) + _unnumbered(table)} rows of {source} cannot be "
            f"used ({table.row_note}). Fix them, or pass on_bad_rows='skip' to skip them:",
            bad,
        )
    if not examples:
        if not bad:
            raise DataError(f"{source} has no data rows.")
        raise DataError(f"{source} has no usable rows ({len(bad)} bad rows, listed below).", bad)
    meta: dict[str, object] = {
        "format": fmt.value,
        "source_rows": len(table.records) + _unnumbered(table),
        "bad_rows": tuple(bad),
        "label_names_from": names_from,
        "duplicate_texts": duplicates,
        "rows": rows,
        "columns": {
            "text": text_column,
            "pair": pair_column,
            "label": label_column,
            "id": id_column,
            "frozen": frozen[0] if frozen else None,
        },
    }
    dataset = Dataset(
        name or _stem(source),
        tuple(examples),
        final_names,
        "all",
        str(source),
        meta,
    )
    if table.split is not None:
        return Dataset(
            dataset.name, dataset.examples, final_names, table.split, dataset.source, meta
        )
    part = split_dataset(dataset, split, seed=seed)
    if not len(part):
        _empty_split(source, split, part)
    return part


# ---- argument checks ----------------------------------------------------------------------


def _policy(value: str | BadRowPolicy) -> BadRowPolicy:
    try:
        return BadRowPolicy(value)
    except ValueError:
        raise ConfigError(
            f"The 'on_bad_rows' parameter must be one of "
            f"{[p.value for p in BadRowPolicy]}. Got {value!r} instead."
        ) from None


def _format(source: Path, value: str | FileFormat | None) -> FileFormat:
    if value is None:
        return detect_format(source)
    try:
        return FileFormat(value.lower() if isinstance(value, str) else value)
    except ValueError:
        raise ConfigError(
            f"The 'file_format' parameter must be one of {[f.value for f in FileFormat]}, or left out to "
            f"take the format from the file name. Got {value!r} instead."
        ) from None


def _frozen(value: str | None, text_column: str, pair_column: str | None) -> tuple[str, ...]:
    if pair_column is None or value is None:
        return ()
    aliases = {"premise": "premise", "hypothesis": "hypothesis"}
    aliases.setdefault(text_column, "premise")
    aliases.setdefault(pair_column, "hypothesis")
    if value not in aliases:
        raise ConfigError(
            f"The 'frozen_column' parameter must be 'premise', 'hypothesis', "
            f"{text_column!r}, {pair_column!r} or None. Got {value!r} instead."
        )
    return (aliases[value],)


def _given_label_names(value: Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            "The 'label_names' parameter must be a sequence of strings in index order, "
            f"e.g. ['negative', 'positive']. Got {value!r} instead."
        )
    names = tuple(value)
    if not names or len(set(names)) != len(names):
        raise ConfigError(
            f"The 'label_names' parameter must hold distinct names, at least one. "
            f"Got {list(names)} instead."
        )
    return names


def _check_column_args(
    text_column: str, label_column: str, pair_column: str | None, id_column: str | None
) -> None:
    given = {
        "text_column": text_column,
        "label_column": label_column,
        "pair_column": pair_column,
        "id_column": id_column,
    }
    for parameter, column in given.items():
        if column is not None and (not isinstance(column, str) or not column):
            raise ConfigError(
                f"The '{parameter}' parameter must be a non-empty column name. "
                f"Got {column!r} instead."
            )
    if text_column == label_column:
        raise ConfigError(
            f"The 'text_column' and 'label_column' parameters name the same column {text_column!r}."
        )
    if pair_column is not None and pair_column in (text_column, label_column):
        raise ConfigError(
            f"The 'pair_column' parameter must differ from 'text_column' and 'label_column'. "
            f"Got {pair_column!r}."
        )


def _check_columns(
    source: Path,
    table: _Table,
    text_column: str,
    label_column: str,
    pair_column: str | None,
    id_column: str | None,
) -> None:
    for parameter, column in (
        ("text_column", text_column),
        ("label_column", label_column),
        ("pair_column", pair_column),
        ("id_column", id_column),
    ):
        if column is not None and column not in table.columns:
            raise DataError(
                f"Column {column!r} (the '{parameter}' parameter) is not in {source}. "
                f"Available columns: {', '.join(map(repr, table.columns)) or '(none)'}."
            )


def _empty_split(source: Path, split: str, part: Dataset) -> None:
    """A split asked of a file that has no rows in it is a usage error naming the splits
    that do (a 4-row file has no test rows under the 80/10/10 rule)."""
    sizes = dict(cast("Mapping[str, int]", part.meta.get("split_sizes") or {}))  # as data.splits writes it
    total = sum(sizes.values())
    shown = ", ".join(f"{name} {count:,}" for name, count in sizes.items())
    existing = ", ".join(["all", *(name for name, count in sizes.items() if count)])
    raise ConfigError(
        f"The '--split' option asks for {split!r}, but {source} has no rows in that split: the seeded "
        f"80/10/10 split of its {total:,} usable rows gives {shown}. Splits with rows: {existing}. Leave "
        f"--split out (or give --split all) to use every row of your file (Python: split='all')."
    )


def _stem(path: Path) -> str:
    name = path.name
    for suffix in _COMPRESSIONS:
        name = name.removesuffix(suffix)
    return name.rsplit(".", 1)[0] if "." in name and not path.is_dir() else name


def _unnumbered(table: _Table) -> int:
    """Rows that failed before becoming records (e.g. invalid JSON lines)."""
    return len(table.problems)


# ---- readers ---------------------------------------------------------------------------------


def _read(
    source: Path,
    fmt: FileFormat,
    needed: Sequence[str],
    encoding: str,
    split: str,
    label_column: str,
) -> _Table:
    if fmt is not FileFormat.HF:
        if source.is_dir():
            raise DataError(
                f"{source} is a folder, but file_format={fmt.value!r} needs a file. "
                f"Accepted: {_ACCEPTED}."
            )
    elif not source.is_dir():
        raise DataError(
            f"file_format='hf' needs a folder saved with datasets' save_to_disk; "
            f"{source} is a file."
        )
    if fmt in (FileFormat.CSV, FileFormat.TSV):
        return _read_csv(source, "\t" if fmt is FileFormat.TSV else ",", encoding)
    if fmt in (FileFormat.JSONL, FileFormat.JSON):
        return _read_json(source, encoding, array_allowed=fmt is FileFormat.JSON)
    if fmt is FileFormat.PARQUET:
        return _read_parquet(source, needed)
    return _read_hf(source, needed, split, label_column)


def open_binary(path: Path) -> gzip.GzipFile | bz2.BZ2File | io.BufferedReader:
    """Open ``path`` for reading bytes, decompressing a ``.gz`` or ``.bz2`` file."""
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return gzip.open(path, "rb")
    if suffix == ".bz2":
        return bz2.open(path, "rb")
    return open(path, "rb")


def _decode_error(path: Path, encoding: str, error: Exception) -> DataError:
    return DataError(
        f"{path} could not be decoded as {encoding}: {error}. "
        f"Pass encoding= the file's encoding (for example encoding='latin-1')."
    )


_UNDECODED = re.compile("[\udc80-\udcff]")


def _read_csv(path: Path, delimiter: str, encoding: str) -> _Table:
    csv.field_size_limit(2**31 - 1)
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in {"utf-8", "utf8"} else encoding
    records: list[tuple[int, Mapping[str, Any]]] = []
    problems: list[BadRow] = []
    lines: dict[int, int] = {}
    # Undecodable bytes become lone surrogates (surrogateescape), so one bad row is a bad
    # row, not a failed file; a file that is wholly in another encoding names --encoding.
    try:
        with open_binary(path) as raw, io.TextIOWrapper(raw, encoding=codec, newline="",
                                                        errors="surrogateescape") as handle:
            reader = csv.reader(handle, delimiter=delimiter)
            header = next(reader, None)
            if header is None:
                raise DataError(f"{path} is empty: it has no header row.")
            header = [h.strip() for h in header]
            number = 0
            for fields in reader:
                if not fields or (len(fields) == 1 and not fields[0].strip() and len(header) > 1):
                    continue  # a blank line
                number += 1
                if len(fields) > len(header):
                    problems.append(
                        BadRow(
                            number,
                            f"has {len(fields)} fields but the header has {len(header)} "
                            f"(an unquoted {'tab' if delimiter == chr(9) else 'comma'} in a text?) "
                            f"(line {reader.line_num})",
                        )
                    )
                    continue
                if any(_UNDECODED.search(f) for f in fields):
                    problems.append(BadRow(number, f"holds bytes that are not valid {encoding} (line "
                                                   f"{reader.line_num}); if the whole file uses another "
                                                   "encoding, give that encoding"))
                    continue
                records.append((number, dict(zip(header, fields))))
                lines[number] = reader.line_num
    except UnicodeDecodeError as error:
        raise _decode_error(path, encoding, error) from error
    except (csv.Error, OSError, EOFError, LookupError) as error:
        raise DataError(f"Could not read {path} as a CSV file: {error}") from error
    undecoded = [p for p in problems if "not valid" in p.reason]
    if undecoded and not records:  # the whole file is in another encoding, not a few bad rows
        raise _decode_error(path, encoding, ValueError(f"{len(undecoded)} row(s) hold undecodable bytes"))
    return _Table(
        header,
        records,
        problems,
        lines=lines,
        row_note="rows counted from 1 at the first record after the header",
    )


def _read_json(path: Path, encoding: str, *, array_allowed: bool) -> _Table:
    try:
        with open_binary(path) as raw:
            content = raw.read().decode(encoding)
    except UnicodeDecodeError as error:
        raise _decode_error(path, encoding, error) from error
    except (OSError, EOFError, LookupError) as error:
        raise DataError(f"Could not read {path}: {error}") from error
    content = content.lstrip("\ufeff")
    problems: list[BadRow] = []
    items: list[tuple[int, Any]] = []
    note = "rows are line numbers"
    if array_allowed and content.lstrip().startswith("["):
        try:
            array = json.loads(content)
        except json.JSONDecodeError as error:
            raise DataError(f"{path} is not valid JSON: {error}") from error
        if not isinstance(array, list):
            raise DataError(f"{path} must hold a JSON array of objects or JSON Lines.")
        items = list(enumerate(array, start=1))
        note = "rows are positions in the JSON array, from 1"
    else:
        for number, line in enumerate(content.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append((number, json.loads(line)))
            except json.JSONDecodeError as error:
                problems.append(BadRow(number, f"invalid JSON: {error.msg} (column {error.colno})"))
    columns: dict[str, None] = {}
    records: list[tuple[int, Mapping[str, Any]]] = []
    for number, item in items:
        if not isinstance(item, dict):
            problems.append(BadRow(number, f"is a JSON {type(item).__name__}, not an object"))
            continue
        columns.update(dict.fromkeys(item))
        records.append((number, item))
    if not records:
        raise DataError(f"{path} holds no JSON objects ({note}).", problems)
    return _Table(list(columns), records, problems, row_note=note)


def _columns_to_records(
    columns: Mapping[str, Sequence[Any]], n: int
) -> list[tuple[int, Mapping[str, Any]]]:
    names = list(columns)
    return [(i + 1, {name: columns[name][i] for name in names}) for i in range(n)]


def _read_parquet(path: Path, needed: Sequence[str]) -> _Table:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError(
            "pyarrow", "Reading Parquet files", "pip install pyarrow"
        ) from None
    try:
        available = list(pq.read_schema(path).names)
        wanted = [c for c in needed if c in available]
        table = pq.read_table(path, columns=wanted)
    except Exception as error:  # pyarrow raises ArrowInvalid, OSError, ...
        raise DataError(f"Could not read {path} as a Parquet file: {error}") from error
    data = table.to_pydict()
    return _Table(
        available,
        _columns_to_records(data, table.num_rows),
        row_note="rows counted from 1 in the table",
    )


def _read_hf(path: Path, needed: Sequence[str], split: str, label_column: str) -> _Table:
    try:
        import datasets
    except ImportError:
        raise MissingDependencyError(
            "datasets",
            "Loading a saved Hugging Face datasets folder",
            "pip install 'textrobust[hf]'",
        ) from None
    try:
        loaded = datasets.load_from_disk(str(path))
    except Exception as error:  # FileNotFoundError, ValueError, ... for non-dataset folders
        raise DataError(
            f"{path} is a folder but not one written by datasets' save_to_disk ({error}). "
            f"Accepted: {_ACCEPTED}."
        ) from error
    chosen: str | None = None
    if isinstance(loaded, datasets.DatasetDict):
        chosen = _dict_split(path, list(loaded.keys()), split)
        table = loaded[chosen]
    else:
        table = loaded
    available = list(table.column_names)
    wanted = [c for c in needed if c in available]
    data = table.select_columns(wanted).to_dict()
    label_names: tuple[str, ...] | None = None
    feature = table.features.get(label_column)
    if isinstance(feature, datasets.ClassLabel):
        label_names = tuple(feature.names)
    result = _Table(
        available,
        _columns_to_records(data, table.num_rows),
        label_names=label_names,
        row_note="rows counted from 1 in the table",
    )
    if chosen is not None:
        result.split = _split_name(chosen)
    return result


def _dict_split(path: Path, keys: list[str], split: str) -> str:
    if split in keys:
        return split
    wanted = split.strip().lower()
    candidates = {
        "dev": ("dev", "validation", "valid", "val"),
        "validation": ("validation", "dev", "valid", "val"),
        "train": ("train",),
        "test": ("test",),
    }.get(wanted, (wanted,))
    for candidate in candidates:
        if candidate in keys:
            return candidate
    raise DataError(
        f"{path} holds a DatasetDict with the splits {keys}; pass split= one of them "
        f"('dev' finds 'validation'). Got split={split!r}."
    )


def _split_name(key: str) -> str:
    try:
        return normalize_split(key, allow_all=False)
    except ConfigError:
        return key


# ---- rows -> examples ---------------------------------------------------------------------


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _text_value(record: Mapping[str, Any], column: str) -> tuple[str | None, str | None]:
    """(text, None) or (None, reason)."""
    value = record.get(column)
    if _is_missing(value):
        return None, f"missing text in column {column!r}"
    if not isinstance(value, str):
        return (
            None,
            f"the value in text column {column!r} is a {type(value).__name__}, not a string",
        )
    value = value.strip()
    if not value:
        return None, f"empty text in column {column!r}"
    return value, None


def _raw_label(value: Any) -> int | str | None:
    """A label as read: None when missing, an int, or a stripped string."""
    if _is_missing(value):
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else str(value)
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return repr(value)


def _as_int(raw: int | str) -> int | None:
    if isinstance(raw, int):
        return raw
    return int(raw) if _INT.fullmatch(raw) else None


def _infer_label_names(raws: Iterable[int | str]) -> tuple[tuple[str, ...], str]:
    present = list(raws)
    if not present:
        return (), "inferred"
    ints = [_as_int(r) for r in present]
    if all(i is not None for i in ints):
        top = max(i for i in ints if i is not None)
        if top >= _MAX_INFERRED_INT_LABELS:
            raise DataError(
                f"The labels are integers up to {top}; pass label_names= to say what they mean "
                f"(at most {_MAX_INFERRED_INT_LABELS} integer labels are inferred)."
            )
        return tuple(str(i) for i in range(max(top, 0) + 1)), "inferred: integer labels 0..max"
    return tuple(sorted({str(r) for r in present})), "inferred: distinct strings, sorted"


def _map_label(raw: int | str, names: tuple[str, ...], index: Mapping[str, int]) -> int | None:
    key = str(raw)
    if key in index:
        return index[key]
    number = _as_int(raw)
    if number is not None and 0 <= number < len(names):
        return number
    return None


def _examples(
    table: _Table,
    text_column: str,
    pair_column: str | None,
    frozen: tuple[str, ...],
    label_column: str,
    names: tuple[str, ...] | None,
    id_column: str | None,
) -> tuple[list[Example], list[BadRow], tuple[str, ...], str, dict[str, int]]:
    """Examples from the table's records, the bad rows (sorted by row number), the label
    names, where they came from, and each example's row number (by id)."""
    raws = [_raw_label(record.get(label_column)) for _, record in table.records]
    names_from = "given"
    if names is None and table.label_names is not None:
        names, names_from = table.label_names, "datasets ClassLabel feature"
    if names is None:
        names, names_from = _infer_label_names(r for r in raws if r is not None)
    index = {name: i for i, name in enumerate(names)}

    bad: list[BadRow] = list(table.problems)
    examples: list[Example] = []
    rows: dict[str, int] = {}
    seen_ids: dict[str, int] = {}
    for (number, record), raw in zip(table.records, raws):
        reasons: list[str] = []
        text, reason = _text_value(record, text_column)
        if reason:
            reasons.append(reason)
        pair: str | None = None
        if pair_column is not None:
            pair, reason = _text_value(record, pair_column)
            if reason:
                reasons.append(reason)
        label: int | None = None
        if raw is None:
            reasons.append(f"missing label in column {label_column!r}")
        else:
            label = _map_label(raw, names, index)
            if label is None:
                shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
                reasons.append(f"unknown label {raw!r} (known: {shown})")
        example_id = f"row-{number}"
        if id_column is not None:
            value = record.get(id_column)
            if _is_missing(value) or not str(value).strip():
                reasons.append(f"missing id in column {id_column!r}")
            else:
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                example_id = str(value).strip()
                if example_id in seen_ids:
                    reasons.append(
                        f"duplicate id {example_id!r} (first at row {seen_ids[example_id]})"
                    )
                else:
                    seen_ids[example_id] = number
        built: Text | None = None
        if text is not None and (pair_column is None or pair is not None):
            built = (
                Text.from_string(text)
                if pair is None
                else Text.from_pair(text, pair, frozen_columns=frozen, column_names=_PAIR_COLUMNS)
            )
            for column, source in zip(built.column_names, (text_column, pair_column)):
                if len(built.column_positions(column)) == 0:
                    reasons.append(f"no words in column {source!r}")
        if reasons:
            line = table.lines.get(number)
            where = f" (line {line})" if line is not None else ""
            bad.append(BadRow(number, "; ".join(reasons) + where))
            continue
        if built is None or label is None:  # unreachable: a reason was recorded
            continue
        examples.append(Example(example_id, built, label))
        rows[example_id] = number
    bad.sort(key=lambda b: b.row)
    return examples, bad, names, names_from, rows

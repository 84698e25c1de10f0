"""Generic JSON encoding of typed, frozen records.

Every per-unit result an analysis produces is a frozen dataclass with typed fields. This
module turns such a value into JSON-ready data and back, driven by the dataclass's type
hints, so no analysis writes a payload dict by hand and no reader guesses keys:

- dataclasses -> objects of their fields (recursively);
- :class:`~textrobust.text.Text` -> ``{"columns": [...], "frozen": [...]}`` (a plain string,
  or ``{column: string}`` for a pair, as stores written before this codec hold them, is
  read back too);
- enums -> their value; tuples and lists -> lists; sets -> sorted lists; dicts -> objects
  with string keys (str, int, float, bool or enum keys);
- ``float('nan')``/``inf`` -> ``None`` (JSON has no NaN), read back as NaN for float fields;
- pydantic models (a :class:`~textrobust.config.Config`) -> their JSON dump; paths -> strings;
  dates and times -> ISO 8601; numpy and torch scalars and arrays -> numbers and lists.

It is the only JSON codec of the package: the run store writes every payload,
configuration and summary through :func:`encode`.

:func:`flat_fields` opens such data into one flat row (for CSV and JSON Lines exports).

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Point:
...     name: str
...     xy: tuple[float, ...]
...     note: str | None = None
>>> encode(Point("a", (1.0, 2.0)))
{'name': 'a', 'xy': [1.0, 2.0], 'note': None}
>>> decode(Point, {'name': 'a', 'xy': [1.0, 2.0]})
Point(name='a', xy=(1.0, 2.0), note=None)

Written here rather than taken from a library: pydantic validates models, not the frozen
slotted dataclasses and the :class:`Text` type the engine uses, and a round trip must be
exact (tuples stay tuples, enums stay enums).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import types
import typing
from collections.abc import Collection, Mapping
from datetime import date, datetime
from datetime import time as dtime
from functools import lru_cache
from pathlib import PurePath
from typing import Any, TypeVar, Union

from textrobust.errors import StoreError
from textrobust.text import Text

__all__ = ["PAIR_SEPARATOR", "decode", "encode", "flat_fields", "text_from_data", "text_to_data"]

T = TypeVar("T")


def text_to_data(text: Text) -> dict[str, Any]:
    """A :class:`Text` as JSON-ready data (its columns and frozen positions)."""
    return {"columns": list(text.columns), "frozen": sorted(text.frozen)}


def text_from_data(data: Mapping[str, Any] | str) -> Text:
    """The :class:`Text` that :func:`text_to_data` encoded; also a text as stores written
    before this codec hold it: a string, or ``{column: string}`` for a pair (no frozen
    positions were kept: a pair's premise is frozen, as :meth:`Text.from_pair` does)."""
    if isinstance(data, str):
        return Text.from_string(data)
    if "columns" not in data and len(data) == 2 and all(isinstance(v, str) for v in data.values()):
        (first, premise), (second, hypothesis) = data.items()
        return Text.from_pair(premise, hypothesis, column_names=(first, second))
    columns = list(data["columns"])
    text = Text.from_pair(columns[0], columns[1], frozen_columns=()) if len(columns) == 2 \
        else Text.from_string(columns[0])
    return text.freeze(data.get("frozen") or ())


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data (see the module docstring for the rules); anything
    else is a :class:`~textrobust.errors.StoreError`.

    >>> import enum
    >>> class Colour(enum.Enum):
    ...     RED = "red"
    >>> encode({"c": Colour.RED, "t": (1, float("nan")), 2: {3.5}})
    {'c': 'red', 't': [1, None], '2': [3.5]}
    """
    if isinstance(value, enum.Enum):
        return encode(value.value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Text):
        return text_to_data(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {_key(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [encode(v) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (datetime, date, dtime)):
        return value.isoformat()
    if type(value).__module__.split(".")[0] in ("numpy", "torch") and callable(getattr(value, "tolist", None)):
        converted = value.tolist()
        if type(converted) is type(value):  # e.g. numpy.void: no plain equivalent
            raise StoreError(_not_encodable(value))
        return encode(converted)
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):  # a pydantic model (e.g. a textrobust Config)
        return encode(model_dump(mode="json"))
    raise StoreError(_not_encodable(value))


def _not_encodable(value: Any) -> str:
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    return (f"Cannot store a value of type {kind} ({value!r:.80}). Records, results and configurations must be "
            "JSON-like: dict, list, tuple, set, str, int, float, bool, None, dataclasses, texts, enums, paths, "
            "dates, pydantic models or numpy values. Convert it before recording.")


def _key(key: Any) -> str:
    """A mapping key as a JSON object key."""
    if isinstance(key, enum.Enum):
        return _key(key.value)
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    plain = encode(key) if isinstance(key, (int, float)) or type(key).__module__.split(".")[0] == "numpy" else None
    if isinstance(plain, (int, float)) and not isinstance(plain, bool):
        return str(plain)
    raise StoreError(f"Cannot store a mapping key of type {type(key).__qualname__} ({key!r:.80}); keys must be "
                     "str, int, float, bool or Enum.")


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def decode(kind: Any, data: Any) -> Any:
    """The value of type ``kind`` that :func:`encode` turned into ``data``."""
    origin = typing.get_origin(kind)
    if kind is Any or kind is object:
        return data
    if origin in (Union, types.UnionType):
        options = typing.get_args(kind)
        if data is None and type(None) in options:
            return None
        last: Exception | None = None
        for option in options:
            if option is type(None):
                continue
            try:
                return decode(option, data)
            except (TypeError, ValueError, KeyError, StoreError) as exc:
                last = exc
        raise StoreError(f"Cannot decode {data!r:.80} as {kind}: {last}")
    if origin is typing.Literal:
        return data
    if kind is float:
        return math.nan if data is None else float(data)
    if kind in (int, str, bool):
        if isinstance(data, bool) != (kind is bool) or (kind is not bool and not isinstance(data, kind)):
            if kind is int and isinstance(data, int) and not isinstance(data, bool):
                return data
            raise StoreError(f"Expected {kind.__name__}, got {data!r:.80}.")
        return data
    if kind is Text:
        return text_from_data(data)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return kind(data)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        if not isinstance(data, Mapping):
            raise StoreError(f"Expected an object for {kind.__name__}, got {data!r:.80}.")
        hints = _hints(kind)
        values = {}
        for f in dataclasses.fields(kind):
            if not f.init:
                continue
            if f.name in data:
                values[f.name] = decode(hints[f.name], data[f.name])
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise StoreError(f"The stored {kind.__name__} lacks the field '{f.name}'.")
        return kind(**values)
    if origin in (tuple, list, set, frozenset):
        args = typing.get_args(kind)
        if origin is tuple and args and (len(args) != 2 or args[1] is not Ellipsis):
            return tuple(decode(a, v) for a, v in zip(args, data, strict=True))
        item = args[0] if args else Any
        return origin(decode(item, v) for v in data)
    if origin in (dict, Mapping, typing.Mapping) or kind in (dict, Mapping):
        args = typing.get_args(kind)
        key_type, value_type = args if args else (str, Any)
        return {decode(key_type, k) if key_type is not str else k: decode(value_type, v) for k, v in data.items()}
    if kind in (tuple, list):
        return kind(data)
    raise StoreError(f"Cannot decode a record field of type {kind!r}.")


#: How :func:`flat_fields` writes a premise/hypothesis pair as one cell.
PAIR_SEPARATOR = " ||| "


def _is_text_data(value: Any) -> bool:
    return (isinstance(value, Mapping) and set(value) == {"columns", "frozen"} and isinstance(value["columns"], list)
            and all(isinstance(c, str) for c in value["columns"]))


_Leaf = tuple[tuple[str, ...], str, Any]  # (path, name, JSON-ready value)


def _leaves(value: Any, path: tuple[str, ...], prefix: str) -> list[_Leaf]:
    """The scalar and list leaves of a record (or of JSON data), each with its path and
    its name: a dataclass's fields by their own names (``prefix`` ahead when the dataclass
    sits in a mapping), a mapping's keys behind the mapping's name."""
    record = dataclasses.is_dataclass(value) and not isinstance(value, type)
    items = ([(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)] if record
             else [(str(k.value if isinstance(k, enum.Enum) else k), v) for k, v in value.items()])
    out: list[_Leaf] = []
    for key, item in items:
        where = (*path, key)
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(item, Text):
            out.append((where, name, PAIR_SEPARATOR.join(item.columns)))
        elif _is_text_data(item):
            out.append((where, name, PAIR_SEPARATOR.join(item["columns"])))
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            out.extend(_leaves(item, where, "" if record else name))  # a wrapped record: opened
        elif isinstance(item, Mapping):
            out.extend(_leaves(item, where, name))  # an empty mapping (no extras) adds no column
        else:
            out.append((where, name, encode(item)))
    return out


def flat_fields(value: Any) -> dict[str, Any]:
    """A record (a dataclass, or JSON data read back from a store) as one flat row.

    A record nested in a record is opened: its fields keep their own names. A field whose
    name a shallower field already has is dropped when it holds the same value (a record
    and the result it wraps both carry ``example_id`` and ``status``) and named otherwise
    by the shortest end of its dotted path that no other column has (``estimate.seconds``
    for the time of the estimate a result holds, beside the record's own ``seconds``). A
    mapping's entries are named ``<mapping>.<key>``. A text is
    its words (the sides of a pair joined by :data:`PAIR_SEPARATOR`); lists stay lists.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Inner:
    ...     example_id: str
    ...     label: int
    ...     original: Text
    ...     status: str
    ...     extras: dict
    >>> @dataclass(frozen=True)
    ... class Outer:
    ...     example_id: str
    ...     status: str
    ...     result: Inner
    >>> record = Outer("a", "ok", Inner("a", 1, Text.from_string("a fine film"), "failed", {"ppl": 3.0}))
    >>> flat_fields(record)  # doctest: +NORMALIZE_WHITESPACE
    {'example_id': 'a', 'status': 'ok', 'label': 1, 'original': 'a fine film', 'result.status': 'failed',
     'extras.ppl': 3.0}
    """
    leaves = _leaves(value, (), "")
    canonical: dict[str, tuple[tuple[str, ...], Any]] = {}
    for path, name, item in sorted(leaves, key=lambda leaf: len(leaf[0])):  # stable: shallowest first
        canonical.setdefault(name, (path, item))
    row: dict[str, Any] = {}
    for path, name, item in leaves:
        first_path, first_value = canonical[name]
        if path == first_path:
            row[name] = item
        elif item != first_value:
            row[_distinct_name(path, name, canonical.keys() | row.keys())] = item
    return row


def _distinct_name(path: tuple[str, ...], name: str, used: Collection[str]) -> str:
    """The shortest end of ``path`` (two keys or more, dotted) that is neither ``name`` nor
    a name in ``used``; the whole path when every shorter end is taken.

    >>> _distinct_name(("result", "estimate", "seconds"), "seconds", {"seconds"})
    'estimate.seconds'
    """
    for size in range(2, len(path)):
        candidate = ".".join(path[-size:])
        if candidate != name and candidate not in used:
            return candidate
    return ".".join(path)

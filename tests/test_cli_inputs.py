"""What a new user's input meets (issue 27): long texts under --length-policy and
--max-words, --split and bad labels on their own file, export formats and rows, a zoo
victim trained into the cache, a non-text handed to the query layer.

The commands run in-process on a toy keyword victim (``audit.run`` is wrapped so the
victim option resolves to it), over small files written by each test: fast and offline.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from textrobust import audit
from textrobust.audit.testing import keyword_scores
from textrobust.cli.app import app
from textrobust.victims.function import FunctionVictim

from cli_helpers import use_toy_victim  # noqa: E402

runner = CliRunner()


_use_toy_victim = use_toy_victim


def _csv(tmp_path: Path, rows: list[tuple[str, str]], name: str = "reviews.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(["text,label", *(f'"{text}",{label}' for text, label in rows)]) + "\n",
                    encoding="utf-8")
    return path


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())


LONG_AND_SHORT = [
    ("a good film with a fine cast", "positive"),  # row-1: 7 words
    ("good film", "positive"),  # row-2
    ("dull and slow from start to end", "negative"),  # row-3: 7 words
    ("dull", "negative"),  # row-4
    ("great", "positive"),  # row-5
    ("the plot is thin and the jokes fall flat", "negative"),  # row-6: 9 words
]


# ---- item 1: a rejected text is an error of the requested n, never replaced ----------------------
def test_length_policy_error_counts_rejected_texts_among_the_n_asked(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path, LONG_AND_SHORT)), "--max-words", "3",
                                 "--length-policy", "error", "--n", "3", "--out", str(out), "--quiet"],
                           terminal_width=200)
    assert result.exit_code == 0, result.output
    summary = _summary(out)["analyses"]["evaluate"]["summary"]
    # rows 1 and 3 are too long: two errors; row 2 is the one example scored (not rows 4 and 5)
    assert (summary["examples"], summary["errors"]) == (1, 2)
    assert summary["accuracy"] == 1.0
    assert _summary(out)["length_limit"]["rejected"] == ["row-1", "row-3"]


# ---- item 3: --max-words 0 is refused ------------------------------------------------------------
def test_max_words_zero_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    for value in ("0", "-1"):
        result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path, LONG_AND_SHORT)), "--max-words",
                                     value, "--out", str(tmp_path / "run"), "--quiet"], terminal_width=200)
        assert result.exit_code == 2, result.output
        assert "--max-words" in result.output and f"Got {value}" in result.output
        assert "from 1 to" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run" / "store.sqlite").exists()


# ---- item 4: truncated ids are those analysed; the report says how many were cut ---------------
def test_truncated_ids_list_only_the_analysed_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path, LONG_AND_SHORT)), "--max-words", "3",
                                 "--n", "2", "--out", str(out), "--quiet"], terminal_width=200)
    assert result.exit_code == 0, result.output
    limit = _summary(out)["length_limit"]
    assert limit["truncated"] == ["row-1"]  # not row-3 and row-6, which were not analysed
    assert _summary(out)["data"]["length_limit"] == {"max_words": 3, "policy": "truncate", "truncated": 1,
                                                     "rejected": 0}
    html = (out / "report.html").read_text()
    assert "1 analysed text(s) cut to their first 3 words" in html


# ---- item 7: a split the user's file does not have ----------------------------------------------
def test_a_split_missing_from_a_small_user_file_is_a_usage_error(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    path = _csv(tmp_path, LONG_AND_SHORT[:4])
    result = runner.invoke(app, ["evaluate", "--data", str(path), "--split", "test", "--out", str(tmp_path / "run"),
                                 "--quiet"], terminal_width=200)
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "--split" in message and "'test'" in message and "Splits with rows: all, train" in message
    assert "Traceback" not in message
    whole = runner.invoke(app, ["evaluate", "--data", str(path), "--out", str(tmp_path / "all"), "--quiet"],
                          terminal_width=200)
    assert whole.exit_code == 0, whole.output
    assert _summary(tmp_path / "all")["analyses"]["evaluate"]["summary"]["examples"] == 4


# ---- item 8: labels outside the mapping are bad rows ---------------------------------------------
HOSTILE_LABELS = [("a good film", "1"), ("dull and slow", "0"), ("a great cast", "5"), ("thin plot", "0"),
                  ("an odd one", "neutral"), ("good fun", "1")]


def test_unknown_labels_are_bad_rows_under_skip_bad_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    path = _csv(tmp_path, HOSTILE_LABELS)
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(path), "--skip-bad-rows", "--label-map",
                                 "0=negative,1=positive", "--out", str(out), "--quiet"], terminal_width=200)
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    assert "2 bad row(s) skipped (--skip-bad-rows)" in shown
    assert "row 3: unknown label '5'" in shown and "row 5: unknown label 'neutral'" in shown
    summary = _summary(out)
    assert summary["analyses"]["evaluate"]["summary"]["examples"] == 4
    assert summary["data"]["skipped_rows"]["count"] == 2
    assert "row 3: unknown label" in (out / "report.html").read_text()
    strict = runner.invoke(app, ["evaluate", "--data", str(path), "--label-map", "0=negative,1=positive",
                                 "--out", str(tmp_path / "strict"), "--quiet"], terminal_width=200)
    assert strict.exit_code == 2, strict.output
    message = " ".join(strict.output.split())
    assert "'5' (1 row)" in message and "row 5" in message and "--skip-bad-rows" in message
    assert "Traceback" not in message


# ---- item 2 and 21: export's format from --to, one flat row per record ---------------------------
def _stored_attack(folder: Path) -> None:
    from textrobust.analyses.attack.analysis import AttackRecord
    from textrobust.attack.results import AttackResult, Status
    from textrobust.records import encode
    from textrobust.store import RunStore
    from textrobust.text import Text

    text = Text.from_string("a dull film")
    result = AttackResult("row-1", 0, Status.FAILED, text, text, 0, 0, (0.9, 0.1), (0.9, 0.1), 7, 0.5)
    with RunStore(folder / "store.sqlite") as store:
        run = store.start_run("attack", {"settings": {"n": 2}}, seed=0)
        run.record("row-1", encode(AttackRecord("row-1", "failed", 7, 0.5, result)), position=0, seconds=0.5,
                   queries=7)
        run.record("row-2", {"error": "ValueError", "message": "boom", "traceback": "..."}, position=1,
                   failed=True)


def test_export_takes_its_format_from_the_file_name_or_refuses(tmp_path: Path) -> None:
    _stored_attack(tmp_path)
    for name, check in (("x.csv", lambda text: next(csv.reader([text.splitlines()[0]]))[:2] == ["id", "status"]),
                        ("x.jsonl", lambda text: json.loads(text.splitlines()[0])["id"] == "row-1"),
                        ("x.json", lambda text: [r["id"] for r in json.loads(text)] == ["row-1", "row-2"])):
        result = runner.invoke(app, ["export", str(tmp_path), "--to", str(tmp_path / name)], terminal_width=200)
        assert result.exit_code == 0, result.output
        assert check((tmp_path / name).read_text()), name
    unknown = runner.invoke(app, ["export", str(tmp_path), "--to", str(tmp_path / "x.txt")], terminal_width=200)
    assert unknown.exit_code == 2 and not (tmp_path / "x.txt").exists()
    message = " ".join(unknown.output.split())
    assert "--to" in message and "'x.txt'" in message and "--format csv, jsonl or json" in message
    forced = runner.invoke(app, ["export", str(tmp_path), "--to", str(tmp_path / "x.txt"), "--format", "csv"],
                           terminal_width=200)
    assert forced.exit_code == 0 and (tmp_path / "x.txt").read_text().startswith("id,status")
    clash = runner.invoke(app, ["export", str(tmp_path), "--to", str(tmp_path / "y.csv"), "--format", "jsonl"],
                          terminal_width=200)
    assert clash.exit_code == 2 and not (tmp_path / "y.csv").exists()
    assert "--format" in clash.output and "y.csv" in clash.output
    bad = runner.invoke(app, ["export", str(tmp_path), "--format", "xml"], terminal_width=200)
    assert bad.exit_code == 2 and "'xml'" in bad.output and "csv, jsonl or json" in bad.output


def test_export_writes_one_flat_row_per_record(tmp_path: Path) -> None:
    _stored_attack(tmp_path)
    result = runner.invoke(app, ["export", str(tmp_path), "--to", str(tmp_path / "rows.csv")], terminal_width=200)
    assert result.exit_code == 0, result.output
    with open(tmp_path / "rows.csv", newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        header = list(reader.fieldnames or [])
    assert len(header) == len(set(header))  # no column twice
    assert header[:2] == ["id", "status"] and "failed" not in header and "example_id" not in header
    assert not any(c.startswith("result") for c in header)  # the record's result is opened, not a blob
    first, second = rows
    assert (first["id"], first["status"], first["original"], first["queries"]) == ("row-1", "failed", "a dull film",
                                                                                    "7")
    assert first["original_probabilities"] == "0.9 0.1"
    assert (second["id"], second["status"], second["error"], second["message"]) == ("row-2", "error", "ValueError",
                                                                                     "boom")
    assert not any(value.startswith(("{", "[")) for row in rows for value in row.values())
    runner.invoke(app, ["export", str(tmp_path), "--to", str(tmp_path / "rows.jsonl")])
    lines = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert not any(isinstance(v, dict) for line in lines for v in line.values())


def test_evaluate_exports_one_row_per_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path, LONG_AND_SHORT)), "--batch-size", "4",
                                 "--out", str(out), "--quiet"], terminal_width=200)
    assert result.exit_code == 0, result.output
    exported = runner.invoke(app, ["export", str(out), "--to", str(tmp_path / "eval.jsonl")])
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in (tmp_path / "eval.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [f"row-{i}" for i in range(1, 7)]
    assert rows[1]["correct"] is True and rows[1]["predicted"] == 1 and rows[1]["probabilities"] == [0.2, 0.8]


# ---- item 18: a zoo victim trained into the cache is found by name -------------------------------
def test_a_zoo_name_trained_into_the_cache_resolves_like_default(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    import textrobust.zoo as zoo
    from textrobust.data.examples import Dataset, Example
    from textrobust.text import Text

    monkeypatch.setenv("TEXTROBUST_CACHE", str(tmp_path / "cache"))
    examples = tuple(Example(f"e{i}", Text.from_string(text), int(label == "positive"))
                     for i, (text, label) in enumerate(LONG_AND_SHORT * 2))
    toy = Dataset("toy", examples, ("negative", "positive"))
    real = zoo.train_victim
    trained_into: list[Path] = []

    def tiny(arch: str, data: Any, *, out: Path, **kwargs: Any) -> Any:  # a tiny model, in well under a second
        trained_into.append(out)
        return real(arch, zoo.TrainingData(toy, toy.take(4), toy.take(4)), out=out,
                    config={"embed_dim": 8, "hidden": 6},
                    training={"epochs": 1, "extra_words": 0, "max_length": 16, "vectors": "random"}, seed=0)

    monkeypatch.setattr(zoo, "train_victim", tiny)
    trained = runner.invoke(app, ["train", "lstm"], terminal_width=200)
    assert trained.exit_code == 0, trained.output
    assert trained_into == [tmp_path / "cache" / "victims" / "lstm"]
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--victim", "lstm", "--data", str(_csv(tmp_path, LONG_AND_SHORT)),
                                 "--out", str(out), "--quiet"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert _summary(out)["victim"]["path"] == str(tmp_path / "cache" / "victims" / "lstm")
    missing = runner.invoke(app, ["evaluate", "--victim", "bow", "--out", str(tmp_path / "bow"), "--quiet"],
                            terminal_width=200)
    assert missing.exit_code == 2, missing.output
    assert "textrobust train bow" in " ".join(missing.output.split())


# ---- item 12: a non-text given to the query layer -------------------------------------------------
def test_query_layer_names_a_non_text_item_by_index_and_type() -> None:
    from textrobust.errors import ConfigError
    from textrobust.victims.query import QueryLayer

    layer = QueryLayer(FunctionVictim(keyword_scores, ("negative", "positive")))
    with pytest.raises(ConfigError, match=r"item 0 of the 1 texts is of type int \(5\)"):
        layer.probabilities([5])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r"item 1 of the 2 texts is of type NoneType"):
        layer.probabilities(["fine", None])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="list of texts"):
        layer.probabilities(5)  # type: ignore[arg-type]
    assert layer.probabilities(["a good film"]).shape == (1, 2)

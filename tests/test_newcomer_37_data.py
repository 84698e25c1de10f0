"""Issue 37, items 10 and 14 (data): one round of bad rows reports every kind (the
file's own and the labels the victim lacks); a misspelt class in --label-map is named as
such; TOML [data] takes id_column, max_words and length_policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_helpers import use_toy_victim
from textrobust.audit.labels import align_labels, load_aligned
from textrobust.audit.sources import DataSource
from textrobust.cli.app import app
from textrobust.data.examples import Dataset, Example
from textrobust.errors import ConfigError, DataError
from textrobust.text import Text

runner = CliRunner()
ROWS = ["a good film,positive", ",negative", "dull and slow,negative", "a great story,", "fine acting,positive",
        "the plot is thin,negative", "weak script,negative", "a superb cast,meh", "one great scene,positive"]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _csv(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "reviews.csv"
    path.write_text("text,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_one_round_reports_every_kind_of_bad_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    data = _csv(tmp_path, ROWS)
    result = runner.invoke(app, ["audit", "--analyses", "evaluate", "--data", str(data), "--out",
                                 str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2
    text = _flat(result.output)
    assert "3 rows of" in text and "2 that the file itself does not give" in text and "1 whose label" in text
    for row in ("row 2: empty text", "row 4: missing label", "row 8: unknown label 'meh'"):
        assert row in text
    assert "--skip-bad-rows" in text and "on_bad_rows" not in text
    skipped = runner.invoke(app, ["audit", "--analyses", "evaluate", "--data", str(data), "--out",
                                  str(tmp_path / "run"), "--quiet", "--skip-bad-rows"])
    assert skipped.exit_code == 0, skipped.output  # the same three rows skipped, the rest audited


def test_bad_rows_of_one_kind_keep_their_own_message(tmp_path: Path) -> None:
    source = DataSource.of(str(_csv(tmp_path, ROWS[:7])))  # empty text, missing label; no unknown label
    with pytest.raises(DataError, match=r"2 of 7 rows .* cannot be used") as caught:
        load_aligned(source, ("negative", "positive"))
    assert [b.row for b in caught.value.bad_rows] == [2, 4]
    only_labels = DataSource.of(str(_csv(tmp_path, [ROWS[0], ROWS[2], ROWS[7], ROWS[8]])))
    with pytest.raises(ConfigError, match="label that is not one of the victim's classes"):
        load_aligned(only_labels, ("negative", "positive"))  # 'meh' alone: align_labels' own message


def test_a_misspelt_class_in_the_label_map_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = Dataset("d", (Example("a", Text.from_string("good"), 0), Example("b", Text.from_string("bad"), 1)),
                   ("fresh", "rotten"))
    with pytest.raises(ConfigError, match=r"--label-map maps 'rotten' to the class 'negativ', which is not one of "
                                          r"the victim's classes \(negative, positive\) \(did you mean 'negative'\?\)"):
        align_labels(data, ("negative", "positive"), label_map={"fresh": "positive", "rotten": "negativ"})
    use_toy_victim(monkeypatch)
    path = tmp_path / "fresh.csv"
    path.write_text("text,label\na good film,fresh\na dull film,rotten\n", encoding="utf-8")
    result = runner.invoke(app, ["audit", "--analyses", "evaluate", "--data", str(path), "--label-map",
                                 "fresh=positive,rotten=negativ", "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2
    text = _flat(result.output)
    assert "to the class 'negativ', which is not one of the victim's classes" in text
    assert "'rotten' (1 row)" not in text and "unknown label 'rotten'" not in text  # the data's label is not blamed


def test_a_misspelt_class_and_bad_rows_are_said_in_one_round(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    result = runner.invoke(app, ["audit", "--analyses", "evaluate", "--data", str(_csv(tmp_path, ROWS)),
                                 "--label-map", "negative=negativ", "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2
    text = _flat(result.output)
    assert "to the class 'negativ'" in text and "Also, 2 of 9 rows" in text and "row 4: missing label" in text


def test_toml_data_takes_id_column_max_words_and_length_policy(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    data = tmp_path / "ids.csv"
    data.write_text("key,text,label\nr1,a good film,positive\nr2,dull and slow from start to end,negative\n"
                    "r3,a great story,positive\n", encoding="utf-8")
    config = tmp_path / "audit.toml"
    config.write_text(f'[data]\nname = "{data}"\nid_column = "key"\nmax_words = 4\nlength_policy = "error"\n'
                      f'[run]\nout = "{tmp_path / "run"}"\n[analyses.evaluate]\n', encoding="utf-8")
    result = runner.invoke(app, ["audit", "--config", str(config), "--quiet"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["length_limit"]["max_words"] == 4 and summary["length_limit"]["policy"] == "error"
    from textrobust.store import RunStore

    with RunStore(tmp_path / "run" / "store.sqlite") as store:
        ids = {row.example_id for row in store.latest_run("evaluate").results()}
    assert "r2" in ids and any(i.startswith("batch:r1:") for i in ids)  # the key column's ids; r2 too long
    config.write_text(f'[data]\nname = "{data}"\nmax_words = 0\n', encoding="utf-8")
    bad = runner.invoke(app, ["audit", "--config", str(config), "--quiet"])
    assert bad.exit_code == 2
    assert "The key 'max_words' in [data] of" in _flat(bad.output) and "Got 0 instead" in _flat(bad.output)
    config.write_text(f'[data]\nname = "{data}"\nlength_policy = "cut"\n', encoding="utf-8")
    assert "The key 'length_policy' in [data] of" in _flat(runner.invoke(app, ["audit", "--config",
                                                                               str(config)]).output)

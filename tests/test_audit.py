"""The audit orchestrator on test doubles: one store, typed records, resume, labels,
failures counted by the store's own flag, reports written."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from textrobust import audit
from textrobust.analyses import ANALYSES
from textrobust.analyses.protocol import Analysis, Failure, Record, Settings, Summary, WorkerContext, counts
from textrobust.audit.labels import align_labels, parse_label_map
from textrobust.data.examples import Dataset, Example
from textrobust.errors import ConfigError, TextRobustError
from textrobust.records import decode, encode
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim


def _score(texts: list[str]) -> list[list[float]]:
    """'good' -> positive; everything else negative."""
    return [[0.2, 0.8] if "good" in t else [0.9, 0.1] for t in texts]


def _victim() -> FunctionVictim:
    return FunctionVictim(_score, ("negative", "positive"))


def _data(n: int = 6, names: tuple[str, ...] = ("negative", "positive")) -> Dataset:
    examples = tuple(Example(f"e{i}", Text.from_string(f"a {'good' if i % 2 else 'bad'} film {i}"), i % 2)
                     for i in range(n))
    return Dataset("toy", examples, names, split="test")


class CountSettings(Settings):
    n: int | None = None
    fail_on: str | None = None


@dataclass(frozen=True)
class CountRecord(Record):
    words: int
    predicted: int
    text: Text


@dataclass(frozen=True)
class CountSummary(Summary):
    mean_words: float


class CountAnalysis(Analysis):
    """A toy analysis: counts words and asks the victim once per example."""

    name = "count"
    title = "Word count"
    paper = "none (a test double)"
    settings_type = CountSettings
    record_type = CountRecord

    def worker(self, context: WorkerContext) -> Callable[[Any], Record]:
        def analyse(example: Example) -> CountRecord:
            if example.id == self.settings.fail_on:
                raise ValueError(f"planted failure on {example.id}")
            probs = context.layer.probabilities([example.text])
            return CountRecord(example.id, "ok", 1, 0.0, len(example.text.words), int(probs[0].argmax()),
                               example.text)

        return analyse

    def summarise(self, records: Sequence[Record], failures: Sequence[Failure]) -> CountSummary:
        words = [r.words for r in records]  # type: ignore[attr-defined]
        return CountSummary(**counts(records, failures), mean_words=sum(words) / len(words) if words else float("nan"))


def test_records_round_trip_through_the_codec() -> None:
    record = CountRecord("e1", "ok", 3, 0.5, 4, 1, Text.from_string("a good film, really").freeze([0]))
    data = json.loads(json.dumps(encode(record)))
    back = decode(CountRecord, data)
    assert back == record and back.text.frozen == record.text.frozen


def test_an_audit_writes_one_store_typed_records_and_reports(tmp_path: Path) -> None:
    result = audit.run(_victim(), _data(), [CountAnalysis(), ANALYSES.get("evaluate")({"batch_size": 4})],
                       tmp_path, progress=False)
    count = result["count"]
    assert count.summary.units == 6 and count.summary.errors == 0
    assert all(isinstance(r, CountRecord) for r in count.records)
    assert result["evaluate"].summary.accuracy == 1.0
    for name in ("store.sqlite", "summary.json", "report.json"):
        assert (tmp_path / name).is_file()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["analyses"]["evaluate"]["summary"]["accuracy"] == 1.0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["schema"] == "textrobust.report/1"
    assert [a["name"] for a in report["analyses"]] == ["count", "evaluate"]


def test_failures_are_counted_from_the_store_flag_and_resume_recomputes_nothing(tmp_path: Path) -> None:
    first = audit.run(_victim(), _data(), [CountAnalysis({"fail_on": "e2", "n": 4})], tmp_path, progress=False)
    assert first["count"].summary.errors == 1 and first["count"].summary.ok == 3
    assert first["count"].failures[0].error == "ValueError"
    again = audit.run(_victim(), _data(), [CountAnalysis({"fail_on": "e2", "n": 6})], tmp_path, resume=True,
                      progress=False)
    assert again["count"].computed == 2 and again["count"].resumed == 4
    assert again["count"].summary.units == 6


def test_resume_refuses_a_different_configuration(tmp_path: Path) -> None:
    audit.run(_victim(), _data(), [CountAnalysis({"fail_on": "e1"})], tmp_path, progress=False)
    with pytest.raises(TextRobustError, match="fail_on"):
        audit.run(_victim(), _data(), [CountAnalysis({"fail_on": "e3"})], tmp_path, resume=True, progress=False)


def test_a_victim_failing_on_every_call_stops_the_run_with_one_message(tmp_path: Path) -> None:
    def broken(texts: list[str]) -> Any:
        raise RuntimeError("the model server is down")

    with pytest.raises(TextRobustError, match="in a row failed.*model server is down"):
        audit.run(FunctionVictim(broken, ("negative", "positive")), _data(30), [CountAnalysis()], tmp_path,
                  progress=False, max_consecutive_failures=5)


def test_labels_are_matched_by_name_not_by_position() -> None:
    data = _data(4, names=("positive", "negative"))
    aligned = align_labels(data, ("negative", "positive"))
    assert aligned.label_names == ("negative", "positive")
    assert [e.label for e in aligned] == [1 - e.label for e in data]


def test_unknown_labels_name_both_lists_and_the_option() -> None:
    with pytest.raises(ConfigError, match=r"\['fresh', 'rotten'\].*\['negative', 'positive'\].*--label-map"):
        align_labels(_data(2, names=("fresh", "rotten")), ("negative", "positive"))
    mapped = align_labels(_data(2, names=("fresh", "rotten")), ("negative", "positive"),
                          label_map=parse_label_map("fresh=positive,rotten=negative"))
    assert [e.label for e in mapped] == [1, 0]
    with pytest.raises(ConfigError, match="3 vs 2|classes"):
        align_labels(_data(3, names=("negative", "neutral", "positive")), ("negative", "positive"))


def test_three_data_labels_on_a_two_class_victim_is_an_error_before_work(tmp_path: Path) -> None:
    data = _data(3, names=("negative", "neutral", "positive"))
    with pytest.raises(ConfigError, match="neutral"):
        audit.run(_victim(), data, [CountAnalysis()], tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / "store.sqlite").exists()


def test_label_map_syntax_errors_name_the_option() -> None:
    with pytest.raises(ConfigError, match="--label-map"):
        parse_label_map("fresh:positive")


def test_an_empty_selection_gives_nan_not_zero(tmp_path: Path) -> None:
    result = audit.run(_victim(), _data(), [ANALYSES.get("evaluate")({"n": 0})], tmp_path, progress=False)
    summary = result["evaluate"].summary
    assert summary.examples == 0 and summary.accuracy != summary.accuracy  # NaN
    report = json.loads((tmp_path / "report.json").read_text())
    accuracy = next(h for h in report["analyses"][0]["headline"] if h["label"] == "clean accuracy")
    assert accuracy["value"] is None


def test_out_naming_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        audit.run(_victim(), _data(), [CountAnalysis()], target, progress=False)


def test_the_report_is_rebuilt_from_the_store(tmp_path: Path) -> None:
    audit.run(_victim(), _data(), [ANALYSES.get("evaluate")()], tmp_path, progress=False)
    (tmp_path / "report.json").unlink()
    html, data = audit.rebuild_report(tmp_path)
    assert data.is_file() and json.loads(data.read_text())["analyses"][0]["name"] == "evaluate"


def _records(result: Any, name: str) -> list[Any]:
    return sorted(((r.example_id, encode(r)) for r in result[name].records), key=lambda pair: pair[0])


@pytest.mark.parametrize("executor", ["process", pytest.param("ray", marks=pytest.mark.heavy)])
def test_executors_give_identical_records(tmp_path: Path, executor: str) -> None:
    """The same audit under local and another executor (2 workers): identical records,
    each written once by the driver."""
    from textrobust.audit.testing import keyword_victim

    if executor == "ray":
        pytest.importorskip("ray")
    # the registered analysis (Ray actors cannot import classes defined in a test file)
    chosen = {"evaluate": {"batch_size": 3}}
    local = audit.run(keyword_victim(), _data(8), chosen, tmp_path / "local", progress=False)
    other = audit.run(keyword_victim(), _data(8), chosen, tmp_path / executor, executor=executor,
                      workers=2, progress=False)
    strip = [(i, {k: v for k, v in r.items() if k != "seconds"}) for i, r in _records(local, "evaluate")]
    assert len(strip) == 3
    assert strip == [(i, {k: v for k, v in r.items() if k != "seconds"}) for i, r in _records(other, "evaluate")]
    assert other.report["run"]["executor"] == executor and other.report["run"]["workers"] == 2


def test_a_killed_worker_loses_only_its_units_and_resume_finishes_them(tmp_path: Path) -> None:
    from textrobust.audit.testing import dying_victim

    flag = tmp_path / "die-now"
    flag.write_text("1")
    examples = tuple(Example(f"e{i}", Text.from_string("a film that will die" if i == 5 else f"a good film {i}"),
                             1) for i in range(12))
    data = Dataset("toy", examples, ("negative", "positive"), split="test")
    chosen = {"evaluate": {"batch_size": 1}}
    with pytest.raises(TextRobustError, match="--resume"):
        audit.run(dying_victim(str(flag)), data, chosen, tmp_path / "out", executor="process", workers=2,
                  progress=False)
    from textrobust.store import RunStore

    with RunStore(tmp_path / "out" / "store.sqlite") as store:
        stored = {r.example_id for r in store.latest_run("evaluate").results()}
    assert "batch:e5:e5:1" not in stored and 0 < len(stored) < 12
    flag.unlink()
    again = audit.run(dying_victim(str(flag)), data, chosen, tmp_path / "out", executor="process", workers=2,
                      resume=True, progress=False)
    summary = again["evaluate"].summary
    assert summary.units == 12 and summary.errors == 0 and again["evaluate"].computed == 12 - len(stored)


def test_a_python_resume_continues_with_the_stored_settings_under_the_given_ones(tmp_path: Path) -> None:
    from textrobust.audit.run_folder import resumed_analyses, stored_settings

    audit.run(_victim(), _data(), {"evaluate": {"n": 2, "batch_size": 8}}, tmp_path, progress=False, report=False)
    assert stored_settings(tmp_path, "evaluate") == {"n": 2, "batch_size": 8}
    assert stored_settings(tmp_path, "attack") == {} and stored_settings(tmp_path / "none", "evaluate") == {}
    # the command line passes only the options typed; Python passes the settings it names
    again = audit.run(_victim(), _data(), {"evaluate": {"n": 4}}, tmp_path, progress=False, report=False,
                      resume=True)
    assert again["evaluate"].settings == {"n": 4, "batch_size": 8}
    assert again["evaluate"].resumed == 1  # the stored unit (a batch of up to 8 texts) is not recomputed
    assert resumed_analyses(tmp_path, ["evaluate"]) == {"evaluate": {"n": 4, "batch_size": 8}}
    objects = [ANALYSES.get("evaluate")()]
    assert resumed_analyses(tmp_path, objects) is objects  # explicit objects are kept


def test_a_run_stored_before_a_legacy_setting_existed_resumes_with_its_old_value(tmp_path: Path) -> None:
    import sqlite3

    from textrobust.audit.run_folder import LEGACY_SETTINGS, resumed_analyses

    first = audit.run(_victim(), _data(), {"pr": {"n": 1, "samples": 5, "candidates": "paper"}}, tmp_path,
                      progress=False, report=False)
    # make the store look like one written before 'candidates' existed
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        (config,) = db.execute("SELECT config_json FROM runs WHERE run_id = ?", (first["pr"].run_id,)).fetchone()
        old = json.loads(config)
        del old["settings"]["candidates"]
        db.execute("UPDATE runs SET config_json = ? WHERE run_id = ?", (json.dumps(old), first["pr"].run_id))
    assert LEGACY_SETTINGS["candidates"] == "paper"
    assert resumed_analyses(tmp_path, {"pr": {"n": 2}})["pr"]["candidates"] == "paper"
    again = audit.run(_victim(), _data(), {"pr": {"n": 2}}, tmp_path, progress=False, report=False, resume=True)
    assert again["pr"].run_id == first["pr"].run_id and again["pr"].settings["candidates"] == "paper"
    with pytest.raises(TextRobustError, match="candidates"):  # the old run used the paper's: not validated
        audit.run(_victim(), _data(), {"pr": {"candidates": "validated"}}, tmp_path, progress=False, report=False,
                  resume=True)

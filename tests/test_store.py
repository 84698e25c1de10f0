"""Tests of the run store: round trips, exports, errors, resume rules, a real ``kill -9``."""

from __future__ import annotations

import csv
import dataclasses
import enum
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import textrobust
from textrobust.config import Config
from textrobust.errors import StoreError, TextRobustError
from textrobust.store import (
    SCHEMA_VERSION,
    ResultRow,
    RunStatus,
    RunStore,
    config_differences,
)
from textrobust.records import decode, encode
from textrobust.text import Text
from textrobust.versions import package_versions


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass(frozen=True)
class Outcome:
    label: int
    scores: tuple[float, ...]


class SearchConfig(Config):
    beam: int = 5


def test_record_then_read_back_in_position_order_with_conversions(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {"n": 3, "search": {"beam": 5}}, seed=7)
        run.record(
            "b",
            {
                "numpy_int": np.int64(3),
                "numpy_array": np.array([0.5, np.nan]),
                "outcome": Outcome(1, (0.25, 0.75)),
                "colour": Colour.RED,
                "file": Path("/tmp/x.txt"),
                "text": Text.from_string("A fine film."),
                "nan": float("nan"),
            },
            position=1,
            seconds=0.5,
            queries=12,
        )
        run.record("a", {"ok": True}, position=0)
        rows = run.results()
    assert [r.example_id for r in rows] == ["a", "b"]
    assert rows[0] == ResultRow("a", 0, {"ok": True}, rows[0].created_at, None, None, False)
    assert rows[1].payload == {
        "numpy_int": 3,
        "numpy_array": [0.5, None],
        "outcome": {"label": 1, "scores": [0.25, 0.75]},
        "colour": "red",
        "file": "/tmp/x.txt",
        "text": {"columns": ["A fine film."], "frozen": []},
        "nan": None,
    }
    assert (rows[1].seconds, rows[1].queries, rows[1].failed) == (0.5, 12, False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rows[0].position = 5  # type: ignore[misc]


def test_run_metadata_survives_reopening_and_finish_stores_summary(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "folder" / "runs.sqlite"  # parents are created
    with RunStore(path) as store:
        run = store.start_run("evaluate", SearchConfig(beam=3), seed=11, run_id="eval-1")
        run.record("x", {"correct": False}, position=0)
        assert run.status is RunStatus.RUNNING
        assert store.journal_mode == "wal"
    with RunStore(path) as store:
        run = store.open_run("eval-1")
        assert (run.kind, run.seed, run.config) == ("evaluate", 11, {"beam": 3})
        assert run.versions["python"] == package_versions()["python"]
        assert "numpy" in run.versions
        assert run.done_ids() == {"x"}
        run.finish({"accuracy": np.float32(0.5), "n": 1})
        assert run.status is RunStatus.FINISHED
        assert run.finished_at is not None
        assert run.summary() == {"accuracy": 0.5, "n": 1}
        assert store.latest_run("evaluate").run_id == "eval-1"
        assert store.latest_run("attack") is None
        with pytest.raises(StoreError, match="No run 'nope'.*eval-1"):
            store.open_run("nope")
        with pytest.raises(StoreError, match="already exists"):
            store.start_run("evaluate", {}, seed=0, run_id="eval-1")


def test_export_jsonl_and_csv_contents(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {"n": 2}, seed=0, run_id="r1")
        run.record("e2", {"success": False, "words": None}, position=1, seconds=0.25, queries=3)
        run.record(
            "e1",
            {"success": True, "changes": {"2": ["good", "fine"]}, "position": 9},
            position=0,
            seconds=1.5,
            queries=40,
        )
        assert run.export_jsonl(tmp_path / "out" / "r.jsonl") == 2
        assert run.export_csv(tmp_path / "r.csv") == 2

    # one flat row per result (issue 27): id and status first, nested mappings opened into
    # dotted columns, the store's queries and seconds last; no column twice
    lines = [json.loads(x) for x in (tmp_path / "out" / "r.jsonl").read_text().splitlines()]
    assert lines == [
        {"id": "e1", "status": "ok", "success": True, "changes.2": ["good", "fine"], "position": 9,
         "queries": 40, "seconds": 1.5},
        {"id": "e2", "status": "ok", "success": False, "words": None, "queries": 3, "seconds": 0.25},
    ]

    with open(tmp_path / "r.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        header = reader.fieldnames
    assert header == ["id", "status", "success", "changes.2", "position", "queries", "seconds", "words"]
    assert rows[0]["id"] == "e1" and rows[0]["position"] == "9"
    assert json.loads(rows[0]["changes.2"]) == ["good", "fine"]
    assert rows[0]["queries"] == "40"
    assert rows[1]["words"] == "" and rows[1]["changes.2"] == "" and rows[1]["success"] == "False"
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temporary files


def test_duplicate_example_id_is_an_error_unless_overwrite(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("evaluate", {}, seed=0)
        run.record("e", {"v": 1}, position=0)
        with pytest.raises(StoreError, match="'e' already has a result.*overwrite=True"):
            run.record("e", {"v": 2}, position=0)
        assert run.result("e").payload == {"v": 1}
        run.record("e", {"v": 3}, position=0, overwrite=True)
        assert run.result("e").payload == {"v": 3}
        assert len(run) == 1


def test_bad_record_arguments_name_the_parameter(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("evaluate", {}, seed=0)
        with pytest.raises(StoreError, match="'position'.*int >= 0.*-1"):
            run.record("e", {}, position=-1)
        with pytest.raises(StoreError, match="'payload'.*mapping.*list"):
            run.record("e", [1, 2], position=0)  # type: ignore[arg-type]
        with pytest.raises(StoreError, match="Cannot store a value of type builtins.object"):
            run.record("e", {"x": object()}, position=0)
        with pytest.raises(StoreError, match="'seed'.*int"):
            store.start_run("evaluate", {}, seed="1")  # type: ignore[arg-type]
        assert run.done_ids() == set()


def test_garbage_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    garbage = b"this is not an sqlite database\n" * 200
    path.write_bytes(garbage)
    with pytest.raises(StoreError, match="not a readable textrobust run store") as info:
        RunStore(path)
    assert isinstance(info.value, TextRobustError)
    assert path.read_bytes() == garbage


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE songs (title TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a textrobust run store.*songs"):
        RunStore(path)


def test_newer_or_unknown_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    RunStore(path).close()
    conn = sqlite3.connect(path)
    newer = str(SCHEMA_VERSION + 1)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (newer,))
    conn.commit()
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}.*newer"):
        RunStore(path)
    conn.execute("UPDATE meta SET value = 'banana' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="unknown schema version"):
        RunStore(path)


def test_folder_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a folder"):
        RunStore(tmp_path)


def test_resume_refuses_changed_config_naming_old_and_new_values(tmp_path: Path) -> None:
    config = {"n": 10, "victim": "bow", "search": {"beam": 5, "budget": 100}}
    with RunStore(tmp_path / "runs.sqlite") as store:
        first = store.start_run("attack", config, seed=3)
        changed = {"n": 10, "victim": "cnn", "search": {"beam": 5, "budget": 200}}
        with pytest.raises(StoreError) as info:
            store.resume_or_start("attack", changed, seed=4, resume=True)
    message = str(info.value)
    assert first.run_id in message
    assert 'victim: stored "bow", now "cnn"' in message
    assert "search.budget: stored 100, now 200" in message
    assert "seed: stored 3, now 4" in message
    assert "search.beam" not in message and "n:" not in message


def test_resume_allows_resumable_keys_and_logs_the_change(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        first = store.start_run("attack", {"n": 10, "victim": "bow"}, seed=3)
        first.record("a", {"ok": 1}, position=0)
        first.finish({"done": 1})
        store.start_run("evaluate", {"n": 10}, seed=3)  # another kind does not interfere
        resumed = store.resume_or_start("attack", {"n": 50, "victim": "bow"}, seed=3, resume=True)
        assert resumed.run_id == first.run_id and resumed.resumed
        assert resumed.config == {"n": 50, "victim": "bow"}
        assert resumed.status is RunStatus.RUNNING and resumed.finished_at is None
        assert resumed.done_ids() == {"a"}
        (log,) = resumed.artefact("resumes")
        assert log["config_changes"] == {"n": [10, 50]} and log["results_before"] == 1
        nested = store.start_run("attack", {"n": 1, "data": {"n": 5}}, seed=0)
        again = store.resume_or_start(
            "attack", {"n": 1, "data": {"n": 6}}, seed=0, resume=True, resumable_keys=["data"]
        )
        assert again.run_id == nested.run_id


def test_without_resume_a_new_run_starts_and_old_results_are_kept(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        fresh = store.resume_or_start("attack", {"n": 2}, seed=0, resume=True)
        assert not fresh.resumed  # nothing to resume: a new run
        fresh.record("a", {"ok": 1}, position=0)
        other = store.resume_or_start("attack", {"n": 2}, seed=0, resume=False)
        assert other.run_id != fresh.run_id and other.done_ids() == set()
        assert store.open_run(fresh.run_id).done_ids() == {"a"}
        assert [r.run_id for r in store.runs("attack")] == [fresh.run_id, other.run_id]
        assert store.latest_run("attack").run_id == other.run_id


def test_a_second_connection_sees_each_record_immediately(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as writer, RunStore(path) as reader:
        run = writer.start_run("evaluate", {}, seed=0)
        for i in range(3):
            run.record(f"e{i}", {"i": i}, position=i)
            assert reader.open_run(run.run_id).done_ids() == {f"e{j}" for j in range(i + 1)}


def test_the_store_encodes_with_the_records_codec_and_config_differences() -> None:
    assert encode(SearchConfig(beam=2)) == {"beam": 2}
    pair = Text.from_pair("A man.", "A person.")
    assert encode(pair) == {"columns": ["A man.", "A person."], "frozen": list(range(2))}
    assert encode({np.int32(4): np.bool_(True), "s": {3, 1}, True: 1}) == {"4": True, "s": [1, 3], "true": 1}
    assert encode([float("inf"), np.float64("nan"), np.array([[1, 2]])]) == [None, None, [[1, 2]]]
    assert encode({"e": {Colour.RED}, "when": __import__("datetime").date(2026, 1, 2)}) == {"e": ["red"],
                                                                                            "when": "2026-01-02"}
    with pytest.raises(StoreError, match="mapping key"):
        encode({(1, 2): 3})
    with pytest.raises(StoreError, match="Cannot store a value of type builtins.object"):
        encode({"x": object()})
    assert config_differences({"a": 1, "b": {"c": 2}}, {"b": {"c": 2, "d": 1}}) == {
        "a": (1, "<absent>"),
        "b.d": ("<absent>", 1),
    }


def test_store_and_versions_do_not_import_heavy_packages() -> None:
    code = (
        "import sys, textrobust.store, textrobust.versions as v;"
        "v.package_versions();"
        "print(sorted(m for m in ('torch','transformers','spacy','nltk','pandas','numpy',"
        "'sentence_transformers','sklearn','rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@dataclasses.dataclass(frozen=True)
class TextRecord:
    example_id: str
    text: Text
    pair: Text | None = None


def test_a_row_with_texts_in_the_old_store_encoding_still_decodes(tmp_path: Path) -> None:
    # written before one codec: the store's own converter kept a text as its string and a
    # pair as {column: string}; the records codec keeps columns and frozen positions
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {}, seed=0)
        run.record("old", {"example_id": "old", "text": "A fine film.",
                           "pair": {"premise": "A man sleeps.", "hypothesis": "A person rests."}}, position=0)
        run.record("new", encode(TextRecord("new", Text.from_string("A fine film.").freeze([1]))), position=1)
        old, new = (decode(TextRecord, row.payload) for row in run.results())
    assert old.text == Text.from_string("A fine film.") and old.pair is not None
    assert old.pair == Text.from_pair("A man sleeps.", "A person rests.")  # premise frozen, as from_pair does
    assert new == TextRecord("new", Text.from_string("A fine film.").freeze([1]))
    assert encode(decode(TextRecord, encode(old))) == encode(old)


_CHILD = """
import sys, time
from textrobust.store import RunStore

run = RunStore(sys.argv[1]).open_run(sys.argv[2])
for i in range(200):
    time.sleep(0.01)
    run.record(f"ex-{i:03d}", {"square": i * i, "pid": __import__("os").getpid()}, position=i)
print("finished", flush=True)
"""


def _count(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    finally:
        conn.close()


def test_kill_9_loses_nothing_recorded_and_resume_sees_every_record(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    config = {"n": 200, "victim": "toy"}
    with RunStore(path) as store:
        run_id = store.start_run("attack", config, seed=5).run_id
    env = dict(os.environ)
    src = str(Path(textrobust.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), run_id], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while _count(path) < 40:
            if child.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"child ended or stalled early: {child.communicate()[1].decode()}")
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL

    with RunStore(path) as store:
        run = store.resume_or_start("attack", config, seed=5, resume=True)
        assert run.run_id == run_id and run.status is RunStatus.RUNNING
        before = {r.example_id: r for r in run.results()}
        assert 40 <= len(before) < 200 and run.done_ids() == set(before)
        assert all(r.payload["pid"] == child.pid for r in before.values())
        for i in range(200):  # the rest, as the audit resumes: the done ids are skipped
            if f"ex-{i:03d}" not in before:
                run.record(f"ex-{i:03d}", {"square": i * i, "pid": os.getpid()}, position=i)
        after = run.results()
    assert [r.position for r in after] == list(range(200))
    for row in after:
        if row.example_id in before:  # nothing recorded was lost or changed
            assert row == before[row.example_id]
        assert row.payload["square"] == row.position**2

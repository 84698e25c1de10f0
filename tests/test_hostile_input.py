"""Hostile input: a CSV of real-world mess, corrupt victim folders and stores.

Every bad row is reported with its row number, every good row is analysed, nothing is
lost, and no input ends in a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textrobust.cli.app import app
from textrobust.errors import VictimError

runner = CliRunner()
LONG_WORDS = 50_000


def hostile_csv(folder: Path) -> Path:
    """HTML and script tags, empty and whitespace rows, a 50k-word row, emoji, right-to-left
    text, a NUL byte, invalid UTF-8, CRLF line ends, a label outside the set, a duplicate id."""
    rows = [
        b"id,text,label\r\n",
        b'1,"<script>alert(1)</script> a fine film",positive\r\n',
        b'2,"<img src=x onerror=alert(1)> dull and slow",negative\r\n',
        b'3,"",positive\r\n',
        b'4,"    ",negative\r\n',
        b'5,"' + b" ".join([b"word"] * LONG_WORDS) + b'",positive\r\n',
        b'6,"a great film \xf0\x9f\x98\x80\xf0\x9f\x8e\xac",positive\r\n',
        b'7,"\xd7\x94\xd7\xa1\xd7\xa8\xd7\x98 \xd7\x94\xd7\x99\xd7\x94 \xd7\x98\xd7\x95\xd7\x91 good",positive\r\n',
        b'8,"nul \x00 byte here, bad film",negative\r\n',
        b'9,"invalid \xff\xfe utf8 but good",positive\r\n',
        b'10,"a fine film",neutral\r\n',
        b'10,"duplicate id, a good film",positive\r\n',
        b'11,"the plot is weak",negative\r\n',
    ]
    path = folder / "hostile.csv"
    path.write_bytes(b"".join(rows))
    return path


OPTIONS = ["--id-column", "id", "--label-names", "negative,positive", "--skip-bad-rows"]
BAD_ROWS = {3: "empty text", 4: "empty text", 9: "not valid utf-8", 10: "unknown label 'neutral'",
            11: "duplicate id '10'"}


def test_data_reports_every_bad_row_by_number_and_keeps_every_good_row(tmp_path: Path) -> None:
    path = hostile_csv(tmp_path)
    result = runner.invoke(app, ["data", str(path), *OPTIONS, "--n", "20"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "examples=7" in result.output and "5 bad row(s) skipped" in result.output
    shown = " ".join(result.output.split())
    for number, reason in BAD_ROWS.items():
        assert f"row {number}: " in shown and reason in shown, (number, shown)
    assert "(+49,9" in result.output  # the long row is shown cut, not in full
    strict = runner.invoke(app, ["data", str(path), "--id-column", "id", "--label-names", "negative,positive"],
                           terminal_width=200)
    assert strict.exit_code == 2 and "--skip-bad-rows" in strict.output and "Traceback" not in strict.output
    assert "on_bad_rows" not in strict.output  # the CLI names its own flags


def test_a_user_file_is_used_whole_by_default(tmp_path: Path) -> None:
    from textrobust.audit.sources import DataSource

    data = DataSource.of(str(hostile_csv(tmp_path)), options={"id_column": "id", "on_bad_rows": "skip",
                                                              "label_names": ["negative", "positive"]}).load()
    assert data.split == "all" and len(data) == 7


def test_corrupt_victim_folders_name_the_real_cause(tmp_path: Path) -> None:
    from textrobust.zoo import load_victim
    from textrobust.zoo.io import FORMAT

    truncated = tmp_path / "truncated"
    truncated.mkdir()
    (truncated / "config.json").write_text('{"format": "' + FORMAT + '", "archi')
    (truncated / "model.safetensors").write_bytes(b"x")
    with pytest.raises(VictimError, match="not valid JSON"):
        load_victim(truncated)
    for kind, config in (("word", {"format": FORMAT}), ("hf", {"model_type": "bert"})):
        empty = tmp_path / f"empty-{kind}"
        empty.mkdir()
        (empty / "config.json").write_text(json.dumps(config))
        (empty / "model.safetensors").write_bytes(b"")
        with pytest.raises(VictimError, match="empty \\(0 bytes\\)"):
            load_victim(empty)
    result = runner.invoke(app, ["evaluate", "--victim", str(tmp_path / "empty-word"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "0 bytes" in result.output and "Traceback" not in result.output


def test_a_corrupt_store_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "store.sqlite").write_bytes(b"this is not a database" * 100)
    result = runner.invoke(app, ["export", str(tmp_path)], terminal_width=200)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    result = runner.invoke(app, ["report", str(tmp_path)], terminal_width=200)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output


@pytest.mark.heavy
def test_the_hostile_file_passes_through_attack_and_audit(tmp_path: Path) -> None:
    path = hostile_csv(tmp_path)
    out = tmp_path / "attack"
    result = runner.invoke(app, ["attack", "--data", str(path), *OPTIONS, "--recipe", "pwws", "--budget", "300",
                                 "--no-quality", "--quiet", "--out", str(out)], terminal_width=100)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["analyses"]["attack"]["summary"]["units"] == 7  # every good row analysed
    assert summary["length_limit"]["truncated"] == ["5"]  # the 50k-word row is cut to what the victim reads
    html = (out / "report.html").read_text()
    assert "<script>alert" not in html and "onerror=alert" not in html.replace("onerror=alert(1)&gt;", "")
    audit_out = tmp_path / "audit"
    result = runner.invoke(app, ["audit", "--data", str(path), *OPTIONS, "--analyses", "evaluate,attack", "--n", "3",
                                 "--quiet", "--out", str(audit_out)], terminal_width=100)
    assert result.exit_code == 0, result.output
    assert json.loads((audit_out / "summary.json").read_text())["analyses"]["evaluate"]["summary"]["examples"] == 3


_KILLED_CHILD = """
import sys, time
from textrobust import audit
from textrobust.audit.testing import keyword_scores
from textrobust.victims.function import FunctionVictim

def slow(texts):
    time.sleep(0.3)
    return keyword_scores(texts)

audit.run(FunctionVictim(slow, ("negative", "positive")), sys.argv[1], {"evaluate": {"batch_size": 1}},
          sys.argv[2], data_options={"id_column": "id", "label_names": ["negative", "positive"],
                                     "on_bad_rows": "skip"}, progress=False)
"""


def test_kill_9_in_the_middle_of_the_hostile_file_loses_nothing(tmp_path: Path) -> None:
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    import textrobust
    from textrobust import audit
    from textrobust.audit.testing import keyword_victim

    path = hostile_csv(tmp_path)
    out = tmp_path / "killed"
    store = out / "store.sqlite"

    def saved() -> int:
        if not store.is_file():
            return 0
        try:
            conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
            try:
                return conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.OperationalError:  # the tables are not created yet
            return 0

    env = dict(os.environ)
    src = str(Path(textrobust.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    child = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(path), str(out)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while saved() < 2:
            if child.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"child ended or stalled early: {child.communicate()[1].decode()}")
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    before = saved()
    assert 2 <= before < 7  # killed in the middle

    options = {"id_column": "id", "label_names": ["negative", "positive"], "on_bad_rows": "skip"}
    resumed = audit.run(keyword_victim(), path, {"evaluate": {"batch_size": 1}}, out, data_options=options,
                        resume=True, progress=False)
    fresh = audit.run(keyword_victim(), path, {"evaluate": {"batch_size": 1}}, tmp_path / "fresh",
                      data_options=options, progress=False)
    assert resumed["evaluate"].resumed == before
    assert resumed["evaluate"].computed == 7 - before
    assert resumed["evaluate"].summary == fresh["evaluate"].summary
    assert resumed["evaluate"].summary.units == 7 and resumed["evaluate"].summary.errors == 0

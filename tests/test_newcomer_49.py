"""What a new user tripped on (issue 49): printed text at any width and path length, review's
export that never destroys a run, summaries and gates that follow every judgement, and the
smaller items."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from cli_helpers import reviews_csv, use_toy_victim
from review_fixtures import make_run
from typer.testing import CliRunner

from textrobust.cli.app import app
from textrobust.report.review_server import ReviewServer
from textrobust.report.reviewed import run_findings
from textrobust.store import RunStore
from textrobust.text import Text
from textrobust.validity.reviews import ReviewLog
from tests.test_review import _judge


def _said(output: str) -> str:
    return " ".join(output.split())


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("newcomer49") / "run")


@pytest.fixture
def run(base_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(base_run, tmp_path / "run"))




# ---- item 0: printed text does not depend on the terminal's width or the paths' length ------------
LONG = "a-deliberately-long-temporary-folder-name-" * 6  # 252 characters: longer than any terminal line


def test_the_tests_console_is_wide_and_a_test_may_narrow_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import TEST_COLUMNS

    from textrobust.cli.common import console, err_console

    assert console.width == err_console.width == int(TEST_COLUMNS)  # whatever terminal pytest runs in
    monkeypatch.setenv("COLUMNS", "80")
    assert console.width == err_console.width == 80  # a test of wrapping sets its own


@pytest.mark.parametrize("columns", ["80", None], ids=["80-columns", "the-tests-console"])
def test_the_export_message_survives_a_long_path_at_any_width(run: Path, tmp_path: Path, columns: str | None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is not None:
        monkeypatch.setenv("COLUMNS", columns)  # as `make test` without a terminal
    _judge(run, "attack/ex-0", "ann", "valid")
    _judge(run, "attack/ex-1", "ann", "invalid", "grammar", blamed=(4,))
    out = tmp_path / LONG / LONG / "mine.tsv"
    result = CliRunner().invoke(app, ["review", str(run), "--export", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 substitution(s): 1 valid, 1 invalid" in _said(result.output)
    assert str(out) in result.output  # printed whole, never cut: a path is copied from the terminal


@pytest.mark.parametrize("columns", ["80", None], ids=["80-columns", "the-tests-console"])
def test_a_labelled_error_survives_a_long_path_at_any_width(tmp_path: Path, columns: str | None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is not None:
        monkeypatch.setenv("COLUMNS", columns)
    use_toy_victim(monkeypatch)
    folder = tmp_path / LONG
    folder.mkdir()
    bad = folder / "bad.tsv"
    bad.write_text("nothing\n")
    result = CliRunner().invoke(app, ["evaluate", "--data", str(reviews_csv(tmp_path)), "--labelled", str(bad),
                                      "--out", str(tmp_path / "bad")])
    assert result.exit_code == 2
    assert "the first line after the comments must be the header" in _said(result.output)
    if columns is None:
        assert str(bad) in result.output


# ---- item 1: `review --export` never destroys a run (the guard of `export`, shared) ----------------
def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _target(run: Path, tmp_path: Path, name: str, how: str) -> Path:
    """The run's file ``name`` as a target reached ``how``: directly, through a symbolic link,
    through ``..`` or under a hard link's other name."""
    if how == "direct":
        return run / name
    if how == "symlink":
        link = tmp_path / f"link-{name.replace('/', '-')}.tsv"
        link.symlink_to(run / name)
        return link
    if how == "dotdot":
        (run / "sub").mkdir(exist_ok=True)
        return run / "sub" / ".." / name
    hard = tmp_path / f"hard-{name.replace('/', '-')}.tsv"
    hard.hardlink_to(run / name)
    return hard


@pytest.mark.parametrize("command", ["review", "export"])
@pytest.mark.parametrize("name", ["store.sqlite", "summary.json", "report.json", "report.html"])
@pytest.mark.parametrize("how", ["direct", "symlink", "dotdot", "hardlink"])
@pytest.mark.parametrize("force", [False, True], ids=["", "--force"])
def test_review_export_and_export_refuse_every_file_of_the_run(run: Path, tmp_path: Path, command: str, name: str,
                                                               how: str, force: bool) -> None:
    _judge(run, "attack/ex-0", "ann", "valid")
    target = _target(run, tmp_path, name, how)
    before = _snapshot(run)
    argv = (["review", str(run), "--export", str(target)] if command == "review" else
            ["export", str(run), "--format", "jsonl", "--to", str(target)])
    result = CliRunner().invoke(app, [*argv, *(["--force"] if force else [])])
    said = _said(result.output)
    assert result.exit_code == 2, said
    assert "Will not write the export over" in said and "the run would be lost" in said, said
    assert ("--export" if command == "review" else "--to") in said and "Traceback" not in said
    assert _snapshot(run) == before  # nothing replaced: every result and judgement still there
    with RunStore(run / "store.sqlite") as store:
        assert sorted(r.kind for r in store.runs()) == ["attack", "second-order"]
        assert len(ReviewLog(store).judgements()) == 1


def test_review_export_refuses_a_judgement_with_it_when_the_target_is_refused(run: Path) -> None:
    result = CliRunner().invoke(app, ["review", str(run), "--judge", "next=valid", "--export",
                                      str(run / "store.sqlite")])
    assert result.exit_code == 2
    with RunStore(run / "store.sqlite") as store:
        assert ReviewLog(store).judgements() == []  # checked before the judgement was stored


@pytest.mark.parametrize("how", ["direct", "symlink", "hardlink"])
def test_review_export_replaces_another_file_only_with_force(run: Path, tmp_path: Path, how: str) -> None:
    _judge(run, "attack/ex-0", "ann", "valid")
    mine = tmp_path / "notes.txt"
    mine.write_text("precious\n")
    target = mine if how == "direct" else tmp_path / f"{how}.tsv"
    if how == "symlink":
        target.symlink_to(mine)
    elif how == "hardlink":
        target.hardlink_to(mine)
    result = CliRunner().invoke(app, ["review", str(run), "--export", str(target)])
    assert result.exit_code == 2 and "exists; pass --force" in _said(result.output)
    assert mine.read_text() == "precious\n"
    result = CliRunner().invoke(app, ["review", str(run), "--export", str(target), "--force"])
    assert result.exit_code == 0, result.output
    assert "good\tdecent" in target.read_text()
    # a link is replaced, not the file it names: a hard-linked or linked file keeps its text
    assert mine.read_text() == ("precious\n" if how != "direct" else target.read_text())


def test_review_export_refuses_a_folder(run: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["review", str(run), "--export", str(tmp_path)])
    assert result.exit_code == 2 and "The '--export' path" in _said(result.output) and "is a folder" in result.output


# ---- item 2: every way of adding a judgement reaches the summary, or the gate refuses it ----------
def _gate(run: Path, requirement: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["gate", str(run), "--require", requirement])
    return result.exit_code, _said(result.output)


def test_judge_rebuilds_the_summary_the_gate_reads(run: Path) -> None:
    assert _gate(run, "second-order.reviewed.disputed<=0")[0] == 0
    runner = CliRunner()
    for reviewer, verdict in (("ann", "valid"), ("bob", "invalid:sense")):
        result = runner.invoke(app, ["review", str(run), "--reviewer", reviewer, "--judge",
                                     f"second-order/so-0={verdict}"])
        assert result.exit_code == 0, result.output
    code, said = _gate(run, "second-order.reviewed.disputed<=0")
    assert code == 3, said  # disputed now: the summary follows the judgement without --report
    assert "second-order.reviewed.disputed = 1" in said


@pytest.mark.parametrize("how", ["judged", "undone"])
def test_the_gate_refuses_a_summary_older_than_the_newest_judgement(run: Path, how: str) -> None:
    _judge(run, "attack/ex-0", "ann", "invalid", "antonym")  # as the page of a server killed with kill -9
    if how == "undone":
        assert CliRunner().invoke(app, ["review", str(run), "--report"]).exit_code == 0
        with RunStore(run / "store.sqlite") as store:
            ReviewLog(store).undo("ann", [f.run_id for f in run_findings(run).findings])
    code, said = _gate(run, "attack.reviewed.rejected<=0")
    assert code == 2, said
    assert "is older than the judgements in its run store" in said
    assert f"textrobust review {run} --report" in said and "Traceback" not in said
    assert CliRunner().invoke(app, ["review", str(run), "--report"]).exit_code == 0
    code, said = _gate(run, "attack.reviewed.rejected<=0")
    assert code == (3 if how == "judged" else 0), said


def test_a_summary_without_judgements_needs_no_rebuild(run: Path) -> None:
    summary = json.loads((run / "summary.json").read_text())
    assert summary["reviews_through"] == 0
    del summary["reviews_through"]  # a summary written before the key existed, of a run nobody reviewed
    (run / "summary.json").write_text(json.dumps(summary))
    assert _gate(run, "attack.reviewed.rejected<=0")[0] == 0


def test_sigterm_stops_the_review_server_and_rebuilds_the_summary(run: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TEXTROBUST_NO_PROGRESS": "1"}
    server = subprocess.Popen([sys.executable, "-m", "textrobust.cli.app", "review", str(run), "--no-browser",
                               "--reviewer", "ann"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env)
    try:
        assert server.stdout is not None
        lines = []
        for line in server.stdout:  # serving once the address is printed
            lines.append(line)
            if line.startswith("port:"):
                break
        else:
            pytest.fail("".join(lines))
        _judge(run, "attack/ex-0", "ann", "invalid", "antonym")  # as the page stores one
        server.send_signal(signal.SIGTERM)
        rest, _ = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
    said = _said("".join(lines) + rest)
    assert server.returncode == 143, said
    assert "terminated (SIGTERM): the judgements are in the run store" in said and "report:" in said
    summary = json.loads((run / "summary.json").read_text())
    assert summary["analyses"]["attack"]["reviewed"]["rejected"] == 1
    assert _gate(run, "attack.reviewed.rejected<=0")[0] == 3  # current: the gate reads it


# ---- item 5: a port in use ------------------------------------------------------------------------
def test_a_port_in_use_is_a_clear_error(run: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["review", str(run), "--port", str(port), "--no-browser"])
    said = _said(result.output)
    assert result.exit_code == 2, said
    assert f"cannot listen on 127.0.0.1:{port}" in said and "Give another --port" in said
    assert "Traceback" not in said


# ---- item 10: a run with no findings ---------------------------------------------------------------
def test_review_of_a_run_without_findings_says_so_and_exits(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["evaluate", "--data", str(reviews_csv(tmp_path)), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output

    def never(self: object) -> None:
        raise AssertionError("a server started for a run with nothing to review")

    monkeypatch.setattr(ReviewServer, "serve_forever", never)
    result = CliRunner().invoke(app, ["review", str(out), "--no-browser"])
    assert result.exit_code == 0, result.output
    assert "has no findings to review" in _said(result.output) and "open:" not in result.output


# ---- items 7 and 8: a rebuilt report keeps everything; Not-run commands carry the data options ------
FRESH_ROWS = [("a good film with a fine cast", "fresh"), ("a great story told with care", "fresh"),
              ("dull and slow from start to end", "rotten"), ("the plot is thin and the jokes fall flat", "rotten")]


def _fresh_csv(folder: Path) -> Path:
    path = folder / "my reviews.csv"  # a space: the suggested commands quote it
    path.write_text("review,verdict\n" + "".join(f'"{t}",{v}\n' for t, v in FRESH_ROWS), encoding="utf-8")
    return path


def _toy() -> object:
    from textrobust.audit.testing import keyword_scores
    from textrobust.victims.function import FunctionVictim

    return FunctionVictim(keyword_scores, ("negative", "positive"))


def _audit(folder: Path) -> Path:
    from textrobust import audit

    out = folder / "audit"
    audit.run(_toy(), _fresh_csv(folder), {"evaluate": {}}, out, data_options={"text_column": "review",
              "label_column": "verdict"}, label_map={"fresh": "positive", "rotten": "negative"}, profile="quick",
              progress=False, max_words=40)
    return out


def test_a_rebuilt_report_equals_the_original(tmp_path: Path) -> None:
    out = _audit(tmp_path)
    before = json.loads((out / "report.json").read_text())
    page = (out / "report.html").read_text()
    summary = json.loads((out / "summary.json").read_text())
    assert before["not_run"] and before["profile"] == "quick" and before["data"]["length_limit"]
    result = CliRunner().invoke(app, ["review", str(out), "--report"])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "report.json").read_text()) == before  # nothing to review: nothing changes
    assert (out / "report.html").read_text() == page
    assert json.loads((out / "summary.json").read_text()) == summary


def test_a_rebuilt_report_changes_only_the_reviewed_figures(run: Path) -> None:
    before = json.loads((run / "report.json").read_text())
    _judge(run, "attack/ex-0", "ann", "invalid", "antonym")
    assert CliRunner().invoke(app, ["review", str(run), "--report"]).exit_code == 0
    after = json.loads((run / "report.json").read_text())
    assert [s["name"] for s in after["analyses"]] == [s["name"] for s in before["analyses"]]
    assert after["analyses"][0]["reviewed"]["rejected"] == 1 and before["analyses"][0]["reviewed"]["rejected"] == 0

    def without_reviews(report: dict) -> dict:
        return {**report, "verdict": None,
                "analyses": [{k: v for k, v in s.items() if k != "reviewed"} for s in report["analyses"]]}

    assert without_reviews(after) == without_reviews(before)
    assert any("Reviewed by people" in p for p in after["verdict"]["points"])


def test_a_not_run_command_carries_the_data_options_and_runs(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import shlex

    out = _audit(tmp_path)
    report = json.loads((out / "report.json").read_text())
    command = next(m["command"] for m in report["not_run"] if m["name"] == "attack")
    for option in ("--text-column review", "--label-column verdict", "--label-map fresh=positive,rotten=negative",
                   "--max-words 40", f"--data {shlex.quote(str(tmp_path / 'my reviews.csv'))}"):
        assert option in command, command
    # run as printed (the toy victim for the default one, its own out folder, a smaller size)
    words = shlex.split(command)
    assert words[:2] == ["textrobust", "attack"]
    words[words.index("--out") + 1] = str(tmp_path / "attack")
    words[words.index("--n") + 1] = "2"
    use_toy_victim(monkeypatch, _toy())
    result = CliRunner().invoke(app, [*words[1:], "--budget", "1", "--no-quality", "--candidates", "paper",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "attack" / "summary.json").read_text())
    assert summary["data"]["examples"] == len(FRESH_ROWS)


# ---- item 3: --resume compares the labels' contents, and reuses them ------------------------------
def _labels(folder: Path, name: str, pair: tuple[str, str] = ("good", "fine")) -> Path:
    from textrobust.validity.overrides import COLUMNS

    path = folder / name
    row = f"r1\tdev\ttoy\ta {pair[0]} film\t1\t{pair[0]}\t{pair[1]}\treview\t0\tsentiment"
    path.write_text("# my labels\n" + "\t".join(COLUMNS) + "\n" + row + "\n", encoding="utf-8")
    return path


def _first_part(tmp_path: Path, labels: Path) -> Path:
    """An evaluate run of two examples with ``labels``, which a resume takes on to four."""
    from textrobust import audit

    out = tmp_path / "run"
    audit.run(_toy(), reviews_csv(tmp_path), {"evaluate": {"n": 2}}, out, progress=False, labelled=labels)
    return out


def _resume(tmp_path: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["evaluate", "--data", str(reviews_csv(tmp_path)), "--out", str(out),
                                      "--resume", "--n", "4", "--quiet", *extra])
    return result.exit_code, _said(result.output)


def _labels_used(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    from textrobust.audit import orchestrator

    seen: list[object] = []
    real = orchestrator._run_one

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs.get("user_labels", args[-1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(orchestrator, "_run_one", spy)
    return seen


def test_resume_refuses_an_edited_labels_file_with_the_same_counts(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch, _toy())
    labels = _labels(tmp_path, "mine.tsv")
    out = _first_part(tmp_path, labels)
    _labels(tmp_path, "mine.tsv", ("great", "grand"))  # one rejected pair still, another one
    code, said = _resume(tmp_path, out, "--labelled", str(labels))
    assert code == 2, said
    assert "labelled.sha256" in said and "Cannot resume" in said


def test_resume_takes_an_identical_copy_elsewhere_and_reuses_the_stored_labels(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch, _toy())
    labels = _labels(tmp_path, "mine.tsv")
    out = _first_part(tmp_path, labels)
    copy = tmp_path / "elsewhere" / "copy.tsv"
    copy.parent.mkdir()
    shutil.copy(labels, copy)
    seen = _labels_used(monkeypatch)
    code, said = _resume(tmp_path, out, "--labelled", str(copy))
    assert code == 0, said
    labels.unlink()  # without --labelled: the labels the run started with, from the store
    copy.unlink()
    code, said = _resume(tmp_path, out)
    assert code == 0, said
    assert [getattr(s, "rejected", None) for s in seen] == [frozenset({("good", "fine")})] * 2
    with RunStore(out / "store.sqlite") as store:
        run = store.latest_run("evaluate")
        assert run is not None and run.config["labelled"]["rejected"] == 1
        assert len(store.runs("evaluate")) == 1  # resumed, never a second run


# ---- item 4: a bad TEXTROBUST_VERDICT_CACHE_MB ---------------------------------------------------------
@pytest.mark.parametrize("value", ["abc", "nan", "-1", "inf", "-inf", "1e999", " "])
def test_a_bad_verdict_cache_cap_stops_before_anything_runs(tmp_path: Path, value: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTROBUST_VERDICT_CACHE_MB", value)
    monkeypatch.setenv("TEXTROBUST_CACHE", str(tmp_path / "cache"))
    if not value.strip():  # blank: the default cap
        assert CliRunner().invoke(app, ["assets"]).exit_code == 0
        return
    use_toy_victim(monkeypatch, _toy())
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["attack", "--data", str(reviews_csv(tmp_path)), "--n", "2", "--out", str(out),
                                      "--quiet"])
    said = _said(result.output)
    assert result.exit_code == 2, said
    assert "TEXTROBUST_VERDICT_CACHE_MB" in said and repr(value) in said and "Traceback" not in said
    assert not (out / "store.sqlite").exists()  # nothing ran
    listed = CliRunner().invoke(app, ["assets"])
    assert listed.exit_code == 2 and "TEXTROBUST_VERDICT_CACHE_MB" in _said(listed.output)
    assert listed.exception is None or isinstance(listed.exception, SystemExit)


def test_a_cap_that_deletes_verdicts_says_so_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    from textrobust.validity.cache import VerdictCache, cache_info, fingerprint

    path = tmp_path / "v.sqlite"
    old = VerdictCache(path, fingerprint(judge="old"))
    old.put_many([(("a", "fine", "film", str(i)), 1, {"why": "x" * 2000}) for i in range(100)])
    old.close()
    monkeypatch.setenv("TEXTROBUST_VERDICT_CACHE_MB", str(cache_info(path).size_bytes / 4 / 2**20))
    with caplog.at_level("WARNING", logger="textrobust.validity.cache"):
        for _ in range(2):
            cache = VerdictCache(path, fingerprint(judge="new"))
            assert len(cache) == 0
            cache.close()
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1, said
    assert "over its cap" in said[0] and "deleted the verdicts of other judges" in said[0]


def test_clear_verdicts_without_a_cache_says_there_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTROBUST_CACHE", str(tmp_path))
    result = CliRunner().invoke(app, ["assets", "clear-verdicts"])
    assert result.exit_code == 0 and "no verdict cache at" in result.output and "deleted" not in result.output


def test_the_assets_table_keeps_paths_whole_in_a_pipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS")  # a pipe, no terminal: rich would fit 80 columns
    monkeypatch.setenv("TEXTROBUST_CACHE", str(tmp_path / LONG[:60]))
    result = CliRunner().invoke(app, ["assets"])
    assert result.exit_code == 0, result.output
    import textrobust

    bundled = str(Path(textrobust.__file__).parent / "resources" / "stopwords.txt")
    row = next(line for line in result.output.splitlines() if "stop_words" in line)
    assert bundled in row, result.output  # one row, its path whole


# ---- item 6: rejecting a second-order finding blames its patch only when a reviewer says so ---------
def _review(run: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["review", str(run), "--reviewer", "ann", *args])
    return result.exit_code, _said(result.output)


def _exported(run: Path, tmp_path: Path) -> tuple[set[tuple[str, str, bool]], str]:
    from textrobust.validity.overrides import read_labels

    out = tmp_path / "labels.tsv"
    code, said = _review(run, "--export", str(out), "--force")
    assert code == 0, said
    return {(r.word, r.substitute, r.valid) for r in read_labels(out)}, said


@pytest.mark.parametrize("given, pairs, left_out", [
    ("second-order/so-0=invalid:neighbour", set(), "1 second-order finding(s) rejected for their neighbour"),
    ("second-order/so-0=invalid:sense@4", set(), "1 second-order finding(s) rejected for their neighbour"),
    ("second-order/so-0=invalid:sense@3", {("Good", "Decent", False)}, None),
    ("second-order/so-0=invalid:sense", {("Good", "Decent", False)}, None),  # none ticked blames all
    ("attack/ex-1=invalid:grammar@4", {("with", "by", False)}, None),
    ("attack/ex-1=invalid:grammar@1,4", {("with", "by", False), ("great", "big", False)}, None),
])
def test_judge_takes_blamed_swaps_and_the_neighbour_reason_exports_no_pair(
        run: Path, tmp_path: Path, given: str, pairs: set, left_out: str | None) -> None:
    code, said = _review(run, "--judge", given)
    assert code == 0, said
    exported, said = _exported(run, tmp_path)
    assert exported == pairs
    if left_out:
        assert f"left out: {left_out}" in said and "no substitution pair is blamed" in said
    else:
        assert "left out" not in said


def test_a_neighbour_reason_on_another_finding_and_unknown_swaps_are_refused(run: Path) -> None:
    code, said = _review(run, "--judge", "attack/ex-0=invalid:neighbour")
    assert code == 2 and "is for a second-order finding" in said, said
    code, said = _review(run, "--judge", "attack/ex-1=invalid:grammar@9")
    assert code == 2 and "not swaps of 'attack/ex-1'" in said and "[1, 4]" in said, said
    for bad in ("attack/ex-1=valid@1", "attack/ex-1=invalid:grammar@", "attack/ex-1=invalid:grammar@one"):
        code, said = _review(run, "--judge", bad)
        assert code == 2 and "The '--judge' option reads" in said, said
    with RunStore(run / "store.sqlite") as store:
        assert ReviewLog(store).judgements() == []


def test_the_page_offers_the_neighbour_reason_for_a_second_order_finding_only(run: Path) -> None:
    from textrobust.report.review_server import ReviewSession

    session = ReviewSession(run, "ann")
    assert 'value="neighbour"' in session.page("t", "n", "second-order/so-0")
    assert 'value="neighbour"' not in session.page("t", "n", "attack/ex-0")


def test_two_reviewers_blaming_the_neighbour_and_the_patch(run: Path, tmp_path: Path) -> None:
    _judge(run, "second-order/so-0", "ann", "invalid", "neighbour")
    _judge(run, "second-order/so-0", "bob", "invalid", "sentiment", blamed=(3,))
    exported, _ = _exported(run, tmp_path)
    assert exported == {("Good", "Decent", False)}  # bob blamed the patch: his reason labels it


# ---- item 10: --judge checks every judgement first; the wording; skips are not judgements -----------
def test_a_bad_judge_after_a_good_one_stores_neither(run: Path) -> None:
    code, said = _review(run, "--judge", "attack/ex-0=valid", "--judge", "attack/nope=valid")
    assert code == 2 and "No finding 'attack/nope'" in said and "Nothing was stored" in said, said
    code, said = _review(run, "--judge", "next=valid", "--judge", "next=invalid")
    assert code == 2 and "None was given." in said and "Got None" not in said, said
    with RunStore(run / "store.sqlite") as store:
        assert ReviewLog(store).judgements() == []


def test_the_export_does_not_count_a_skip_as_judged(run: Path, tmp_path: Path) -> None:
    _judge(run, "attack/ex-0", "ann", "valid")
    _judge(run, "attack/ex-1", "ann", "skip")
    _judge(run, "attack/ex-2", "bob", "skip")
    _, said = _exported(run, tmp_path)
    assert "from 1 judged finding(s) of 5" in said, said


# ---- item 9: compare names every difference of unlike runs, and refuses other texts under one id -----
def _attack_run(folder: Path, victim: str, recipe: str, candidates: str, texts: dict[int, str] | None = None) -> Path:
    """A run folder with one finished attack run over e0..e5 (``texts``: other texts for some ids)."""
    from test_compare import ATTACKS_A, _attack, _config

    from textrobust.records import encode

    with RunStore(folder / "store.sqlite") as store:
        run = store.start_run("attack", _config({"recipe": recipe, "n": 6, "budget": None, "quality": False,
                                                 "candidates": candidates}, victim), seed=0)
        for position, (i, status, l0) in enumerate(ATTACKS_A):
            payload = _attack(i, status, l0)
            if texts and i in texts:
                from textrobust.analyses.attack.analysis import AttackRecord
                from textrobust.records import decode

                record = decode(AttackRecord, payload)
                other = Text.from_string(texts[i])
                payload = encode(replace(record, result=replace(record.result, original=other, perturbed=other)))
            run.record(f"e{i}", payload, position=position)
        run.finish({})
    return folder


def _compare(tmp_path: Path, *runs: Path, extra: tuple[str, ...] = ()) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["compare", *map(str, runs), "--out", str(tmp_path / "out"), "--resamples",
                                      "200", *extra])
    return result.exit_code, _said(result.output)


def test_compare_names_the_other_victim_recipe_and_candidates(tmp_path: Path) -> None:
    lstm = _attack_run(tmp_path / "lstm", "runs/lstm", "pwws", "validated")
    cnn = _attack_run(tmp_path / "cnn", "runs/cnn", "textfooler", "paper")
    code, said = _compare(tmp_path, lstm, cnn)
    assert code == 0, said
    assert "cnn audited another victim (runs/cnn) than the baseline lstm (runs/lstm)" in said
    assert 'recipe "pwws" -> "textfooler"' in said and 'candidates "validated" -> "paper"' in said
    page = _said((tmp_path / "out" / "compare.html").read_text())
    assert "another victim" in page and "textfooler" in page
    notes = json.loads((tmp_path / "out" / "compare.json").read_text())["notes"]
    assert any("another victim" in n for n in notes) and any("other settings" in n for n in notes)


def test_compare_refuses_other_texts_under_the_same_ids_unless_allowed(tmp_path: Path) -> None:
    base = _attack_run(tmp_path / "base", "toy", "textfooler", "validated")
    other = _attack_run(tmp_path / "other", "toy", "textfooler", "validated",
                        {1: "a dull film", 2: "an awful plot"})
    code, said = _compare(tmp_path, base, other)
    assert code == 2, said
    assert "hold different texts under the same example ids (2 of them, e.g. 'e1'" in said
    assert "--allow-different-texts" in said and not (tmp_path / "out").exists()
    code, said = _compare(tmp_path, base, other, extra=("--allow-different-texts",))
    assert code == 0, said
    assert "other holds different texts than the baseline base under 2 shared example id(s)" in said
    same = _attack_run(tmp_path / "same", "toy", "textfooler", "validated")
    code, said = _compare(tmp_path, base, same)
    assert code == 0 and "note:" not in said, said  # like runs: nothing to note


# ---- item 10: resumes count every session's queries, and say when there is nothing to resume -------
def test_a_resumed_run_counts_the_queries_of_every_session_and_says_when_nothing_is_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch, _toy())
    data = reviews_csv(tmp_path)
    out = tmp_path / "run"
    runner = CliRunner()
    base = ["evaluate", "--data", str(data), "--out", str(out), "--quiet", "--batch-size", "1"]
    assert runner.invoke(app, [*base, "--n", "2"]).exit_code == 0
    result = runner.invoke(app, [*base, "--n", "4", "--resume"])
    assert result.exit_code == 0, result.output
    assert "nothing to resume" not in result.output
    with RunStore(out / "store.sqlite") as store:
        run = store.latest_run("evaluate")
        assert run is not None
        stored = sum(row.queries or 0 for row in run.results())
    summary = json.loads((out / "summary.json").read_text())
    report = json.loads((out / "report.json").read_text())
    assert stored == 4 and summary["analyses"]["evaluate"]["queries_now"] == 2  # this session's
    assert report["run"]["queries"] == stored == summary["run"]["queries"]  # every session's
    again = runner.invoke(app, [*base, "--n", "4", "--resume"])
    assert again.exit_code == 0, again.output
    assert "nothing to resume: every unit of evaluate was already stored" in _said(again.output)


def test_a_stopped_load_says_stopped_not_failed() -> None:
    from textrobust.audit.progress import load_line
    from textrobust.cli.sigterm import Terminated
    from textrobust.loading import listening, loading

    events = []
    with listening(events.append):
        for stop in (Terminated, KeyboardInterrupt, ValueError):
            with pytest.raises(stop):
                with loading("the causal LM"):
                    raise stop()
    lines = [load_line(e) for e in events if e.done]
    assert [line.split(" after ")[0] for line in lines] == ["loading the causal LM stopped"] * 2 + [
        "loading the causal LM failed"]


def test_an_attacked_example_is_not_charged_with_loading_a_model() -> None:
    import time as clock

    from test_attack_runner import make_attack

    from textrobust.data.examples import Example
    from textrobust.loading import loading, thread_load_seconds

    attack, _ = make_attack()
    source = attack.source
    real = source.candidates

    def loads_first(*args: object, **kwargs: object) -> object:  # a source whose model loads on first use
        if not getattr(source, "_loaded", False):
            source._loaded = True  # type: ignore[attr-defined]
            with loading("a slow model"):
                clock.sleep(0.5)
        return real(*args, **kwargs)

    source.candidates = loads_first  # type: ignore[method-assign]
    before = thread_load_seconds()
    first = attack.attack(Example("e1", Text.from_string("A good film, great!"), 1))
    assert thread_load_seconds() - before >= 0.5
    assert first.seconds < 0.25, first.seconds  # the load is not the example's time

"""What a new user tripped on (issue 49): printed text at any width and path length, review's
export that never destroys a run, summaries and gates that follow every judgement, and the
smaller items."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import reviews_csv, use_toy_victim
from review_fixtures import make_run
from typer.testing import CliRunner

from textrobust.cli.app import app
from textrobust.report.reviewed import run_findings
from textrobust.store import RunStore
from textrobust.validity.reviews import ReviewLog


def _said(output: str) -> str:
    return " ".join(output.split())


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("newcomer49") / "run")


@pytest.fixture
def run(base_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(base_run, tmp_path / "run"))


def _judge(folder: Path, item: str, reviewer: str, verdict: str, reason: str | None = None,
           blamed: tuple[int, ...] = ()) -> None:
    found = {f.item: f for f in run_findings(folder).findings}
    with RunStore(folder / "store.sqlite") as store:
        ReviewLog(store).record(found[item].run_id, item, reviewer, verdict, reason, blamed)


# ---- item 0: printed text does not depend on the terminal's width or the paths' length ------------
LONG = "a-deliberately-long-temporary-folder-name-" * 6  # 252 characters: longer than any terminal line


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


@pytest.mark.parametrize("name", ["store.sqlite", "summary.json", "report.json", "report.html"])
@pytest.mark.parametrize("how", ["direct", "symlink", "dotdot", "hardlink"])
@pytest.mark.parametrize("force", [False, True], ids=["", "--force"])
def test_review_export_refuses_every_file_of_the_run(run: Path, tmp_path: Path, name: str, how: str,
                                                     force: bool) -> None:
    _judge(run, "attack/ex-0", "ann", "valid")
    target = _target(run, tmp_path, name, how)
    before = _snapshot(run)
    result = CliRunner().invoke(app, ["review", str(run), "--export", str(target), *(["--force"] if force else [])])
    said = _said(result.output)
    assert result.exit_code == 2, said
    assert "Will not write the export over" in said and "the run would be lost" in said, said
    assert "--export" in said and "Traceback" not in said
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

"""The verdict cache is listed by ``textrobust assets``, can be deleted, and stays under its cap."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from textrobust.cli.app import app
from textrobust.errors import ConfigError
from textrobust.validity.cache import VerdictCache, cache_info, clear_cache, fingerprint, max_bytes

runner = CliRunner()
WORDS = ("a", "fine", "film")


def _fill(path: Path, judge: str, n: int, pad: int = 2000) -> VerdictCache:
    cache = VerdictCache(path, fingerprint(judge=judge))
    cache.put_many([(WORDS + (str(i),), 1, {"why": "x" * pad}) for i in range(n)])
    return cache


def test_info_and_clear(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    assert cache_info(path).verdicts == 0 and cache_info(path).size_bytes == 0
    _fill(path, "one", 3).close()
    _fill(path, "two", 2).close()
    info = cache_info(path)
    assert (info.verdicts, info.judges) == (5, 2) and info.size_bytes > 0
    assert clear_cache(path) == info.size_bytes
    assert not path.exists() and cache_info(path).verdicts == 0


def test_the_cap_drops_other_judges_first_then_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "v.sqlite"
    _fill(path, "old", 300).close()
    _fill(path, "new", 10).close()
    monkeypatch.setenv("TEXTROBUST_VERDICT_CACHE_MB", str(cache_info(path).size_bytes / 2 / 2**20))
    new = VerdictCache(path, fingerprint(judge="new"))
    assert len(new) == 10  # opening over the cap dropped the old judge's 300 entries only
    new.close()
    assert cache_info(path).judges == 1
    monkeypatch.setenv("TEXTROBUST_VERDICT_CACHE_MB", "0.00001")
    again = VerdictCache(path, fingerprint(judge="new"))
    assert len(again) == 0  # still over: everything goes
    again.close()
    monkeypatch.setenv("TEXTROBUST_VERDICT_CACHE_MB", "0")
    assert max_bytes() is None
    monkeypatch.setenv("TEXTROBUST_VERDICT_CACHE_MB", "lots")
    with pytest.raises(ConfigError, match="number of MiB"):
        max_bytes()


def test_assets_lists_and_clears_the_verdict_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTROBUST_CACHE", str(tmp_path))
    _fill(tmp_path / "verdicts" / "verdicts.sqlite", "one", 4).close()
    listed = runner.invoke(app, ["assets"], terminal_width=200)
    text = " ".join(listed.output.split())
    assert "verdict cache" in text and "4 verdicts of 1 judge(s)" in text and "clear-verdicts" in text
    cleared = runner.invoke(app, ["assets", "clear-verdicts"], terminal_width=200)
    assert cleared.exit_code == 0, cleared.output
    assert "deleted the verdict cache" in cleared.output
    assert not (tmp_path / "verdicts" / "verdicts.sqlite").exists()

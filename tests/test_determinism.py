"""Determinism: the same seed gives the same records across two runs and across resume.

Wall-clock fields (``seconds``) are the only thing allowed to differ; everything else in a
stored record, including stochastic searches' results, must be identical.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from textrobust import audit
from textrobust.store import RunStore


def _without_time(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_time(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_without_time(v) for v in value]
    return value


def _records(out: Path, kind: str) -> list[str]:
    with RunStore(out / "store.sqlite") as store:
        run = store.latest_run(kind)
        return [json.dumps(_without_time(r.payload), sort_keys=True) for r in run.results()]


@pytest.mark.heavy
def test_a_seeded_stochastic_attack_gives_identical_records_and_resume_changes_nothing(tmp_path: Path) -> None:
    settings = {"attack": {"recipe": "pso", "n": 3, "budget": 400, "quality": False}}
    audit.run("default", "rotten_tomatoes", settings, tmp_path / "a", seed=7, progress=False)
    audit.run("default", "rotten_tomatoes", settings, tmp_path / "b", seed=7, progress=False)
    first = _records(tmp_path / "a", "attack")
    assert len(first) == 3 and first == _records(tmp_path / "b", "attack")
    partial = {"attack": {**settings["attack"], "n": 1}}
    audit.run("default", "rotten_tomatoes", partial, tmp_path / "c", seed=7, progress=False)
    audit.run("default", "rotten_tomatoes", settings, tmp_path / "c", seed=7, resume=True, progress=False)
    assert _records(tmp_path / "c", "attack") == first

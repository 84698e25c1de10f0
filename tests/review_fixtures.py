"""A run folder with findings, written without any model, for the review tests (issue 40).

Imported by name by tests/test_review*.py (pytest puts tests/ on sys.path). The folder holds
an attack run (four successes, one of them hostile text: a script tag, right-to-left
marks and a 300-letter word; one failure; one skip) and a second-order run (one finding),
their report and summary.json, as an audit would write them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from textrobust.analyses.attack.analysis import AttackRecord, AttackSettings
from textrobust.analyses.second_order.analysis import SecondOrderRecord, SecondOrderSettings
from textrobust.analyses.second_order.method import SecondOrderResult
from textrobust.analyses.second_order.patch import Patch
from textrobust.attack.results import AttackResult, Status
from textrobust.records import encode
from textrobust.report.review_server import ReviewServer, ReviewSession
from textrobust.store import RunStore
from textrobust.text import Text

LABELS = ["negative", "positive"]
LONG_WORD = "a" * 300
HOSTILE = f"<script>alert('x')</script> \u202egood\u202c film {LONG_WORD}"


def _attack(example_id: str, status: Status, original: str, perturbed: str | None = None,
            swaps: dict[int, str] | None = None) -> AttackRecord:
    text = Text.from_string(original)
    after = text.replace(swaps) if swaps else text
    flipped = status is Status.SUCCEEDED
    result = AttackResult(example_id, 1, status, text, after, 1 if status is not Status.SKIPPED else 0,
                          0 if flipped else 1, (0.2, 0.8), (0.9, 0.1) if flipped else (0.3, 0.7), 10, 0.01)
    return AttackRecord(example_id, status.value, 10, 0.01, result)


EVIDENCE = {"position": 1, "word": "good", "substitute": "decent", "routes": ["wordnet"], "cosine": 0.71,
            "masked_lm": -0.4, "causal_lm": -1.25, "sense_rank": 0, "kept": True, "reason": ""}


def _with_evidence(record: AttackRecord) -> AttackRecord:
    result = replace(record.result, extras={"evidence": [EVIDENCE]})
    return replace(record, result=result)


ATTACKS = [
    _with_evidence(_attack("ex-0", Status.SUCCEEDED, "a good film with a fine cast", swaps={1: "decent"})),
    _attack("ex-1", Status.SUCCEEDED, "a great story told with care", swaps={1: "big", 4: "by"}),
    _attack("ex-2", Status.SUCCEEDED, "one great scene in a long film", swaps={1: "large"}),
    _attack("ex-3", Status.SUCCEEDED, HOSTILE, swaps={3: "fine"}),
    _attack("ex-4", Status.FAILED, "dull and slow from start to end"),
    _attack("ex-5", Status.SKIPPED, "good acting cannot save a weak script"),
]


def _second_order() -> SecondOrderRecord:
    x0 = Text.from_string("the film is Good and the actors are fine")  # the patch matches the case
    neighbour = x0.replace(4, "but")
    result = SecondOrderResult("so-0", 1, "so-beam", Status.SUCCEEDED, x0, neighbour, Patch(3, "good", "decent", 0.4),
                               (0.3, 0.7), (0.4, 0.6), (0.45, 0.55), (0.6, 0.4), 40, 0.1)
    return SecondOrderRecord("so-0", "succeeded", 40, 0.1, result)


def make_run(folder: Path) -> Path:
    """Write the run folder (store, report, summary.json) and return it."""
    from textrobust.audit import rebuild_report

    folder.mkdir(parents=True, exist_ok=True)
    runs = {}
    with RunStore(folder / "store.sqlite") as store:
        for name, settings, records in (
                ("attack", AttackSettings(recipe="pwws", candidates="paper", quality=False), ATTACKS),
                ("second-order", SecondOrderSettings(quality=False, candidates="paper"), [_second_order()])):
            config = {"analysis": name, "settings": settings.to_dict(), "victim": "toy-victim-not-on-disk",
                      "data_name": "toy reviews", "data_split": "all", "label_names": LABELS,
                      "data_examples": len(records)}
            run = store.start_run(name, config, seed=0)
            for i, record in enumerate(records):
                run.record(record.example_id, encode(record), position=i, queries=record.queries,
                           seconds=record.seconds)
            runs[name] = run.run_id
    (folder / "summary.json").write_text(json.dumps(
        {"schema": "textrobust.summary/1", "verdict": {}, "analyses": {
            name: {"run_id": run_id, "summary": {"units": 1}} for name, run_id in runs.items()}}))
    rebuild_report(folder)
    return folder


@contextmanager
def serving(folder: Path, reviewer: str) -> Iterator[ReviewServer]:
    """A review server on the run in ``folder``, serving from a thread until the block ends."""
    server = ReviewServer(ReviewSession(folder, reviewer))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()

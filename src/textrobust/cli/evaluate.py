"""``textrobust evaluate``: clean accuracy through the query layer, into the run store."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from textrobust.cli.common import console, fail, fmt, load_data, load_victim, write_json
from textrobust.errors import TextRobustError


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate_cmd)


def run_evaluation(victim_ref: str, data_name: str, split: str, n: Optional[int], out: Path, resume: bool,
              batch_size: int, seed: int, kind: str) -> dict[str, Any]:
    from textrobust.analyses.evaluation import evaluate
    from textrobust.runner import make_progress
    from textrobust.store import RunStore
    from textrobust.versions import package_versions
    from textrobust.victims.query import QueryLayer

    started = time.perf_counter()
    victim, victim_path = load_victim(victim_ref)
    dataset = load_data(data_name, split).take(n)
    layer = QueryLayer(victim, batch_size=batch_size)
    config = {"victim": str(victim_path), "data": data_name, "split": split, "n": n,
              "batch_size": batch_size, "victim_card": getattr(victim, "card", None)}
    out.mkdir(parents=True, exist_ok=True)
    store = RunStore(out / "store.sqlite")
    run = store.resume_or_start(kind, config, seed, resume=resume)
    with make_progress() as progress:
        task = progress.add_task(f"evaluate {dataset.name}/{split}", total=len(dataset))

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, queries=layer.queries)

        records, summary = evaluate(layer, dataset, run, batch_size=batch_size, on_progress=on_progress)
    stats = layer.stats()
    result = {
        "run_id": run.run_id,
        "kind": kind,
        "victim": str(victim_path),
        "victim_card": getattr(victim, "card", None),
        "data": dataset.name,
        "split": split,
        "seed": seed,
        "evaluation": summary.to_dict(),
        "query_layer": {"queries": stats.queries, "cache_hits": stats.cache_hits, "batches": stats.batches,
                         "forward_seconds": stats.forward_seconds, "hit_rate": stats.hit_rate},
        "seconds": time.perf_counter() - started,
        "store": str(out / "store.sqlite"),
        "versions": package_versions(),
    }
    run.finish(result)
    write_json(out / "summary.json", result)
    return result


def print_evaluation(result: dict[str, Any]) -> None:
    ev = result["evaluation"]
    table = Table(title=f"evaluation of {Path(result['victim']).name} on {result['data']}/{result['split']}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("examples", f"{ev['examples']:,}")
    table.add_row("scored now (rest resumed)", f"{ev['computed']:,}")
    table.add_row("accuracy", f"{ev['accuracy']:.2%}")
    for label, acc in ev["accuracy_per_label"].items():
        table.add_row(f"  accuracy on {label}", f"{acc:.2%}")
    table.add_row("queries sent to the victim", f"{ev['queries']:,}")
    table.add_row("cache hits", f"{ev['cache_hits']:,}")
    table.add_row("seconds", f"{ev['seconds']:.2f}")
    if ev["seconds"] > 0 and ev["computed"]:
        table.add_row("examples / second", f"{ev['computed'] / ev['seconds']:,.0f}")
    console.print(table)


def evaluate_cmd(
    victim: Annotated[str, typer.Option(help="'default' or a victim folder.")] = "default",
    data: Annotated[str, typer.Option(help="Bundled data set or a file path.")] = "rotten_tomatoes",
    split: Annotated[str, typer.Option(help="Split to evaluate on.")] = "test",
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples.")] = None,
    out: Annotated[Path, typer.Option(help="Run folder (store.sqlite, summary.json).")] = Path("runs/evaluate"),
    resume: Annotated[bool, typer.Option(help="Resume the latest run in --out.")] = False,
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass.")] = 64,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
) -> None:
    """Accuracy of a victim on a data set, through the query layer, into the run store."""
    try:
        result = run_evaluation(victim, data, split, n, out, resume, batch_size, seed, "evaluate")
    except TextRobustError as exc:
        fail(exc)
        return
    print_evaluation(result)
    console.print(f"summary: {out / 'summary.json'}")

"""``textrobust attack``: attack a victim with a recipe, into the run store."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from textrobust.cli.common import console, fail, fmt, load_data, load_victim, write_json
from textrobust.errors import TextRobustError


def register(app: typer.Typer) -> None:
    app.command("attack")(attack_cmd)


def run_attack(victim_ref: str, data_name: str, split: str, recipe: str, n: Optional[int], budget: Optional[int],
            seed: int, out: Path, resume: bool, quality: bool, kind: str = "attack") -> dict[str, Any]:
    from textrobust.analyses.attacks import QualityScorer, attack_dataset
    from textrobust.attack.recipes import RECIPES, build_attack
    from textrobust.runner import make_progress
    from textrobust.store import RunStore
    from textrobust.versions import package_versions
    from textrobust.victims.query import QueryLayer

    started = time.perf_counter()
    factory = RECIPES.get(recipe)
    spec = factory(seed=seed) if "seed" in factory.__code__.co_varnames else factory()
    victim, victim_path = load_victim(victim_ref)
    dataset = load_data(data_name, split).take(n)
    layer = QueryLayer(victim)
    attack = build_attack(spec, layer, budget=budget)
    scorer = QualityScorer.default() if quality else None
    config = {"victim": str(victim_path), "victim_card": getattr(victim, "card", None), "data": data_name,
              "split": split, "n": n, "budget": budget, "recipe": spec.describe(), "quality": quality}
    out.mkdir(parents=True, exist_ok=True)
    store = RunStore(out / "store.sqlite")
    run = store.resume_or_start(kind, config, seed, resume=resume)
    with make_progress() as progress:
        results, summary = attack_dataset(attack, dataset, run, quality=scorer, progress=progress,
                                          description=f"{recipe} on {dataset.name}/{split}")
    stats = layer.stats()
    result = {
        "run_id": run.run_id,
        "kind": kind,
        "victim": str(victim_path),
        "data": dataset.name,
        "split": split,
        "seed": seed,
        "recipe": spec.describe(),
        "attack": attack.describe(),
        "summary": summary,
        "query_layer": {"queries": stats.queries, "cache_hits": stats.cache_hits, "batches": stats.batches,
                        "forward_seconds": stats.forward_seconds, "hit_rate": stats.hit_rate},
        "seconds": time.perf_counter() - started,
        "store": str(out / "store.sqlite"),
        "versions": package_versions(),
    }
    run.finish(result)
    write_json(out / "summary.json", result)
    return result


def print_attack(result: dict[str, Any]) -> None:
    s = result["summary"]
    table = Table(title=f"{result['recipe']['recipe']} attack on {result['data']}/{result['split']} "
                        f"({Path(result['victim']).name})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    rows = [
        ("examples", s["examples"], ""), ("succeeded", s["succeeded"], ""), ("failed", s["failed"], ""),
        ("skipped (already wrong)", s["skipped"], ""), ("errors", s["errors"], ""),
        ("original accuracy", s["original_accuracy"], "%"), ("accuracy under attack", s["accuracy_under_attack"], "%"),
        ("attack success rate", s["success_rate"], "%"), ("words perturbed", s["words_perturbed"], "%"),
        ("words changed (l0)", s["l0"], ""), ("queries per example", s["queries_per_example"], ""),
        ("median perplexity before", s["median_perplexity_before"], ""),
        ("median perplexity after", s["median_perplexity_after"], ""),
        ("similarity (MiniLM cosine)", s["similarity"], ""), ("seconds per example", s["seconds_per_example"], ""),
    ]
    for name, value, kind in rows:
        table.add_row(name, fmt(value, kind))
    console.print(table)


def attack_cmd(
    recipe: Annotated[str, typer.Option(help="Attack recipe (see `textrobust list`).")] = "textfooler",
    victim: Annotated[str, typer.Option(help="'default' or a victim folder.")] = "default",
    data: Annotated[str, typer.Option(help="Bundled data set or a file path.")] = "rotten_tomatoes",
    split: Annotated[str, typer.Option(help="Split to attack.")] = "test",
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples.")] = 50,
    budget: Annotated[Optional[int], typer.Option(help="Query budget per example.")] = None,
    seed: Annotated[int, typer.Option(help="Random seed (stochastic searches).")] = 0,
    out: Annotated[Path, typer.Option(help="Run folder (store.sqlite, summary.json).")] = Path("runs/attack"),
    resume: Annotated[bool, typer.Option(help="Resume the latest attack run in --out.")] = False,
    quality: Annotated[bool, typer.Option(help="Perplexity (Gemma) and similarity (MiniLM) of successes.")] = True,
) -> None:
    """Attack a victim with a recipe; results go to the run store, a table and summary.json."""
    from textrobust.attack.recipes import RECIPES

    if recipe not in RECIPES:
        fail(TextRobustError(f"Unknown recipe '{recipe}'. Known: {', '.join(RECIPES.names())}."))
    try:
        result = run_attack(victim, data, split, recipe, n, budget, seed, out, resume, quality)
    except TextRobustError as exc:
        fail(exc)
        return
    print_attack(result)
    console.print(f"summary: {out / 'summary.json'}")

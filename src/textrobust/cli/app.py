"""The ``textrobust`` command line.

Commands are thin: they parse options, build components from the registries (never with
``eval``), run an analysis with a progress bar and print a summary table. Choices such as
data sets and architectures are generated from the registries.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from textrobust.errors import TextRobustError

app = typer.Typer(
    name="textrobust",
    help="Audit how robust an English text classifier is to word substitutions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
assets_app = typer.Typer(help="List the offline assets, or prepare them (install step).",
                         invoke_without_command=True, no_args_is_help=False)
app.add_typer(assets_app, name="assets")

console = Console()
err_console = Console(stderr=True)


def _fail(exc: BaseException) -> None:
    err_console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
    raise typer.Exit(code=2)


def _human_size(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    from textrobust.store import to_jsonable

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_jsonable(payload), indent=2, sort_keys=True) + "\n")


# ---- assets -------------------------------------------------------------------------------
@assets_app.callback()
def assets(ctx: typer.Context) -> None:
    """List each asset, where it was found, its size and status."""
    if ctx.invoked_subcommand is not None:
        return
    from textrobust.assets import status

    table = Table(title="textrobust assets")
    for col in ("asset", "status", "source", "size", "path / how to fix"):
        table.add_column(col, overflow="fold")
    missing = 0
    for s in status():
        missing += not s.found
        mark = "[green]found[/]" if s.found else "[red]missing[/]"
        where = s.path if s.found else s.detail
        table.add_row(s.name, mark, s.source or "-", _human_size(s.size_bytes), str(where or ""))
    console.print(table)
    if missing:
        console.print(f"{missing} asset(s) missing: run `textrobust assets prepare` (install step).")


@assets_app.command("prepare")
def assets_prepare(
    names: Annotated[Optional[list[str]], typer.Argument(help="Assets to prepare (default: all).")] = None,
    force: Annotated[bool, typer.Option(help="Redo preparation even where the asset is found.")] = False,
) -> None:
    """Prepare asset caches (the install step): WordNet layout, bundled data, Gemma float32."""
    from textrobust.assets import prepare

    try:
        results = prepare(names or None, log=lambda m: console.print(m, highlight=False), force=force)
    except TextRobustError as exc:
        _fail(exc)
        return
    bad = [r for r in results if not r.found]
    for r in bad:
        console.print(f"[yellow]not available after prepare:[/] {r.name}: {r.detail}", highlight=False)
    if names and bad:  # an asset asked for by name must be there
        raise typer.Exit(code=1)


# ---- list ---------------------------------------------------------------------------------
@app.command("list")
def list_components() -> None:
    """List every registered component, by kind."""
    for kind, registry in _registries().items():
        table = Table(title=kind, show_header=True)
        table.add_column("name")
        table.add_column("summary", overflow="fold")
        for entry in registry.entries():
            table.add_row(entry.name, entry.summary)
        console.print(table)


def _registries() -> dict[str, Any]:
    from textrobust.assets import ASSETS
    from textrobust.data import DATASETS
    from textrobust.victims.wrappers import VICTIM_WRAPPERS
    from textrobust.zoo import ZOO

    from textrobust.attack.candidates import CANDIDATE_SOURCES
    from textrobust.attack.constraints import CONSTRAINTS
    from textrobust.attack.recipes import RECIPES
    from textrobust.attack.searches import SEARCHES

    return {"data sets": DATASETS, "architectures (zoo)": ZOO, "victim wrappers": VICTIM_WRAPPERS,
            "attack recipes": RECIPES, "candidate sources": CANDIDATE_SOURCES, "constraints": CONSTRAINTS,
            "searches": SEARCHES, "assets": ASSETS}


# ---- data ---------------------------------------------------------------------------------
@app.command("data")
def data(
    name: Annotated[str, typer.Argument(help="A bundled data set (see `textrobust list`) or a file/folder path.")],
    split: Annotated[str, typer.Option(help="train, dev, test (bundled) or a split of a datasets folder.")] = "test",
    n: Annotated[int, typer.Option(help="How many examples to show.")] = 5,
    text_column: Annotated[Optional[str], typer.Option(help="User files: the text column.")] = None,
    label_column: Annotated[Optional[str], typer.Option(help="User files: the label column.")] = None,
    pair_column: Annotated[Optional[str], typer.Option(help="User files: a second text column (hypothesis).")] = None,
    skip_bad_rows: Annotated[bool, typer.Option(help="Skip (and list) bad rows instead of failing.")] = False,
) -> None:
    """Peek at a data set: size, label balance and the first examples."""
    dataset = _load_data(name, split, text_column, label_column, pair_column, skip_bad_rows)
    console.print(f"[bold]{dataset.name}[/] split={dataset.split} examples={len(dataset):,} labels={list(dataset.label_names)}")
    counts = Table(title="label balance")
    counts.add_column("label")
    counts.add_column("count", justify="right")
    counts.add_column("share", justify="right")
    for label, count in dataset.label_counts().items():
        counts.add_row(label, f"{count:,}", f"{count / max(len(dataset), 1):.1%}")
    console.print(counts)
    table = Table(title=f"first {min(n, len(dataset))} examples")
    table.add_column("id")
    table.add_column("label")
    table.add_column("text", overflow="fold")
    for example in dataset.examples[:n]:
        table.add_row(example.id, dataset.label_names[example.label], str(example.text))
    console.print(table)
    bad = dataset.meta.get("bad_rows") or ()
    if bad:
        console.print(f"[yellow]{len(bad)} bad row(s) skipped:[/] " + "; ".join(str(b) for b in list(bad)[:10]))


def _load_data(name: str, split: str, text_column: str | None = None, label_column: str | None = None,
               pair_column: str | None = None, skip_bad_rows: bool = False) -> Any:
    from textrobust.data import DATASETS, load_dataset

    options: dict[str, Any] = {}
    if name not in DATASETS:
        if text_column:
            options["text_column"] = text_column
        if label_column:
            options["label_column"] = label_column
        if pair_column:
            options["pair_column"] = pair_column
        if skip_bad_rows:
            options["on_bad_rows"] = "skip"
    try:
        return load_dataset(name, split=split, **options)
    except TextRobustError as exc:
        _fail(exc)


# ---- train --------------------------------------------------------------------------------
@app.command("train")
def train(
    arch: Annotated[str, typer.Argument(help="Architecture from the zoo (see `textrobust list`).")],
    data: Annotated[str, typer.Option(help="Bundled data set to train on.")] = "rotten_tomatoes",
    out: Annotated[Optional[Path], typer.Option(help="Victim folder (default: the cache's victims/<arch>).")] = None,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    epochs: Annotated[Optional[int], typer.Option(help="Epochs (default: the architecture's).")] = None,
) -> None:
    """Train a victim of the zoo and save it (safetensors + JSON config + model card)."""
    from textrobust.zoo import ZOO, train_victim

    if arch not in ZOO:
        _fail(TextRobustError(f"Unknown architecture '{arch}'. Known: {', '.join(ZOO.names())}."))
    try:
        trained = train_victim(arch, data, out=out, seed=seed, epochs=epochs)
    except TextRobustError as exc:
        _fail(exc)
        return
    _print_card(trained.card, trained.path)


def _print_card(card: dict[str, Any], path: Path) -> None:
    table = Table(title=f"victim {card.get('architecture', '')} ({path})")
    table.add_column("field")
    table.add_column("value", overflow="fold")
    for key in ("architecture", "dataset", "parameters", "train_seconds", "dev_accuracy", "test_accuracy", "seed"):
        if key in card:
            value = card[key]
            if isinstance(value, float):
                value = f"{value:.4f}"
            table.add_row(key, str(value))
    console.print(table)


# ---- evaluate and demo -------------------------------------------------------------------------
def _evaluate(victim_ref: str, data_name: str, split: str, n: Optional[int], out: Path, resume: bool,
              batch_size: int, seed: int, kind: str) -> dict[str, Any]:
    from textrobust.analyses.evaluation import evaluate
    from textrobust.runner import make_progress
    from textrobust.store import RunStore
    from textrobust.versions import package_versions
    from textrobust.victims.query import QueryLayer
    from textrobust.zoo import ensure_default_victim, load_victim

    started = time.perf_counter()
    if victim_ref == "default":
        victim_path = ensure_default_victim(log=lambda m: console.print(m, highlight=False))
    else:
        victim_path = Path(victim_ref)
    victim = load_victim(victim_path)
    dataset = _load_data(data_name, split).take(n)
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
    _write_json(out / "summary.json", result)
    return result


def _print_evaluation(result: dict[str, Any]) -> None:
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


@app.command("evaluate")
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
        result = _evaluate(victim, data, split, n, out, resume, batch_size, seed, "evaluate")
    except TextRobustError as exc:
        _fail(exc)
        return
    _print_evaluation(result)
    console.print(f"summary: {out / 'summary.json'}")


@app.command("demo")
def demo(
    out: Annotated[Path, typer.Option(help="Run folder.")] = Path("runs/demo"),
    resume: Annotated[bool, typer.Option(help="Resume the latest demo run in --out.")] = False,
    n: Annotated[Optional[int], typer.Option(help="Only the first n test examples.")] = None,
) -> None:
    """The main job on the embedded default: train or load the default victim, evaluate it
    on the Rotten Tomatoes test split, write the run store and a JSON summary."""
    try:
        result = _evaluate("default", "rotten_tomatoes", "test", n, out, resume, 64, 0, "demo")
    except TextRobustError as exc:
        _fail(exc)
        return
    _print_evaluation(result)
    console.print(f"run store: {result['store']}\nsummary:   {out / 'summary.json'}")


# ---- attack ---------------------------------------------------------------------------------------
def _load_victim(victim_ref: str) -> tuple[Any, Path]:
    from textrobust.zoo import ensure_default_victim, load_victim

    if victim_ref == "default":
        path = ensure_default_victim(log=lambda m: console.print(m, highlight=False))
    else:
        path = Path(victim_ref)
    return load_victim(path), path


def _attack(victim_ref: str, data_name: str, split: str, recipe: str, n: Optional[int], budget: Optional[int],
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
    victim, victim_path = _load_victim(victim_ref)
    dataset = _load_data(data_name, split).take(n)
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
    _write_json(out / "summary.json", result)
    return result


def _fmt(value: Any, kind: str = "") -> str:
    if isinstance(value, float):
        if value != value:  # nan
            return "-"
        if kind == "%":
            return f"{value:.1%}"
        return f"{value:,.2f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _print_attack(result: dict[str, Any]) -> None:
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
        table.add_row(name, _fmt(value, kind))
    console.print(table)


@app.command("attack")
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
        _fail(TextRobustError(f"Unknown recipe '{recipe}'. Known: {', '.join(RECIPES.names())}."))
    try:
        result = _attack(victim, data, split, recipe, n, budget, seed, out, resume, quality)
    except TextRobustError as exc:
        _fail(exc)
        return
    _print_attack(result)
    console.print(f"summary: {out / 'summary.json'}")


# ---- export -------------------------------------------------------------------------------------
@app.command("export")
def export(
    out: Annotated[Path, typer.Argument(help="Run folder holding store.sqlite.")],
    format: Annotated[str, typer.Option("--format", help="jsonl or csv.")] = "jsonl",
    run_id: Annotated[Optional[str], typer.Option(help="Run to export (default: the latest).")] = None,
    to: Annotated[Optional[Path], typer.Option(help="Output file (default: <out>/results.<format>).")] = None,
) -> None:
    """Export the per-example results of a run to JSONL or CSV."""
    from textrobust.store import RunStore

    if format not in ("jsonl", "csv"):
        _fail(TextRobustError(f"The '--format' option must be 'jsonl' or 'csv'. Got {format!r} instead."))
    try:
        if not (out / "store.sqlite").is_file():
            raise TextRobustError(f"No run store at {out / 'store.sqlite'}: give the --out folder of a run.")
        store = RunStore(out / "store.sqlite")
        run = store.open_run(run_id) if run_id else store.latest_run()
        if run is None:
            raise TextRobustError(f"No run found in {out / 'store.sqlite'}.")
        target = to or out / f"results.{format}"
        (run.export_jsonl if format == "jsonl" else run.export_csv)(target)
    except TextRobustError as exc:
        _fail(exc)
        return
    console.print(f"wrote {target}")


def main() -> None:
    """Console entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted: finished results are in the run store; rerun with --resume")
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()

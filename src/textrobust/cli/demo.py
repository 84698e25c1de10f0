"""``textrobust demo``: the main job on the embedded default.

On a fresh machine with no arguments it trains (first time only) or loads the default
victim, evaluates it on the Rotten Tomatoes test split through the query layer, attacks
a sample of the test split with the default recipe (TextFooler), runs a short
second-order attack (SO-Beam), bounds the robustness radius (PDP + prover) and PR, and
draws a coarse constraint robustness curve (ACCS) of MiniLM; it writes a run store and a
JSON summary per step plus one summary of the whole demo. The evaluate, attack and
radius steps resume with --resume.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any, Callable

import typer

from textrobust.cli.attack import print_attack, run_attack
from textrobust.cli.common import console, fail, write_json
from textrobust.cli.evaluate import print_evaluation, run_evaluation
from textrobust.errors import TextRobustError

DEFAULT_RECIPE = "textfooler"


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def _evaluate_step(out: Path, n: int | None, resume: bool) -> dict[str, Any]:
    result = run_evaluation("default", "rotten_tomatoes", "test", None, out / "evaluate", resume, 64, 0, "demo-evaluate")
    print_evaluation(result)
    return result


def _attack_step(out: Path, n: int | None, resume: bool) -> dict[str, Any]:
    result = run_attack("default", "rotten_tomatoes", "test", DEFAULT_RECIPE, n, None, 0, out / "attack", resume,
                        True, kind="demo-attack")
    print_attack(result)
    return result


def _radius_step(out: Path, n: int | None, resume: bool) -> dict[str, Any]:
    from textrobust.cli.radius import demo_step

    # a few examples: PDP bounds, prover certificates and PR on the default victim
    return demo_step(out / "radius", n=min(n or 3, 3), resume=resume)


def _print_scalars(title: str, summary: dict[str, Any]) -> None:
    """The scalar entries of a step's summary as a two-column table."""
    from rich.table import Table

    from textrobust.cli.common import fmt

    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        if isinstance(value, (int, float, str)) and not isinstance(value, bool) and key not in ("kind", "summary"):
            table.add_row(key.replace("_", " "), fmt(value))
    console.print(table)


def _second_order_step(out: Path, n: int | None, resume: bool) -> dict[str, Any]:
    from textrobust.cli.second_order import demo_step

    # SO-Beam (Zhang et al. 2021) on a few sentences; starts a new run each time
    result = demo_step(out / "second-order", n=min(n or 3, 3))
    _print_scalars("second-order attack (SO-Beam) on the default victim", result)
    return result


def _accs_step(out: Path, n: int | None, resume: bool) -> dict[str, Any]:
    from textrobust.cli.accs import demo_step

    # a coarse constraint robustness curve of MiniLM cosine (Morris 2020) on a few sentences
    result = demo_step(out / "accs", n=min(n or 4, 4))
    _print_scalars("constraint robustness of MiniLM cosine (ACCS, coarse)", result)
    return result


#: The demo's steps, in order: name -> function(out, n, resume) -> summary.
STEPS: dict[str, Callable[[Path, int | None, bool], dict[str, Any]]] = {
    "evaluate": _evaluate_step,
    "attack": _attack_step,
    "second-order": _second_order_step,
    "radius": _radius_step,
    "accs": _accs_step,
}


def demo(
    out: Annotated[Path, typer.Option(help="Run folder (one sub-folder per step).")] = Path("runs/demo"),
    resume: Annotated[bool, typer.Option(help="Resume the latest demo runs in --out.")] = False,
    n: Annotated[int, typer.Option(help="Examples attacked by the attack step (the other steps take at most 3-4).")] = 10,
    steps: Annotated[str, typer.Option(help=f"Comma-separated steps to run, of: {', '.join(STEPS)}.")] = ",".join(STEPS),
) -> None:
    """Run the main job on the embedded default victim and data (no arguments needed)."""
    chosen = [s.strip() for s in steps.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in STEPS]
    if unknown:
        fail(TextRobustError(f"Unknown demo step(s) {unknown}. Known: {', '.join(STEPS)}."))
    started = time.perf_counter()
    summary: dict[str, Any] = {"steps": {}}
    try:
        for name in chosen:
            console.rule(f"[bold]demo: {name}")
            step_start = time.perf_counter()
            result = STEPS[name](out, n, resume)
            summary["steps"][name] = {"seconds": time.perf_counter() - step_start, "summary": result}
    except TextRobustError as exc:
        fail(exc)
    summary["seconds"] = time.perf_counter() - started
    write_json(out / "summary.json", summary)
    console.print(f"demo finished in {summary['seconds']:.1f} s; summary: {out / 'summary.json'}")

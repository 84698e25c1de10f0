"""``textrobust accs``: constraint robustness curves and ACCS (Morris, BlackboxNLP 2020).

:func:`register` adds the command to the main typer app; :func:`demo_step` runs a short
version on the default victim for ``textrobust demo``. The analysis itself lives in
:mod:`textrobust.analyses.accs`; this module parses options, loads victims, data and
constraint models, writes the run folder (``store.sqlite``, ``summary.json``, the curve
plots as PNG and SVG, ``examples.md``) and prints a summary table.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from textrobust.errors import ConfigError, TextRobustError

__all__ = ["demo_step", "register", "resolve_victim", "run_accs_folder"]

KIND = "accs"


def resolve_victim(ref: str) -> Path:
    """A victim folder from ``ref``: ``default`` (trained on first use), a zoo name trained
    into the cache (``cnn``, ``lstm``, ... under ``<cache>/victims/``) or a folder path."""
    from textrobust.assets import cache_dir
    from textrobust.zoo import ensure_default_victim, is_victim_folder

    if ref == "default":
        return ensure_default_victim()
    path = Path(ref).expanduser()
    if path.is_dir():
        return path
    cached = cache_dir() / "victims" / ref
    if is_victim_folder(cached):
        return cached
    known = sorted(p.name for p in (cache_dir() / "victims").glob("*") if is_victim_folder(p))
    raise ConfigError(
        f"The victim '{ref}' is neither a folder nor a trained victim in {cache_dir() / 'victims'} "
        f"(there: {', '.join(known) or 'none'}). Train one with `textrobust train <arch>` or give a folder."
    )


def _victim_name(ref: str, path: Path) -> str:
    return ref if ("/" not in ref and "\\" not in ref) else path.name


def run_accs_folder(
    out: Path,
    *,
    victims: Sequence[str] = ("default",),
    constraints: Sequence[str] = ("minilm",),
    data: str = "rotten_tomatoes",
    split: str = "test",
    n: int | None = 20,
    settings: Any | None = None,
    seed: int = 0,
    resume: bool = False,
    progress: Any | None = None,
    example_limit: int = 5,
) -> dict[str, Any]:
    """Run (or resume) an ACCS analysis into the folder ``out`` and return its JSON summary.

    Writes ``store.sqlite`` (every task's record), ``summary.json``, ``accs_curves.png/svg``,
    ``accs_rates.png/svg`` and ``examples.md``.
    """
    from textrobust.analyses.accs import AccsComponents, AccsSettings, run_accs
    from textrobust.analyses.accs_report import (
        examples_markdown,
        plot_curves,
        plot_rates,
    )
    from textrobust.analyses.accs_scorers import (
        build_constraint_model,
        parse_constraint_model,
    )
    from textrobust.data import load_dataset
    from textrobust.store import RunStore, to_jsonable
    from textrobust.versions import package_versions
    from textrobust.zoo import load_victim

    started = time.perf_counter()
    settings = settings if settings is not None else AccsSettings()
    constraints = list(dict.fromkeys(constraints))
    for spec in constraints:
        parse_constraint_model(spec)  # fail fast on a typo, before any model loads
    victim_paths = {ref: resolve_victim(ref) for ref in dict.fromkeys(victims)}
    names = {ref: _victim_name(ref, path) for ref, path in victim_paths.items()}
    if len(set(names.values())) != len(names):
        raise ConfigError(f"Two victims share a name: {names}. Give folders with distinct names.")
    loaded = {names[ref]: load_victim(path) for ref, path in victim_paths.items()}
    dataset = load_dataset(data, split=split).take(n)
    components = AccsComponents(settings)
    scorers = {spec: build_constraint_model(spec) for spec in constraints}
    config = {
        "victims": {names[ref]: str(path) for ref, path in victim_paths.items()},
        "victim_cards": {name: getattr(v, "card", None) for name, v in loaded.items()},
        "constraints": constraints,
        "data": data,
        "split": split,
        "n": n,
        "components": components.describe(),
        "scorers": {name: repr(s) for name, s in scorers.items()},
    }
    out.mkdir(parents=True, exist_ok=True)
    store = RunStore(out / "store.sqlite")
    run = store.resume_or_start(KIND, config, seed, resume=resume)
    report = run_accs(run, dataset.examples, victims=loaded, scorers=scorers, components=components,
                      progress=progress, description=f"accs on {dataset.name}/{split}")
    plots = [str(p) for p in plot_curves(report.curves, out / "accs_curves")]
    plots += [str(p) for p in plot_rates(report.curves, out / "accs_rates")]
    examples_path = out / "examples.md"
    examples_path.write_text(
        examples_markdown(report.records, list(loaded), constraints, label_names=dataset.label_names,
                          limit=example_limit) + "\n"
    )
    summary = {
        "run_id": run.run_id,
        "kind": KIND,
        "citation": "Morris, Second-Order NLP Adversarial Examples, BlackboxNLP 2020",
        "victims": config["victims"],
        "constraints": constraints,
        "data": dataset.name,
        "split": split,
        "n": len(dataset),
        "seed": seed,
        **report.summary(),
        "plots": plots,
        "examples": str(examples_path),
        "store": str(out / "store.sqlite"),
        "seconds": time.perf_counter() - started,
        "versions": package_versions(),
    }
    run.finish(summary)
    (out / "summary.json").write_text(json.dumps(to_jsonable(summary), indent=2, sort_keys=True) + "\n")
    return summary


def _print_summary(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()

    def fmt(value: Any, digits: int = 3) -> str:
        if isinstance(value, float):
            return "-" if math.isnan(value) else f"{value:.{digits}f}"
        return str(value)

    boot = summary.get("bootstrap") or {}
    intervals = {(r["victim"], r["constraint"]): r["interval"] for r in boot.get("per_curve", [])}
    table = Table(title=f"ACCS on {summary['data']}/{summary['split']} (n={summary['n']})")
    for column in ("victim", "constraint", "ACCS", "95% interval", "ACCS (trapezoid)", "max 1st-order",
                   "max 2nd-order", "attacked", "s/ex 1st", "s/ex 2nd"):
        table.add_column(column, justify="left" if column in ("victim", "constraint") else "right")
    for row in summary["table"]:
        low, high = intervals.get((row["victim"], row["constraint"]), (float("nan"), float("nan")))
        table.add_row(
            row["victim"], row["constraint"], fmt(row["accs"]), f"{fmt(low)}-{fmt(high)}", fmt(row["accs_trapezoid"]),
            fmt(row["max_first_order"]), fmt(row["max_second_order"]), str(row["attacked_first_order"]),
            fmt(row["first_order_seconds_per_example"], 1), fmt(row["second_order_seconds_per_example"], 1),
        )
    console.print(table)
    short = summary.get("shortcut")
    if short:
        table = Table(title="monotone shortcut vs exact sweep (simulated on the exact records)")
        for column in ("victim", "constraint", "ACCS exact", "ACCS shortcut", "max gap 1st", "max gap 2nd"):
            table.add_column(column)
        for row in short["per_curve"]:
            table.add_row(row["victim"], row["constraint"], fmt(row["accs_exact"]), fmt(row["accs_shortcut"]),
                          fmt(row["max_gap_first_order"]), fmt(row["max_gap_second_order"]))
        console.print(table)
    console.print(f"plots: {', '.join(summary['plots'])}\nexamples: {summary['examples']}")


def register(app: typer.Typer) -> None:
    """Add the ``accs`` command to ``app``."""

    @app.command("accs")
    def accs_cmd(
        victim: Annotated[list[str] | None, typer.Option(
            help="Victim: 'default', a zoo victim in the cache (cnn, lstm, ...) or a folder. Repeat for several.")] = None,
        constraint: Annotated[list[str] | None, typer.Option(
            help="Constraint model: minilm, bertscore, word_mean, mpnet:<folder>, encoder:<folder>. Repeat.")] = None,
        data: Annotated[str, typer.Option(help="Bundled data set or a file path.")] = "rotten_tomatoes",
        split: Annotated[str, typer.Option(help="Split to sample examples from.")] = "test",
        n: Annotated[int | None, typer.Option(help="Only the first n examples.")] = 20,
        eps_start: Annotated[float, typer.Option(help="Lowest threshold.")] = 0.75,
        eps_stop: Annotated[float, typer.Option(help="Highest threshold.")] = 1.0,
        eps_step: Annotated[float, typer.Option(
            help="Threshold step (paper: 0.01; 0.02 from 0.5 for short texts). ACCS depends on how finely the grid "
                 "resolves each model's scale: e.g. word_mean needs 0.95..1.0 by 0.002.")] = 0.01,
        gamma: Annotated[int, typer.Option(help="Words the second-order attack must swap.")] = 3,
        beam_width: Annotated[int, typer.Option(help="Beam width of the second-order attack.")] = 2,
        max_drop: Annotated[float, typer.Option(help="Largest LM log-probability drop of a swap (nats).")] = 2.0,
        lm_mode: Annotated[str, typer.Option(help="LM constraint: left_word (GPT-2 style), window or none.")] = "left_word",
        indirect_antonyms: Annotated[bool, typer.Option(
            help="Also antonyms of adjective satellites through their head synsets.")] = True,
        sweep: Annotated[str, typer.Option(help="exact (every threshold) or monotone (the shortcut).")] = "exact",
        budget: Annotated[int | None, typer.Option(help="Victim queries per first-order attack.")] = None,
        seed: Annotated[int, typer.Option(help="Random seed (recorded; the searches are deterministic).")] = 0,
        out: Annotated[Path, typer.Option(help="Run folder (store.sqlite, summary.json, plots).")] = Path("runs/accs"),
        resume: Annotated[bool, typer.Option(help="Resume the latest accs run in --out.")] = False,
        examples: Annotated[int, typer.Option(help="Rows per example table.")] = 5,
    ) -> None:
        """Constraint robustness (Morris 2020): attack each victim under a similarity
        threshold and attack the similarity model itself, sweep the threshold, report ACCS."""
        from rich.console import Console

        from textrobust.analyses.accs import (
            AccsSettings,
            LMMode,
            SweepMode,
            epsilon_grid,
        )
        from textrobust.attack.constraints.base import parse_enum
        from textrobust.runner import make_progress

        try:
            settings = AccsSettings(
                epsilons=epsilon_grid(eps_start, eps_stop, eps_step), gamma=gamma, beam_width=beam_width,
                max_log_prob_drop=max_drop, lm_mode=parse_enum(LMMode, lm_mode, "lm_mode", "accs"),
                indirect_antonyms=indirect_antonyms, sweep=parse_enum(SweepMode, sweep, "sweep", "accs"),
                budget=budget,
            )
            with make_progress() as progress:
                summary = run_accs_folder(
                    out, victims=victim or ["default"], constraints=constraint or ["minilm"], data=data, split=split,
                    n=n, settings=settings, seed=seed, resume=resume, progress=progress, example_limit=examples,
                )
        except TextRobustError as exc:
            Console(stderr=True).print(f"[bold red]error:[/] {exc}", highlight=False)
            raise typer.Exit(code=2) from None
        _print_summary(summary)
        Console().print(f"summary: {out / 'summary.json'}")


def demo_step(out: Path, *, n: int = 4) -> dict[str, Any]:
    """A short ACCS run for ``textrobust demo``: the default victim, MiniLM cosine, the first
    ``n`` Rotten Tomatoes test sentences, thresholds 0.80..1.00 by 0.05 (about 1.5 minutes
    for n=4 on two shared cores, model loading included). Returns a JSON-ready summary
    (ACCS, the curve, success counts, seconds); the run folder is ``out``.

    A short run shows the pipeline, not a usable ACCS: the second-order attack succeeds on
    about one sentence in eleven (benchmarks/results/accs.md), so with a few sentences it
    usually finds none and ACCS is 1.0 by definition ("never fooled")."""
    from textrobust.analyses.accs import AccsSettings, epsilon_grid

    settings = AccsSettings(epsilons=epsilon_grid(0.8, 1.0, 0.05))
    summary = run_accs_folder(out, victims=["default"], constraints=["minilm"], n=n, settings=settings)
    row = summary["table"][0] if summary["table"] else {}
    curve: dict[str, Any] = next(iter(next(iter(summary["curves"].values()), {}).values()), {})
    return {
        "kind": KIND,
        "n": summary["n"],
        "first_order_successes": round(max(curve.get("first_order", [0.0]), default=0.0)
                                       * curve.get("first_attacked", 0)),
        "second_order_successes": round(max(curve.get("second_order", [0.0]), default=0.0)
                                        * curve.get("second_attacked", 0)),
        "epsilons": list(settings.epsilons),
        "accs": row.get("accs"),
        "accs_trapezoid": row.get("accs_trapezoid"),
        "curve": summary["curves"],
        "seconds": summary["seconds"],
        "summary": str(out / "summary.json"),
        "plots": summary["plots"],
    }

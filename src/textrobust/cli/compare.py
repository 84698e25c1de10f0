"""``textrobust compare RUN_A RUN_B [RUN_C ...]``: audits side by side, with paired intervals.

Reads the run folders' stores (no victim is loaded, nothing is run again), prints one
table of the headline figures with each run's difference from the first (the baseline)
and its paired 95% interval, and writes ``compare.html`` and ``compare.json``; the page's
path is the last line. A folder that is not a run folder, or runs that share no example,
exit 2 with one line saying so.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from textrobust.cli.common import console, err_console, fail
from textrobust.errors import TextRobustError

if TYPE_CHECKING:
    from textrobust.report.compare import Comparison

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_cmd)


def compare_cmd(
    runs: Annotated[list[Path], typer.Argument(help="Two or more run folders (the --out of `textrobust audit` or "
                                                    "of an analysis command); the first is the baseline.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for compare.html and compare.json.")] = Path(
        "runs/compare"),
    resamples: Annotated[int, typer.Option("--resamples", min=1, max=1_000_000,
                                           help="Bootstrap resamples of the shared examples per figure.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**63 - 1, help="Seed of the bootstrap (the same seed "
                                                                            "gives the same intervals).")] = 0,
) -> None:
    """Compare audits: each headline figure per run, its difference from the first run with a
    paired 95% interval over the shared examples, and where the runs disagree."""
    from textrobust.report.compare import compare_runs, write_comparison

    from textrobust.cli.running import check_out

    try:
        check_out(out)  # before reading any run: a bad --out is the user's first thing to fix
        comparison = compare_runs(runs, resamples=resamples, seed=seed)
        html, data = write_comparison(comparison, out)
    except TextRobustError as exc:
        fail(exc)
    print_comparison(comparison)
    console.print(f"data: {data}", highlight=False, soft_wrap=True)
    console.print(f"report: {html}", highlight=False, soft_wrap=True)  # the last line, never wrapped


def print_comparison(c: Comparison) -> None:
    """The headline figures of every run with their differences from the baseline, then
    what the runs do not share."""
    from textrobust.report.compare import format_difference, format_interval, format_p
    from textrobust.report.html import format_value

    baseline = c.runs[0].name
    several = len(c.runs) > 2
    table = Table(title=f"Differences from the baseline {escape(baseline)} on the shared examples "
                        f"(paired {c.confidence:.0%} bootstrap, {c.resamples:,} resamples, seed {c.seed}; p: McNemar's "
                        "exact test, for right/wrong figures)",
                  title_justify="left")
    table.add_column("figure", overflow="fold", min_width=18)
    table.add_column(escape(baseline), justify="right", no_wrap=True)
    if several:
        table.add_column("run", overflow="fold")
    table.add_column("other" if several else escape(c.runs[1].name), justify="right", no_wrap=True)
    table.add_column(f"difference [{c.confidence:.0%} interval]", justify="right", no_wrap=True)
    table.add_column("p", justify="right", no_wrap=True)
    previous = None
    for figure in c.figures:
        if figure.format == "text":
            continue
        if previous != figure.analysis:
            if previous is not None:
                table.add_section()
            table.add_row(f"[bold]{escape(figure.analysis)}[/]")
            previous = figure.analysis
        for i, d in enumerate(figure.deltas):
            cells = [escape(figure.label) if i == 0 else "", format_value(figure.baseline, figure.format) if i == 0 else ""]
            if several:
                cells.append(escape(d.run))
            difference = format_difference(d.difference, figure.format) if d.difference is not None else "-"
            interval = format_interval(d, figure.format).removesuffix(" pp")
            cells += [format_value(d.value, figure.format), f"{difference} {interval}".strip(),
                      format_p(d.p_value) or "-"]
            table.add_row(*cells)
    console.print(table)
    for note in c.notes:
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    if c.disagreements:
        console.print(f"{len(c.disagreements):,} example(s) where a run's prediction or attack outcome differs "
                      "from the baseline's (listed in the report)", highlight=False)

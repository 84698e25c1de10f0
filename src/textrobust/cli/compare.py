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
from textrobust.report.paired import MIN_TAIL, min_resamples

if TYPE_CHECKING:
    from textrobust.report.compare import Comparison, RunFolder

__all__ = ["register"]


#: the fewest --resamples (textrobust.report.paired.min_resamples)
_LEAST = min_resamples()


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_cmd)


def compare_cmd(
    runs: Annotated[list[Path], typer.Argument(metavar="RUNS", help="Two or more run folders (the --out of "
                                                                    "`textrobust audit` or of an analysis command); "
                                                                    "the first is the baseline.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for compare.html and compare.json.")] = Path(
        "runs/compare"),
    resamples: Annotated[int, typer.Option("--resamples", min=_LEAST, max=1_000_000,
                                           help=f"Bootstrap resamples of the shared examples per figure (at least "
                                                f"{_LEAST}, so that each tail of the 95% interval holds "
                                                f"{MIN_TAIL}).")] = 2000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**63 - 1, help="Seed of the bootstrap (the same seed "
                                                                            "gives the same intervals).")] = 0,
    allow_unfinished: Annotated[bool, typer.Option("--allow-unfinished", help="Compare runs that never finished "
                                                   "(interrupted: part of their plan), marked as such; without it "
                                                   "they are refused.")] = False,
    allow_different_texts: Annotated[bool, typer.Option("--allow-different-texts", help="Pair runs by example id "
                                                        "even where the same id holds different texts (runs over "
                                                        "different data); without it they are refused.")] = False,
) -> None:
    """Compare audits: each headline figure per run, its difference from the first run with a
    paired 95% interval over the shared examples, and where the runs disagree."""
    from textrobust.report.compare import compare_runs, write_comparison

    from textrobust.cli.running import check_out

    try:
        check_out(out)  # before reading any run: a bad --out is the user's first thing to fix
        _warn_repeated(runs)
        comparison = compare_runs(runs, resamples=resamples, seed=seed, allow_unfinished=allow_unfinished,
                                  allow_different_texts=allow_different_texts)
        html, data = write_comparison(comparison, out)
    except TextRobustError as exc:
        fail(exc)
    print_comparison(comparison)
    console.print(f"data: {data}", highlight=False, soft_wrap=True)
    console.print(f"report: {html}", highlight=False, soft_wrap=True)  # the last line, never wrapped


def _warn_repeated(runs: list[Path]) -> None:
    """A warning for a run folder given more than once: it is compared with itself."""
    seen: dict[Path, Path] = {}
    for run in runs:
        key = run.expanduser().resolve()
        if key in seen:
            err_console.print(f"[yellow]warning:[/] {escape(str(run))} is the same run folder as "
                              f"{escape(str(seen[key]))}: it is compared with itself (every difference is 0).",
                              highlight=False, soft_wrap=True)
        else:
            seen[key] = run


def print_comparison(c: Comparison) -> None:
    """The headline figures of every run with their differences from the baseline, then
    what the runs do not share. Where a difference is paired, the two values beside it are
    over the same shared examples (a run's whole-run figure, over examples the other run
    lacks, is in the report); an unfinished run is marked."""
    from textrobust.report.compare import format_difference, format_interval, format_p
    from textrobust.report.html import format_value

    def named(run: RunFolder) -> str:
        return escape(run.name) + (" (unfinished)" if run.unfinished else "")

    baseline = named(c.runs[0])
    several = len(c.runs) > 2
    table = Table(title=f"Differences from the baseline {baseline} on the shared examples; the values beside a "
                        "paired difference are over the examples the two runs share, the others over each run's own "
                        f"(paired {c.confidence:.0%} bootstrap, {c.resamples:,} resamples, seed {c.seed}; p: "
                        "McNemar's exact test, for right/wrong figures)",
                  title_justify="left")
    table.add_column("figure", overflow="fold", min_width=12)
    table.add_column(baseline, justify="right", no_wrap=True)
    if several:
        table.add_column("run", overflow="fold")
    table.add_column("other" if several else named(c.runs[1]), justify="right", no_wrap=True)
    table.add_column(f"difference [{c.confidence:.0%} interval]", justify="right")  # wraps before its interval
    table.add_column("p", justify="right", no_wrap=True)
    runs = {run.name: run for run in c.runs}
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
            base_value, value = d.on_shared if d.on_shared is not None else (figure.baseline, d.value)
            cells = [escape(figure.label) if i == 0 else "", format_value(base_value, figure.format)]
            if several:
                cells.append(named(runs[d.run]) if d.run in runs else escape(d.run))
            difference = format_difference(d.difference, figure.format) if d.difference is not None else "-"
            interval = format_interval(d, figure.format).removesuffix(" pp")
            cells += [format_value(value, figure.format), f"{difference} {interval}".strip(),
                      format_p(d.p_value) or "-"]
            table.add_row(*cells)
    from textrobust.cli.report import table_console

    table_console().print(table)
    for note in c.notes:
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)
    if c.disagreements:
        console.print(f"{len(c.disagreements):,} example(s) where a run's prediction or attack outcome differs "
                      "from the baseline's (listed in the report)", highlight=False, soft_wrap=True)

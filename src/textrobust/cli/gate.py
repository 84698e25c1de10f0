"""``textrobust gate RUN_DIR --require ...``: the robustness gate on a finished run.

The same check that ``textrobust audit --require ... --junit ...`` makes after its run,
made on the ``summary.json`` of a run folder without running anything: each requirement
is printed with its margin, exit 3 when one fails, 0 when all pass, 2 for a malformed
requirement or a key that is not a figure of the run (the message lists the valid keys).
The logic is :mod:`textrobust.audit.requirements`; this module parses and prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from textrobust.cli import options as o
from textrobust.cli.common import console, fail
from textrobust.errors import ConfigError, TextRobustError

if TYPE_CHECKING:
    from textrobust.audit.requirements import Requirement

__all__ = ["FAILED_EXIT", "apply_gate", "parse_require", "register"]

#: The exit code of a run whose figures miss a --require (2 is a usage error).
FAILED_EXIT = 3


def register(app: typer.Typer) -> None:
    app.command("gate")(gate_cmd)


def gate_cmd(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN", help="A run folder written by `textrobust audit` or "
                                                                "an analysis command (its summary.json is read; "
                                                                "nothing is run).")],
    require: o.Require = None,
    junit: o.Junit = None,
) -> None:
    """Check a finished run's figures against --require: exit 3 when one fails (a CI gate)."""
    try:
        requirements = parse_require(require)
        if not requirements:
            raise ConfigError("The '--require' option is needed at least once, e.g. "
                                  "--require 'attack.accuracy_under_attack>=0.30'.")
        if junit is not None:  # a missing folder: say so before reading the run, never make it
            from textrobust.audit.requirements import check_junit_target

            check_junit_target(junit)
    except TextRobustError as exc:
        fail(exc)
    apply_gate(run_dir, requirements, junit, reviewed_end=True)


def parse_require(values: Iterable[str] | None, subject: str = "The '--require' option") -> tuple[Requirement, ...]:
    """The ``--require`` values parsed; a ConfigError (exit 2 through ``fail``) when one is
    malformed."""
    from textrobust.audit.requirements import parse_requirements

    return parse_requirements(values or (), subject)


def apply_gate(run_dir: Path, requirements: Sequence[Requirement], junit: Path | None, *,
               reviewed_end: bool = False) -> None:
    """Check ``requirements`` against the summary.json of ``run_dir``: print each outcome,
    write ``junit`` when given, exit 3 when one failed (2 for a key the run has not).
    ``reviewed_end`` (the audit's own gate): a reviewed figure is read at the end of its
    interval hardest to meet (:func:`textrobust.audit.requirements.check`)."""
    from textrobust.audit import requirements as req

    if not requirements:
        return
    try:
        values = req.load_figures(run_dir)
        req.check_keys(requirements, *req.summary_keys(values), where=f"the run in {run_dir}")
        outcomes = req.check(requirements, values, reviewed_end=reviewed_end)
        if junit is not None:
            req.write_junit(outcomes, junit)
    except TextRobustError as exc:
        fail(exc)
    failed = [outcome for outcome in outcomes if not outcome.passed]
    for outcome in outcomes:
        mark = "[green]pass[/]" if outcome.passed else "[bold red]FAIL[/]"
        console.print(f"  {mark} {escape(outcome.message)}", highlight=False, soft_wrap=True)
    if junit is not None:
        console.print(f"junit: {junit}", highlight=False)
    if failed:
        console.print(f"[bold red]Gate failed:[/] {len(failed)} of {len(outcomes)} requirement(s) not met.",
                      highlight=False)
        raise typer.Exit(code=FAILED_EXIT)
    console.print(f"[green]Gate passed:[/] all {len(outcomes)} requirement(s) met.", highlight=False)

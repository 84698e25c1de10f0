"""The one path every analysis command takes: validate, resume, run the audit, print.

A command parses its own options into analysis settings and calls :func:`run_analyses`
with the click context; the shared options (:mod:`textrobust.cli.options`) are read from
the context here, once. With ``--resume``, every option the user did not give on the
command line is taken from the run stored in ``--out``; options the user did give must
match the stored run (the store names the ones that differ).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from textrobust.audit import run_folder
from textrobust.cli.common import Terminated, console, err_console, fail, fmt
from textrobust.errors import ConfigError, TextRobustError

__all__ = ["check_out", "check_seed", "data_options", "print_result", "run_analyses", "stored_options"]

#: The stored run's settings and shared options, read by the library (:mod:`textrobust.audit.run_folder`).
stored_options = run_folder.stored_options

MAX_SEED = 2**63 - 1
_SHARED_FROM_STORE = ("victim", "data", "split", "seed")


def check_seed(seed: int) -> None:
    if not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"The '--seed' option must be an integer from 0 to 2^63-1. Got {seed} instead.")


def check_out(out: Path) -> None:
    """``--out`` must be a folder we can write: not a file, not under a file, writable."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"The '--out' option names a file ({out}); give a folder.")
    probe = out
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise ConfigError(f"The '--out' option ({out}) is under a file ({probe}); give a folder.")
    import os

    if not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigError(f"The '--out' folder ({out}) cannot be written: {probe} is not writable.")


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the user typed option ``name`` (compared by name: typer may bundle its own
    copy of click's ParameterSource enum)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def data_options(params: Mapping[str, Any]) -> dict[str, Any]:
    """Column options for a user file (ignored by bundled sets: they have fixed columns)."""
    options: dict[str, Any] = {}
    for name in ("text_column", "label_column", "pair_column", "id_column", "encoding"):
        if params.get(name):
            options[name] = params[name]
    if params.get("file_format"):
        options["file_format"] = params["file_format"]
    if params.get("label_names"):
        options["label_names"] = [n.strip() for n in str(params["label_names"]).split(",") if n.strip()]
    if params.get("skip_bad_rows"):
        options["on_bad_rows"] = "skip"
    return options


def run_analyses(ctx: typer.Context, analyses: Mapping[str, Mapping[str, Any]], *, title: str | None = None,
                 profile: str | None = None, overview: bool = False, verbose: bool = False) -> Any:
    """Run ``analyses`` (name -> settings from the command's own options) with the shared
    options of ``ctx``; print every section (with ``overview``: the verdict, one overview
    table and the analyses not run first, the sections only when ``verbose``), the
    report's path last; exit 2 with one line on any error. ``profile``: the audit profile
    the analyses came from (the report then lists the analyses not run)."""
    from textrobust import audit
    from textrobust.audit.labels import parse_label_map

    params = dict(ctx.params)
    out = Path(params["out"])
    try:
        check_out(out)
        if params.get("resume"):
            analyses = _merge_stored(ctx, params, analyses, out)
        check_seed(int(params.get("seed", 0)))
        if params.get("gpus_per_worker") is not None:  # its value first: nan or -1 is wrong with any executor
            from textrobust.audit.executors import check_gpus_per_worker

            check_gpus_per_worker(params["gpus_per_worker"])
        result = audit.run(
            params.get("victim", "default"), params.get("data", "rotten_tomatoes"), dict(analyses), out,
            split=params.get("split"), data_options=data_options(params),
            label_map=parse_label_map(params.get("label_map")),
            labels_by_position=bool(params.get("labels_by_position")), resume=bool(params.get("resume")),
            executor=params.get("executor", "local"), workers=params.get("workers"), address=params.get("address"),
            gpus_per_worker=params.get("gpus_per_worker"),
            seed=int(params.get("seed", 0)), progress=not params.get("quiet"), title=title,
            max_words=params.get("max_words"), length_policy=params.get("length_policy", "truncate"),
            profile=profile, device=params.get("device", "auto"), dtype=params.get("dtype", "float32"),
            allow_precision_change=bool(params.get("allow_precision_change")), threads=params.get("threads", "auto"),
            labelled=params.get("labelled"))
    except TextRobustError as exc:
        fail(exc)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated)
        _interrupted(out, ctx, exc)
    _warn_skipped_rows(result.report)
    if params.get("resume") and all(r.computed == 0 for r in result.results.values()):
        console.print(f"nothing to resume: every unit of {', '.join(result.results)} was already stored in {out}; "
                      "the report is written again from the store (a larger --n resumes with more)",
                      highlight=False, soft_wrap=True)
    if overview:
        print_overview(result.report, verbose=verbose)
    if verbose or not overview:
        for name in analyses:
            print_result(result[name], result.report)
    console.print(f"store: {out / 'store.sqlite'}", highlight=False, soft_wrap=True)  # whole paths, at any width
    console.print(f"report: {result.report_html or result.report_json}", highlight=False, soft_wrap=True)  # last
    return result


def _warn_skipped_rows(report: Mapping[str, Any]) -> None:
    """One line on stderr for the rows ``--skip-bad-rows`` skipped (the report lists them too)."""
    skipped = (report.get("data") or {}).get("skipped_rows")
    if not skipped:
        return
    shown = "; ".join(skipped["shown"][:10]) + ("; ..." if skipped["count"] > 10 else "")
    err_console.print(f"[yellow]{skipped['count']:,} bad row(s) skipped (--skip-bad-rows):[/] {escape(shown)}",
                      markup=True, highlight=False)


def _merge_stored(ctx: typer.Context, params: dict[str, Any], analyses: Mapping[str, Mapping[str, Any]],
                  out: Path) -> dict[str, dict[str, Any]]:
    """Each analysis's settings given on the command line: the options the user typed (and
    those the stored run lacks); :func:`textrobust.audit.run` puts them over the stored
    run's settings, as for a Python caller. The shared options the user did not type are
    taken from the store."""
    merged: dict[str, dict[str, Any]] = {}
    for name, settings in analyses.items():
        stored, shared = stored_options(out, name)
        if not stored and not shared:
            merged[name] = dict(settings)
            continue
        from textrobust.audit.run_folder import LEGACY_SETTINGS

        known = set(stored) | set(LEGACY_SETTINGS)  # a legacy setting the run predates: its old value
        merged[name] = {key: value for key, value in settings.items() if key not in known or _given(ctx, key)}
        for key, value in shared.items():
            option = "skip_bad_rows" if key == "on_bad_rows" else key
            if isinstance(value, list):
                value = ",".join(str(v) for v in value)
            if option in params and not _given(ctx, option) and value is not None:
                params[option] = (value == "skip") if option == "skip_bad_rows" else value
    ctx.params.update(params)
    return merged


def _interrupted(out: Path, ctx: typer.Context, exc: KeyboardInterrupt) -> None:
    from textrobust.store import RunStore

    saved = 0
    path = out / "store.sqlite"
    if path.is_file():
        with RunStore(path) as store:
            saved = sum(len(run) for run in store.runs())
    command = " ".join(["textrobust", ctx.info_name or "", "--out", str(out), "--resume"])
    what = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
    if path.is_file():
        err_console.print(f"{what}: {saved:,} results are saved in {path}; continue with: {command}",
                          soft_wrap=True)  # one line: the command can be copied
    else:  # stopped before the run started: --resume would find nothing to resume
        err_console.print(f"{what} before the run started: nothing is saved; run the same command again to start",
                          soft_wrap=True)
    raise typer.Exit(code=Terminated.exit_code if isinstance(exc, Terminated) else 130)


def print_result(result: Any, report: Mapping[str, Any]) -> None:
    """An analysis's headline figures and tables, readable in 80 columns."""
    section = next((s for s in report.get("analyses", []) if s["name"] == result.name), None)
    if section is None:
        return
    table = Table(title=section["title"], title_justify="left",
                  caption=(f"{result.computed:,} units computed now, {result.resumed:,} resumed from the store "
                           "(a unit: the examples saved together, the step a stopped run resumes from)"),
                  caption_justify="left")
    table.add_column("figure", overflow="fold", ratio=3)
    table.add_column("value", justify="right", overflow="fold", ratio=1)
    for item in section["headline"]:
        label = escape(item["label"]) + (f"\n[dim]{escape(item['note'])}[/]" if item.get("note") else "")
        table.add_row(label, _cell(item["value"], item["format"]))
    counts = section["counts"]
    table.add_row("errors", f"{counts['errors']:,}")
    table.add_row("budget exhausted", f"{counts['budget_exhausted']:,}")
    console.print(table)
    for extra in section.get("tables", []):
        _print_table(extra)


def _cell(value: Any, kind: str = "float") -> str:
    if value is None:
        return "n/a"
    if kind == "%" and isinstance(value, (int, float)):
        return f"{value:.1%}"
    if kind == "int" and isinstance(value, (int, float)):
        return f"{int(value):,}"
    return fmt(value)


def _print_table(spec: Mapping[str, Any]) -> None:
    """A report table, with its note (what the columns mean) under it. A table too wide
    for the terminal is printed in parts of whole columns, each repeating the first column,
    never with its headings folded letter by letter."""
    columns = [str(c) for c in spec["columns"]]
    rows = [[_cell(c) for c in row] for row in spec["rows"]]
    parts = _column_parts(columns, rows, console.width)
    for i, part in enumerate(parts):
        title = str(spec["title"]) + (f" ({i + 1}/{len(parts)})" if len(parts) > 1 else "")
        table = Table(title=escape(title), title_justify="left")
        for c in part:
            table.add_column(escape(columns[c]), overflow="fold")
        for row in rows:
            table.add_row(*[escape(row[c]) for c in part])
        console.print(table)
    if spec.get("note"):  # under the table, as wide as the terminal
        console.print(f"[dim]{escape(str(spec['note']))}[/]", highlight=False)


def _column_parts(columns: list[str], rows: list[list[str]], width: int) -> list[list[int]]:
    """Column indices in groups that fit ``width`` (each group after the first starts
    with column 0, the rows' key); a column is as wide as its longest heading word or cell."""

    def need(c: int) -> int:
        words = [w for w in columns[c].split()] or [""]
        return max([len(w) for w in words] + [len(row[c]) for row in rows]) + 3  # padding and rule

    if not columns:
        return [[]]
    parts: list[list[int]] = [[0]]
    used = 1 + need(0)
    for c in range(1, len(columns)):
        if used + need(c) > width and len(parts[-1]) > 1:
            parts.append([0])
            used = 1 + need(0)
        parts[-1].append(c)
        used += need(c)
    return parts


def print_overview(report: Mapping[str, Any], *, verbose: bool = False) -> None:
    """What ``textrobust audit`` prints first: the verdict, one overview table (each
    analysis's first headline figures with their meaning) and the analyses not run, with
    the command that adds them."""
    from textrobust.report.html import GLANCE_FIGURES

    v = report["verdict"]
    colour = {"good": "green", "fair": "yellow", "poor": "red"}.get(v["level"], "white")
    console.print(f"[bold {colour}]Verdict: {escape(v['level'])}[/]. {escape(v['headline'])}", highlight=False)
    for point in v.get("points", []):
        console.print(f"  - {escape(point)}", highlight=False)
    table = Table(title="Overview: each analysis's first figures" + ("" if verbose else " (all: --verbose)"),
                  title_justify="left")
    table.add_column("analysis", overflow="fold", no_wrap=False)
    table.add_column("figure (what it means)", overflow="fold", ratio=1)
    table.add_column("value", justify="right", no_wrap=True)
    sections = report.get("analyses", [])
    for i, section in enumerate(sections):
        rows = [(item["label"], item.get("note"), _cell(item.get("value"), item["format"]))
                for item in section["headline"][:GLANCE_FIGURES]]
        counts = section["counts"]
        if counts["errors"]:
            rows.append(("errors", f"of {counts['units']:,} units; see the report", f"{counts['errors']:,}"))
        if counts["budget_exhausted"]:
            rows.append(("budget exhausted", "units stopped by the query budget", f"{counts['budget_exhausted']:,}"))
        for j, (label, note, value) in enumerate(rows):
            shown = escape(label) + (f"\n[dim]{escape(note)}[/]" if note else "")
            table.add_row(escape(section["name"]) if j == 0 else "", shown, value,
                          end_section=j == len(rows) - 1 and i < len(sections) - 1)
    console.print(table)
    missing = report.get("not_run") or []
    if missing:
        names = ", ".join(m["name"] for m in missing)
        console.print(f"Not run: {escape(names)}. Add them all: the same command with `--profile full` "
                      "(small sizes), or one at a time:", highlight=False)
        for m in missing:
            console.print(f"  {escape(m['command'])}", soft_wrap=True, highlight=False)

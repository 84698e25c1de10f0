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

import click
import typer
from rich.markup import escape
from rich.table import Table

from textrobust.cli.common import console, err_console, fail, fmt
from textrobust.errors import ConfigError, TextRobustError

__all__ = ["check_out", "check_seed", "data_options", "print_result", "run_analyses", "stored_options"]

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


def stored_options(out: Path, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The latest ``kind`` run in ``out``'s store: its settings, and its shared options
    (victim, data, split, seed and the data's column options); ``({}, {})`` when none."""
    from textrobust.store import RunStore

    path = out / "store.sqlite"
    if not path.is_file():
        return {}, {}
    with RunStore(path) as store:
        run = store.latest_run(kind)
        if run is None:
            return {}, {}
        config = run.config
        data = config.get("data") or {}
        shared: dict[str, Any] = {"victim": config.get("victim"), "data": data.get("dataset"),
                                  "split": data.get("split"), "seed": run.seed}
        shared.update(data.get("options") or {})
        return dict(config.get("settings") or {}), shared


def _given(ctx: click.Context, name: str) -> bool:
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


def run_analyses(ctx: click.Context, analyses: Mapping[str, Mapping[str, Any]], *, title: str | None = None) -> Any:
    """Run ``analyses`` (name -> settings from the command's own options) with the shared
    options of ``ctx``; print every section; exit 2 with one line on any error."""
    from textrobust import audit
    from textrobust.audit.labels import parse_label_map

    params = dict(ctx.params)
    out = Path(params["out"])
    try:
        check_out(out)
        if params.get("resume"):
            analyses = _merge_stored(ctx, params, analyses, out)
        check_seed(int(params.get("seed", 0)))
        result = audit.run(
            params.get("victim", "default"), params.get("data", "rotten_tomatoes"), dict(analyses), out,
            split=params.get("split"), data_options=data_options(params),
            label_map=parse_label_map(params.get("label_map")),
            labels_by_position=bool(params.get("labels_by_position")), resume=bool(params.get("resume")),
            executor=params.get("executor", "local"), workers=params.get("workers"), address=params.get("address"),
            seed=int(params.get("seed", 0)), progress=not params.get("quiet"), title=title,
            max_words=params.get("max_words"), length_policy=params.get("length_policy", "truncate"))
    except TextRobustError as exc:
        fail(exc)
    except KeyboardInterrupt:
        _interrupted(out, ctx)
    for name in analyses:
        print_result(result[name], result.report)
    console.print(f"report: {result.report_html or result.report_json}   store: {out / 'store.sqlite'}")
    return result


def _merge_stored(ctx: click.Context, params: dict[str, Any], analyses: Mapping[str, Mapping[str, Any]],
                  out: Path) -> dict[str, dict[str, Any]]:
    """Each analysis's settings: the stored run's, with the options the user typed on top;
    the shared options the user did not type are taken from the store too."""
    merged: dict[str, dict[str, Any]] = {}
    for name, settings in analyses.items():
        stored, shared = stored_options(out, name)
        if not stored and not shared:
            merged[name] = dict(settings)
            continue
        typed = {key: value for key, value in settings.items() if key not in stored or _given(ctx, key)}
        merged[name] = {**stored, **typed}
        for key, value in shared.items():
            option = "skip_bad_rows" if key == "on_bad_rows" else key
            if isinstance(value, list):
                value = ",".join(str(v) for v in value)
            if option in params and not _given(ctx, option) and value is not None:
                params[option] = (value == "skip") if option == "skip_bad_rows" else value
    ctx.params.update(params)
    return merged


def _interrupted(out: Path, ctx: click.Context) -> None:
    from textrobust.store import RunStore

    saved = 0
    path = out / "store.sqlite"
    if path.is_file():
        with RunStore(path) as store:
            saved = sum(len(run) for run in store.runs())
    command = " ".join(["textrobust", ctx.info_name or "", "--out", str(out), "--resume"])
    err_console.print(f"interrupted: {saved:,} results are saved in {path}; continue with: {command}",
                      soft_wrap=True)  # one line: the command can be copied
    raise typer.Exit(code=130)


def print_result(result: Any, report: Mapping[str, Any]) -> None:
    """An analysis's headline figures and tables, readable in 80 columns."""
    section = next((s for s in report.get("analyses", []) if s["name"] == result.name), None)
    if section is None:
        return
    table = Table(title=section["title"], title_justify="left",
                  caption=f"{result.computed:,} units computed now, {result.resumed:,} resumed from the store",
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
    table = Table(title=escape(str(spec["title"])), title_justify="left")
    for column in spec["columns"]:
        table.add_column(escape(str(column)), overflow="fold")
    for row in spec["rows"]:
        table.add_row(*[escape(_cell(c)) for c in row])
    console.print(table)

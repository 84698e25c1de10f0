"""``textrobust assets``: list the offline assets, or prepare them (the install step)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from textrobust.cli.common import App, Group, console, fail, human_size
from textrobust.cli.report import table_console
from textrobust.errors import TextRobustError

assets_app = App(help="List the offline assets, or prepare them (install step).", cls=Group,
               invoke_without_command=True, no_args_is_help=False)


def register(app: typer.Typer) -> None:
    app.add_typer(assets_app, name="assets")


@assets_app.callback()
def assets(ctx: typer.Context) -> None:
    """List each asset, where it was found, its size and status."""
    if ctx.invoked_subcommand is not None:
        return
    from textrobust.assets import status
    from textrobust.validity.cache import cache_info, max_bytes

    try:
        cap = max_bytes()  # a bad $TEXTROBUST_VERDICT_CACHE_MB: one error line, before the table
    except TextRobustError as exc:
        fail(exc)

    table = Table(title="textrobust assets")
    for col in ("asset", "status", "source", "size", "path / how to fix"):
        table.add_column(col, overflow="fold")
    missing = 0
    for s in status():
        missing += not s.found
        mark = "[green]found[/]" if s.found else "[red]missing[/]"
        where = s.path if s.found else s.detail
        table.add_row(s.name, mark, s.source or "-", human_size(s.size_bytes), str(where or ""))
    table_console().print(table)  # piped: wide enough that no path is wrapped
    if missing:
        console.print(f"{missing} asset(s) missing: run `textrobust assets prepare` (install step).")
    try:
        info = cache_info()
    except TextRobustError as exc:
        console.print(f"verdict cache: {exc}", highlight=False, soft_wrap=True)
        return
    console.print(f"verdict cache (the validated source's judgements, kept across runs): {info.path}, "
                  f"{human_size(info.size_bytes)}, {info.verdicts:,} verdicts of {info.judges:,} judge(s); "
                  f"cap {'none' if cap is None else human_size(cap)} ($TEXTROBUST_VERDICT_CACHE_MB); "
                  "delete it with `textrobust assets clear-verdicts`", highlight=False, soft_wrap=True)


@assets_app.command("clear-verdicts")
def assets_clear_verdicts() -> None:
    """Delete the verdict cache (the validated source judges again on the next run)."""
    from textrobust.validity.cache import clear_cache, default_verdict_path

    if not default_verdict_path().exists():
        console.print(f"no verdict cache at {default_verdict_path()}: nothing to delete", highlight=False,
                      soft_wrap=True)
        return
    freed = clear_cache()
    console.print(f"deleted the verdict cache {default_verdict_path()} ({human_size(freed)})", highlight=False,
                  soft_wrap=True)


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
        fail(exc)
        return
    bad = [r for r in results if not r.found]
    for r in bad:
        console.print(f"[yellow]not available after prepare:[/] {r.name}: {r.detail}", highlight=False)
    if names and bad:  # an asset asked for by name must be there
        raise typer.Exit(code=1)

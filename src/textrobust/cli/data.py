"""``textrobust data``: peek at a data set."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from textrobust.cli.common import console, load_data


def register(app: typer.Typer) -> None:
    app.command("data")(data)


def data(
    name: Annotated[str, typer.Argument(help="A bundled data set (see `textrobust list`) or a file/folder path.")],
    split: Annotated[Optional[str], typer.Option(
        help="train, dev or test (default: test for bundled sets, all rows of a user file).")] = None,
    n: Annotated[int, typer.Option(help="How many examples to show.")] = 5,
    text_column: Annotated[Optional[str], typer.Option(help="User files: the text column.")] = None,
    label_column: Annotated[Optional[str], typer.Option(help="User files: the label column.")] = None,
    pair_column: Annotated[Optional[str], typer.Option(help="User files: a second text column (hypothesis).")] = None,
    label_names: Annotated[Optional[str], typer.Option(
        help="User files: comma-separated label names, in label order; other labels are bad rows.")] = None,
    skip_bad_rows: Annotated[bool, typer.Option(help="Skip (and list) bad rows instead of failing.")] = False,
) -> None:
    """Peek at a data set: size, label balance and the first examples."""
    dataset = load_data(name, split, text_column, label_column, pair_column, skip_bad_rows, label_names)
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

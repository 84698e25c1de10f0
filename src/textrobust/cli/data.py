"""``textrobust data``: peek at a data set (through the same data options as every
analysis command)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from textrobust.cli import options as o
from textrobust.cli.common import console, fail
from textrobust.errors import ConfigError, TextRobustError

#: Longest text shown per row; the rest is cut with a note of how many words were left out.
MAX_SHOWN_CHARS = 300


def register(app: typer.Typer) -> None:
    app.command("data")(data)


def _shown(text: str) -> str:
    if len(text) <= MAX_SHOWN_CHARS:
        return text
    rest = len(text[MAX_SHOWN_CHARS:].split())
    return f"{text[:MAX_SHOWN_CHARS]}… (+{rest:,} more words)"


def data(
    name: Annotated[str, typer.Argument(help="A bundled data set (see `textrobust list`) or a file/folder path.")],
    split: o.Split = None,
    n: Annotated[int, typer.Option(help="How many examples to show (0 or more).")] = 5,
    text_column: o.TextColumn = None, label_column: o.LabelColumn = None, pair_column: o.PairColumn = None,
    id_column: o.IdColumn = None, label_names: o.LabelNames = None, skip_bad_rows: o.SkipBadRows = False,
    encoding: o.Encoding = None,
    file_format: o.FileFormatOpt = None,
) -> None:
    """Peek at a data set: size, label balance and the first examples."""
    from textrobust.audit.sources import DataSource
    from textrobust.cli.running import data_options

    params: dict[str, Any] = {"text_column": text_column, "label_column": label_column, "pair_column": pair_column,
                              "id_column": id_column, "label_names": label_names, "skip_bad_rows": skip_bad_rows,
                              "encoding": encoding,
                              "file_format": file_format}
    try:
        if not 0 <= n <= 2**53:
            raise ConfigError(f"The '--n' option must be from 0 to 2^53. Got {n} instead.")
        dataset = DataSource.of(name, split=split, options=data_options(params)).load()
    except TextRobustError as exc:
        fail(exc)
    console.print(f"[bold]{dataset.name}[/] split={dataset.split} examples={len(dataset):,} "
                  f"labels={list(dataset.label_names)}", highlight=False, markup=True)
    counts = Table(title="label balance")
    counts.add_column("label", overflow="fold")
    counts.add_column("count", justify="right")
    counts.add_column("share", justify="right")
    for label, count in dataset.label_counts().items():
        counts.add_row(label, f"{count:,}", f"{count / len(dataset):.1%}" if len(dataset) else "n/a")
    console.print(counts)
    table = Table(title=f"first {min(n, len(dataset))} examples")
    table.add_column("id", overflow="fold")
    table.add_column("label", overflow="fold")
    table.add_column("text", overflow="fold")
    for example in dataset.examples[:n]:
        table.add_row(example.id, dataset.label_names[example.label], _shown(str(example.text)))
    console.print(table)
    bad = dataset.meta.get("bad_rows") or ()
    if bad:
        console.print(f"[yellow]{len(bad)} bad row(s) skipped:[/] " + "; ".join(str(b) for b in list(bad)[:10]),
                      markup=True, highlight=False)

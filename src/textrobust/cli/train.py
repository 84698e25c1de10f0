"""``textrobust train``: train a victim of the zoo."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from rich.table import Table

from textrobust.cli.common import console, fail
from textrobust.errors import ConfigError, TextRobustError

if TYPE_CHECKING:
    from textrobust.zoo.cards import VictimCard


def register(app: typer.Typer) -> None:
    app.command("train")(train)


def train(
    arch: Annotated[str, typer.Argument(help="Architecture from the zoo (see `textrobust list`).")],
    data: Annotated[str, typer.Option(help="Bundled data set to train on.")] = "rotten_tomatoes",
    out: Annotated[Optional[Path], typer.Option(help="Victim folder (default: the cache's victims/<arch>, "
                                                     "which --victim <arch> then finds).")] = None,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    epochs: Annotated[Optional[int], typer.Option(help="Epochs (default: the architecture's).")] = None,
) -> None:
    """Train a victim of the zoo and save it (safetensors + JSON config + model card)."""
    from textrobust.zoo import ZOO, train_victim

    from textrobust.cli.running import check_out, check_seed

    if arch not in ZOO:
        fail(TextRobustError(f"Unknown architecture '{arch}'. Known: {', '.join(ZOO.names())}."))
    try:
        check_seed(seed)
        if seed > 2**32 - 1:  # numpy's and torch's seeding take 32 bits
            raise ConfigError(f"The '--seed' option of train must be from 0 to 2^32-1. Got {seed} instead.")
        if epochs is not None and not 1 <= epochs <= 10_000:
            raise ConfigError(f"The '--epochs' option must be from 1 to 10000. Got {epochs} instead.")
        if out is None:  # the cache, where `--victim <arch>` finds it
            from textrobust.zoo import zoo_victim_dir

            out = zoo_victim_dir(arch)
        check_out(out)
        from textrobust.zoo.io import check_victim_target
        from textrobust.zoo.training import rich_progress

        check_victim_target(out)  # a non-empty folder that is not a victim: say so now, not after training
        _limit_threads()
        with rich_progress(f"training {arch}") as progress:
            trained = train_victim(arch, data, out=out, seed=seed, epochs=epochs, progress=progress)
    except TextRobustError as exc:
        fail(exc)
        return
    _print_card(trained.card, trained.path)


def _limit_threads() -> None:
    """Torch's threads for training: ``TEXTROBUST_THREADS`` when set; else the cores, and
    on a busy machine (load average above 3/4 of them) only the idle ones, at least one,
    with a warning: threads competing for busy cores made training many times slower."""
    import os

    import torch

    from textrobust.cli.app import threads_for_this_machine
    from textrobust.cli.common import err_console

    threads = threads_for_this_machine()
    if not os.environ.get("TEXTROBUST_THREADS", "").strip().isdigit():
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # not on Unix
            load = 0.0
        if load > 0.75 * threads:
            cores, threads = threads, max(1, int(threads - load))
            err_console.print(f"warning: the machine is busy (load average {load:.1f} on {cores} core(s)): "
                              f"training uses {threads} thread(s) and may take longer than usual; set "
                              "TEXTROBUST_THREADS to choose.", soft_wrap=True, highlight=False, markup=False)
    torch.set_num_threads(threads)


def _print_card(card: VictimCard | Mapping[str, Any], path: Path) -> None:
    """The card's main fields as a table (a ``VictimCard`` or its ``to_dict()``)."""
    if not isinstance(card, Mapping):
        card = card.to_dict()
    table = Table(title=f"victim {card.get('architecture', '')} ({path})")
    table.add_column("field")
    table.add_column("value", overflow="fold")
    for key in ("architecture", "dataset", "parameters", "train_seconds", "dev_accuracy", "test_accuracy", "seed"):
        if key in card:
            value = card[key]
            if isinstance(value, float):
                value = f"{value:.4f}"
            table.add_row(key, str(value))
    console.print(table)

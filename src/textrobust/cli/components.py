"""``textrobust list``: every registered component, by kind (generated from the registries)."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from textrobust.cli.common import console


def register(app: typer.Typer) -> None:
    app.command("list")(list_components)


def list_components() -> None:
    """List every registered component, by kind."""
    for kind, registry in _registries().items():
        table = Table(title=kind, show_header=True)
        table.add_column("name")
        table.add_column("summary", overflow="fold")
        for entry in registry.entries():
            table.add_row(entry.name, entry.summary)
        console.print(table)


def _registries() -> dict[str, Any]:
    from textrobust.assets import ASSETS
    from textrobust.data import DATASETS
    from textrobust.victims.wrappers import VICTIM_WRAPPERS
    from textrobust.zoo import ZOO

    from textrobust.analyses import ANALYSES
    from textrobust.attack.candidates import CANDIDATE_SOURCES
    from textrobust.attack.constraints import CONSTRAINTS
    from textrobust.attack.recipes import RECIPES
    from textrobust.attack.searches import ATTRIBUTION_SEARCHES, SEARCHES
    from textrobust.attribution import ATTRIBUTIONS
    from textrobust.audit.executors import EXECUTORS
    from textrobust.analyses.bias.pairs import PROTECTED_GROUPS
    from textrobust.defenses import DEFENSES
    from textrobust.fill_in import FILL_INS
    from textrobust.analyses.second_order import SECOND_ORDER_SEARCHES
    from textrobust.similarity import SIMILARITY_SCORERS

    return {"analyses": ANALYSES, "executors": EXECUTORS, "data sets": DATASETS, "architectures (zoo)": ZOO,
            "victim wrappers": VICTIM_WRAPPERS, "attack recipes": RECIPES, "candidate sources": CANDIDATE_SOURCES,
            "constraints": CONSTRAINTS, "searches": SEARCHES, "attribution searches": ATTRIBUTION_SEARCHES,
            "attribution methods": ATTRIBUTIONS, "second-order searches": SECOND_ORDER_SEARCHES,
            "fill-in models": FILL_INS,
            # one registry: ACCS's constraint models (CONSTRAINT_MODELS) are its old name, not a second list
            "similarity scorers (also ACCS constraint models)": SIMILARITY_SCORERS,
            "protected groups": PROTECTED_GROUPS, "assets": ASSETS,
            "defenses (train --defense)": DEFENSES}

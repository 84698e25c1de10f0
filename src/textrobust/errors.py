"""The one error hierarchy of textrobust.

Every error the package raises on purpose derives from :class:`TextRobustError`, so a
caller can catch them all with one ``except``. Messages name the parameter, the value
received and what would be accepted, or what to install.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


class TextRobustError(Exception):
    """Root of every error raised by textrobust."""


class ConfigError(TextRobustError, ValueError):
    """A configuration value is invalid or unknown."""


class SettingsError(ConfigError):
    """Settings of a :class:`~textrobust.config.Config` failed validation.

    ``problems`` holds ``(name, problem, got)`` per failing field: ``problem`` reads after
    the field's name ("must be an int >= 1", "is not known"), ``got`` is the ``repr`` of
    the value received (None for an unknown name). ``accepted`` are the field names.
    :meth:`render` words the same facts for another audience: the command line names
    ``--options``, a TOML file its keys.
    """

    def __init__(self, owner: str, problems: Sequence[tuple[str, str, str | None]], accepted: Sequence[str]) -> None:
        self.owner = owner
        self.problems = tuple(problems)
        self.accepted = tuple(accepted)
        super().__init__(self.render(lambda name: f"The '{name}' parameter of {owner}",
                                     f"Accepted parameters of {owner}: {', '.join(self.accepted)}."))

    def __reduce__(self) -> tuple[type[SettingsError], tuple[str, tuple[tuple[str, str, str | None], ...],
                                                               tuple[str, ...]]]:
        return type(self), (self.owner, self.problems, self.accepted)  # picklable for worker processes

    def render(self, subject: Callable[[str], str], accepted: str | None = None) -> str:
        """One line per problem, ``subject(name)`` naming the field, then ``accepted``."""
        lines = [f"{subject(name)} {problem}." + ("" if got is None else f" Got {got} instead.")
                 for name, problem, got in self.problems]
        return "\n".join(lines + ([accepted] if accepted else []))


class AssetMissingError(TextRobustError, FileNotFoundError):
    """An offline asset (model, vectors, lexicon, data file) could not be found.

    The message names the asset, every place that was searched and how to provide it.
    """

    def __init__(self, asset: str, searched: Sequence[str], hint: str) -> None:
        self.asset = asset
        self.searched = tuple(searched)
        self.hint = hint
        where = "\n".join(f"  - {s}" for s in self.searched) or "  (nowhere)"
        super().__init__(
            f"Asset '{asset}' was not found. Searched:\n{where}\nTo fix: {hint}"
        )


class MissingDependencyError(TextRobustError, ImportError):
    """An optional Python package needed by a component is not installed."""

    def __init__(self, package: str, feature: str, install: str) -> None:
        self.package = package
        super().__init__(
            f"{feature} needs the Python package '{package}', which is not installed. "
            f"Install it with `{install}`."
        )


@dataclass(frozen=True)
class BadRow:
    """One rejected input row: its 1-based row number in the source and why."""

    row: int
    reason: str

    def __str__(self) -> str:
        return f"row {self.row}: {self.reason}"


class DataError(TextRobustError, ValueError):
    """A data set could not be read, or contains rows that cannot be used."""

    def __init__(self, message: str, bad_rows: Sequence[BadRow] = ()) -> None:
        self.bad_rows = tuple(bad_rows)
        if self.bad_rows:
            shown = "\n".join(f"  - {r}" for r in self.bad_rows[:20])
            more = len(self.bad_rows) - 20
            if more > 0:
                shown += f"\n  ... and {more} more"
            message = f"{message}\n{shown}"
        super().__init__(message)


class VictimError(TextRobustError):
    """A victim model could not be built, loaded or queried."""


class CapabilityError(VictimError):
    """A victim was asked for something it does not declare (gradients, embeddings...)."""


class QueryBudgetExceeded(TextRobustError):
    """The query layer refused to send more texts to the victim: the budget is spent.

    Searches catch this and return the best result they have so far.
    """

    def __init__(self, budget: int, used: int, requested: int) -> None:
        self.budget = budget
        self.used = used
        self.requested = requested
        super().__init__(
            f"Query budget exhausted: {used} of {budget} queries used, "
            f"{requested} more requested."
        )


class StoreError(TextRobustError):
    """The run store could not be opened, written, or does not match a resumed run."""


class ReportError(TextRobustError, ValueError):
    """A report section, a report dict (or ``report.json``) does not follow the
    ``textrobust.report/1`` schema."""


class RegistryError(TextRobustError, KeyError):
    """A component name is not registered."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable.
        return str(self.args[0]) if self.args else ""

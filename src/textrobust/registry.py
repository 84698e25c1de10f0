"""Registries map names to components; the CLI and ``textrobust list`` read them.

No component is ever built from a string with ``eval``: a name is looked up here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from textrobust.errors import RegistryError

__all__ = ["Entry", "Registry"]

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    """A registered component: its name, a one-line summary and how to build it."""

    name: str
    factory: T
    summary: str


class Registry(Generic[T]):
    """A named collection of components of one kind (data sets, victims, searches...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def register(self, name: str, summary: str = "") -> Callable[[T], T]:
        """Decorator: ``@REGISTRY.register("name", "what it is")``."""

        def decorate(factory: T) -> T:
            self.add(name, factory, summary)
            return factory

        return decorate

    def add(self, name: str, factory: T, summary: str = "") -> None:
        if name in self._entries:
            raise RegistryError(f"A {self.kind} named '{name}' is already registered.")
        doc = summary or (getattr(factory, "__doc__", None) or "").strip().splitlines()[:1]
        if isinstance(doc, list):
            doc = doc[0] if doc else ""
        self._entries[name] = Entry(name, factory, doc)

    def get(self, name: str) -> T:
        try:
            return self._entries[name].factory
        except KeyError:
            raise RegistryError(
                f"Unknown {self.kind} '{name}'. Known: {', '.join(self.names()) or '(none)'}."
            ) from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def entries(self) -> list[Entry[T]]:
        return [self._entries[n] for n in self.names()]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()})"

"""Frozen, typed, validated configuration.

Every configurable component declares its settings as a subclass of :class:`Config`:
immutable after construction, validated at construction from one declaration (pydantic),
and strict about unknown keys (a typo is an error, never silently ignored).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from textrobust.errors import ConfigError

__all__ = ["Config"]


def _describe(error: dict[str, Any], owner: str) -> str:
    loc = ".".join(str(p) for p in error.get("loc", ())) or "<config>"
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        return f"The '{loc}' parameter is not known to {owner}."
    got = error.get("input")
    message = str(error.get("msg", "is invalid")).removeprefix("Value error, ")
    return f"The '{loc}' parameter of {owner} {message}. Got {got!r} instead."


class Config(BaseModel):
    """Base class of all configuration objects: frozen, strict, validated."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            owner = type(self).__name__
            lines = [_describe(e, owner) for e in exc.errors()]
            accepted = ", ".join(sorted(type(self).model_fields))
            raise ConfigError(
                "\n".join(lines) + f"\nAccepted parameters of {owner}: {accepted}."
            ) from None

    def replace(self, **changes: Any) -> "Config":
        """A copy with some fields changed, validated again."""
        return type(self)(**{**self.model_dump(), **changes})

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the configuration."""
        return self.model_dump(mode="json")

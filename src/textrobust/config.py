"""Frozen, typed, validated configuration.

Every configurable component declares its settings as a subclass of :class:`Config`:
immutable after construction, validated at construction from one declaration (pydantic),
and strict about unknown keys (a typo is an error, never silently ignored).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from textrobust.errors import SettingsError

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

__all__ = ["Config"]


def _describe(error: ErrorDetails) -> tuple[str, str, str | None]:
    """``(name, problem, got)`` of one pydantic error, the problem worded to follow the
    name: "must be greater than or equal to 1", "is not known"."""
    loc = ".".join(str(p) for p in error.get("loc", ())) or "<config>"
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        return loc, "is not known", None
    message = str(error.get("msg", "is invalid")).removeprefix("Value error, ")
    if message.startswith("Input should be "):  # pydantic's wording
        message = "must be " + message.removeprefix("Input should be ")
    elif message == "Field required":
        message = "is required"
    return loc, message.rstrip("."), repr(error.get("input"))


class Config(BaseModel):
    """Base class of all configuration objects: frozen, strict, validated."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise SettingsError(type(self).__name__, [_describe(e) for e in exc.errors()],
                                sorted(type(self).model_fields)) from None

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed, validated again."""
        return type(self)(**{**self.model_dump(), **changes})

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the configuration."""
        return self.model_dump(mode="json")

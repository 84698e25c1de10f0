"""What every constraint shares: a frozen, validated configuration and a repr that shows it."""

from __future__ import annotations

from enum import Enum
from typing import Any, Generic, TypeVar

from textrobust.config import Config
from textrobust.errors import ConfigError
from textrobust.similarity.protocol import describe

__all__ = ["Configured", "parse_enum"]

C = TypeVar("C", bound=Config)
E = TypeVar("E", bound=Enum)


def parse_enum(kind: type[E], value: E | str, parameter: str, owner: str) -> E:
    """``value`` as a member of ``kind``, or a ConfigError naming the accepted values."""
    try:
        return kind(value)
    except ValueError:
        accepted = ", ".join(repr(m.value) for m in kind)
        raise ConfigError(
            f"The '{parameter}' parameter of {owner} must be one of {accepted}. Got {value!r} instead."
        ) from None


class Configured(Generic[C]):
    """Base of the constraints: ``self.config`` holds the settings; collaborators (a model,
    vectors, a scorer) are listed by :meth:`_collaborators` for the repr."""

    config: C

    def _collaborators(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        parts = [f"{k}={describe(v)}" for k, v in self._collaborators().items()]
        for name in type(self.config).model_fields:
            value = getattr(self.config, name)
            if isinstance(value, frozenset):
                parts.append(f"{name}=<{len(value)} words>")
            elif isinstance(value, Enum):
                parts.append(f"{name}={value.value!r}")
            else:
                parts.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

"""Config: frozen, validated, unknown keys rejected. Registry: lookup and helpful errors."""

from __future__ import annotations

import pytest
from pydantic import Field

from textrobust.config import Config
from textrobust.errors import ConfigError, RegistryError, TextRobustError
from textrobust.registry import Registry


class BeamConfig(Config):
    beam_width: int = Field(default=2, ge=1)
    name: str = "beam"


def test_config_is_frozen_and_validated() -> None:
    cfg = BeamConfig(beam_width=3)
    assert cfg.beam_width == 3
    with pytest.raises(Exception):
        cfg.beam_width = 4  # type: ignore[misc]
    with pytest.raises(ConfigError) as info:
        BeamConfig(beam_width=0)
    message = str(info.value)
    assert "'beam_width'" in message and "BeamConfig" in message and "Got 0" in message


def test_unknown_keys_are_rejected_with_the_accepted_list() -> None:
    with pytest.raises(ConfigError) as info:
        BeamConfig(beam_witdh=3)
    assert "beam_witdh" in str(info.value) and "beam_width" in str(info.value)
    assert isinstance(info.value, TextRobustError) and isinstance(info.value, ValueError)


def test_config_replace_and_dict() -> None:
    cfg = BeamConfig().replace(beam_width=5)
    assert cfg.to_dict() == {"beam_width": 5, "name": "beam"}
    with pytest.raises(ConfigError):
        BeamConfig().replace(beam_width=-1)


def test_registry_lookup_and_errors() -> None:
    reg: Registry[object] = Registry("search")

    @reg.register("greedy", "greedy search")
    def greedy() -> str:
        return "g"

    def beam() -> str:
        """Beam search.

        More text."""
        return "b"

    reg.add("beam", beam)
    assert reg.names() == ["beam", "greedy"] and "beam" in reg and len(reg) == 2
    assert reg.get("greedy") is greedy
    assert [e.summary for e in reg.entries()] == ["Beam search.", "greedy search"]
    with pytest.raises(RegistryError) as info:
        reg.get("gready")
    assert "Unknown search 'gready'" in str(info.value) and "beam, greedy" in str(info.value)
    with pytest.raises(RegistryError):
        reg.add("beam", beam)

"""Named audit profiles: which analyses ``textrobust audit --profile NAME`` runs, at what sizes.

- ``quick`` (the default; :data:`~textrobust.audit.DEFAULT_ANALYSES`): clean accuracy, a
  TextFooler attack on 20 examples, second-order, radius and PR on 5 examples each; a few
  minutes on 2 cores. Attribution, MSR, bias and ACCS are not run.
- ``full``: every registered analysis at small sizes (a few minutes more on 2 cores);
  enough to see every section of the report, not to quote its figures.
- ``paper``: the sizes of the papers behind the analyses (hours on 2 cores): 100 attacked
  examples (Morris 2020 samples 100 per attack), 872 second-order examples (SST-2's
  validation split in Zhang et al. 2021), every test sentence for bias with Neighbor_2
  enumerated (Zhang et al.), 200 radius examples (Table 3 of Yang et al. 2022), 1,000 PR
  examples (Yang et al.), 100 ACCS examples (Morris 2020), 100 MSR texts (Table 3 of La
  Malfa et al. 2020); the TEA paper states no sample count: 100 attribution examples.

A profile gives each analysis its settings; ``--analyses`` picks some of them and ``--n``
caps their sizes. :func:`not_run` lists the registered analyses an audit left out, with
the command that runs them.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import Any

from textrobust.errors import ConfigError

__all__ = ["DEFAULT_ANALYSES", "PROFILES", "Profile", "not_run", "profile_settings"]


class Profile(str, enum.Enum):
    """The audit profiles (``--profile``)."""

    QUICK = "quick"
    FULL = "full"
    PAPER = "paper"


def _frozen(analyses: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Mapping[str, Any]]:
    return MappingProxyType({name: MappingProxyType(dict(settings)) for name, settings in analyses.items()})


#: What ``textrobust audit`` runs with no configuration (the ``quick`` profile), and with
#: what settings: sized to finish in a few minutes on 2 cores with the default victim (the
#: README says how long).
DEFAULT_ANALYSES: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "evaluate": {},
    "attack": {"n": 20},
    "second-order": {"n": 5},
    "radius": {"n": 5},
    "pr": {"n": 5},
})


def _quick() -> Mapping[str, Mapping[str, Any]]:
    return DEFAULT_ANALYSES


#: Every analysis small: the sizes were chosen so that the whole profile takes a few
#: minutes on 2 cores with the default victim. Bias works on anchors (a test sentence with
#: one gendered word): the first 20 test examples hold 4; 50 random walks per sentence
#: instead of 200 at k >= 2 keep each anchor to seconds.
_FULL = _frozen({
    "evaluate": {},
    "attack": {"n": 10},
    "second-order": {"n": 3},
    "radius": {"n": 5},
    "pr": {"n": 5},
    "accs": {"n": 3},
    "attribution": {"n": 3},
    "bias": {"n": 20, "samples": 50},
    "msr": {"n": 3},
})

_PAPER = _frozen({
    "evaluate": {},
    "attack": {"n": 100},
    "second-order": {"n": 872},
    "radius": {"n": 200},
    "pr": {"n": 1000},
    "accs": {"n": 100},
    "attribution": {"n": 100},
    "bias": {"n": None, "exact_up_to": 2},
    "msr": {"n": 100},
})

#: One line per profile, for ``--help``, the README and the terminal.
PROFILES: Mapping[str, str] = MappingProxyType({
    Profile.QUICK.value: "evaluate, attack (n=20), second-order, radius, pr (n=5 each): a few minutes on 2 cores",
    Profile.FULL.value: "every analysis (adds accs, attribution, bias, msr) at small sizes: a few minutes more",
    Profile.PAPER.value: "every analysis at the papers' sizes (100 to 1,000 examples each): hours",
})


def profile_settings(name: str | Profile) -> dict[str, dict[str, Any]]:
    """The analyses of profile ``name`` with their settings (a fresh, mutable copy)."""
    value = name.value if isinstance(name, Profile) else str(name)
    table = {Profile.QUICK.value: _quick, Profile.FULL.value: lambda: _FULL, Profile.PAPER.value: lambda: _PAPER}
    if value not in table:
        raise ConfigError(f"The '--profile' option must be one of {', '.join(PROFILES)}. Got {value!r} instead.")
    return {analysis: dict(settings) for analysis, settings in table[value]().items()}


def not_run(ran: Collection[str], *, victim: Any = None, data: Any = None) -> list[dict[str, str]]:
    """The registered analyses not in ``ran``: ``{"name", "title", "command"}`` each, the
    command running it alone at the ``full`` profile's size (with ``--victim`` and
    ``--data`` when ``victim`` or ``data`` name other than the defaults)."""
    import shlex

    from textrobust.analyses import ANALYSES

    full = profile_settings(Profile.FULL)
    options = ""
    if victim is not None and str(victim) != "default" and not _is_default_victim(victim):
        options += f" --victim {shlex.quote(str(victim))}"
    if data is not None and str(data) != "rotten_tomatoes":
        options += f" --data {shlex.quote(str(data))}"
    missing = []
    for name in [*full, *(a for a in ANALYSES.names() if a not in full)]:
        if name in ran:
            continue
        n = full.get(name, {}).get("n")
        command = f"textrobust {name}{options}" + ("" if n is None else f" --n {n}") + f" --out runs/{name}"
        missing.append({"name": name, "title": ANALYSES.get(name).title, "command": command})
    return missing


def _is_default_victim(victim: Any) -> bool:
    """Whether ``victim`` is the default victim's folder (the CLI passes it resolved)."""
    from pathlib import Path

    from textrobust.zoo.default import default_victim_dir

    try:
        return Path(victim).expanduser().resolve() == default_victim_dir().resolve()
    except (OSError, TypeError):
        return False

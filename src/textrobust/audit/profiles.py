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
from collections.abc import Collection, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from textrobust.errors import ConfigError

__all__ = ["DEFAULT_ANALYSES", "PROFILES", "Profile", "SECONDS_PER_EXAMPLE", "data_flags", "describe_plan", "not_run",
           "profile_settings"]


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
#: instead of 200 at k >= 2 keep each anchor to seconds. ACCS needs a first-order success
#: to be defined and a second-order one to be more than 1.0: on the default victim the
#: first 4 test sentences have neither (ACCS undefined at the former size, 3), the 5th the
#: first, the 17th the second; 20 sentences gave ACCS 0.88 (0.64-1.00) in 5.5 min with load
#: average 12-14 on 2 cores (2026-11-28; ACCS_FULL_MIN below).
_FULL = _frozen({
    "evaluate": {},
    "attack": {"n": 10},
    "second-order": {"n": 3},
    "radius": {"n": 5},
    "pr": {"n": 5},
    "accs": {"n": 20},
    "attribution": {"n": 3},
    "bias": {"n": 20, "samples": 50},
    "msr": {"n": 3},
})

#: The fewest sentences at which the default victim's ACCS was defined and not degenerate
#: (a second-order success), measured as above; the ``full`` profile's ACCS size is at least it.
ACCS_FULL_MIN = 17

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


#: Rough wall seconds per example of each analysis at the paper profile's settings, for the
#: plan an audit prints before it starts: the MiniLM victim on 2 CPU cores, quiet machine
#: (benchmarks/results/minilm_audit.md: accs 50.6 s and bias 90.6 s over 20 texts). The
#: default CNN is faster; a GPU, or other settings, change them.
SECONDS_PER_EXAMPLE: Mapping[str, float] = MappingProxyType({
    "evaluate": 0.2, "attack": 2.9, "second-order": 9.5, "radius": 2.5, "pr": 2.2, "accs": 2.5,
    "attribution": 6.2, "bias": 4.5, "msr": 3.2,
})


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def describe_plan(analyses: Mapping[str, Mapping[str, Any]], *, profile: str | None = None,
                  n: int | None = None) -> list[str]:
    """What an audit of ``analyses`` (name -> settings, as chosen) will do, as lines for
    the terminal before it starts: each analysis with its size, a rough time from
    :data:`SECONDS_PER_EXAMPLE`, and what ``--n`` does (``n``: the cap the user gave)."""
    from textrobust.analyses import ANALYSES

    parts, total, open_ended = [], 0.0, []
    for name, settings in analyses.items():
        fields = ANALYSES.get(name).settings_type.model_fields
        size = settings.get("n", fields["n"].get_default(call_default_factory=True)) if "n" in fields else None
        rate = SECONDS_PER_EXAMPLE.get(name)
        if size is None:
            parts.append(f"{name} (all examples)")
            open_ended.append(name)
        else:
            parts.append(f"{name} (n={size:,})")
            total += size * (rate or 0.0)
    chosen = f"profile {profile}: " if profile else ""
    lines = [f"Plan ({chosen}{len(parts)} analyses): {', '.join(parts)}."]
    rough = f"Rough time: {_duration(total)}"
    if open_ended:
        rough += f" plus {', '.join(open_ended)} over every example of the data"
    lines.append(rough + " (at the rates of the MiniLM victim on 2 CPU cores, benchmarks/results/minilm_audit.md; "
                         "a smaller model or a GPU is faster).")
    if n is None:
        lines.append("--n N caps each analysis's own n (an analysis set to fewer keeps its own).")
    else:
        lines.append(f"--n {n} caps each analysis's own n: each runs on at most {n:,} examples (one set to fewer "
                     "keeps its own).")
    return lines


#: The data options of a run (``data_options`` of :func:`textrobust.audit.run`) as the
#: command-line options that set them.
_DATA_FLAGS = {"text_column": "--text-column", "label_column": "--label-column", "pair_column": "--pair-column",
               "id_column": "--id-column", "encoding": "--encoding", "file_format": "--file-format",
               "label_names": "--label-names"}


def data_flags(*, split: str | None = None, data_options: Mapping[str, Any] | None = None,
               label_map: Mapping[str, str] | None = None, labels_by_position: bool = False,
               max_words: int | None = None, length_policy: str | None = None,
               labelled: Any = None) -> list[str]:
    """The command-line options that read the data as a run read it (its split, columns,
    label names and map, bad rows, length limit) and apply its labelled substitutions: what
    a command suggested after an audit carries, so that it runs on the user's file as the
    audit did (issue 49, item 8).

    >>> data_flags(data_options={"text_column": "review", "on_bad_rows": "skip"}, label_map={"fresh": "positive"})
    ['--text-column', 'review', '--skip-bad-rows', '--label-map', 'fresh=positive']
    """
    words: list[str] = []
    if split:
        words += ["--split", str(split)]
    for key, value in (data_options or {}).items():
        if key == "on_bad_rows":
            words += ["--skip-bad-rows"] if str(value) == "skip" else []
        elif key in _DATA_FLAGS and value not in (None, "", []):
            shown = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)
            words += [_DATA_FLAGS[key], shown]
    if label_map:
        words += ["--label-map", ",".join(f"{k}={v}" for k, v in label_map.items())]
    if labels_by_position:
        words.append("--labels-by-position")
    if max_words is not None:
        words += ["--max-words", str(max_words)]
    if length_policy is not None and str(length_policy) != "truncate":
        words += ["--length-policy", str(length_policy)]
    if labelled is not None:
        words += ["--labelled", str(labelled)]
    return words


def not_run(ran: Collection[str], *, victim: Any = None, data: Any = None,
            settings: Mapping[str, Mapping[str, Any]] | None = None,
            data_options: Sequence[str] = ()) -> list[dict[str, str]]:
    """The registered analyses not in ``ran``: ``{"name", "title", "command"}`` each, the
    command running it alone at the ``full`` profile's size (with ``--victim`` and
    ``--data`` when ``victim`` or ``data`` name other than the defaults, and
    ``data_options``, the options that read the data as the audit did: :func:`data_flags`).

    ``settings``: the settings of the analyses that ran (default: read from ``ran`` when it
    maps names to the orchestrator's results). The suggestions carry what the user chose
    for them: ``--n`` no larger than the largest ``n`` that ran (an audit run with
    ``--n 3`` suggests ``--n 3``), and ``--candidates`` when the analyses that ran used
    other substitutes than a suggested analysis's default."""
    import shlex

    from textrobust.analyses import ANALYSES

    if settings is None and isinstance(ran, Mapping):
        # the orchestrator's results carry their settings (read by attribute: profiles sits
        # below the orchestrator, which imports it)
        settings = {name: r.settings for name, r in ran.items() if isinstance(getattr(r, "settings", None), Mapping)}
    ran_settings = list((settings or {}).values())
    sizes = [s["n"] for s in ran_settings if isinstance(s.get("n"), int) and not isinstance(s.get("n"), bool)]
    cap = max(sizes) if sizes else None
    chosen = {str(s["candidates"]) for s in ran_settings if s.get("candidates") is not None}
    candidates = chosen.pop() if len(chosen) == 1 else None  # one choice for all of them: the user's
    full = profile_settings(Profile.FULL)
    options = ""
    if victim is not None and str(victim) != "default" and not _is_default_victim(victim):
        options += f" --victim {shlex.quote(str(victim))}"
    if data is not None and str(data) != "rotten_tomatoes":
        options += f" --data {shlex.quote(str(data))}"
    options += "".join(f" {shlex.quote(word)}" for word in data_options)
    missing = []
    for name in [*full, *(a for a in ANALYSES.names() if a not in full)]:
        if name in ran:
            continue
        n = full.get(name, {}).get("n")
        if n is not None and cap is not None:
            n = min(n, cap)
        fields = ANALYSES.get(name).settings_type.model_fields
        choice = ""
        if candidates is not None and "candidates" in fields and fields["candidates"].default != candidates:
            choice = f" --candidates {shlex.quote(candidates)}"
        command = (f"textrobust {name}{options}" + ("" if n is None else f" --n {n}") + choice
                   + f" --out runs/{name}")
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

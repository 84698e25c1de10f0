"""How often people wrote a substitute for a word in other contexts: a prior from CoInCo.

CoInCo (Kremer, Erk, Padó and Thater, EACL 2014; CC-BY-3.0-US) asked about six readers to
write substitutes for every content word of its sentences. Counted over many contexts, what
people wrote for a word is a prior for its substitutes anywhere: "film" -> "movie" is written
in most contexts, "film" -> "coating" in few. :class:`PairPrior` holds, per (lemma, part of
speech), how many CoInCo tokens had that lemma and how many readers in all wrote each
substitute lemma; the judge learned from people
(:mod:`textrobust.validity.people_judge`) reads three numbers from it
(:meth:`PairPrior.features`).

The shipped table (``resources/substitutions/coinco_pairs.json.gz``, built by
``benchmarks/validity/build_pair_prior.py``) counts only the CoInCo dev-portion sentences
that are **not** SWORDS dev contexts, so the judge's tuning and its held-out measure on
SWORDS dev never see a count taken from their own sentence.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from textrobust.errors import ConfigError

__all__ = ["FORMAT", "PairPrior", "default_pair_prior_path", "load_pair_prior"]

FORMAT = "textrobust-pair-prior"


def default_pair_prior_path() -> Path:
    return Path(str(resources.files("textrobust").joinpath("resources", "substitutions", "coinco_pairs.json.gz")))


@dataclass(frozen=True)
class PairPrior:
    """``entries[(lemma, pos)] = (tokens, {substitute lemma: readers who wrote it})``."""

    entries: Mapping[tuple[str, str], tuple[int, Mapping[str, int]]]
    record: Mapping[str, Any]

    @classmethod
    def count(cls, tokens: Iterable[tuple[str, str, Iterable[tuple[str, int]]]],
              record: Mapping[str, Any] | None = None) -> PairPrior:
        """From ``(lemma, pos, [(substitute lemma, readers)])`` per token."""
        counts: dict[tuple[str, str], list[Any]] = {}
        for lemma, pos, subs in tokens:
            entry = counts.setdefault((lemma.lower(), pos), [0, {}])
            entry[0] += 1
            for sub, freq in subs:
                if " " in sub:
                    continue
                entry[1][sub.lower()] = entry[1].get(sub.lower(), 0) + int(freq)
        return cls({k: (v[0], dict(v[1])) for k, v in counts.items()}, dict(record or {}))

    def features(self, lemma: str, pos: str, substitute: str) -> tuple[float, float, float]:
        """(readers who wrote ``substitute`` per token of ``lemma``, log2(1 + tokens of
        ``lemma``), 1 if anyone ever wrote it else 0); zeros for an unseen lemma."""
        pos = "a" if pos == "s" else pos
        entry = self.entries.get((lemma.lower(), pos))
        if entry is None:
            return 0.0, 0.0, 0.0
        tokens, subs = entry
        written = subs.get(substitute.lower(), 0)
        return written / tokens, math.log2(1 + tokens), float(written > 0)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "record": dict(self.record),
                "entries": [[lemma, pos, tokens, subs] for (lemma, pos), (tokens, subs) in sorted(self.entries.items())]}

    def save(self, path: str | Path) -> None:
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            json.dump(self.to_dict(), handle, separators=(",", ":"), sort_keys=True)

    @property
    def version(self) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]


def load_pair_prior(path: str | Path | None = None) -> PairPrior:
    """The shipped table, or the one at ``path`` (gzipped JSON)."""
    path = Path(path) if path is not None else default_pair_prior_path()
    fix = "Reinstall textrobust, or rebuild it with benchmarks/validity/build_pair_prior.py."
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, EOFError, ValueError) as exc:
        raise ConfigError(f"Cannot read the pair prior {path}: {exc}. {fix}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), list):
        raise ConfigError(f"{path} is not a pair prior (format {FORMAT!r}). {fix}")
    try:
        entries = {(str(lemma), str(pos)): (int(tokens), {str(k): int(v) for k, v in subs.items()})
                   for lemma, pos, tokens, subs in data["entries"]}
    except (TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"{path} holds a malformed entry ({exc}). {fix}") from None
    return PairPrior(entries, dict(data.get("record", {})))

"""The judge learned from people: does this substitute keep the meaning here?

Trained on people's judgements (issue 46): SWORDS dev's tuning part (Lee et al., NAACL
2021: each candidate judged by 3-10 people; acceptable = more than half say yes) and, as
extra positives, the substitutes that people wrote in CoInCo's dev portion (Kremer et al.,
EACL 2014), by ``benchmarks/validity/tune_people.py``. Two gradient-boosted tree models
(:mod:`textrobust.validity.trees`):

- ``first`` over :data:`FEATURES_ONE`, the features every proposal gets cheaply (one
  encoder pass per sentence, one masked pass per position, lexicons and vectors): it ranks
  the proposals so that only the best few per position pay for the second stage;
- ``second`` over :data:`FEATURES_TWO` (adds one encoder pass per candidate: the reverse
  reading, Zhou et al. 2019's validation score, the target's movement, the tagger's
  reading of the new sentence): its score, through :attr:`PeopleJudge.calibration`
  (isotonic, fitted out of fold on the tuning part, with bootstrap refits), is the
  probability that people accept the substitute in this context.

The features are computed by the candidate layer
(:class:`~textrobust.attack.candidates.people.PeopleSubstitutes`), which owns the models;
this module only applies stored tables. Which features carry it, the reliability table and
the held-out figures: ``benchmarks/results/validity.md``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.errors import ConfigError
from textrobust.validity.calibration import Calibration
from textrobust.validity.trees import NODE_COLUMNS, Tree, check_trees, sklearn_trees, tree_probability

__all__ = ["FEATURES_ONE", "FEATURES_TWO", "FORMAT", "PeopleJudge", "default_people_judge_path",
           "load_people_judge"]

#: The first stage's inputs, in order.
FEATURES_ONE = (
    "vis_lp", "vis_rank", "vis_gap", "vis_missing", "mask_lp", "mask_rank", "mask_gap", "mask_missing",
    "cosine", "cosine_missing", "wn_synonym", "wn_rank", "wn_share", "wn_senses", "wn_cand_senses",
    "wn_hypernym", "wn_hyponym", "wn_similar", "antonym", "slot_fits", "zipf", "zipf_gap", "valence_gap",
    "same_start", "route_wordnet", "route_wordnet_related", "route_vectors", "route_visible", "route_masked",
    "pos_n", "pos_v", "pos_a", "pos_r", "prior_share", "prior_seen", "prior_any", "routes",
    "rel_vis_lp", "rank_vis_lp", "rel_mask_lp", "rank_mask_lp", "rel_cosine", "rank_cosine",
    "rel_prior_share", "rank_prior_share",
)
#: The second stage's inputs: the first's and the per-candidate pass's.
FEATURES_TWO = (*FEATURES_ONE, "reverse", "reverse_missing", "validation", "target_cos", "tag_kept")

FORMAT = "textrobust-people-judge"
_FIX = "Reinstall textrobust, or retrain it with benchmarks/validity/tune_people.py."


def default_people_judge_path() -> Path:
    return Path(str(resources.files("textrobust").joinpath("resources", "substitutions", "people_judge.json")))


def _trees(data: Any, what: str) -> tuple[tuple[Tree, ...], float]:
    try:
        trees = tuple(tuple((int(f), float(t), int(a), int(b), float(v)) for f, t, a, b, v in tree)
                      for tree in data["trees"])
        return trees, float(data["baseline"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"The {what} is malformed ({exc}). {_FIX}") from None


@dataclass(frozen=True)
class PeopleJudge:
    """Two tree models and the calibration of the second (see the module docstring)."""

    first_trees: tuple[Tree, ...]
    first_baseline: float
    second_trees: tuple[Tree, ...]
    second_baseline: float
    calibration: Calibration
    record: Mapping[str, Any]

    def __post_init__(self) -> None:
        check_trees(self.first_trees, self.first_baseline, len(FEATURES_ONE), "people judge's first stage")
        check_trees(self.second_trees, self.second_baseline, len(FEATURES_TWO), "people judge's second stage")

    def first(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """The first stage's score of each :data:`FEATURES_ONE` row (a ranking, not calibrated)."""
        x = np.asarray(rows, dtype=float).reshape(-1, len(FEATURES_ONE))
        return tree_probability(self.first_trees, self.first_baseline, x)

    def raw(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """The second stage's uncalibrated score of each :data:`FEATURES_TWO` row."""
        x = np.asarray(rows, dtype=float).reshape(-1, len(FEATURES_TWO))
        return tree_probability(self.second_trees, self.second_baseline, x)

    def probability(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """The calibrated probability that people accept each substitute (a :data:`FEATURES_TWO` row)."""
        return self.calibration.probability(self.raw(rows))

    def draws(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """(B, n): each row's probability under each bootstrap refit of the calibration."""
        return self.calibration.draws(self.raw(rows))

    @property
    def version(self) -> str:
        blob = json.dumps([self.first_trees, self.first_baseline, self.second_trees, self.second_baseline,
                           self.calibration.to_dict()], default=float)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "features_one": list(FEATURES_ONE), "features_two": list(FEATURES_TWO),
                "node_columns": list(NODE_COLUMNS),
                "first": {"baseline": self.first_baseline, "trees": [[list(n) for n in t] for t in self.first_trees]},
                "second": {"baseline": self.second_baseline,
                           "trees": [[list(n) for n in t] for t in self.second_trees]},
                "calibration": self.calibration.to_dict(), "record": dict(self.record)}

    @classmethod
    def from_sklearn(cls, first: Any, second: Any, calibration: Calibration,
                     record: Mapping[str, Any]) -> PeopleJudge:
        """From two fitted binary ``HistGradientBoostingClassifier`` models."""
        t1, b1 = sklearn_trees(first)
        t2, b2 = sklearn_trees(second)
        return cls(t1, b1, t2, b2, calibration, dict(record))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "the people judge") -> PeopleJudge:
        if data.get("format") != FORMAT or list(data.get("features_one", ())) != list(FEATURES_ONE) \
                or list(data.get("features_two", ())) != list(FEATURES_TWO) \
                or list(data.get("node_columns", ())) != list(NODE_COLUMNS):
            raise ConfigError(f"{where} is not a people judge for these features (format {FORMAT!r}). {_FIX}")
        t1, b1 = _trees(data.get("first"), f"first stage of {where}")
        t2, b2 = _trees(data.get("second"), f"second stage of {where}")
        if "calibration" not in data:
            raise ConfigError(f"{where} lacks its 'calibration'. {_FIX}")
        return cls(t1, b1, t2, b2, Calibration.from_dict(data["calibration"]), dict(data.get("record", {})))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), separators=(",", ":")) + "\n", encoding="utf-8")


def load_people_judge(path: str | Path | None = None) -> PeopleJudge:
    """The shipped judge (``resources/substitutions/people_judge.json``) or the one at ``path``."""
    path = Path(path) if path is not None else default_people_judge_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"Cannot read the people judge {path}: {exc}. {_FIX}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a people judge. {_FIX}")
    return PeopleJudge.from_dict(data, where=str(path))

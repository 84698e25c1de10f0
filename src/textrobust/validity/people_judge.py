"""The judge learned from people: does this substitute keep the meaning here?

Trained on people's judgements (issue 46): SWORDS dev's tuning part (Lee et al., NAACL
2021: each candidate judged by 3-10 people; acceptable = more than half say yes) and, as
extra positives, the substitutes that people wrote in CoInCo's dev portion (Kremer et al.,
EACL 2014), by ``benchmarks/validity/tune_people.py``. Two gradient-boosted tree models
(:mod:`textrobust.validity.trees`):

- ``first`` over :data:`FEATURES_ONE`, the features every proposal gets cheaply (one
  encoder pass per sentence, lexicons, vectors and the CoInCo pair prior): it ranks
  the proposals so that only the best few per position pay for the second stage;
- ``second``, a logistic regression stacked on the first (its log-odds) and the features of
  one encoder pass per candidate (:data:`SECOND_INPUTS`: the reverse reading, Zhou et al.
  2019's validation score, the target's movement, the tagger's reading of the new
  sentence). A second boosted model over every feature was measured and overfitted (its
  out-of-fold AUC fell below the first stage's on the same rows, 0.727 against 0.734); the
  stacked regression added 0.026 (``benchmarks/results/validity.md``). Its score, through
  :attr:`PeopleJudge.calibration` (isotonic, fitted on out-of-fold scores of the tuning
  part, with bootstrap refits), is the probability that people accept the substitute here.

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
from typing import Any, TypedDict

import numpy as np

from textrobust.errors import ConfigError
from textrobust.validity.calibration import Calibration
from textrobust.validity.trees import NODE_COLUMNS, Tree, check_trees, sklearn_trees, tree_probability, tree_raw

__all__ = ["FEATURES_ONE", "FEATURES_TWO", "FORMAT", "MEASURED", "PASS_FEATURES", "SECOND_INPUTS", "PeopleJudge",
           "default_people_judge_path", "load_people_judge"]

#: The first stage's inputs, in order.
FEATURES_ONE = (
    "vis_lp", "vis_rank", "vis_gap", "vis_missing",
    "cosine", "cosine_missing", "wn_synonym", "wn_rank", "wn_share", "wn_senses", "wn_cand_senses",
    "wn_hypernym", "wn_hyponym", "wn_similar", "antonym", "slot_fits", "zipf", "zipf_gap", "valence_gap",
    "same_start", "route_wordnet", "route_wordnet_related", "route_vectors", "route_visible",
    "pos_n", "pos_v", "pos_a", "pos_r", "prior_share", "prior_seen", "prior_any", "routes",
    "rel_vis_lp", "rank_vis_lp", "rel_cosine", "rank_cosine",
    "rel_prior_share", "rank_prior_share",
)
#: What the per-candidate encoder pass adds.
PASS_FEATURES = ("reverse", "reverse_missing", "validation", "target_cos", "tag_kept")
#: Every feature a second-stage candidate has.
FEATURES_TWO = (*FEATURES_ONE, *PASS_FEATURES)
#: The second stage's inputs: the first stage's log-odds, then :data:`PASS_FEATURES`.
SECOND_INPUTS = ("first_logit", *PASS_FEATURES)

FORMAT = "textrobust-people-judge"


class Measured(TypedDict):
    """The shipped default measured on SWORDS dev's held-out third (never tuned on)."""

    precision: float  # lenient precision of acceptable (only proposals people judged count)
    recall: float  # share of the acceptable substitutes proposed
    first: float  # first proposal acceptable
    per_target: float  # substitutes proposed per target word
    ece: float  # expected calibration error of the probabilities (10 bins)
    targets: int  # held-out targets
    paper_precision: dict[str, float]  # the papers' sources on the same targets
    paper_recall: dict[str, float]


#: The figures of the shipped default on SWORDS dev's held-out part
#: (``benchmarks/validity/swords.py``; ``benchmarks/results/validity.md``), for the report.
MEASURED: Measured = {"precision": 0.540, "recall": 0.137, "first": 0.610, "per_target": 1.11, "ece": 0.082,
                      "targets": 120, "paper_precision": {"embedding": 0.175, "wordnet": 0.115},
                      "paper_recall": {"embedding": 0.189, "wordnet": 0.144}}
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
    """The first stage's trees, the second stage's logistic regression (over standardised
    :data:`SECOND_INPUTS`: ``sigmoid(bias + weights . (x - mean) / scale)``) and the
    calibration of the second (see the module docstring)."""

    first_trees: tuple[Tree, ...]
    first_baseline: float
    second_mean: tuple[float, ...]
    second_scale: tuple[float, ...]
    second_weights: tuple[float, ...]
    second_bias: float
    calibration: Calibration
    record: Mapping[str, Any]

    def __post_init__(self) -> None:
        check_trees(self.first_trees, self.first_baseline, len(FEATURES_ONE), "people judge's first stage")
        n = len(SECOND_INPUTS)
        values = (*self.second_mean, *self.second_scale, *self.second_weights, self.second_bias)
        if not len(self.second_mean) == len(self.second_scale) == len(self.second_weights) == n \
                or not all(np.isfinite(values)) or min(self.second_scale) <= 0:
            raise ConfigError(f"The people judge's second stage needs {n} finite means, positive scales and "
                              f"weights (one per input of SECOND_INPUTS). {_FIX}")

    def first_logit(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """The first stage's log-odds of each :data:`FEATURES_ONE` row."""
        x = np.asarray(rows, dtype=float).reshape(-1, len(FEATURES_ONE))
        return tree_raw(self.first_trees, self.first_baseline, x)

    def first(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """The first stage's score of each :data:`FEATURES_ONE` row (a ranking, not calibrated)."""
        x = np.asarray(rows, dtype=float).reshape(-1, len(FEATURES_ONE))
        return tree_probability(self.first_trees, self.first_baseline, x)

    def raw(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """The second stage's uncalibrated score of each :data:`FEATURES_TWO` row."""
        x = np.asarray(rows, dtype=float).reshape(-1, len(FEATURES_TWO))
        inputs = np.column_stack([self.first_logit(x[:, : len(FEATURES_ONE)]), x[:, len(FEATURES_ONE):]])
        z = (inputs - np.asarray(self.second_mean)) / np.asarray(self.second_scale)
        logits = z @ np.asarray(self.second_weights) + self.second_bias
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -50, 50)))

    def probability(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """The calibrated probability that people accept each substitute (a :data:`FEATURES_TWO` row)."""
        return self.calibration.probability(self.raw(rows))

    def draws(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """(B, n): each row's probability under each bootstrap refit of the calibration."""
        return self.calibration.draws(self.raw(rows))

    @property
    def version(self) -> str:
        blob = json.dumps([self.first_trees, self.first_baseline, self.second_mean, self.second_scale,
                           self.second_weights, self.second_bias, self.calibration.to_dict()], default=float)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "features_one": list(FEATURES_ONE), "second_inputs": list(SECOND_INPUTS),
                "node_columns": list(NODE_COLUMNS),
                "first": {"baseline": self.first_baseline, "trees": [[list(n) for n in t] for t in self.first_trees]},
                "second": {"mean": list(self.second_mean), "scale": list(self.second_scale),
                           "weights": list(self.second_weights), "bias": self.second_bias},
                "calibration": self.calibration.to_dict(), "record": dict(self.record)}

    @classmethod
    def from_models(cls, first: Any, mean: Sequence[float], scale: Sequence[float], second: Any,
                    calibration: Calibration, record: Mapping[str, Any]) -> PeopleJudge:
        """From a fitted binary ``HistGradientBoostingClassifier`` (the first stage), the
        standardisation of the second stage's inputs and a fitted ``LogisticRegression`` on them."""
        trees, baseline = sklearn_trees(first)
        return cls(trees, baseline, tuple(float(v) for v in mean), tuple(float(v) for v in scale),
                   tuple(float(v) for v in np.asarray(second.coef_).ravel()),
                   float(np.asarray(second.intercept_).ravel()[0]), calibration, dict(record))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "the people judge") -> PeopleJudge:
        if data.get("format") != FORMAT or list(data.get("features_one", ())) != list(FEATURES_ONE) \
                or list(data.get("second_inputs", ())) != list(SECOND_INPUTS) \
                or list(data.get("node_columns", ())) != list(NODE_COLUMNS):
            raise ConfigError(f"{where} is not a people judge for these features (format {FORMAT!r}). {_FIX}")
        trees, baseline = _trees(data.get("first"), f"first stage of {where}")
        second = data.get("second")
        if not isinstance(second, Mapping):
            raise ConfigError(f"{where} lacks its second stage ('second'). {_FIX}")
        try:
            mean, scale, weights = (tuple(float(v) for v in second[k]) for k in ("mean", "scale", "weights"))
            bias = float(second["bias"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"The second stage of {where} is malformed ({exc}). {_FIX}") from None
        if "calibration" not in data:
            raise ConfigError(f"{where} lacks its 'calibration'. {_FIX}")
        return cls(trees, baseline, mean, scale, weights, bias, Calibration.from_dict(data["calibration"]),
                   dict(data.get("record", {})))

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

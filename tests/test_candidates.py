"""Candidate sources: the contract over every registered source, and each source's rules.

Fast tests build small vectors, a dict lexicon and a dict tagger here; tests marked heavy
use the real GloVe, WordNet and spaCy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from textrobust.attack.candidates import (
    CANDIDATE_FILTERS,
    CANDIDATE_SOURCES,
    EmbeddingSpace,
    GENDER_PAIRS,
    DictLexicon,
    EmbeddingNeighbours,
    FillIn,
    FillInSource,
    PosTag,
    ProtectedPairs,
    WordNetAntonyms,
    WordNetSynonyms,
    embedding_neighbours,
    inflect,
    match_case,
    wordnet_pos,
)
from textrobust.attack.candidates.tagging import _tokens
from textrobust.attack.problem import CandidateSource, Substitution
from textrobust.attack.testing import (
    FunctionFillIn,
    StaticCandidates,
    check_candidate_source,
)
from textrobust.embeddings import WordVectors
from textrobust.errors import ConfigError, DataError
from textrobust.text import Text

# ---- fixtures built here ------------------------------------------------------------------------
_VECTORS = {
    "good": [1.0, 0.1, 0.0, 0.0],
    "great": [0.95, 0.2, 0.0, 0.0],
    "fine": [0.9, 0.3, 0.1, 0.0],
    "bad": [0.7, -0.5, 0.0, 0.0],
    ",": [0.99, 0.12, 0.0, 0.0],  # punctuation right next to "good": must never be proposed
    "'s": [0.97, 0.05, 0.0, 0.01],
    "movie": [0.0, 0.0, 1.0, 0.1],
    "film": [0.0, 0.0, 0.95, 0.2],
    "picture": [0.0, 0.0, 0.9, 0.3],
    "the": [0.0, 1.0, 0.0, 0.0],
    "he": [0.0, 0.0, 0.0, 1.0],
    "she": [0.0, 0.1, 0.0, 0.95],
    "said": [0.1, 0.9, 0.1, 0.1],
}


def small_vectors(**kwargs: Any) -> WordVectors:
    return WordVectors(list(_VECTORS), np.array(list(_VECTORS.values())), name="small", **kwargs)


_TAGS = {
    "the": ("DT", "DET"), "a": ("DT", "DET"), "good": ("JJ", "ADJ"), "fine": ("JJ", "ADJ"),
    "film": ("NN", "NOUN"), "films": ("NNS", "NOUN"), "movie": ("NN", "NOUN"), "he": ("PRP", "PRON"),
    "she": ("PRP", "PRON"), "said": ("VBD", "VERB"), "loved": ("VBD", "VERB"), "is": ("VBZ", "AUX"),
    "john": ("NNP", "PROPN"), "i": ("PRP", "PRON"), "these": ("DT", "DET"),
}  # fmt: skip


class DictTagger:
    """A tagger from a word table (unknown words: 'XX'/'X'); counts texts tagged."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: Text) -> tuple[PosTag, ...]:
        self.calls += 1
        return tuple(PosTag(*_TAGS.get(w.lower(), ("XX", "X"))) for w in text.words)


def small_lexicon() -> DictLexicon:
    return DictLexicon(
        synonyms={
            "good": ["good", "great", "fine", "well_made", "full"],
            ("film", "n"): ["film", "movie", "picture", "moving_picture"],
            ("love", "v"): ["love", "adore", "enjoy"],
            "john": ["jonathan"],
        },
        antonyms={"good": ["bad", "evil"], ("love", "v"): ["hate"], "fine": ["fine"]},
    )


TEXTS = [
    "The good film, he said.",
    "GOOD movie!",
    "Good Film",
    "I loved these films.",
    "",
    "...",
    Text.from_pair("a good film", "he is fine"),
]

#: How to build each registered source offline and fast. A new registration must add a line.
LIGHT: dict[str, Callable[[], CandidateSource]] = {
    "embedding": lambda: CANDIDATE_SOURCES.get("embedding")(small_vectors(), k=4),
    "wordnet_synonyms": lambda: CANDIDATE_SOURCES.get("wordnet_synonyms")(small_lexicon(), DictTagger()),
    "wordnet_antonyms": lambda: CANDIDATE_SOURCES.get("wordnet_antonyms")(small_lexicon(), DictTagger()),
    "protected_pairs": lambda: CANDIDATE_SOURCES.get("protected_pairs")(),
    "validated": lambda: _people_light(),
    "validated_labelled": lambda: _validated_light(),
    "fill_in": lambda: CANDIDATE_SOURCES.get("fill_in")(
        k=3, fill_in=FunctionFillIn(lambda text, position: [("great", 2.0), ("fine", 1.5), ("good", 1.0)])
    ),
    "wordnet_cosine": lambda: CANDIDATE_SOURCES.get("wordnet_cosine")(
        WordNetSynonyms(small_lexicon(), DictTagger()), small_vectors(), eta=2, min_cos=0.5, stop_words={"the"}
    ),
    "checked": lambda: CANDIDATE_SOURCES.get("checked")(
        small_vectors(), lexicon=small_lexicon(), tagger=DictTagger(), min_zipf=0.0, k=2
    ),
    "l2_neighbours": lambda: CANDIDATE_SOURCES.get("l2_neighbours")(
        EmbeddingSpace.of_vectors(small_vectors(), name="small"), n=3
    ),
}


def _people_light() -> CandidateSource:
    from tests.test_people_source import light_source as people_source

    return people_source()


def _validated_light() -> CandidateSource:
    from tests.test_validity import light_source

    return light_source(min_zipf=0.0)


def words_at(source: CandidateSource, text: str | Text, position: int) -> list[str]:
    text = Text.from_string(text) if isinstance(text, str) else text
    return [s.word for s in source.candidates(text, [position]).get(position, [])]


# ---- the contract over the registry -----------------------------------------------------------
def test_registry_lists_every_source_and_every_one_has_a_light_builder() -> None:
    assert CANDIDATE_SOURCES.names() == [
        "checked", "embedding", "fill_in", "l2_neighbours", "protected_pairs", "validated", "validated_labelled",
        "wordnet_antonyms", "wordnet_cosine", "wordnet_synonyms",
    ]
    assert set(LIGHT) == set(CANDIDATE_SOURCES.names())
    assert all(entry.summary for entry in CANDIDATE_SOURCES.entries())


@pytest.mark.parametrize("name", sorted(LIGHT))
def test_every_registered_source_meets_the_contract(name: str) -> None:
    source = LIGHT[name]()
    assert isinstance(source, CandidateSource)
    found = check_candidate_source(source, TEXTS, min_candidates=1)
    assert found >= 1
    assert name in repr(CANDIDATE_SOURCES)
    assert type(source).__name__ in repr(source)


#: How to build each registered filter around a source. A new registration must add a line.
FILTER_SETTINGS: dict[str, Callable[[], dict[str, Any]]] = {
    "top": lambda: {"k": 2},
    "content_positions": lambda: {"stop_words": {"the", "he"}},
    "content_words": lambda: {"k": 2, "stop_words": {"the", "movie"}},
    "space_synonyms": lambda: {"space": EmbeddingSpace.of_vectors(small_vectors(), name="small")},
}


def test_every_registered_filter_has_settings_and_a_summary() -> None:
    assert set(FILTER_SETTINGS) == set(CANDIDATE_FILTERS.names())
    assert all(entry.summary for entry in CANDIDATE_FILTERS.entries())


@pytest.mark.parametrize("name", sorted(FILTER_SETTINGS))
def test_every_registered_filter_meets_the_contract_and_only_removes(name: str) -> None:
    """A filter keeps the source contract, and proposes at a position only what its source
    proposes there (order and scores may change)."""
    inner = StaticCandidates({"good": ["great", "fine", "bad", "the"], "film": ["movie", "picture", "the"],
                              "he": ["she"], "the": ["a"]})
    built = CANDIDATE_FILTERS.get(name)(inner, **FILTER_SETTINGS[name]())
    assert check_candidate_source(built, TEXTS, min_candidates=1) >= 1
    for item in TEXTS:
        text = Text.from_string(item) if isinstance(item, str) else item
        positions = list(range(len(text)))
        offered = {p: {s.word.lower() for s in subs} for p, subs in inner.candidates(text, positions).items()}
        for p, subs in built.candidates(text, positions).items():
            assert {s.word.lower() for s in subs} <= offered.get(p, set()), (name, str(text), p)


def test_the_two_wordnet_cosine_rules_differ_as_documented() -> None:
    """wordnet_cosine (the radius's S(X, p)) skips stop words and keeps every sense;
    checked (patch pairs) keeps stop-word positions and honours its own cosine floor."""
    text = Text.from_string("The good film")
    cleaned = LIGHT["wordnet_cosine"]()
    checked = LIGHT["checked"]()
    assert 0 not in cleaned.candidates(text, [0])
    assert words_at(cleaned, text, 1) == ["great", "fine"]
    assert words_at(checked, text, 1) == ["great", "fine"]
    assert all(s.score >= 0.6 for subs in checked.candidates(text, [1, 2]).values() for s in subs)


def test_fill_in_source_meets_the_contract() -> None:
    fill = FunctionFillIn(lambda text, i: [("great", 0.9), ("Good", 0.8), (",", 0.5), ("fine", 0.4)])
    assert isinstance(fill, FillIn)
    assert check_candidate_source(FillInSource(fill, k=4), TEXTS, min_candidates=1) > 0


def test_static_candidates_double_meets_the_contract() -> None:
    source = StaticCandidates({"good": ["great", "good", "great", "fine"]})
    assert check_candidate_source(source, TEXTS, min_candidates=1) > 0
    assert words_at(source, "Good", 0) == ["great", "good", "fine"]


# ---- the checker itself catches broken sources ---------------------------------------------------
class _Broken:
    def __init__(self, how: str) -> None:
        self.how = how
        self.calls = 0

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        self.calls += 1
        out: dict[int, list[Substitution]] = {}
        for p in positions:
            word = {"original": text.words[p], "two words": "two words", "flaky": f"w{self.calls}"}.get(
                self.how, "fine")
            position = p + 1 if self.how == "position" else p
            out[p] = [Substitution(position, word, 1.0)]
        if self.how == "extra" and positions:
            out[max(positions) + 100] = []
        if self.how == "duplicate":
            out = {p: subs * 2 for p, subs in out.items()}
        if self.how == "frozen":
            out = {p: ([] if p in text.frozen else subs) for p, subs in out.items()}
        return out


@pytest.mark.parametrize(
    "how, message",
    [
        ("original", "already at position"),
        ("two words", "not one word"),
        ("flaky", "answered differently"),
        ("position", "listed under position"),
        ("extra", "not requested"),
        ("duplicate", "proposed twice"),
        ("frozen", "frozen positions"),
    ],
)
def test_checker_rejects_broken_sources(how: str, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_candidate_source(_Broken(how), ["The good film."])


def test_checker_rejects_an_empty_source_when_candidates_are_required() -> None:
    with pytest.raises(AssertionError, match="at least 3"):
        check_candidate_source(StaticCandidates({}), ["a b c"], min_candidates=3)


# ---- word vectors ---------------------------------------------------------------------------------
def test_vectors_are_unit_normalised_read_only_and_indexed() -> None:
    v = small_vectors()
    assert np.allclose(np.linalg.norm(v.matrix, axis=1), 1.0, atol=1e-6)
    assert v.matrix.dtype == np.float32 and not v.matrix.flags.writeable
    assert v.index["bad"] == 3 and "bad" in v and "nope" not in v and len(v) == len(_VECTORS)
    assert v.cosine("good", "great") == pytest.approx(float(v.vector("good") @ v.vector("great")))
    assert np.isnan(v.cosines([("good", "nope")])[0])
    with pytest.raises(ConfigError, match="nope"):
        v.vector("nope")
    with pytest.raises(DataError, match="one row per word"):
        WordVectors(["a", "b"], np.ones((3, 2)))


def test_nearest_is_sorted_by_cosine_excludes_the_word_and_handles_unknown_words() -> None:
    v = small_vectors()
    good, unknown, film = v.nearest(["good", "zzz", "film"], 3)
    assert [w for w, _ in good] == [",", "'s", "great"]
    cosines = [c for _, c in good]
    assert cosines == sorted(cosines, reverse=True)
    assert cosines[2] == pytest.approx(v.cosine("good", "great"), abs=1e-6)
    assert unknown == []
    assert [w for w, _ in film] == ["movie", "picture", "he"]
    # a distance limit keeps only the close ones; k larger than the vocabulary is capped
    assert [w for w, _ in v.nearest(["film"], 3, max_distance=0.05)[0]] == ["movie", "picture"]
    assert len(v.nearest(["film"], 100)[0]) == len(v) - 1
    with pytest.raises(ConfigError, match="'k'"):
        v.nearest(["film"], 0)
    with pytest.raises(ConfigError, match="max_distance"):
        v.nearest(["film"], 2, max_distance=3.0)


def test_nearest_batches_queries_and_caches_each_word() -> None:
    v = small_vectors(batch_size=2)
    batches: list[int] = []
    original = v._similarities
    v._similarities = lambda rows: (batches.append(len(rows)), original(rows))[1]  # type: ignore[method-assign]
    first = v.nearest(["good", "film", "bad", "he", "good"], 3)
    assert batches == [2, 2]  # four distinct words, batches of two: two matrix products
    assert first[0] == first[4]
    assert v.nearest(["bad", "film"], 2) == [first[2][:2], first[1][:2]]
    assert batches == [2, 2]  # answered from the cache
    v.nearest(["bad"], 5)
    assert batches == [2, 2, 1]  # a larger k is computed again


def test_within_is_an_l2_ball_on_unit_vectors() -> None:
    v = small_vectors()
    radius = 0.4
    ball = v.within(["film"], radius)[0]
    expected = sorted(
        (w for w in v.words if w != "film" and np.linalg.norm(v.vector(w) - v.vector("film")) <= radius),
        key=lambda w: -v.cosine("film", w),
    )
    assert [w for w, _ in ball] == expected == ["movie", "picture"]
    assert v.within(["film"], radius, limit=1)[0] == ball[:1]
    assert v.within(["zzz"], radius) == [[]]
    assert v.within(["film"], 0.0) == [[]]


def test_restrict_keeps_the_first_words() -> None:
    v = small_vectors().restrict(4)
    assert v.words == ("good", "great", "fine", "bad")
    assert [w for w, _ in v.nearest(["good"], 3)[0]] == ["great", "fine", "bad"]
    with pytest.raises(ConfigError, match="vocab_size"):
        small_vectors().restrict(1)


# ---- embedding neighbours -------------------------------------------------------------------------
def test_embedding_neighbours_keep_case_skip_punctuation_and_score_by_cosine() -> None:
    v = small_vectors()
    source = EmbeddingNeighbours(v, k=5)  # the 5 nearest include "," and "'s": dropped
    text = Text.from_string("Good GOOD good zzz")
    found = source.candidates(text, [0, 1, 2, 3])
    assert [s.word for s in found[0]] == ["Great", "Fine", "Bad"]
    assert [s.word for s in found[1]] == ["GREAT", "FINE", "BAD"]
    assert [s.word for s in found[2]] == ["great", "fine", "bad"]
    assert found[3] == []
    assert found[2][0].score == pytest.approx(v.cosine("good", "great"), abs=1e-6)
    assert all(s.position == 1 for s in found[1])


def test_embedding_neighbours_distance_limits() -> None:
    v = small_vectors()
    assert words_at(EmbeddingNeighbours(v, k=10, max_cos_distance=0.05), "film", 0) == ["movie", "picture"]
    assert words_at(EmbeddingNeighbours(v, k=10, l2_radius=0.4), "film", 0) == ["movie", "picture"]
    assert words_at(EmbeddingNeighbours(v, k=1, l2_radius=0.4), "film", 0) == ["movie"]
    with pytest.raises(ConfigError, match="not both"):
        EmbeddingNeighbours(v, max_cos_distance=0.1, l2_radius=0.5)
    with pytest.raises(ConfigError, match="'k'"):
        EmbeddingNeighbours(v, k=0)
    with pytest.raises(ConfigError, match="'space'"):
        embedding_neighbours(space="word2vec")
    assert "l2_radius=0.4" in repr(EmbeddingNeighbours(v, l2_radius=0.4))


# ---- word forms -------------------------------------------------------------------------------------
def test_match_case() -> None:
    assert match_case("Good", "great") == "Great"
    assert match_case("GOOD", "great") == "GREAT"
    assert match_case("good", "great") == "great"
    assert match_case("I", "we") == "We"
    assert match_case("iPhone", "phone") == "phone"
    assert match_case("good", "Paris") == "Paris"


def test_inflect_back_to_the_tag() -> None:
    assert inflect("movie", "NNS") == "movies"
    assert inflect("hate", "VBD") == "hated"
    assert inflect("adore", "VBG") == "adoring"
    assert inflect("good", "JJR") == "better"
    assert inflect("inexpensive", "JJR") is None  # no "inexpensiver"
    assert inflect("film", "NN") == "film"
    assert inflect("film", "NNP") == "film"
    assert inflect("humans", "NNS") == "humans" and inflect("men", "NNS") == "men"


def test_wordnet_pos_mapping() -> None:
    assert wordnet_pos(PosTag("NNS", "NOUN")) == "n"
    assert wordnet_pos(PosTag("VBD", "VERB")) == "v"
    assert wordnet_pos(PosTag("JJ", "ADJ")) == "a"
    assert wordnet_pos(PosTag("RB", "ADV")) == "r"
    assert wordnet_pos(PosTag("NNP", "PROPN")) is None
    assert wordnet_pos(PosTag("VBZ", "AUX")) is None
    assert wordnet_pos(PosTag("VBD", "")) == "v"  # a tagger with PTB tags only


# ---- WordNet sources (dict lexicon, dict tagger) -------------------------------------------------
def test_synonyms_are_inflected_cased_deduplicated_and_exclude_the_word() -> None:
    source = WordNetSynonyms(small_lexicon(), DictTagger())
    text = Text.from_string("I loved these Films, John.")
    found = source.candidates(text, range(len(text)))
    assert [s.word for s in found[1]] == ["adored", "enjoyed"]  # "love" -> "loved" is the word itself
    assert [s.word for s in found[3]] == ["Movies", "Pictures"]  # plural, capitalised, no multi-word
    assert found[0] == [] and found[2] == []  # pronoun and determiner: no WordNet POS
    assert found[4] == []  # proper noun
    assert [round(s.score, 3) for s in found[3]] == [1.0, 0.5]


def test_antonyms_are_direct_and_inflected() -> None:
    source = WordNetAntonyms(small_lexicon(), DictTagger())
    assert words_at(source, "I loved these films.", 1) == ["hated"]
    assert words_at(source, "Good film", 0) == ["Bad", "Evil"]
    assert words_at(source, "fine", 0) == []  # a lexicon entry equal to the word is dropped
    with pytest.raises(ConfigError, match="indirect"):
        WordNetAntonyms(small_lexicon(), DictTagger(), indirect=True)


def test_wordnet_sources_tag_once_per_call_and_cache_per_word_and_tag() -> None:
    calls: list[tuple[str, str]] = []

    class CountingLexicon(DictLexicon):
        def synonyms(self, word: str, pos: str) -> tuple[str, ...]:
            calls.append((word, pos))
            return super().synonyms(word, pos)

    tagger = DictTagger()
    source = WordNetSynonyms(CountingLexicon(small_lexicon()._synonyms), tagger)
    text = Text.from_string("good film good film")
    source.candidates(text, [0, 1, 2, 3])
    source.candidates(text, [0, 1])
    assert tagger.calls == 2
    assert calls == [("good", "a"), ("film", "n")]


def test_a_tagger_with_the_wrong_length_is_an_error() -> None:
    source = WordNetSynonyms(small_lexicon(), lambda text: (PosTag("NN", "NOUN"),))
    with pytest.raises(ConfigError, match="one tag per word"):
        source.candidates(Text.from_string("good film"), [0])


def test_spacy_doc_tokens_keep_words_whole_and_split_gap_punctuation() -> None:
    text = Text.from_string('He said: "don\'t go..." (twice)')
    spans = [(s, e) for _, s, e in text.word_spans()]
    tokens, spaces, word_tokens = _tokens(str(text), spans)
    assert [tokens[i] for i in word_tokens] == list(text.words)
    assert tokens == ["He", "said", ":", '"', "don't", "go", "...", '"', "(", "twice", ")"]
    assert "".join(t + (" " if s else "") for t, s in zip(tokens, spaces)) == str(text)


# ---- protected pairs ------------------------------------------------------------------------------
def test_protected_pairs_swap_both_ways_and_keep_case() -> None:
    source = ProtectedPairs()
    text = Text.from_string("She told HIM her brother was a King.")
    found = source.candidates(text, range(len(text)))
    assert [s.word for s in found[0]] == ["He"]
    assert [s.word for s in found[2]] == ["HER"]
    assert [s.word for s in found[3]] == ["his", "him"]
    assert [s.word for s in found[4]] == ["sister"]
    assert [s.word for s in found[7]] == ["Queen"]
    assert found[1] == [] and found[5] == []
    assert ("actor", "actress") in GENDER_PAIRS and source.partners("ACTRESS") == ("actor",)
    assert len(source.words) > 100


def test_protected_pairs_validate_and_accept_custom_pairs() -> None:
    source = ProtectedPairs([("Christian", "Muslim"), ("church", "mosque")])
    assert words_at(source, "A Christian church", 1) == ["Muslim"]
    assert words_at(source, "A Christian church", 2) == ["mosque"]
    for bad in [("a", "a"), ("two words", "x"), ("x",)]:
        with pytest.raises(ConfigError, match="pairs"):
            ProtectedPairs([bad])  # type: ignore[list-item]


# ---- fill-in ---------------------------------------------------------------------------------------
def test_fill_in_source_batches_filters_and_keeps_case() -> None:
    def fn(text: Text, position: int) -> list[tuple[str, float]]:
        return [("good", 0.9), ("great", 0.8), ("two words", 0.7), ("great", 0.6), ("##ly", 0.5),
                ("fine", 0.4), ("okay", 0.3)]

    fill = FunctionFillIn(fn)
    source = FillInSource(fill, k=6)
    text = Text.from_string("A Good film")
    found = source.candidates(text, [1, 2, 1])
    assert len(fill.calls) == 1 and fill.calls[0] == [(text, 1), (text, 2)]  # one batch, no repeats
    assert [(s.word, s.score) for s in found[1]] == [("Great", 0.8), ("Fine", 0.4)]  # k=6 cuts "okay"
    assert [s.word for s in found[2]] == ["good", "great", "fine"]
    many = source.candidates_many([(text, [1]), (Text.from_string("so good"), [0, 1])])
    assert len(fill.calls) == 2 and len(fill.calls[1]) == 3
    assert [s.word for s in many[1][1]] == ["great", "fine"]
    assert source.candidates(text, []) == {} and len(fill.calls) == 2
    assert [s.word for s in FillInSource(fill, k=6, keep_case=False).candidates(text, [1])[1]] == [
        "great", "fine"]


def test_fill_in_source_rejects_bad_fill_ins() -> None:
    class Short:
        def fill(self, requests: Sequence[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]:
            return []

    with pytest.raises(ConfigError, match="one list per request"):
        FillInSource(Short()).candidates(Text.from_string("a b"), [0])
    with pytest.raises(ConfigError, match="fill"):
        FillInSource(object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="'k'"):
        FillInSource(Short(), k=0)


# ---- real assets ------------------------------------------------------------------------------------
HEAVY_TEXTS = [
    "I loved these films, but the ending was cheap and predictable.",
    "The Actress gave a GOOD performance; he hated it.",
    Text.from_pair("A man is playing a guitar.", "A woman plays happily."),
]


@pytest.fixture(scope="module")
def glove() -> WordVectors:
    return WordVectors.from_glove(50_000)


@pytest.mark.heavy
def test_every_registered_source_meets_the_contract_on_real_assets(glove: WordVectors) -> None:
    real = {
        "embedding": lambda: CANDIDATE_SOURCES.get("embedding")(glove, k=20),
        "wordnet_synonyms": lambda: CANDIDATE_SOURCES.get("wordnet_synonyms")(),
        "wordnet_antonyms": lambda: CANDIDATE_SOURCES.get("wordnet_antonyms")(),
        "protected_pairs": lambda: CANDIDATE_SOURCES.get("protected_pairs")(),
        # the project's shipped MiniLM + trained-head fill-in (the fast route)
        "validated": lambda: _people_light(),
    "validated_labelled": lambda: _validated_light(),
    "fill_in": lambda: CANDIDATE_SOURCES.get("fill_in")(k=20, fill_in="minilm_mlm"),
        # from defaults: WordNet, spaCy and the project's counter-fitted vectors
        "wordnet_cosine": lambda: CANDIDATE_SOURCES.get("wordnet_cosine")(),
        "checked": lambda: CANDIDATE_SOURCES.get("checked")(),
        "l2_neighbours": lambda: CANDIDATE_SOURCES.get("l2_neighbours")(EmbeddingSpace.of_vectors(glove), n=20),
    }
    assert set(real) == set(CANDIDATE_SOURCES.names())
    for name, build in real.items():
        assert check_candidate_source(build(), HEAVY_TEXTS, min_candidates=2) >= 2, name


@pytest.mark.heavy
def test_real_wordnet_sources_are_pos_aware_and_inflected() -> None:
    synonyms = WordNetSynonyms()
    antonyms = WordNetAntonyms()
    text = Text.from_string("I loved these films, but the ending was cheap.")
    syn = {p: [s.word for s in subs] for p, subs in synonyms.candidates(text, range(len(text))).items()}
    ant = {p: [s.word for s in subs] for p, subs in antonyms.candidates(text, range(len(text))).items()}
    assert "movies" in syn[3] and "films" not in syn[3]
    assert all(not w.endswith("film") for w in syn[3])
    assert "hated" in ant[1]
    assert "expensive" in ant[8]
    assert syn[0] == [] and syn[2] == [] and syn[7] == []  # pronoun, determiner, auxiliary
    other = Text.from_string("He hated the men.")
    assert "detested" in words_at(synonyms, other, 1) and "hatted" not in words_at(synonyms, other, 1)
    assert not {"mens", "handses"} & set(words_at(synonyms, other, 3))
    capital = Text.from_string("Films were shown.")
    assert "Movies" in words_at(synonyms, capital, 0)
    assert "good" in words_at(WordNetAntonyms(indirect=True), "An awful film.", 1)


@pytest.mark.heavy
def test_spacy_tagger_gives_one_tag_per_word_and_caches_by_text() -> None:
    from textrobust.attack.candidates import SpacyTagger

    tagger = SpacyTagger()
    pair = Text.from_pair("He doesn't like well-made films.", "She loved them!")
    tags = tagger(pair)
    assert len(tags) == len(pair)
    assert tags[pair.words.index("films")] == PosTag("NNS", "NOUN")
    assert tags[pair.words.index("loved")].pos == "VERB"
    assert tagger(Text.from_pair("He doesn't like well-made films.", "She loved them!")) is tags


@pytest.mark.heavy
def test_real_embedding_neighbours_of_glove(glove: WordVectors) -> None:
    source = EmbeddingNeighbours(glove, k=10)
    assert "movie" in words_at(source, "film", 0)
    assert "Movie" in words_at(source, "Film", 0)
    assert words_at(source, "qwzxv", 0) == []


def test_checker_rejects_a_fast_path_that_disagrees_with_candidates() -> None:
    class _FastPathDrifts(StaticCandidates):
        def word_candidates(self, text: Text, positions: Sequence[int]) -> dict[int, tuple[tuple[str, float], ...]]:
            return {p: tuple((s.word.upper(), s.score) for s in subs) for p, subs in self.candidates(text, positions).items()}

    with pytest.raises(AssertionError, match="fast path"):
        check_candidate_source(_FastPathDrifts({"good": ["great"]}), ["a good film"])


def test_embedding_fast_path_is_what_problem_neighbours_uses() -> None:
    from textrobust.attack.problem import Problem

    source = LIGHT["embedding"]()
    text = Text.from_string("The good film is great.")
    calls: list[str] = []
    original = source.candidates
    source.candidates = lambda *a: calls.append("slow") or original(*a)  # type: ignore[method-assign]
    problem = Problem(original=text, goal=None, source=source)  # type: ignore[arg-type]
    proposals = problem.neighbours(text)
    assert calls == []  # the Substitution-building path was not needed
    expected = [(p, s.word) for p, subs in original(text, range(len(text))).items() for s in subs]
    assert [(p.position, p.word) for p in proposals] == expected
    assert all(p.text == text.replace(p.position, p.word) and p.parent is text for p in proposals)

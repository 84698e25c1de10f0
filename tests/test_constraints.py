"""Constraints: the contract over every registered constraint (with tiny stand-ins for
the heavy models), then each constraint's rule; real spaCy, MiniLM, Gemma in heavy tests."""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from textrobust.attack.constraint_testing import ConstraintContractError, check_constraint, proposals_for
from textrobust.attack.constraints import (
    CONSTRAINTS,
    BERTScoreConstraint,
    FirstWords,
    FrozenColumns,
    LMLogProbDrop,
    MaxModificationRate,
    PartOfSpeech,
    RepeatModification,
    SentenceSimilarity,
    StopWords,
    WordEmbeddingDistance,
    split_constraints,
)
from textrobust.attack.constraints.context import window_bounds, window_segment
from textrobust.attack.problem import Proposal
from textrobust.errors import AssetMissingError, ConfigError
from textrobust.text import Text


# ---- tiny stand-ins -----------------------------------------------------------------------------
class FakeNLP:
    """A spaCy-like tagger: regex tokens, tags from a lexicon, NOUN otherwise; records calls."""

    LEXICON = {
        "the": ("DET", "DT"), "a": ("DET", "DT"), "good": ("ADJ", "JJ"), "great": ("ADJ", "JJ"),
        "bad": ("ADJ", "JJ"), "well": ("ADV", "RB"), "made": ("VERB", "VBN"), "runs": ("VERB", "VBZ"),
        "is": ("AUX", "VBZ"), "very": ("ADV", "RB"), "-": ("PUNCT", "HYPH"), ".": ("PUNCT", "."),
    }
    pipe_names = ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner"]

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], dict[str, Any]]] = []

    def pipe(self, texts: Sequence[str], **kwargs: Any) -> list[list[SimpleNamespace]]:
        texts = list(texts)
        self.calls.append((texts, kwargs))
        docs = []
        for text in texts:
            doc = []
            for m in re.finditer(r"\w+|[^\w\s]", text):
                pos, tag = self.LEXICON.get(m.group().lower(), ("NOUN", "NN"))
                doc.append(SimpleNamespace(idx=m.start(), text=m.group(), pos_=pos, tag_=tag))
            docs.append(doc)
        return docs


class TinyVectors:
    def __init__(self) -> None:
        words = ["good", "great", "fine", "bad", "film", "movie", "the", "very"]
        rng = np.random.default_rng(0)
        m = rng.normal(size=(len(words), 4))
        m[1] = m[0] + 0.1  # great ~ good
        m[2] = m[0] + 0.5  # fine fairly close
        m[5] = m[4] + 0.1  # movie ~ film
        self.index = {w: i for i, w in enumerate(words)}
        self.matrix = (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


class WordCountLM:
    """Closed-form 'LM': log P(text) = -1 per known word, -5 per unknown word; records calls."""

    KNOWN = {"the", "a", "film", "movie", "good", "great", "is", "very", "fine", "well", "made"}

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def sentence_log_prob(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([sum(-1.0 if w.lower() in self.KNOWN else -5.0 for w in re.findall(r"\w+", t)) for t in texts])


class JaccardScorer:
    """Word-set Jaccard similarity; records the pairs it is asked about."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], list[str]]] = []

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        self.calls.append((list(a), list(b)))
        out = []
        for x, y in zip(a, b):
            sx, sy = set(x.lower().split()), set(y.lower().split())
            out.append(len(sx & sy) / len(sx | sy) if sx | sy else 1.0)
        return np.array(out)


def tiny_causal_lm() -> Any:
    """A real CausalLM over a randomly initialised 1-layer GPT-2 with a word-level tokenizer."""
    torch = pytest.importorskip("torch")
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from textrobust.lm import CausalLM

    words = "<pad> <unk> <bos> the a film movie is very good great fine bad well made man sleeps - .".split()
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", 2)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", unk_token="<unk>", pad_token="<pad>")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(words), n_positions=32, n_embd=8, n_layer=1, n_head=1))
    return CausalLM(model, tokenizer, batch_size=4)


@pytest.fixture(scope="module")
def stand_ins() -> dict[str, Any]:
    """name -> a built constraint, for every registered name, with tiny stand-ins."""
    return {
        "stop_words": StopWords({"the", "a", "is"}),
        "repeat_modification": RepeatModification(),
        "max_modification_rate": MaxModificationRate(rate=0.25),
        "frozen_columns": FrozenColumns(),
        "first_words": FirstWords(limit=5),
        "part_of_speech": PartOfSpeech(FakeNLP()),
        "word_embedding_distance": WordEmbeddingDistance(TinyVectors(), min_cos=0.8),
        "lm_log_prob_drop": LMLogProbDrop(tiny_causal_lm(), max_drop=1.0, window=2),
        "sentence_similarity": SentenceSimilarity(JaccardScorer(), min_similarity=0.5, window=2),
        "bertscore": BERTScoreConstraint(JaccardScorer(), min_f1=0.6),
    }


SENTENCE = Text.from_string("The film is very good, a well-made film.")
PAIR = Text.from_pair("A man sleeps.", "The man is very good.")
EDITS = {1: ["movie", "bad", "great", "the"], 4: ["great", "fine", "bad", "xyzzy"], 6: ["bad", "fine"]}


def contract_cases() -> list[tuple[Text, list[Proposal]]]:
    parent = SENTENCE.replace(4, "great")  # one earlier change: original and parent differ
    pair_edits = {p: ["good", "bad", "movie"] for p in PAIR.modifiable}
    return [
        (SENTENCE, proposals_for(SENTENCE, EDITS)),
        (SENTENCE, proposals_for(SENTENCE, {1: ["movie", "xyzzy"], 4: ["fine", "bad"], 7: ["fine"]}, parent)),
        (PAIR, proposals_for(PAIR, pair_edits)),
    ]


# ---- the contract, over the whole registry ----------------------------------------------------------
def test_every_registered_constraint_has_a_stand_in(stand_ins: dict[str, Any]) -> None:
    assert sorted(stand_ins) == CONSTRAINTS.names()
    for name, built in stand_ins.items():
        assert isinstance(built, CONSTRAINTS.get(name))


CONTRACT_CASES = [
    (name, compare_to)
    for name in CONSTRAINTS.names()
    for compare_to in ("original", "parent")
    if compare_to == "original" or "compare_to" in inspect.signature(CONSTRAINTS.get(name)).parameters
]


@pytest.mark.parametrize(("name", "compare_to"), CONTRACT_CASES)
def test_contract_holds_for_every_registered_constraint(stand_ins: dict[str, Any], name: str, compare_to: str) -> None:
    built = stand_ins[name]
    if compare_to == "parent":
        settings = {**built.config.model_dump(), "compare_to": "parent"}
        built = type(built)(*built._collaborators().values(), **settings)
        assert "compare_to='parent'" in repr(built)
    for original, proposals in contract_cases():
        report = check_constraint(built, original, proposals)
        if report.kind == "candidate":
            assert report.verdicts is not None and report.verdicts.shape == (len(proposals),)
            assert report.verdicts.any() or name == "bertscore"  # stand-ins accept something
        else:
            assert report.allowed and all(isinstance(a, frozenset) for a in report.allowed)
    assert type(built).__name__ in repr(built) and "object at" not in repr(built)


def test_contract_checker_catches_broken_constraints() -> None:
    class BatchDependent:
        def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
            return np.array([len(proposals) > 1] * len(proposals), dtype=bool)

        def __repr__(self) -> str:
            return "BatchDependent()"

    class WrongLength:
        def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
            return np.ones(len(proposals) + 1, dtype=bool)

        def __repr__(self) -> str:
            return "WrongLength()"

    class Inventive:
        def allowed(self, original: Text, current: Text, positions: frozenset[int]) -> frozenset[int]:
            return frozenset(positions | {99})

        def __repr__(self) -> str:
            return "Inventive()"

    proposals = proposals_for(SENTENCE, EDITS)
    with pytest.raises(ConstraintContractError, match="neighbours"):
        check_constraint(BatchDependent(), SENTENCE, proposals)
    with pytest.raises(ConstraintContractError, match="shape"):
        check_constraint(WrongLength(), SENTENCE, proposals)
    with pytest.raises(ConstraintContractError, match="not given"):
        check_constraint(Inventive(), SENTENCE, proposals)
    with pytest.raises(ConstraintContractError, match="neither"):
        check_constraint(object(), SENTENCE, proposals)


def test_split_constraints_sorts_by_kind(stand_ins: dict[str, Any]) -> None:
    positions, candidates = split_constraints(stand_ins[n] for n in CONSTRAINTS.names())
    assert {type(c).__name__ for c in positions} == {"StopWords", "RepeatModification", "MaxModificationRate",
                                                     "FrozenColumns", "FirstWords"}
    assert len(candidates) == 5
    with pytest.raises(ConfigError, match="Expected a constraint"):
        split_constraints([object()])


def test_constraints_plug_into_a_problem() -> None:
    from textrobust.attack.problem import Problem
    from textrobust.attack.testing import StaticCandidates

    source = StaticCandidates({"man": ["woman", "xyzzy"], "good": ["great", "bad", "fine"], "very": ["really"]})
    goal = SimpleNamespace(evaluate=lambda texts: None)
    problem = Problem(
        original=PAIR,
        goal=goal,  # type: ignore[arg-type]
        source=source,
        position_constraints=(FrozenColumns(), StopWords({"very", "the", "is"}), MaxModificationRate(rate=0.2)),
        constraints=(WordEmbeddingDistance(TinyVectors(), min_cos=0.9, accept_unknown=True), PartOfSpeech(FakeNLP())),
    )
    assert problem.positions(PAIR) == (4, 7)  # premise frozen, stop words out
    found = [(p.position, p.word) for p in problem.neighbours(PAIR)]
    assert found == [(4, "woman"), (4, "xyzzy"), (7, "great")]  # bad/fine too far from good
    assert problem.positions(PAIR.replace(7, "great")) == ()  # cap ceil(0.2 * 5) = 1 reached


# ---- position constraints ------------------------------------------------------------------------
def test_stop_words_default_list_and_compare_to() -> None:
    rule = StopWords()  # the project's bundled list
    allowed = rule.allowed(SENTENCE, SENTENCE, frozenset(SENTENCE.modifiable))
    assert SENTENCE.words[0] == "The" and 0 not in allowed and 2 not in allowed and 1 in allowed
    current = SENTENCE.replace(1, "the")
    assert 1 in rule.allowed(SENTENCE, current, frozenset({1}))
    assert 1 not in StopWords(compare_to="parent").allowed(SENTENCE, current, frozenset({1}))
    assert StopWords({"The"}, case_sensitive=True).allowed(SENTENCE, SENTENCE, frozenset({0, 6})) == {6}
    with pytest.raises(ConfigError, match="not one string"):
        StopWords("the")
    assert repr(StopWords({"a", "b"})) == "StopWords(words=<2 words>, case_sensitive=False, compare_to='original')"


def test_repeat_modification_blocks_changed_positions() -> None:
    current = SENTENCE.replace({1: "movie", 4: "great"})
    assert RepeatModification().allowed(SENTENCE, current, frozenset({0, 1, 4, 5})) == {0, 5}


def test_max_modification_rate_rule() -> None:
    words = Text.from_string(" ".join(f"w{i}" for i in range(30)))
    rule = MaxModificationRate(rate=0.1)
    assert rule.cap(words) == 3  # 0.1 * 30 rounds to 3, not 4
    two, three = words.replace({0: "x", 1: "y"}), words.replace({0: "x", 1: "y", 2: "z"})
    assert rule.allowed(words, two, frozenset({5, 6})) == {5, 6}
    assert rule.allowed(words, three, frozenset({5, 6})) == frozenset()
    assert MaxModificationRate(rate=0.01, min_words=2).cap(words) == 2
    # a pair counts only its modifiable words (the hypothesis: 5), ceil(0.25 * 5) = 2
    assert MaxModificationRate(rate=0.25).cap(PAIR) == 2
    with pytest.raises(ConfigError, match="rate"):
        MaxModificationRate(rate=0.0)
    with pytest.raises(ConfigError, match="min_words"):
        MaxModificationRate(min_words=-1)


def test_frozen_columns() -> None:
    unfrozen = Text.from_pair("A man sleeps.", "The man is very good.", frozen_columns=())
    assert FrozenColumns().allowed(PAIR, PAIR, frozenset(range(8))) == {3, 4, 5, 6, 7}
    assert FrozenColumns().allowed(unfrozen, unfrozen, frozenset(range(8))) == frozenset(range(8))
    assert FrozenColumns(["premise"]).allowed(unfrozen, unfrozen, frozenset(range(8))) == {3, 4, 5, 6, 7}
    with pytest.raises(ConfigError, match="Unknown column"):
        FrozenColumns(["premise"]).allowed(SENTENCE, SENTENCE, frozenset({0}))


# ---- candidate constraints --------------------------------------------------------------------------
def test_part_of_speech_tags_in_context_batches_and_caches() -> None:
    nlp = FakeNLP()
    rule = PartOfSpeech(nlp)
    proposals = proposals_for(SENTENCE, {4: ["great", "film", "runs"], 7: ["good", "well-made"]})
    assert rule.check(SENTENCE, proposals).tolist() == [True, False, False, False, False]
    assert len(nlp.calls) == 1 and len(nlp.calls[0][0]) == len(set(nlp.calls[0][0])) == 6
    assert "parser" in nlp.calls[0][1]["disable"] and "tagger" not in nlp.calls[0][1]["disable"]
    rule.check(SENTENCE, proposals)
    assert len(nlp.calls) == 1  # every string came from the cache
    # "well-made" is well(ADV) -(PUNCT) made(VERB): the hyphen is left out
    assert rule.word_tags([SENTENCE], [6]) == ["ADV+VERB"]
    assert PartOfSpeech(nlp, tagset="ptb").word_tags([SENTENCE], [6]) == ["RB+VBN"]


def test_part_of_speech_noun_verb_swap_compare_to_and_window() -> None:
    proposals = proposals_for(SENTENCE, {1: ["runs", "good"]})
    assert PartOfSpeech(FakeNLP()).check(SENTENCE, proposals).tolist() == [False, False]
    assert PartOfSpeech(FakeNLP(), allow_noun_verb_swap=True).check(SENTENCE, proposals).tolist() == [True, False]
    parent = SENTENCE.replace(4, "film")  # parent has a noun at 4, the original an adjective
    proposal = proposals_for(SENTENCE, {4: ["movie"]}, parent)
    assert PartOfSpeech(FakeNLP()).check(SENTENCE, proposal).tolist() == [False]
    assert PartOfSpeech(FakeNLP(), compare_to="parent").check(SENTENCE, proposal).tolist() == [True]
    nlp = FakeNLP()
    PartOfSpeech(nlp, window=1).check(SENTENCE, proposals_for(SENTENCE, {4: ["great"]}))
    assert nlp.calls[0][0] == ["very good, a", "very great, a"]


def test_part_of_speech_needs_a_tagger() -> None:
    nlp = FakeNLP()
    nlp.pipe_names = ["parser"]
    with pytest.raises(ConfigError, match="tagger"):
        PartOfSpeech(nlp).check(SENTENCE, proposals_for(SENTENCE, {4: ["great"]}))
    with pytest.raises(ConfigError, match="'tagset' parameter of PartOfSpeech"):
        PartOfSpeech(nlp, tagset="xpos")


def test_word_embedding_distance_bounds_unknown_words_and_compare_to() -> None:
    vectors = TinyVectors()
    proposals = proposals_for(SENTENCE, {4: ["great", "fine", "bad", "xyzzy", "GOOD"], 1: ["movie"]})
    cos = WordEmbeddingDistance(vectors, min_cos=0.9)
    expected = [True, True, False, False, False, True]  # movie@1, great, fine, bad, xyzzy, GOOD@4
    assert cos.check(SENTENCE, proposals).tolist() == expected
    found = cos.distances(SENTENCE, proposals)
    np.testing.assert_allclose(found[:3, 1], np.sqrt(2 - 2 * found[:3, 0]), rtol=1e-5)  # unit rows
    l2 = WordEmbeddingDistance(vectors, max_l2=float(np.sqrt(2 - 2 * 0.9)))
    assert l2.check(SENTENCE, proposals).tolist() == expected
    assert WordEmbeddingDistance(vectors, min_cos=0.9, accept_unknown=True).check(SENTENCE, proposals)[4]
    parent = SENTENCE.replace(4, "great")
    step = proposals_for(SENTENCE, {4: ["fine"]}, parent)  # cos(good, fine) = 0.83, cos(great, fine) = 0.92
    assert WordEmbeddingDistance(vectors, min_cos=0.9).check(SENTENCE, step).tolist() == [False]
    assert WordEmbeddingDistance(vectors, min_cos=0.9, compare_to="parent").check(SENTENCE, step).tolist() == [True]
    assert WordEmbeddingDistance(vectors).config.min_cos == 0.5
    with pytest.raises(ConfigError, match="min_cos"):
        WordEmbeddingDistance(vectors, min_cos=1.5)
    with pytest.raises(ConfigError, match="max_l2"):
        WordEmbeddingDistance(vectors, max_l2=-1.0)


def test_lm_log_prob_drop_scores_windows_in_one_batch() -> None:
    lm = WordCountLM()
    rule = LMLogProbDrop(lm, max_drop=2.0, window=1)
    proposals = proposals_for(SENTENCE, {4: ["great", "xyzzy"], 1: ["movie"]})
    assert rule.check(SENTENCE, proposals).tolist() == [True, True, False]  # xyzzy costs 4 nats
    np.testing.assert_allclose(rule.drops(SENTENCE, proposals), [0.0, 0.0, 4.0])
    assert len(lm.calls) == 2  # one LM call per check
    assert set(lm.calls[0]) == {"The film is", "The movie is", "very good, a", "very great, a", "very xyzzy, a"}
    assert LMLogProbDrop(lm, max_drop=5.0, window=None).check(SENTENCE, proposals[2:]).tolist() == [True]
    assert lm.calls[-1][0] == "The film is very good, a well-made film."


def test_lm_log_prob_drop_with_a_tiny_causal_lm() -> None:
    lm = tiny_causal_lm()
    rule = LMLogProbDrop(lm, max_drop=0.0, window=2)
    proposals = proposals_for(SENTENCE, {4: ["great", "bad", "fine"]})
    drops = rule.drops(SENTENCE, proposals)
    windows = ["is very great, a well-made", "is very bad, a well-made", "is very fine, a well-made"]
    expected = lm.sentence_log_prob(["is very good, a well-made"])[0] - lm.sentence_log_prob(windows)
    np.testing.assert_allclose(drops, expected)
    assert rule.check(SENTENCE, proposals).tolist() == (drops <= 0.0).tolist()


def test_sentence_similarity_windows_dedupes_and_thresholds() -> None:
    scorer = JaccardScorer()
    rule = SentenceSimilarity(scorer, min_similarity=0.5, window=1)
    proposals = proposals_for(SENTENCE, {4: ["great", "great"], 0: ["A"]})
    np.testing.assert_allclose(rule.similarities(SENTENCE, proposals), [0.5, 0.5, 0.5])
    a, b = scorer.calls[0]
    assert len(a) == 2  # the duplicate pair is scored once
    assert ("very good, a", "very great, a") in set(zip(a, b))
    assert ("The film is", "A film is") in set(zip(a, b))  # shifted at the start: still 3 words
    assert rule.check(SENTENCE, proposals).tolist() == [True, True, True]
    assert SentenceSimilarity(scorer, min_similarity=0.6, window=1).check(SENTENCE, proposals).tolist() == [False] * 3
    whole = SentenceSimilarity(scorer, min_similarity=0.0)
    whole.check(PAIR, proposals_for(PAIR, {4: ["woman"]}))
    assert scorer.calls[-1] == (["The man is very good."], ["The woman is very good."])  # the changed column only
    with pytest.raises(ConfigError, match="min_similarity"):
        SentenceSimilarity(scorer, min_similarity=2.0)
    with pytest.raises(ConfigError, match="window"):
        SentenceSimilarity(scorer, window=0)


def test_sentence_similarity_rejects_a_proposal_of_another_length() -> None:
    bad = Proposal(Text.from_string("The film"), SENTENCE, 1, "film")
    with pytest.raises(ConfigError, match="as many words"):
        SentenceSimilarity(JaccardScorer()).check(SENTENCE, [bad])


def test_bertscore_constraint_uses_min_f1_and_defaults_lazily() -> None:
    rule = BERTScoreConstraint(JaccardScorer(), min_f1=0.8)
    proposals = proposals_for(SENTENCE, {4: ["great"]})
    assert rule.similarities(SENTENCE, proposals)[0] == pytest.approx(7 / 9)  # "good," -> "great,"
    assert rule.check(SENTENCE, proposals).tolist() == [False]
    assert BERTScoreConstraint(JaccardScorer(), min_f1=0.7).check(SENTENCE, proposals).tolist() == [True]
    default = BERTScoreConstraint()
    assert repr(default) == "BERTScoreConstraint(scorer=<default>, window=None, compare_to='original', min_f1=0.95)"
    with pytest.raises(ConfigError, match="'compare_to' parameter of BERTScoreConstraint must be one of 'original', 'parent'"):
        BERTScoreConstraint(compare_to="grandparent")


@given(n=st.integers(1, 40), data=st.data())
def test_window_bounds_keep_the_position_and_the_size(n: int, data: st.DataObject) -> None:
    position = data.draw(st.integers(0, n - 1))
    half = data.draw(st.integers(0, 10))
    start, end = window_bounds(n, position, half)
    assert 0 <= start <= position < end <= n
    assert end - start == min(2 * half + 1, n)
    assert window_bounds(n, position, None) == (0, n)


def test_window_segment_locates_the_word() -> None:
    string, (s, e) = window_segment(SENTENCE, 6, 1)
    assert string == "a well-made film" and string[s:e] == "well-made"  # shifted: the last 3 words
    string, (s, e) = window_segment(PAIR, 3, None)
    assert string == "The man is very good." and string[s:e] == "The"


# ---- real models ------------------------------------------------------------------------------------
@pytest.mark.heavy
def test_real_spacy_part_of_speech() -> None:
    rule = PartOfSpeech()
    text = Text.from_string("The acting was good and the story moved me.")
    proposals = proposals_for(text, {3: ["great", "film", "quickly"], 1: ["writing", "beautiful"]})
    assert rule.check(text, proposals).tolist() == [True, False, True, False, False]
    report = check_constraint(rule, text, proposals)
    assert report.verdicts is not None and report.verdicts.sum() == 2


@pytest.mark.heavy
def test_real_glove_word_embedding_distance() -> None:
    rule = WordEmbeddingDistance(min_cos=0.5)  # default vectors: GloVe 6B 50d
    text = Text.from_string("The acting was good and the story moved me.")
    proposals = proposals_for(text, {3: ["great", "bad", "banana", "qwertyuiopasdf"]})
    assert rule.check(text, proposals).tolist() == [True, True, False, False]  # GloVe: good~bad 0.80
    assert "glove" in repr(rule.vectors).lower()


@pytest.mark.heavy
def test_real_minilm_sentence_similarity() -> None:
    rule = SentenceSimilarity(min_similarity=0.8)
    text = Text.from_string("The acting was good and the story moved me.")
    sims = rule.similarities(text, proposals_for(text, {3: ["great", "terrible"], 6: ["banana"]}))
    assert sims[0] > 0.9 and sims[0] > sims[1] and sims[0] > sims[2]


@pytest.mark.heavy
def test_real_gemma_log_prob_drop() -> None:
    try:
        rule = LMLogProbDrop(max_drop=2.0, window=5)
        rule.lm  # noqa: B018 (load now, to skip cleanly)
    except AssetMissingError as exc:
        pytest.skip(f"Gemma 3 270M is not converted in the asset cache (`textrobust assets prepare causal_lm`): {exc.asset}")
    text = Text.from_string("I watched the film last night and loved every minute of it.")
    proposals = proposals_for(text, {3: ["movie", "banana", "the"]})
    drops = rule.drops(text, proposals)
    assert drops[0] < 2.0 < drops[1] and drops[2] > 2.0
    assert rule.check(text, proposals).tolist() == [True, False, False]


def test_a_constraint_returning_the_wrong_number_of_verdicts_is_an_error() -> None:
    from textrobust.attack.problem import Problem
    from textrobust.attack.testing import StaticCandidates
    from textrobust.errors import ConfigError
    from textrobust.text import Text

    class _Short:
        def check(self, original, proposals):  # noqa: ANN001, ANN202
            return [True] * (len(proposals) - 1)

    text = Text.from_string("a good film")
    problem = Problem(original=text, goal=None, source=StaticCandidates({"good": ["great", "fine"]}),  # type: ignore[arg-type]
                      constraints=[_Short()])
    with pytest.raises(ConfigError, match="one bool per proposal"):
        problem.neighbours(text)


# ---- the word-pair fast path ---------------------------------------------------------------------
class _Hidden:
    """A constraint without the word-pair fast path: ``check`` of the wrapped one only."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        return self.inner.check(original, proposals)

    def __repr__(self) -> str:
        return f"_Hidden({self.inner!r})"


@pytest.mark.parametrize("compare_to", ["original", "parent"])
def test_pair_fast_path_gives_the_same_neighbours_and_counts(compare_to: str) -> None:
    from textrobust.attack.problem import Problem
    from textrobust.attack.testing import StaticCandidates

    words = ["good", "great", "fine", "bad", "film", "movie", "very"]
    source = StaticCandidates({w: [v for v in words if v != w] + ["xyzzy"] for w in words})
    original = Text.from_string("a good film , very good and fine , a bad movie")
    rng = np.random.default_rng(0)
    currents = [original]
    for _ in range(6):  # parents that differ from the original at a few positions
        current = currents[-1]
        p = int(rng.choice([i for i, w in enumerate(current.words) if w in words]))
        currents.append(current.replace(p, str(rng.choice([w for w in words if w != current.words[p]]))))

    def problem(*constraints: Any) -> Problem:
        return Problem(original=original, goal=SimpleNamespace(evaluate=lambda texts: None),  # type: ignore[arg-type]
                       source=source, constraints=constraints)

    distance = WordEmbeddingDistance(TinyVectors(), min_cos=0.8, accept_unknown=False, compare_to=compare_to)
    other = PartOfSpeech(FakeNLP())
    fast, slow = problem(distance, other), problem(_Hidden(distance), other)
    fast_only, slow_only = problem(distance), problem(_Hidden(distance))
    assert fast._split_constraints() == ((distance,), (other,)) and slow._split_constraints()[0] == ()
    calls = []
    counting = SimpleNamespace(pair_reference=compare_to, pair_verdicts=lambda pairs: calls.append(len(pairs)) or distance.pair_verdicts(pairs))
    for current in currents:
        expect = [(p.position, p.word, p.text.key) for p in slow.neighbours(current)]
        got = fast.neighbours(current)
        assert [(p.position, p.word, p.text.key) for p in got] == expect
        assert all(p.parent is current for p in got)
        assert [(p.position, p.word) for p in fast_only.neighbours(current)] == [
            (p.position, p.word) for p in slow_only.neighbours(current)]
        assert 0 < len(fast_only.neighbours(current)) < len(problem().neighbours(current))  # some rejected
        counts: dict[int, int] = {}
        for p in slow_only.neighbours(current):
            counts[p.position] = counts.get(p.position, 0) + 1
        assert fast_only.neighbour_counts(current) == counts == slow_only.neighbour_counts(current)
        assert fast.neighbours(current, [2]) == [p for p in got if p.position == 2]
    # the pair path judges words before any text exists: the constraint's batch is the pairs
    assert problem(counting).neighbours(original) and calls == [sum(
        1 for p in original.modifiable for w in source.candidates(original, [p]).get(p, ()) if w.word != original.words[p])]


def test_pair_fast_path_falls_back_on_a_text_of_another_length() -> None:
    from textrobust.attack.problem import Problem
    from textrobust.attack.testing import StaticCandidates

    original = Text.from_string("a good film")
    longer = Text.from_string("a good film indeed")
    source = StaticCandidates({"good": ["great"], "film": ["movie"]})
    for compare_to in ("original", "parent"):
        problem = Problem(original=original, goal=SimpleNamespace(evaluate=lambda texts: None),  # type: ignore[arg-type]
                          source=source, constraints=(WordEmbeddingDistance(TinyVectors(), min_cos=0.8, compare_to=compare_to),))
        if compare_to == "original":  # the check's own length error, as without the fast path
            with pytest.raises(ConfigError, match="length|words"):
                problem.neighbours(longer)
        else:
            assert [(p.position, p.word) for p in problem.neighbours(longer)] == [(1, "great"), (2, "movie")]


def test_pair_fast_path_rejects_a_wrong_number_of_verdicts() -> None:
    from textrobust.attack.problem import Problem
    from textrobust.attack.testing import StaticCandidates

    broken = SimpleNamespace(pair_reference="original", pair_verdicts=lambda pairs: [True],
                             check=lambda original, proposals: np.ones(len(proposals), dtype=bool))
    problem = Problem(original=SENTENCE, goal=SimpleNamespace(evaluate=lambda texts: None),  # type: ignore[arg-type]
                      source=StaticCandidates({"film": ["movie", "picture"]}), constraints=(broken,))
    with pytest.raises(ConfigError, match="one bool per pair"):
        problem.neighbours(SENTENCE)


def test_contract_checker_catches_a_pair_path_that_disagrees_with_check() -> None:
    class Disagrees:
        pair_reference = "original"

        def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
            return np.ones(len(proposals), dtype=bool)

        def pair_verdicts(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
            return [False] * len(pairs)

        def __repr__(self) -> str:
            return "Disagrees()"

    with pytest.raises(ConstraintContractError, match="pair_verdicts disagrees"):
        check_constraint(Disagrees(), SENTENCE, proposals_for(SENTENCE, EDITS))
    Disagrees.pair_reference = "sideways"  # type: ignore[assignment]
    with pytest.raises(ConstraintContractError, match="pair_reference"):
        check_constraint(Disagrees(), SENTENCE, proposals_for(SENTENCE, EDITS))


def test_embedding_distance_verdicts_match_the_distances() -> None:
    vectors = TinyVectors()
    words = list(vectors.index) + ["unknownword", "GOOD"]
    pairs = [(a, b) for a in words for b in words]
    for settings in ({"min_cos": 0.5}, {"max_l2": 0.9}, {"min_cos": 0.2, "max_l2": 1.1}):
        for accept_unknown in (False, True):
            rule = WordEmbeddingDistance(vectors, accept_unknown=accept_unknown, **settings)
            cos, l2 = rule._compute(pairs)
            expect = []
            for (a, b), c, d in zip(pairs, cos, l2):
                if a.lower() == b.lower():
                    expect.append(True)
                elif np.isnan(c):
                    expect.append(accept_unknown)
                else:
                    expect.append(bool(c >= settings.get("min_cos", -2) - 1e-6 and d <= settings.get("max_l2", 9) + 1e-6))
            assert rule.pair_verdicts(pairs) == expect
            assert rule.pair_verdicts(pairs) == expect  # from the cache
            assert rule.pair_reference == "original"


def test_first_words_allows_only_the_first_limit_positions() -> None:
    text = Text.from_string("one two three four five six")
    rule = FirstWords(limit=3)
    assert rule.allowed(text, text.replace(0, "x"), frozenset(range(6))) == frozenset({0, 1, 2})
    assert repr(rule) == "FirstWords(limit=3)"
    with pytest.raises(ConfigError, match="limit"):
        FirstWords(limit=0)

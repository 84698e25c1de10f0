"""The speed work of issues 39 (item 3) and 38 (item 5) changes no output: re-tagging one
word in a window of spaCy tokens gives the whole text's tag, the lookahead's shared cache
rows and its memo give the numbers of one row per candidate, WordNet's memo gives the
reader's answers, and the validated source's re-tagging hook decides as before."""

from __future__ import annotations

from typing import Any

import pytest
from test_validity import DictTagger, light_source

from textrobust.attack.candidates import PosTag
from textrobust.attack.candidates.wordnet import WordNetLexicon
from textrobust.errors import ConfigError
from textrobust.text import Text


# ---- the validated source's re-tagging hook ---------------------------------------------------
class WindowTagger(DictTagger):
    """DictTagger with ``tags_at`` (as SpacyTagger), counting what each path tags."""

    def __init__(self) -> None:
        self.whole = 0
        self.at = 0

    def __call__(self, text: Text) -> tuple[PosTag, ...]:
        self.whole += 1
        return super().__call__(text)

    def tags_at(self, texts: Any, positions: Any) -> list[PosTag]:
        self.at += len(texts)
        return [DictTagger.__call__(self, t)[p] for t, p in zip(texts, positions)]


def test_tags_at_hook_gives_the_same_verdicts_as_whole_tagging() -> None:
    text = Text.from_string("The good film is a good picture")
    plain = light_source(min_zipf=0.0, min_context=-3.0)
    windowed = light_source(min_zipf=0.0, min_context=-3.0)
    tagger = WindowTagger()
    windowed.tagger = tagger
    for position in (1, 2, 6):
        assert plain.evidence(text, position) == windowed.evidence(text, position)
    assert tagger.at > 0  # the candidates were re-tagged through tags_at
    assert tagger.whole == 3  # the sentence itself, once per evidence call: no candidate sentence whole


def test_tags_at_needs_one_position_per_text() -> None:
    from textrobust.attack.candidates.tagging import SpacyTagger

    with pytest.raises(ConfigError, match="tags_at got 2 texts and 1 positions"):
        SpacyTagger(nlp=object()).tags_at([Text.from_string("a b"), Text.from_string("c d")], [0])


@pytest.mark.heavy
def test_window_tags_are_the_whole_texts_tags() -> None:
    from textrobust.attack.candidates.tagging import SpacyTagger

    sentences = [
        "Spielberg's picture is smarter and subtler than Artificial Intelligence, and it's only half a dozen words long.",
        "A three-hour cinema master class.",
        "If you're a teen girl, you'll love it... Otherwise -- this one probably wasn't made for me!",
        "marked by acute writing",
        "Thanks to Williams, the whole thing works; it rarely, if ever, strikes a false note \"here\".",
    ]
    whole, window = SpacyTagger(cache_size=0), SpacyTagger(cache_size=0)
    assert window._window_exact()
    texts, positions, expected = [], [], []
    for sentence in sentences:
        text = Text.from_string(sentence)
        tags = whole(text)
        for p in range(len(text)):
            texts.append(text)
            positions.append(p)
            expected.append(tags[p])
    assert window.tags_at(texts, positions) == expected


# ---- WordNet's memo ---------------------------------------------------------------------------
class CountingReader:
    """The few calls WordNetLexicon makes of an NLTK reader, over one synset, counted."""

    class Lemma:
        def __init__(self, name: str, antonyms: tuple[Any, ...] = ()) -> None:
            self._name, self._antonyms = name, antonyms

        def name(self) -> str:
            return self._name

        def antonyms(self) -> tuple[Any, ...]:
            return self._antonyms

    class Synset:
        def __init__(self, lemmas: list[Any]) -> None:
            self._lemmas = lemmas

        def lemmas(self) -> list[Any]:
            return self._lemmas

        def pos(self) -> str:
            return "a"

    def __init__(self) -> None:
        self.calls = 0

    def synsets(self, word: str, pos: str) -> list[Any]:
        self.calls += 1
        bad = self.Lemma("bad")
        return [self.Synset([self.Lemma("good", (bad,)), self.Lemma("fine")])] if word == "good" else []

    def morphy(self, word: str, pos: str) -> str:
        return word


def test_wordnet_lexicon_reads_each_word_once() -> None:
    reader = CountingReader()
    lexicon = WordNetLexicon(reader)
    assert lexicon.antonyms("good", "a") == ("bad",)
    assert lexicon.synonyms("good", "a") == ("good", "fine")
    calls = reader.calls
    assert lexicon.antonyms("good", "a") == ("bad",)
    assert lexicon.synonyms("good", "a") == ("good", "fine")
    assert reader.calls == calls  # answered from the memo
    assert lexicon.antonyms("bad", "a") == ()
    assert reader.calls == calls + 1


# ---- the lookahead: shared rows and the memo --------------------------------------------------
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def parts(tmp_path_factory: Any) -> Any:
    from test_fill_in_product import _causal, _masked

    return _masked(tmp_path_factory.mktemp("masked")), _causal()


def _requests() -> list[tuple[Text, int]]:
    texts = [Text.from_string("the film is very good ."), Text.from_string("a deep and rare story , not bad ."),
             Text.from_string("the movie is very bad .")]  # shares left contexts with the first
    return [(t, p) for t in texts for p in range(len(t))]


@pytest.mark.parametrize("tokens", [1, 2])
@pytest.mark.parametrize("gemma", [False, True])
def test_shared_rows_give_the_numbers_of_one_row_per_candidate(parts: Any, tokens: int, gemma: bool) -> None:
    from test_fill_in_product import _tiny_gemma

    from textrobust.fill_in.product import ProductFillIn

    masked, lm = parts
    if gemma:
        lm = _tiny_gemma(sliding_window=16)
    answers = []
    for shared, row_tokens in ((False, 24), (True, 24), (True, 2)):  # 2: every candidate takes its own copy
        masked.clear_cache()
        fill_in = ProductFillIn(masked, lm, weight=1.5, rerank=3, lookahead_tokens=tokens, batch_size=2,
                                lookahead_memo_size=0)
        fill_in.shared_rows, fill_in.shared_row_tokens = shared, row_tokens
        answers.append(fill_in.fill(_requests(), 12))
        assert fill_in.stats()["lookahead_rows"] > 0
    for other in answers[1:]:
        for a, b in zip(answers[0], other):
            assert [w for w, _ in a] == [w for w, _ in b]
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)


def test_lookahead_memo_reads_back_what_it_ran(parts: Any) -> None:
    from textrobust.fill_in.product import ProductFillIn

    masked, lm = parts
    requests = _requests()
    masked.clear_cache()
    plain = ProductFillIn(masked, lm, weight=1.5, rerank=3, batch_size=2, lookahead_memo_size=0).fill(requests, 12)
    masked.clear_cache()
    fill_in = ProductFillIn(masked, lm, weight=1.5, rerank=3, batch_size=2)
    first = fill_in.fill(requests, 12)
    ran, reused = fill_in.stats()["lookahead_rows"], fill_in.stats()["lookahead_reused"]
    assert reused > 0  # "the ___ is very" twice in one call: run once
    fill_in._cache.clear()  # the answers only: the texts are filled again, the memo stays
    masked.clear_cache()
    again = fill_in.fill(requests, 12)
    assert fill_in.stats()["lookahead_rows"] == ran  # nothing ran again
    assert fill_in.stats()["lookahead_reused"] == reused + ran + reused
    assert again == first
    for a, b in zip(plain, again):
        assert [w for w, _ in a] == [w for w, _ in b]
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
    fill_in.clear_cache()  # the memo too
    masked.clear_cache()
    fill_in.fill(requests, 12)
    assert fill_in.stats()["lookahead_rows"] == 2 * ran


def test_lookahead_memo_size_is_checked(parts: Any) -> None:
    from textrobust.fill_in.product import ProductFillIn

    with pytest.raises(ConfigError, match="lookahead_memo_size"):
        ProductFillIn(parts[0], parts[1], lookahead_memo_size=-1)


# ---- the target-visible scorer: the sentence encoded once for all its positions ----------------
def test_visible_scorer_gives_each_item_the_numbers_it_gets_alone(parts: Any) -> None:
    from textrobust.attack.candidates.contextual import VisibleScorer

    masked, _ = parts
    scorer = VisibleScorer(masked, batch_size=3)  # several batches
    text = Text.from_string("the film is very good , not bad .")
    items = [(1, "movie"), (1, "story"), (4, "great"), (4, "bad"), (6, "good"), (3, "not")]
    together = scorer.score(text, items)
    assert len(together) == len(items)
    assert any(s.visible is not None for s in together)
    for item, found in zip(items, together):
        alone = scorer.score(text, [item])[0]
        for a, b in zip(found, alone):
            assert (a is None) == (b is None)
            if a is not None:
                assert a == pytest.approx(b, abs=2e-4)  # the scores are rounded to 4 places

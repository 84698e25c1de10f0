"""The labelled substitution set, the polarity lexicon and the validated synonym source (issue 28)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from textrobust.attack.candidates import CANDIDATE_SOURCES, DictLexicon, PosTag, ValidatedSynonyms
from textrobust.attack.candidates.labelled import (
    COLUMNS,
    REASONS,
    candidates_per_word,
    default_path,
    labelled_substitutions,
    score_source,
)
from textrobust.attack.candidates.polarity import PolarityLexicon, read_vader
from textrobust.attack.candidates.validated import MEASURED, Evidence, ValidatedSynonymsConfig, failed_check
from textrobust.attack.testing import check_candidate_source
from textrobust.embeddings import WordVectors
from textrobust.errors import ConfigError, DataError
from textrobust.text import Text

# ---- the labelled set ----------------------------------------------------------------------------


def test_the_shipped_set_has_the_rule_on_top_and_enough_items_of_every_corpus() -> None:
    head = default_path().read_text(encoding="utf-8").splitlines()[:40]
    rule = "\n".join(line for line in head if line.startswith("#"))
    assert "valid (label 1)" in rule and "invalid (label 0)" in rule
    for reason in REASONS[1:]:
        assert f"`{reason}`" in rule
    items = labelled_substitutions()
    assert len(items) >= 600
    assert Counter(i.corpus for i in items).keys() == {"rotten_tomatoes", "bbc_news", "tweets"}
    assert {i.split for i in items} == {"dev", "test"}
    assert {i.reason for i in items} <= set(REASONS)
    assert all((i.reason == "same") == i.valid for i in items)
    assert all(i.text.words[i.position] == i.word for i in items)
    assert sum(i.valid for i in items) >= 100  # enough valid items to measure precision on


def test_dev_and_test_share_no_sentence_and_are_about_half_each() -> None:
    dev, test = labelled_substitutions("dev"), labelled_substitutions("test")
    assert not {i.sentence for i in dev} & {i.sentence for i in test}
    assert 0.4 < len(dev) / (len(dev) + len(test)) < 0.6


def _write(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "labelled.tsv"
    path.write_text("# a rule\n" + "\t".join(COLUMNS) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


GOOD_ROW = "s1\tdev\trotten_tomatoes\tA good film .\t2\tfilm\tmovie\twordnet\t1\tsame"


def test_a_small_file_loads_and_each_malformed_row_names_its_line(tmp_path: Path) -> None:
    (item,) = labelled_substitutions(path=_write(tmp_path, [GOOD_ROW]))
    assert (item.word, item.substitute, item.valid, item.sources) == ("film", "movie", True, ("wordnet",))
    bad = {
        "label must be 0 or 1": GOOD_ROW.replace("\t1\tsame", "\tyes\tsame"),
        "does not fit label": GOOD_ROW.replace("\t1\tsame", "\t0\tsame"),
        "split must be dev or test": GOOD_ROW.replace("\tdev\t", "\ttrain\t"),
        "is not 'film'": GOOD_ROW.replace("\t2\tfilm", "\t1\tfilm"),
        "expected 10 tab-separated fields": GOOD_ROW.rsplit("\t", 1)[0],
    }
    for message, row in bad.items():
        with pytest.raises(DataError, match=message) as caught:
            labelled_substitutions(path=_write(tmp_path, [row]))
        assert "line 3" in str(caught.value)
    with pytest.raises(DataError, match="appears twice"):
        labelled_substitutions(path=_write(tmp_path, [GOOD_ROW, GOOD_ROW]))
    with pytest.raises(DataError, match="must be one of dev, test"):
        labelled_substitutions("train")
    with pytest.raises(DataError, match="Cannot read"):
        labelled_substitutions(path=tmp_path / "missing.tsv")


def test_score_source_counts_precision_and_recall_by_position(tmp_path: Path) -> None:
    rows = [GOOD_ROW, GOOD_ROW.replace("s1", "s2").replace("movie\twordnet\t1\tsame", "novel\tembedding\t0\trelated"),
            GOOD_ROW.replace("s1", "s3").replace("movie", "picture")]
    items = labelled_substitutions(path=_write(tmp_path, rows))

    class Fixed:
        def candidates(self, text: Text, positions: Any) -> dict:
            from textrobust.attack.problem import Substitution

            return {p: [Substitution(p, "Movie"), Substitution(p, "novel")] for p in positions}

    score = score_source(Fixed(), items)
    assert (score.n, score.accepted, score.true_positives, score.positives) == (3, 2, 1, 2)
    assert score.precision == 0.5 and score.recall == 0.5
    texts = [Text.from_string("A good film ."), Text.from_string("the of")]
    assert candidates_per_word(Fixed(), texts, {"the", "of"}) == 2.0  # "good" and "film", two each


# ---- the polarity lexicon ------------------------------------------------------------------------


def test_vader_file_is_read_and_lemmas_are_a_fallback(tmp_path: Path) -> None:
    path = tmp_path / "vader.txt"
    path.write_text("good\t1.9\t0.9\t[1]\ntire\t-1.0\t0.5\t[1]\n", encoding="utf-8")
    lexicon = PolarityLexicon(read_vader(path))
    assert lexicon.valence("GOOD") == 1.9 and lexicon.valence("tired", "tire") == -1.0
    assert lexicon.lookup("film") is None and lexicon.valence("film") == 0.0
    path.write_text("good\tnot-a-number\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 1"):
        read_vader(path)


def test_the_installed_vader_lexicon_rates_strength() -> None:
    from textrobust.attack.candidates.polarity import vader_lexicon

    vader = vader_lexicon()
    assert len(vader) > 7000
    assert vader.valence("great") > vader.valence("good") > 0 > vader.valence("bad")


# ---- the source with fakes (fast) ----------------------------------------------------------------

_TAGS = {"the": ("DT", "DET"), "a": ("DT", "DET"), "good": ("JJ", "ADJ"), "great": ("JJ", "ADJ"),
         "fine": ("JJ", "ADJ"), "bad": ("JJ", "ADJ"), "film": ("NN", "NOUN"), "movie": ("NN", "NOUN"),
         "picture": ("NN", "NOUN"), "novel": ("NN", "NOUN"), "films": ("NNS", "NOUN"), "movies": ("NNS", "NOUN"),
         "pictures": ("VBZ", "VERB"), "is": ("VBZ", "AUX"), "john": ("NNP", "PROPN")}


class DictTagger:
    def __call__(self, text: Text) -> tuple[PosTag, ...]:
        return tuple(PosTag(*_TAGS.get(w.lower(), ("XX", "X"))) for w in text.words)


_WORDS = ["good", "great", "fine", "bad", "film", "movie", "picture", "films", "movies", "pictures", "novel"]
_VEC = {"good": [1, 0.1, 0], "great": [0.95, 0.2, 0], "fine": [0.9, 0.3, 0.1], "bad": [0.8, -0.5, 0],
        "film": [0, 0, 1], "movie": [0, 0.05, 0.98], "picture": [0, 0.2, 0.9], "films": [0.05, 0, 1],
        "movies": [0.05, 0.05, 0.98], "pictures": [0.05, 0.2, 0.9], "novel": [0.5, 0.8, 0.2]}


class FakeVocab:
    def words(self, spaced: bool) -> tuple[str, ...]:
        return tuple(_WORDS)


class FakeMaskedLM:
    """Logits over _WORDS: the masked word's own family likely, 'picture' unlikely."""

    vocab = FakeVocab()

    def whole_word_logits(self, requests: Any) -> list[tuple[bool, Any]]:
        import torch

        logits = torch.tensor([2.0, 1.0, 1.8, 1.9, 3.0, 2.8, -2.0, 3.0, 2.9, -2.0, 0.0])
        return [(True, logits) for _ in requests]


class FakeLM:
    def sentence_log_prob(self, texts: list[str]) -> np.ndarray:
        return np.array([-10.0 - 5.0 * ("fine" in t) for t in texts])


def light_source(**settings: Any) -> ValidatedSynonyms:
    """The source on tiny fakes, with issue 28's settings (no judge, the causal-LM check)
    unless told otherwise."""
    settings = {"min_judge": None, "min_lm_delta": -4.0, "max_valence_change": 1.0, "min_cos": 0.5,
                "allow_unscored": False, "require_wordnet": True, "min_cos_vectors_only": 0.9, **settings}
    lexicon = DictLexicon(
        synonyms={"good": ["good", "great", "fine", "bad"], ("film", "n"): ["film", "movie", "picture", "novel"]},
        antonyms={"good": ["bad"]},
    )
    return ValidatedSynonyms(
        lexicon=lexicon, tagger=DictTagger(),
        vectors=WordVectors(list(_VEC), np.array(list(_VEC.values()), dtype=float), name="tiny"),
        fill_in=FakeMaskedLM(), polarity=PolarityLexicon({"good": 1.9, "great": 3.1, "fine": 1.5, "bad": -2.5}),
        lm=FakeLM(), **settings,
    )


def test_each_check_drops_the_candidate_it_names() -> None:
    source = light_source(min_zipf=0.0, min_context=-3.0)
    text = Text.from_string("The good film")
    reasons = {e.substitute: e.reason for e in source.evidence(text, 1)}
    assert reasons["bad"] == "antonym"
    assert reasons["great"] == "polarity"  # 1.9 -> 3.1: a change of strength
    assert reasons["fine"] == "fluency"  # the fake LM finds 'fine' 5 nats less likely
    film = {e.substitute: e.reason for e in source.evidence(text, 2)}
    assert film["movie"] == ""
    assert film["picture"] == "context"  # the fake masked LM finds it 5 nats less likely
    assert film["novel"] == "cosine"
    assert [s.word for s in source.candidates(text, [0, 1, 2])[2]] == ["movie"]
    assert source.candidates(text, [0, 1]) == {0: [], 1: []}  # "The" has no WordNet POS


def test_inflection_is_kept_and_proper_nouns_get_nothing() -> None:
    source = light_source(min_zipf=0.0)
    found = source.candidates(Text.from_string("The films"), [1])[1]
    assert [s.word for s in found] == ["movies"]  # plural kept; "novels" is unscored
    # this tagger reads "The pictures" as a verb: the substitute changes the part of speech in context
    assert source.evidence(Text.from_string("The films"), 1, "pictures")[0].reason == "part of speech in context"
    assert source.candidates(Text.from_string("John is good"), [0]) == {0: []}
    assert source.evidence(Text.from_string("John is good"), 0, "Jack")[0].reason == "part of speech or inflection"


def test_failed_check_rejudges_evidence_under_other_settings() -> None:
    def config(**settings: Any) -> ValidatedSynonymsConfig:  # issue 28's settings unless told otherwise
        return ValidatedSynonymsConfig(**{"max_valence_change": 1.0, "min_judge": None, "min_lm_delta": -4.0,
                                          **settings})

    e = Evidence("good", "great", ("wordnet",), True, False, 0.9, 0.0, (1.9, 3.1), 5.0, 0, 0.0)
    assert failed_check(e, config()) == "polarity"
    assert failed_check(e, config(max_valence_change=2.0)) == ""
    assert failed_check(e, config(max_valence_change=2.0, max_senses=1)) == ""
    fourth_sense = Evidence("good", "great", ("wordnet",), True, False, 0.9, 0.0, (1.9, 3.1), 5.0, 3, 0.0)
    assert failed_check(fourth_sense, config(max_valence_change=2.0)) == "rare sense"
    assert failed_check(fourth_sense, config(max_valence_change=2.0, max_senses=4)) == ""
    unchecked = Evidence("good", "great", ("wordnet",), True, False, 0.9, 0.0, (1.9, 1.9), 5.0, 0, None)
    assert failed_check(unchecked, config()) == "fluency unchecked"
    assert failed_check(unchecked, config(min_lm_delta=None)) == ""
    assert failed_check(unchecked, config(min_lm_delta=None, min_judge=0.5)) == "judge unchecked"


def test_settings_are_validated_and_the_source_is_registered() -> None:
    with pytest.raises(ConfigError, match="min_cos"):
        ValidatedSynonyms(min_cos=3.0)
    with pytest.raises(ConfigError, match="not both"):
        ValidatedSynonyms(ValidatedSynonymsConfig(), k=3)
    assert "validated" in CANDIDATE_SOURCES.names()
    assert check_candidate_source(light_source(min_zipf=0.0), [Text.from_string("The good film"), "", "..."]) >= 1
    assert "max_senses=3" in repr(light_source())


# ---- the real source on the shipped set (heavy: WordNet, GloVe, MiniLM, Gemma) ------------------

#: Measured test precision of the default settings (MEASURED; benchmarks/results/validity.md),
#: less a margin of a few items for float rounding across machines; a change that lowers it
#: fails here. Issue 39's target is 85%: not met.
TEST_PRECISION_FLOOR = MEASURED["precision"] - 0.04


@pytest.fixture(scope="module")
def real_source() -> ValidatedSynonyms:
    return ValidatedSynonyms()


@pytest.mark.heavy
def test_the_default_source_meets_its_measured_precision_on_the_test_half(real_source: ValidatedSynonyms) -> None:
    score = score_source(real_source, labelled_substitutions("test"))
    assert score.accepted >= 20
    assert score.precision >= TEST_PRECISION_FLOOR, score.as_dict()
    assert score.recall >= MEASURED["recall"] - 0.03, score.as_dict()


@pytest.mark.heavy
def test_the_default_source_tries_its_measured_substitutes_per_content_word(real_source: ValidatedSynonyms) -> None:
    from textrobust.assets import stop_words

    items = labelled_substitutions("test")
    texts = []
    for corpus in ("rotten_tomatoes", "bbc_news", "tweets"):  # measure.py's 60 sentences
        seen = list(dict.fromkeys(i.sentence for i in items if i.corpus == corpus))[:20]
        texts += [Text.from_string(s) for s in seen]
    per_word = candidates_per_word(real_source, texts, stop_words())
    assert per_word >= MEASURED["per_word"] - 0.05, per_word


SENTENCES = [
    "A distinguished and thoughtful film, marked by acute writing and a host of splendid performances.",
    "The movie is winning and touching, a decent piece of cinema with hilarious moments.",
    "The company said profits rose sharply as shoppers bought more expensive phones.",
    "I hated the ending but loved the actors and their bold, funny choices.",
]


@pytest.mark.heavy
def test_the_default_source_never_proposes_a_wordnet_antonym_and_keeps_the_tag(real_source: ValidatedSynonyms) -> None:
    from textrobust.attack.candidates import SpacyTagger, WordNetAntonyms

    antonyms = WordNetAntonyms(indirect=True)
    tagger = SpacyTagger()
    proposed = 0
    for sentence in SENTENCES:
        text = Text.from_string(sentence)
        found = real_source.candidates(text, range(len(text)))
        opposite = antonyms.candidates(text, range(len(text)))
        tags = tagger(text)
        for position, subs in found.items():
            banned = {s.word.lower() for s in opposite.get(position, [])}
            for sub in subs:
                proposed += 1
                assert sub.word.lower() not in banned, (text.words[position], sub.word)
                new_tag = tagger(text.replace(position, sub.word))[position]
                assert new_tag.pos == tags[position].pos, (text.words[position], sub.word, new_tag, tags[position])
    assert proposed >= 5


# ---- the first-order attack draws from it by default ---------------------------------------------


def test_the_attack_uses_the_validated_source_unless_told_paper() -> None:
    from textrobust.analyses.attack.analysis import AttackSettings, candidates_note, recipe_spec

    assert AttackSettings().candidates == "validated"
    assert recipe_spec("textfooler", 0, "validated").source.name == "validated"
    assert recipe_spec("textfooler", 0, "paper").source.name == "embedding"
    assert recipe_spec("pwws", 0, "paper").source.name == "wordnet_synonyms"
    with pytest.raises(ConfigError, match="candidates"):
        AttackSettings(candidates="synonyms")
    from textrobust.validity.people_judge import MEASURED as PEOPLE

    assert f"{PEOPLE['precision']:.1%}" in candidates_note("validated", "textfooler")
    assert "--candidates paper" in candidates_note("paper", "textfooler")


def test_each_changed_word_of_a_success_carries_its_evidence() -> None:
    from textrobust.analyses.attack.analysis import attack_section, substitution_evidence
    from textrobust.attack.results import AttackResult, Status

    source = light_source(min_zipf=0.0)
    original = Text.from_string("The good film")
    result = AttackResult("e1", 1, Status.SUCCEEDED, original, original.replace(2, "movie"), 1, 0,
                          (0.2, 0.8), (0.6, 0.4), 3, 0.1)
    (evidence,) = substitution_evidence(source, result)
    assert (evidence["word"], evidence["substitute"], evidence["kept"]) == ("film", "movie", True)
    assert evidence["routes"] == ["wordnet", "vectors"] and evidence["cosine"] > 0.9
    failed = AttackResult("e2", 1, Status.FAILED, original, original, 1, 1, (0.2, 0.8), (0.2, 0.8), 3, 0.1)
    assert substitution_evidence(source, failed) == []
    from dataclasses import replace

    from textrobust.analyses.attack.analysis import AttackSummary

    with_evidence = replace(result, extras={"evidence": [evidence]})
    summary = AttackSummary(**{f: 0 for f in AttackSummary.__dataclass_fields__})
    section = attack_section(summary, [with_evidence], ["neg", "pos"], "textfooler", "validated").to_dict()
    titles = [t["title"] for t in section["tables"]]
    assert "substitutions and their evidence" in titles
    row = section["tables"][1]["rows"][0]
    assert row[:4] == ["e1", "film", "movie", "wordnet+vectors"] and row[-1] == "kept"

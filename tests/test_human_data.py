"""Loaders and scorer of people's judgements (textrobust.validity.swords, .coinco)."""

from __future__ import annotations

import gzip
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from textrobust.errors import DataError
from textrobust.validity.coinco import load_coinco, treetagger_pos
from textrobust.validity.swords import (
    HELD_OUT,
    TUNE,
    JudgedSubstitute,
    SwordsTarget,
    load_swords,
    score,
    swords_part,
)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "swords"

#: A lemmatiser for the hand-made examples: plural nouns and -ed verbs only.
LEMMAS = {"films": "film", "movies": "movie", "pictures": "picture", "walked": "walk", "strolled": "stroll",
          "ran": "run"}


def lemma(word: str, pos: str) -> str:
    return LEMMAS.get(word.lower(), word.lower())


def _votes(yes: int, no: int) -> list[str]:
    return ["TRUE"] * yes + ["FALSE"] * no


def _swords_json() -> dict[str, Any]:
    """Three targets: 'films' (acceptable: movie 3/3, picture 2/3; conceivable: flick 1/10;
    not: book 0/3), 'walked' (acceptable: strolled 6/10; not: ran 0/3, 'went on foot' 8/10
    acceptable but two words), 'big' (no acceptable substitute: large 0/3)."""
    return {
        "contexts": {"c1": {"context": "I like old films ."}, "c2": {"context": "She walked home ."},
                     "c3": {"context": "A big deal .", "extra": {"coinco_ids": ["doc.txt:s-1"]}}},
        "targets": {"t1": {"context_id": "c1", "target": "films", "offset": 11, "pos": "NOUN"},
                    "t2": {"context_id": "c2", "target": "walked", "offset": 4, "pos": "VERB"},
                    "t3": {"context_id": "c3", "target": "big", "offset": 2, "pos": "ADJ"}},
        "substitutes": {"s1": {"target_id": "t1", "substitute": "movie"},
                        "s2": {"target_id": "t1", "substitute": "picture"},
                        "s3": {"target_id": "t1", "substitute": "flick"},
                        "s4": {"target_id": "t1", "substitute": "book"},
                        "s5": {"target_id": "t2", "substitute": "stroll"},
                        "s6": {"target_id": "t2", "substitute": "run"},
                        "s7": {"target_id": "t2", "substitute": "go on foot"},
                        "s8": {"target_id": "t3", "substitute": "large"}},
        "substitute_labels": {"s1": _votes(3, 0), "s2": _votes(2, 1) + ["UNSURE"], "s3": _votes(1, 9),
                              "s4": _votes(0, 3), "s5": _votes(6, 4), "s6": _votes(0, 3), "s7": _votes(8, 2),
                              "s8": _votes(0, 3)},
    }


def _write(tmp_path: Path, data: Any, name: str = "swords.json.gz") -> Path:
    path = tmp_path / name
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(data, handle)
    return path


def test_load_swords_reads_targets_votes_and_classes(tmp_path: Path) -> None:
    targets = load_swords(_write(tmp_path, _swords_json()))
    assert [t.id for t in targets] == ["t1", "t2", "t3"]
    films = targets[0]
    assert (films.target, films.offset, films.pos, films.wordnet_pos) == ("films", 11, "NOUN", "n")
    by = {s.substitute: s for s in films.substitutes}
    assert (by["picture"].yes, by["picture"].no) == (2, 1)  # UNSURE dropped
    assert by["movie"].acceptable and by["picture"].acceptable and not by["flick"].acceptable
    assert by["flick"].conceivable and not by["book"].conceivable
    assert targets[2].coinco_ids == ("doc.txt:s-1",)


def test_scorer_on_three_hand_made_targets() -> None:
    targets = load_swords_from(_swords_json())
    proposals = {
        # 'films' (own lemma, dropped), 'movies' -> movie (acceptable), 'flick' (judged, not
        # acceptable), 'cinema' (unjudged), 'pictures' -> picture (acceptable)
        "t1": ["films", "movies", "flick", "cinema", "pictures"],
        # 'ran' -> run (judged, rejected), 'strolled' -> stroll (acceptable)
        "t2": ["ran", "strolled"],
        # nothing for t3
    }
    s = score(targets, proposals, lemmatizer=lemma)
    assert s.targets == 3 and s.proposals == 6 and s.judged == 5
    assert s.acceptable_proposed == 3
    assert math.isclose(s.lenient_precision, 3 / 5)
    assert math.isclose(s.strict_precision, 3 / 6)
    assert math.isclose(s.conceivable_share, 4 / 5)  # movie, flick, picture, stroll
    # acceptable: movie, picture (t1); stroll, go on foot (t2): 4, of which 3 single words
    assert s.acceptable_total == 4 and s.reachable == 3
    assert math.isclose(s.recall, 3 / 4)
    # first judged proposal: movie (t1, acceptable), run (t2, not)
    assert (s.first_judged, s.first_acceptable) == (2, 1)
    assert math.isclose(s.first_proposal_acceptable, 0.5)
    assert math.isclose(s.per_target, 2.0)
    # F@10 lenient, acceptable: hits 3, returned 5 (judged ones), reference min(2,10)+min(2,10)+0 = 4
    p, r = 3 / 5, 3 / 4
    assert math.isclose(s.f10["lenient_acceptable"], 2 * p * r / (p + r))
    # strict: returned 6
    p = 3 / 6
    assert math.isclose(s.f10["strict_acceptable"], 2 * p * r / (p + r))
    # conceivable reference: movie, picture, flick (t1: 3), stroll, go on foot (t2: 2); hits 4
    p, r = 4 / 5, 4 / 5
    assert math.isclose(s.f10["lenient_conceivable"], 2 * p * r / (p + r))


def test_scorer_takes_only_the_first_k_for_f_at_k_and_merges_lemmas() -> None:
    targets = load_swords_from(_swords_json())
    s = score(targets, {"t1": ["movie", "movies", "book", "picture"]}, lemmatizer=lemma, k=1)
    assert s.proposals == 3  # movies merged into movie
    p, r = 1 / 1, 1 / 1  # top-1: movie, a hit; reference min(2, 1) = 1 (t1) + min(2,1) (t2) + 0
    r = 1 / 2
    assert math.isclose(s.f10["lenient_acceptable"], 2 * p * r / (p + r))


def load_swords_from(data: dict[str, Any]) -> list[SwordsTarget]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return load_swords(_write(Path(folder), data))


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d.pop("targets"), "lacks the field 'targets'"),
    (lambda d: d["targets"]["t1"].pop("offset"), "target 't1' lacks the field 'offset'"),
    (lambda d: d["targets"]["t1"].__setitem__("offset", "11"), "'offset' must be a int"),
    (lambda d: d["targets"]["t1"].__setitem__("offset", 3), "does not point at the target 'films'"),
    (lambda d: d["targets"]["t1"].__setitem__("pos", "PROPN"), "'pos' must be one of NOUN"),
    (lambda d: d["targets"]["t1"].__setitem__("context_id", "c9"), "'context_id' 'c9' is not a context"),
    (lambda d: d["substitutes"]["s1"].__setitem__("target_id", "t9"), "'target_id' 't9' is not a target"),
    (lambda d: d["substitutes"]["s1"].pop("substitute"), "substitute 's1' lacks the field 'substitute'"),
    (lambda d: d["substitute_labels"].pop("s2"), "substitute 's2' has no entry in 'substitute_labels'"),
    (lambda d: d["substitute_labels"].__setitem__("s2", ["YES"]), "label 'YES' in 'substitute_labels'"),
    (lambda d: d["contexts"]["c1"].pop("context"), "context 'c1' lacks the field 'context'"),
])
def test_malformed_swords_files_name_the_field(tmp_path: Path, mutate: Any, message: str) -> None:
    data = _swords_json()
    mutate(data)
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_swords(_write(tmp_path, data))


def test_unreadable_swords_files(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="No SWORDS file"):
        load_swords(tmp_path / "missing.json")
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(DataError, match="not a SWORDS JSON file"):
        load_swords(bad)
    plain = tmp_path / "list.json"
    plain.write_text("[1, 2]")
    with pytest.raises(DataError, match="top level must be an object"):
        load_swords(plain)


def test_split_by_context_is_stable_and_about_a_third() -> None:
    ids = [f"c:{i}" for i in range(3000)]
    held = [c for c in ids if swords_part(c) == HELD_OUT]
    assert 0.28 < len(held) / len(ids) < 0.39
    assert all(swords_part(c) in (TUNE, HELD_OUT) for c in ids[:10])
    assert [swords_part(c) for c in ids[:50]] == [swords_part(c) for c in ids[:50]]


def test_judged_substitute_without_votes_is_neither_class() -> None:
    empty = JudgedSubstitute("x", 0, 0)
    assert empty.ratio == 0.0 and not empty.acceptable and not empty.conceivable


COINCO = """<?xml version="1.0"?>
<document>
  <sent MASCfile="a.txt" MASCsentID="s-1">
    <precontext>Before.</precontext>
    <targetsentence>
    The film ended well
    </targetsentence>
    <postcontext>After.</postcontext>
    <tokens>
      <token id="XXX" wordform="The" lemma="the" posMASC="XXX" posTT="DT" />
      <token id="1" wordform="film" lemma="film" posMASC="NN" posTT="NN" problematic="no">
        <substitutions>
          <subst lemma="movie" pos="NN" freq="4" />
          <subst lemma="picture" pos="NN" freq="1" />
        </substitutions>
      </token>
      <token id="2" wordform="ended" lemma="end" posMASC="VB" posTT="VVD" problematic="yes">
        <substitutions><subst lemma="finish" pos="VV" freq="2" /></substitutions>
      </token>
      <token id="3" wordform="well" lemma="well" posMASC="RB" posTT="RB" problematic="no" />
    </tokens>
  </sent>
</document>
"""


def test_load_coinco_reads_tokens_offsets_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "coinco.xml"
    path.write_text(COINCO)
    tokens = load_coinco(path)
    assert len(tokens) == 1  # 'ended' is problematic, 'well' has no substitutes
    film = tokens[0]
    assert film.sentence_id == "a.txt:s-1" and film.sentence == "The film ended well"
    assert film.sentence[film.offset:film.offset + 4] == "film" and film.pos == "n"
    assert film.substitutes == (("movie", 4), ("picture", 1))
    everything = load_coinco(path, keep_problematic=True, keep_empty=True)
    assert [t.word for t in everything] == ["The", "film", "ended", "well"]
    assert everything[2].problematic and everything[2].pos == "v"


@pytest.mark.parametrize(("old", "new", "message"), [
    ('freq="4"', 'freq="many"', "'freq' of the substitute 'movie' must be a whole number"),
    ('MASCsentID="s-1"', "", "lacks the attribute 'MASCsentID'"),
    ('wordform="film"', 'wordform="cinema"', "token 'cinema' \\(attribute 'wordform'\\)"),
    ('<subst lemma="picture"', '<subst', "lacks the attribute 'lemma'"),
    ("</document>", "", "not a CoInCo XML file"),
])
def test_malformed_coinco_files_name_the_field(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = tmp_path / "coinco.xml"
    path.write_text(COINCO.replace(old, new, 1))
    with pytest.raises(DataError, match=message):
        load_coinco(path)


def test_treetagger_tags() -> None:
    assert [treetagger_pos(t) for t in ("NN", "NNS", "NP", "VVD", "VH", "JJR", "RB", "IN")] == \
        ["n", "n", None, "v", "v", "a", "r", None]


@pytest.mark.skipif(not (SHARED / "swords-v1.1_dev.json.gz").exists() or bool(os.environ.get("TEXTROBUST_NO_SHARED")),
                    reason="the shared SWORDS data is not beside this checkout")
def test_the_shared_swords_dev_loads_and_splits() -> None:
    targets = load_swords(SHARED / "swords-v1.1_dev.json.gz")
    assert len(targets) == 370
    held = {t.context_id for t in targets if swords_part(t.context_id) == HELD_OUT}
    tune = {t.context_id for t in targets if swords_part(t.context_id) == TUNE}
    assert held and tune and not held & tune
    assert 0.25 < len(held) / (len(held) + len(tune)) < 0.4

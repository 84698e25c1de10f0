"""The on-disk verdict cache (issue 39): a second run judges nothing again; a changed model
or setting invalidates its entries."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
from test_validity import FakeMaskedLM, light_source

from textrobust.errors import StoreError
from textrobust.text import Text
from textrobust.validity.cache import VerdictCache, fingerprint


def test_entries_are_read_back_only_under_their_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.sqlite"
    words = ("a", "fine", "film")
    first = VerdictCache(path, fingerprint(judge="j", model="v1"))
    first.put_many([(words, 1, [{"substitute": "good"}]), (words, 2, [])])
    assert first.get_many([(words, 1), (words, 2), (words, 0)]) == {(words, 1): [{"substitute": "good"}],
                                                                    (words, 2): []}
    assert (first.hits, first.misses) == (2, 1)
    assert len(first) == 2
    other = VerdictCache(path, fingerprint(judge="j", model="v2"))  # a new model version
    assert other.get_many([(words, 1)]) == {}
    assert other.prune() == 2 and len(first) == 0
    assert fingerprint(a=1, b=[1, 2]) == fingerprint(b=[1, 2], a=1) != fingerprint(a=2, b=[1, 2])


def test_a_pickled_cache_reopens_and_a_bad_path_is_a_store_error(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "v.sqlite", "f")
    cache.put_many([(("x",), 0, {"ok": 1})])
    copy = pickle.loads(pickle.dumps(cache))
    assert copy.get_many([(("x",), 0)]) == {(("x",), 0): {"ok": 1}}
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="verdict cache"):
        VerdictCache(blocker / "v.sqlite", "f").get_many([(("x",), 0)])
    with pytest.raises(StoreError, match="fingerprint"):
        VerdictCache(tmp_path / "v.sqlite", "")


class CountingMaskedLM(FakeMaskedLM):
    """The fake masked LM, counting the positions it scores (the judge's first model call)."""

    version = "fake-1"

    def __init__(self) -> None:
        self.calls = 0

    def whole_word_logits(self, requests: Any) -> list[tuple[bool, Any]]:
        self.calls += len(requests)
        return super().whole_word_logits(requests)


def counted_source(path: Path, **settings: Any) -> tuple[Any, CountingMaskedLM]:
    source = light_source(min_zipf=0.0, verdict_cache=path, **settings)
    counter = CountingMaskedLM()
    source._fill_in = counter
    source._injected = (*source._injected[:3], "CountingMaskedLM:" + counter.version, *source._injected[4:])
    return source, counter


def test_a_second_source_judges_nothing_again_and_a_changed_setting_judges_anew(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.sqlite"
    text = Text.from_string("The good film")
    first, counter = counted_source(path)
    answer = first.candidates(text, [1, 2])
    assert counter.calls == 2
    second, again = counted_source(path)  # a new process: nothing in memory, all on disk
    assert second.candidates(text, [1, 2]) == answer
    assert again.calls == 0
    assert second.verdicts is not None and second.verdicts.hits == 2
    changed, anew = counted_source(path, max_valence_change=2.0)  # another setting: other verdicts
    assert [s.word for s in changed.candidates(text, [1])[1]] == ["great"]
    assert anew.calls == 1
    assert changed.fingerprint() != second.fingerprint()


def test_a_changed_collaborator_version_invalidates_and_injected_ones_need_a_path(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.sqlite"
    text = Text.from_string("The good film")
    first, _ = counted_source(path)
    first.candidates(text, [2])
    newer, counter = counted_source(path)
    newer._injected = (*newer._injected[:3], "CountingMaskedLM:fake-2", *newer._injected[4:])
    newer.candidates(text, [2])
    assert counter.calls == 1
    assert light_source().verdicts is None  # injected collaborators, no path: no disk cache
    assert light_source(verdict_cache=False).verdicts is None


def test_the_evidence_of_a_kept_substitute_is_read_from_the_cache(tmp_path: Path) -> None:
    # the attack's report asks for the evidence of each success's substitutions: a second
    # run (a new source on the same file) reads it back instead of judging the sentence again
    path = tmp_path / "verdicts.sqlite"
    text = Text.from_string("The good film")
    first, counter = counted_source(path)
    kept = first.candidates(text, [2])[2]
    assert kept and counter.calls == 1
    expected = first.evidence(text, 2, kept[0].word)
    assert counter.calls == 1  # the first source's own verdicts, in memory
    second, again = counted_source(path)
    found = second.evidence(text, 2, kept[0].word.upper())
    assert found == expected and found[0].kept
    assert again.calls == 0
    assert second.verdicts is not None and second.verdicts.hits == 1
    assert [e.substitute for e in second.evidence(text, 2)] == [e.substitute for e in first.evidence(text, 2)]
    assert again.calls == 0
    second.evidence(text, 2, "zebra")  # neither kept nor proposed: judged anew with every check
    assert again.calls == 1

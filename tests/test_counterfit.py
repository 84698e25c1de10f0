"""Counter-fitting on a tiny synthetic vocabulary, its cache, and WordNet pair extraction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from textrobust.embeddings import (
    CounterFitSettings,
    WordVectors,
    counter_fit,
    counterfitted_vectors,
    normalise_rows,
    vsp_pairs,
    wordnet_pairs,
)
from textrobust.errors import ConfigError

SYN = [(0, 1), (5, 6)]
ANT = [(2, 3)]


def synthetic() -> np.ndarray:
    """40 random words in 16 dims; 3 is almost 2 (an antonym pair that starts close), 4 is
    a near neighbour of 2 and 3 (inside rho), 7 a near neighbour of 0; the rest are far
    from everything."""
    rng = np.random.default_rng(0)
    m = rng.normal(size=(40, 16))
    m[3] = m[2] + 0.25 * rng.normal(size=16)
    m[4] = m[2] + 0.30 * rng.normal(size=16)
    m[7] = m[0] + 0.30 * rng.normal(size=16)
    return normalise_rows(m)


def cos(m: np.ndarray, i: int, j: int) -> float:
    return float(m[i] @ m[j])


def test_synonyms_attract_antonyms_repel_and_other_words_keep_their_place() -> None:
    m = synthetic()
    assert cos(m, 2, 3) > 0.9 and cos(m, 2, 4) > 0.8 and abs(cos(m, 0, 1)) < 0.5
    out, stats = counter_fit(m, SYN, ANT)
    assert out.dtype == np.float32 and np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert cos(out, 0, 1) > cos(m, 0, 1) + 0.4
    assert cos(out, 5, 6) > cos(m, 5, 6) + 0.4
    assert cos(out, 2, 3) < 0.2  # pushed toward orthogonal (delta = 1)
    far = [i for i in range(40) if i not in {0, 1, 2, 3, 4, 5, 6, 7}]
    base = normalise_rows(m)  # what counter_fit starts from, bit for bit
    assert np.array_equal(out[far], base[far])  # outside every pair and neighbourhood: untouched
    assert np.linalg.norm(out[4] - m[4]) < 0.5  # a VSP neighbour follows only a little
    assert cos(out, 2, 4) > 0.3  # ... and stays close to the word it was near
    assert stats.synonym_pairs == 2 and stats.antonym_pairs == 1 and stats.vsp_pairs >= 1
    assert stats.constrained_words == 6 and stats.moved_words == 8 and stats.epochs == 20
    assert stats.synonym_cos_after > stats.synonym_cos_before
    assert stats.antonym_cos_after < stats.antonym_cos_before
    assert stats.to_dict()["words"] == 40


def test_vsp_term_holds_neighbours_together() -> None:
    m = synthetic()
    with_vsp, _ = counter_fit(m, SYN, ANT)
    without, stats = counter_fit(m, SYN, ANT, CounterFitSettings(k3=0.0))
    assert stats.vsp_pairs == 0 and np.array_equal(without[7], normalise_rows(m)[7])
    assert cos(with_vsp, 0, 7) > cos(without, 0, 7) + 0.1  # 7 follows 0 toward its synonym


def test_counter_fitting_is_deterministic_and_ignores_pair_order() -> None:
    m = synthetic()
    first, _ = counter_fit(m, SYN, ANT)
    again, _ = counter_fit(m.copy(), SYN, ANT)
    shuffled, _ = counter_fit(m, [(6, 5), (1, 0), (0, 1), (3, 3)], [(3, 2)])
    assert np.array_equal(first, again)
    assert np.array_equal(first, shuffled)


def test_pairs_both_synonym_and_antonym_count_as_antonyms_and_bad_indices_fail() -> None:
    m = synthetic()
    _, stats = counter_fit(m, [(0, 1), (2, 3)], [(3, 2)])
    assert stats.synonym_pairs == 1 and stats.antonym_pairs == 1
    with pytest.raises(ConfigError, match="synonyms"):
        counter_fit(m, [(0, 40)], [])
    none, stats = counter_fit(m, [], [])
    assert np.array_equal(none, normalise_rows(m)) and stats.epochs == 0 and stats.moved_words == 0


def test_vsp_pairs_match_brute_force() -> None:
    m = synthetic()
    rows = [2, 5]
    found = {tuple(p) for p in vsp_pairs(m, rows, 0.2, block=1).tolist()}
    sims = m @ m.T
    expected = {
        (min(i, j), max(i, j))
        for i in range(40) for j in range(40)
        if i != j and (i in rows or j in rows) and sims[i, j] >= 0.8
    }
    assert found == expected and (2, 3) in found and (2, 4) in found


def test_settings_are_validated() -> None:
    with pytest.raises(ConfigError, match="rho"):
        CounterFitSettings(rho=-1)
    with pytest.raises(ConfigError, match="epoch"):
        CounterFitSettings(epoch=3)
    s = CounterFitSettings()
    assert (s.delta, s.gamma, s.rho, s.k1, s.k2, s.k3, s.epochs, s.vocab_size) == (
        1.0, 0.0, 0.2, 0.1, 0.1, 0.1, 20, 100_000)


# ---- the cache ---------------------------------------------------------------------------------
WORDS = [f"w{i}" for i in range(40)]


class CountingPairs:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, index: dict[str, int]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        self.calls += 1
        return [("w0", "w1"), ("w5", "w6"), ("w0", "unknown")], [("w2", "w3")]


def test_cache_is_written_once_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTROBUST_CACHE", str(tmp_path))
    pairs = CountingPairs()
    lines: list[str] = []
    settings = CounterFitSettings(epochs=5)
    built = counterfitted_vectors(settings, source=(WORDS, synthetic()), pairs=pairs, log=lines.append)
    files = sorted(p.name for p in (tmp_path / "vectors").iterdir())
    assert len(files) == 3 and files[0].startswith("counterfitted-custom16-") and files[0].endswith(".json")
    assert {Path(f).suffix for f in files} == {".json", ".npy", ".txt"}
    assert pairs.calls == 1 and any("epoch 5/5" in line for line in lines)
    assert isinstance(built, WordVectors) and built.words == tuple(WORDS)
    direct, _ = counter_fit(synthetic(), SYN, ANT, settings)
    assert np.array_equal(built.matrix, normalise_rows(direct))

    loaded = counterfitted_vectors(settings, source=(WORDS, synthetic()), pairs=pairs, log=lines.append)
    assert pairs.calls == 1 and "loaded from" in lines[-1]
    assert np.array_equal(loaded.matrix, built.matrix) and loaded.words == built.words

    counterfitted_vectors(settings, source=(WORDS, synthetic()), pairs=pairs, rebuild=True)
    assert pairs.calls == 2
    counterfitted_vectors(CounterFitSettings(epochs=6), source=(WORDS, synthetic()), pairs=pairs)
    assert pairs.calls == 3 and len(list((tmp_path / "vectors").iterdir())) == 6


def test_a_broken_cache_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTROBUST_CACHE", str(tmp_path))
    pairs = CountingPairs()
    settings = CounterFitSettings(epochs=2)
    first = counterfitted_vectors(settings, source=(WORDS, synthetic()), pairs=pairs)
    words_file = next((tmp_path / "vectors").glob("*.words.txt"))
    words_file.write_text("too\nfew\n", encoding="utf-8")
    lines: list[str] = []
    again = counterfitted_vectors(settings, source=(WORDS, synthetic()), pairs=pairs, log=lines.append)
    assert pairs.calls == 2 and any("rebuilding" in line for line in lines)
    assert np.array_equal(first.matrix, again.matrix)
    assert len(words_file.read_text(encoding="utf-8").split()) == 40


# ---- WordNet pairs -------------------------------------------------------------------------------
class _Lemma:
    def __init__(self, name: str, antonyms: tuple[str, ...] = ()) -> None:
        self._name, self._antonyms = name, antonyms

    def name(self) -> str:
        return self._name

    def antonyms(self) -> list[_Lemma]:
        return [_Lemma(a) for a in self._antonyms]


class _Synset:
    def __init__(self, *lemmas: _Lemma) -> None:
        self._lemmas = list(lemmas)

    def lemmas(self) -> list[_Lemma]:
        return self._lemmas


class _Reader:
    def all_synsets(self) -> list[_Synset]:
        return [
            _Synset(_Lemma("Good", ("bad", "evil")), _Lemma("fine"), _Lemma("well_made"), _Lemma("rare")),
            _Synset(_Lemma("film"), _Lemma("movie"), _Lemma("moving_picture"), _Lemma("Film")),
            _Synset(_Lemma("bad", ("good",)), _Lemma("big_bad", ("nice",))),
        ]


def test_wordnet_pairs_are_single_words_in_the_vocabulary_lowercased_and_sorted() -> None:
    vocabulary = {"good", "fine", "bad", "film", "movie", "evil"}
    synonyms, antonyms = wordnet_pairs(_Reader(), vocabulary)
    assert synonyms == [("film", "movie"), ("fine", "good")]
    assert antonyms == [("bad", "good"), ("evil", "good")]


# ---- the real vectors (only if this machine has built them) -------------------------------------
@pytest.mark.heavy
def test_real_counterfitted_vectors_separate_polar_words() -> None:
    from textrobust.embeddings import counterfit_cache

    if not counterfit_cache().exists():
        pytest.skip("counter-fitted vectors not built yet (see benchmarks/results/counterfit.md)")
    fitted = counterfitted_vectors()
    glove = WordVectors.from_glove()
    assert len(fitted) == len(glove) == 100_000
    for a, b in [("good", "bad"), ("cheap", "expensive"), ("love", "hate"), ("strong", "weak")]:
        assert fitted.cosine(a, b) < glove.cosine(a, b) - 0.3, (a, b)
    assert "bad" not in [w for w, _ in fitted.nearest(["good"], 50)[0]]

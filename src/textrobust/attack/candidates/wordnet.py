"""WordNet synonyms and antonyms as candidate sources, POS-aware and inflected back.

For each requested word the text is POS-tagged (spaCy, once per text and cached), the tag
is mapped to a WordNet POS (nouns, verbs, adjectives, adverbs; every other word, proper
nouns and auxiliaries included, gets no candidates), the word is lemmatised (lemminflect),
the lexicon gives the lemma's base-form synonyms or antonyms,
and each lemma is inflected back to the word's Penn Treebank tag with lemminflect
("films" -> "movies", "loved" -> "hated") and put in the word's case. Only single-word
lemmas are kept (no "moving_picture"); the original word is never proposed; candidates
are deduplicated in a stable order (WordNet's sense order: most frequent sense first).
Scores are by rank: ``1 / (1 + rank)``.

Antonyms are *direct* antonyms: ``lemma.antonyms()`` of the word's own lemmas. PWWS- and
ACCS-style code also takes antonyms of every other lemma in the word's synsets, or of the
head of an adjective satellite ("awful" -> similar to "bad" -> "good"); the second is
available with ``indirect=True``, the first is not offered (it proposes antonyms of other
words, e.g. "badness" for "good").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from textrobust.attack.candidates.inflection import (
    inflect,
    is_word,
    lemmatize,
    match_case,
)
from textrobust.attack.candidates.tagging import PosTag, SpacyTagger, Tagger
from textrobust.attack.problem import Substitution
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = [
    "PTB_TO_WORDNET",
    "UPOS_TO_WORDNET",
    "DictLexicon",
    "Lexicon",
    "WordNetAntonyms",
    "WordNetLexicon",
    "WordNetSynonyms",
    "wordnet_pos",
]

#: Universal POS -> WordNet POS. PROPN, AUX, DET, ... have none.
UPOS_TO_WORDNET: Mapping[str, str] = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
#: Penn Treebank tag -> WordNet POS, used when a tagger gives no UPOS.
PTB_TO_WORDNET: Mapping[str, str] = {
    "NN": "n", "NNS": "n",
    "VB": "v", "VBD": "v", "VBG": "v", "VBN": "v", "VBP": "v", "VBZ": "v",
    "JJ": "a", "JJR": "a", "JJS": "a",
    "RB": "r", "RBR": "r", "RBS": "r",
}  # fmt: skip


def wordnet_pos(tag: PosTag) -> str | None:
    """The WordNet POS ("n", "v", "a", "r") of a tagged word, or None."""
    if tag.pos:
        return UPOS_TO_WORDNET.get(tag.pos)
    return PTB_TO_WORDNET.get(tag.tag)


@runtime_checkable
class Lexicon(Protocol):
    """Base-form synonyms and antonyms of a lower-case lemma with a WordNet POS.

    The sources pass the word's lemma ("hate" for "hated"), and inflect the answers back.
    """

    def synonyms(self, word: str, pos: str) -> Sequence[str]: ...

    def antonyms(self, word: str, pos: str) -> Sequence[str]: ...


def _lemma_name(name: str) -> str | None:
    name = name.lower()
    return name if "_" not in name and is_word(name) else None


class WordNetLexicon:
    """WordNet through NLTK: lemma names of the word's synsets, lower-cased, single words.

    ``reader`` is an NLTK ``WordNetCorpusReader``; by default
    :func:`textrobust.assets.wordnet` loads one on first use. ``indirect_antonyms`` adds,
    for adjective satellites, the antonyms of the head synsets they are similar to.
    """

    def __init__(self, reader: Any | None = None, *, indirect_antonyms: bool = False) -> None:
        self._reader = reader
        self.indirect_antonyms = indirect_antonyms
        # answers per (word, pos): WordNet does not change while a run reads it, and the
        # validated source asks for the antonyms of every related form of every candidate
        self._synonyms: dict[tuple[str, str], tuple[str, ...]] = {}
        self._antonyms: dict[tuple[str, str], tuple[str, ...]] = {}

    @property
    def reader(self) -> Any:
        if self._reader is None:
            from textrobust.assets import wordnet

            self._reader = wordnet()
        return self._reader

    def synonyms(self, word: str, pos: str) -> tuple[str, ...]:
        found = self._synonyms.get((word, pos))
        if found is None:
            found = self._synonyms[(word, pos)] = self._find_synonyms(word, pos)
        return found

    def antonyms(self, word: str, pos: str) -> tuple[str, ...]:
        found = self._antonyms.get((word, pos))
        if found is None:
            found = self._antonyms[(word, pos)] = self._find_antonyms(word, pos)
        return found

    def _find_synonyms(self, word: str, pos: str) -> tuple[str, ...]:
        names: dict[str, None] = {}
        for synset in self.reader.synsets(word, pos):
            for lemma in synset.lemmas():
                name = _lemma_name(lemma.name())
                if name is not None:
                    names.setdefault(name)
        return tuple(names)

    def _find_antonyms(self, word: str, pos: str) -> tuple[str, ...]:
        reader = self.reader
        bases = {word}
        base = reader.morphy(word, pos)
        if base:
            bases.add(base.lower())
        names: dict[str, None] = {}
        for synset in reader.synsets(word, pos):
            own = [lemma for lemma in synset.lemmas() if lemma.name().lower() in bases]
            for lemma in own:
                for antonym in lemma.antonyms():
                    name = _lemma_name(antonym.name())
                    if name is not None:
                        names.setdefault(name)
            if self.indirect_antonyms and own and synset.pos() == "s":
                for head in synset.similar_tos():
                    for lemma in head.lemmas():
                        for antonym in lemma.antonyms():
                            name = _lemma_name(antonym.name())
                            if name is not None:
                                names.setdefault(name)
        return tuple(names)

    def __repr__(self) -> str:
        return f"WordNetLexicon(indirect_antonyms={self.indirect_antonyms})"


class DictLexicon:
    """A lexicon from plain mappings ``{(word, wordnet_pos): [lemmas]}`` (tests, custom lists).

    Keys may also be a bare word, which then matches every POS.
    """

    def __init__(
        self,
        synonyms: Mapping[str | tuple[str, str], Sequence[str]] | None = None,
        antonyms: Mapping[str | tuple[str, str], Sequence[str]] | None = None,
    ) -> None:
        self._synonyms = dict(synonyms or {})
        self._antonyms = dict(antonyms or {})

    @staticmethod
    def _look(table: Mapping[Any, Sequence[str]], word: str, pos: str) -> tuple[str, ...]:
        found = table.get((word, pos))
        if found is None:
            found = table.get(word, ())
        return tuple(found)

    def synonyms(self, word: str, pos: str) -> tuple[str, ...]:
        return self._look(self._synonyms, word, pos)

    def antonyms(self, word: str, pos: str) -> tuple[str, ...]:
        return self._look(self._antonyms, word, pos)

    def __repr__(self) -> str:
        return f"DictLexicon({len(self._synonyms)} synonym entries, {len(self._antonyms)} antonym entries)"


class _LexiconSource:
    """Shared work of the WordNet sources; a subclass fills :meth:`_lemmas`."""

    relation = ""

    def __init__(self, lexicon: Lexicon | None = None, tagger: Tagger | None = None) -> None:
        self.lexicon: Lexicon = lexicon if lexicon is not None else WordNetLexicon()
        self.tagger: Tagger = tagger if tagger is not None else SpacyTagger()
        self._forms: dict[tuple[str, str, str], tuple[str, ...]] = {}

    def _lemmas(self, word: str, pos: str) -> Sequence[str]:
        raise NotImplementedError

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        positions = list(positions)
        if not positions:
            return {}
        tags = self.tagger(text)
        if len(tags) != len(text):
            raise ConfigError(
                f"The tagger of {type(self).__name__} gave {len(tags)} tags for a text of "
                f"{len(text)} words; it must give one tag per word."
            )
        words = text.words
        out: dict[int, list[Substitution]] = {}
        for position in positions:
            word = words[position]
            subs: list[Substitution] = []
            seen = {word}
            for rank, form in enumerate(self.forms(word.lower(), tags[position])):
                cased = match_case(word, form)
                if cased not in seen:
                    seen.add(cased)
                    subs.append(Substitution(position, cased, 1.0 / (1 + rank)))
            out[position] = subs
        return out

    def forms(self, word: str, tag: PosTag) -> tuple[str, ...]:
        """The lower-case candidate forms for ``word`` with ``tag`` (cached per word and tag)."""
        key = (word, tag.tag, tag.pos)
        found = self._forms.get(key)
        if found is None:
            found = self._compute_forms(word, tag)
            self._forms[key] = found
        return found

    def _compute_forms(self, word: str, tag: PosTag) -> tuple[str, ...]:
        pos = wordnet_pos(tag)
        if pos is None:
            return ()
        # Ask the lexicon about the lemma, not the surface form: WordNet's own morphology
        # also finds other stems ("hated" -> "hat") and plural lemmas ("men" -> "workforce,
        # men, hands"), which then inflect to nonsense ("hatted", "handses").
        base = lemmatize(word, tag.tag, pos)
        forms: dict[str, None] = {}
        for lemma in self._lemmas(base, pos):
            if lemma == base:
                continue
            form = inflect(lemma, tag.tag)
            if form is not None and form != word and is_word(form):
                forms.setdefault(form)
        return tuple(forms)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lexicon={self.lexicon!r}, tagger={self.tagger!r})"


class WordNetSynonyms(_LexiconSource):
    """Synonyms: the lemmas of every synset of the word with its POS (PWWS's candidates)."""

    relation = "synonym"

    def _lemmas(self, word: str, pos: str) -> Sequence[str]:
        return self.lexicon.synonyms(word, pos)


class WordNetAntonyms(_LexiconSource):
    """Direct antonyms of the word's lemmas (``indirect=True``: also via adjective satellites).

    ``indirect`` builds the default WordNet lexicon; with an explicit ``lexicon`` set the
    option on the lexicon instead.
    """

    relation = "antonym"

    def __init__(
        self, lexicon: Lexicon | None = None, tagger: Tagger | None = None, *, indirect: bool = False
    ) -> None:
        if lexicon is not None and indirect:
            raise ConfigError(
                "The 'indirect' parameter of WordNetAntonyms only applies to the default lexicon; "
                "pass WordNetLexicon(indirect_antonyms=True) as 'lexicon' instead."
            )
        if lexicon is None:
            lexicon = WordNetLexicon(indirect_antonyms=indirect)
        super().__init__(lexicon, tagger)

    def _lemmas(self, word: str, pos: str) -> Sequence[str]:
        return self.lexicon.antonyms(word, pos)

"""Word forms for candidates: inflecting a lemma back to a tag, and keeping a word's case.

Lexicons (WordNet) give base forms; a substitute must take the form of the word it
replaces ("films" -> "movies", "loved" -> "hated"). :func:`inflect` does that with
lemminflect (imported on first use). :func:`match_case` carries the original word's case
style over to a candidate ("Good" -> "Great", "GOOD" -> "GREAT").
"""

from __future__ import annotations

from functools import lru_cache

from textrobust.errors import MissingDependencyError
from textrobust.text import WORD_PATTERN

__all__ = ["BASE_TAGS", "INFLECTED_TAGS", "inflect", "is_word", "lemma_in_slot", "lemmatize", "match_case"]

#: Penn Treebank tags whose form differs from the lemma; lemminflect inflects to them.
INFLECTED_TAGS = frozenset({"NNS", "VBD", "VBG", "VBN", "VBZ", "JJR", "JJS", "RBR", "RBS"})
#: Tags that take the lemma unchanged.
BASE_TAGS = frozenset({"NN", "VB", "VBP", "JJ", "RB"})
# Comparatives and superlatives are only taken from lemminflect's dictionary: its rules
# for unknown words make "inexpensiver" and "quicklier".
_DICTIONARY_ONLY = frozenset({"JJR", "JJS", "RBR", "RBS"})


def is_word(word: str) -> bool:
    """Whether ``word`` is one word that :meth:`Text.replace` accepts."""
    return bool(word) and WORD_PATTERN.fullmatch(word) is not None


def match_case(original: str, candidate: str) -> str:
    """``candidate`` in the case style of ``original``: UPPER, Capitalised, or as given.

    A one-letter upper-case original ("I", "A") counts as Capitalised. Mixed case
    ("iPhone") and lower case leave the candidate as it is.

    >>> match_case("Good", "great"), match_case("GOOD", "great"), match_case("good", "Paris")
    ('Great', 'GREAT', 'Paris')
    """
    if not original or not candidate:
        return candidate
    if len(original) > 1 and original.isupper():
        return candidate.upper()
    if original[0].isupper() and not any(c.isupper() for c in original[1:]):
        return candidate[0].upper() + candidate[1:]
    return candidate


def inflect(lemma: str, tag: str) -> str | None:
    """``lemma`` inflected to the Penn Treebank ``tag``, or None when it cannot be.

    Base-form tags (NN, VB, VBP, JJ, RB) and tags that do not inflect return the lemma,
    and so does NNS for a lemma that is already plural.

    >>> inflect("movie", "NNS"), inflect("hate", "VBD"), inflect("inexpensive", "JJR")
    ('movies', 'hated', None)
    """
    if tag not in INFLECTED_TAGS:
        return lemma
    if tag == "NNS" and _lemmatize(lemma, "NOUN") != lemma:
        return lemma  # WordNet has plural lemmas ("humans", "men"): no "humanses"
    return _inflect(lemma, tag)


#: WordNet POS -> the universal POS lemminflect expects.
_LEMMA_UPOS = {"n": "NOUN", "v": "VERB", "a": "ADJ", "s": "ADJ", "r": "ADV"}


def lemmatize(word: str, tag: str, pos: str) -> str:
    """The lemma of ``word`` (lower case) tagged ``tag`` (PTB) with WordNet POS ``pos``.

    Words with a base-form tag are their own lemma; inflected ones go through lemminflect
    ("men" -> "man", "hated" -> "hate", "saddest" -> "sad"), falling back to the word.

    >>> lemmatize("hated", "VBD", "v"), lemmatize("data", "NN", "n")
    ('hate', 'data')
    """
    if tag not in INFLECTED_TAGS or pos not in _LEMMA_UPOS:
        return word
    return _lemmatize(word, _LEMMA_UPOS[pos])


@lru_cache(maxsize=65536)
def _lemmatize(word: str, upos: str) -> str:
    try:
        from lemminflect import getLemma
    except ImportError:
        raise MissingDependencyError(
            "lemminflect", "Lemmatising words for WordNet", "pip install lemminflect"
        ) from None
    lemmas = getLemma(word, upos=upos)
    return lemmas[0] if lemmas else word


@lru_cache(maxsize=65536)
def _inflect(lemma: str, tag: str) -> str | None:
    try:
        from lemminflect import getInflection
    except ImportError:
        raise MissingDependencyError(
            "lemminflect", "Inflecting WordNet candidates", "pip install lemminflect"
        ) from None
    forms = getInflection(lemma, tag=tag, inflect_oov=tag not in _DICTIONARY_ONLY)
    return forms[0] if forms else None


def lemma_in_slot(candidate: str, tag: str, pos: str | None) -> str | None:
    """The lemma of ``candidate`` of WordNet part of speech ``pos`` that inflects back to
    ``candidate`` under the PTB ``tag`` (it can stand in that slot), or None (another part
    of speech or inflection). Words lemminflect's dictionary lacks go through its rules."""
    if pos is None or pos not in _LEMMA_UPOS:
        return None
    try:
        from lemminflect import getAllLemmas, getAllLemmasOOV
    except ImportError:
        raise MissingDependencyError("lemminflect", "Lemmatising words for WordNet", "pip install lemminflect") from None
    lemmas: set[str] = set()
    for found in getAllLemmas(candidate, _LEMMA_UPOS[pos]).values():
        lemmas.update(found)
    if not lemmas:
        for found in getAllLemmasOOV(candidate, _LEMMA_UPOS[pos]).values():
            lemmas.update(found)
    for lemma in sorted(lemmas):
        if inflect(lemma, tag) == candidate:
            return lemma
    return None

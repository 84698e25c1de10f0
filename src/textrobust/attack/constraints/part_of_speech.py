"""Candidate constraint: the new word keeps the part of speech of the word it replaces."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.attack.constraints.base import Configured, parse_enum
from textrobust.attack.constraints.context import CompareTo, check_lengths, reference_text, window_segment
from textrobust.attack.problem import Proposal
from textrobust.config import Config
from textrobust.errors import ConfigError
from textrobust.similarity.cache import LRUCache
from textrobust.text import Text

__all__ = ["PartOfSpeech", "PartOfSpeechConfig", "Tagset"]

# spaCy components that tagging needs; the rest (parser, NER, lemmatizer) is switched off.
_TAGGING_PIPES = ("tok2vec", "transformer", "tagger", "morphologizer", "attribute_ruler")
_PUNCT_PTB = {"HYPH", ",", ".", ":", "``", "''", "-LRB-", "-RRB-", "NFP"}

# (start, end, UPOS, PTB) for each token of a tagged string
_Tokens = tuple[tuple[int, int, str, str], ...]


class Tagset(str, Enum):
    """Universal POS tags (``NOUN``, ``VERB``...) or Penn Treebank tags (``NNS``, ``VBD``...)."""

    UPOS = "upos"
    PTB = "ptb"


class PartOfSpeechConfig(Config):
    tagset: Tagset = Tagset.UPOS
    allow_noun_verb_swap: bool = False
    window: int | None = Field(default=None, ge=1)
    compare_to: CompareTo = CompareTo.ORIGINAL
    batch_size: int = Field(default=64, ge=1)


class PartOfSpeech(Configured[PartOfSpeechConfig]):
    """Accept a proposal when spaCy tags the new word, in its context, as it tags the
    reference word in the reference text.

    ``nlp``: a spaCy pipeline with a tagger (default :func:`textrobust.assets.
    spacy_pipeline`, loaded on first use). Tagging covers the whole column (``window=None``)
    or ``window`` words each side of the change. One word of textrobust may be several
    spaCy tokens ("well-made" is ``well - made``): its tag is the ``+``-joined tags of the
    tokens it covers, punctuation tokens left out. Texts are tagged in batches with
    ``nlp.pipe`` and every tagged string is cached. ``allow_noun_verb_swap`` also accepts a
    noun for a verb and back (TextAttack's ``allow_verb_noun_swap``, which defaults to True
    there; strict here).
    """

    def __init__(
        self,
        nlp: Any | None = None,
        *,
        tagset: Tagset | str = Tagset.UPOS,
        allow_noun_verb_swap: bool = False,
        window: int | None = None,
        compare_to: CompareTo | str = CompareTo.ORIGINAL,
        batch_size: int = 64,
        cache_size: int | None = 100_000,
    ) -> None:
        self.config = PartOfSpeechConfig(
            tagset=parse_enum(Tagset, tagset, "tagset", "PartOfSpeech"),
            allow_noun_verb_swap=allow_noun_verb_swap,
            window=window,
            compare_to=parse_enum(CompareTo, compare_to, "compare_to", "PartOfSpeech"),
            batch_size=batch_size,
        )
        self._nlp = nlp
        self._cache: LRUCache[str, _Tokens] = LRUCache(cache_size)

    def _collaborators(self) -> dict[str, Any]:
        return {"nlp": self._nlp}

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from textrobust.assets import spacy_pipeline

            self._nlp = spacy_pipeline()
        return self._nlp

    def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        if not proposals:
            return np.zeros(0, dtype=bool)
        segments = []
        for proposal in proposals:
            reference = reference_text(original, proposal, self.config.compare_to)
            check_lengths("PartOfSpeech", reference, proposal)
            segments.append(window_segment(reference, proposal.position, self.config.window))
            segments.append(window_segment(proposal.text, proposal.position, self.config.window))
        tagged = self.tag_strings([s for s, _ in segments])
        tags = [self._word_tag(tagged[i], span) for i, (_, span) in enumerate(segments)]
        return np.array([self._same(tags[2 * i], tags[2 * i + 1]) for i in range(len(proposals))], dtype=bool)

    def word_tags(self, texts: Sequence[Text], positions: Sequence[int]) -> list[str]:
        """The tag this constraint gives the word at each position (for reports and tests)."""
        segments = [window_segment(t, p, self.config.window) for t, p in zip(texts, positions)]
        tagged = self.tag_strings([s for s, _ in segments])
        return [self._word_tag(tokens, span) for tokens, (_, span) in zip(tagged, segments)]

    def tag_strings(self, strings: Sequence[str]) -> list[_Tokens]:
        """The tagged tokens of each string; uncached strings go through ``nlp.pipe`` once."""
        todo = self._cache.missing(strings)
        if todo:
            for string, doc in zip(todo, self._pipe(todo)):
                self._cache.put(string, tuple((t.idx, t.idx + len(t.text), t.pos_, t.tag_) for t in doc))
        out = []
        for string in strings:
            tokens = self._cache.get(string)
            if tokens is None:  # evicted by a cache smaller than this batch
                doc = next(iter(self._pipe([string])))
                tokens = tuple((t.idx, t.idx + len(t.text), t.pos_, t.tag_) for t in doc)
            out.append(tokens)
        return out

    def _pipe(self, strings: list[str]) -> Any:
        nlp = self.nlp
        names = list(getattr(nlp, "pipe_names", ()))
        if names and not {"tagger", "morphologizer"} & set(names):
            raise ConfigError(
                f"PartOfSpeech needs a spaCy pipeline with a 'tagger' or 'morphologizer'. This one has {names}."
            )
        disable = [n for n in names if n not in _TAGGING_PIPES]
        return nlp.pipe(strings, batch_size=self.config.batch_size, disable=disable)

    def _word_tag(self, tokens: _Tokens, span: tuple[int, int]) -> str:
        start, end = span
        upos = self.config.tagset is Tagset.UPOS
        covered = [(t[2], t[3]) for t in tokens if t[0] < end and t[1] > start]
        words = [c for c in covered if c[0] != "PUNCT" and c[1] not in _PUNCT_PTB] or covered
        return "+".join(pos if upos else tag for pos, tag in words)

    def _same(self, a: str, b: str) -> bool:
        if a == b:
            return True
        if not self.config.allow_noun_verb_swap:
            return False
        kinds = {_noun_or_verb(a), _noun_or_verb(b)}
        return kinds == {"noun", "verb"}


def _noun_or_verb(tag: str) -> str | None:
    if tag in ("NOUN", "PROPN") or tag.startswith("NN"):
        return "noun"
    if tag == "VERB" or tag.startswith("VB"):
        return "verb"
    return None

"""Part-of-speech tags for the words of a :class:`~textrobust.text.Text`, one per word.

spaCy tokenises differently from :class:`Text` ("don't" is two spaCy tokens, one word
here). :class:`SpacyTagger` avoids any alignment step: it hands spaCy a ``Doc`` built from
the text's own words plus the punctuation found in the gaps between them, and runs only the
tagging components, so there is exactly one tag per word. Tags are cached per text key.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["PosTag", "SpacyTagger", "Tagger", "tags_kept"]

# Punctuation in a gap becomes tokens: runs of one repeated character ("...", "--", "!!").
_GAP_TOKEN = re.compile(r"(\S)\1*")
# The spaCy components that produce PTB tags (tagger) and UPOS (attribute_ruler).
_TAGGING_PIPES = ("tok2vec", "tagger", "attribute_ruler")
#: spaCy tokens either side of a word that :meth:`SpacyTagger.tags_at` tags with it (the
#: receptive field of the English pipelines' tok2vec: depth 4, window 1)
WINDOW = 4


class PosTag(NamedTuple):
    """A word's Penn Treebank tag (``tag``, e.g. "NNS") and universal POS (``pos``, "NOUN")."""

    tag: str
    pos: str


#: Anything that maps a text to one :class:`PosTag` per word.
Tagger = Callable[[Text], Sequence[PosTag]]


class SpacyTagger:
    """POS tags from a spaCy pipeline (default: the installed English pipeline).

    ``nlp`` may be a loaded ``spacy.Language``; otherwise
    :func:`textrobust.assets.spacy_pipeline` loads one on first use. ``cache_size`` texts
    are remembered (least recently used are dropped).
    """

    def __init__(self, nlp: Any | None = None, *, cache_size: int = 4096) -> None:
        if cache_size < 0:
            raise ConfigError(f"The 'cache_size' parameter of SpacyTagger must be >= 0. Got {cache_size} instead.")
        self._nlp = nlp
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple[str, ...], tuple[PosTag, ...]] = OrderedDict()
        self._exact: bool | None = None

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from textrobust.assets import spacy_pipeline

            self._nlp = spacy_pipeline()
        return self._nlp

    def __call__(self, text: Text) -> tuple[PosTag, ...]:
        key = text.key
        found = self._cache.get(key)
        if found is not None:
            self._cache.move_to_end(key)
            return found
        tags = self._tag(text)
        if self.cache_size:
            self._cache[key] = tags
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return tags

    def many(self, texts: Sequence[Text]) -> list[tuple[PosTag, ...]]:
        """The tags of each text, the uncached ones through the pipeline in one batch
        (spaCy's ``pipe``: one tok2vec pass for many short docs, several times faster than
        one call per text; the validated source re-tags every surviving candidate)."""
        out: list[tuple[PosTag, ...] | None] = [self._cache.get(t.key) for t in texts]
        todo = [i for i, found in enumerate(out) if found is None]
        if todo:
            fresh = self._tag_batch([texts[i] for i in todo])
            for i, tags in zip(todo, fresh):
                out[i] = tags
                if self.cache_size:
                    self._cache[texts[i].key] = tags
            while self.cache_size and len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return [found if found is not None else () for found in out]

    def tags_at(self, texts: Sequence[Text], positions: Sequence[int]) -> list[PosTag]:
        """The tag of word ``positions[i]`` of ``texts[i]``, each tagged in a window of
        :data:`WINDOW` spaCy tokens either side of that word, in one batch (the validated
        source re-tags each candidate's sentence for one word only).

        The same tag as tagging the whole text: the English pipeline's tagger reads
        ``tok2vec``'s vectors, a maxout window encoder of depth 4 and window 1 over per-token
        features, so a token's vector depends on the 4 tokens either side of it and nothing
        further; its attribute ruler's patterns span at most 2 tokens. A text of several
        columns, or a pipeline other than that one (:meth:`_window_exact`), is tagged
        whole."""
        if len(texts) != len(positions):
            raise ConfigError(f"SpacyTagger.tags_at got {len(texts)} texts and {len(positions)} positions.")
        cached = [self._cache.get(t.key) for t in texts]
        if not self._window_exact() or any(len(t.columns) != 1 or not t.words for t in texts):
            return [tags[p] for tags, p in zip(self.many(texts), positions)]
        from spacy.tokens import Doc

        nlp = self.nlp
        docs, at = [], []
        for text, position, found in zip(texts, positions, cached):
            if found is not None:
                continue
            spans = [(s, e) for _, s, e in text.word_spans()]
            tokens, spaces, word_tokens = _tokens(text.columns[0], spans)
            t = word_tokens[position]
            lo, hi = max(0, t - WINDOW), min(len(tokens), t + WINDOW + 1)
            docs.append(Doc(nlp.vocab, words=tokens[lo:hi], spaces=spaces[lo:hi]))
            at.append(t - lo)
        for pipe in [nlp.get_pipe(name) for name in _TAGGING_PIPES if name in nlp.pipe_names]:
            docs = list(pipe.pipe(docs, batch_size=64))
        fresh = iter(PosTag(doc[t].tag_, doc[t].pos_) for doc, t in zip(docs, at))
        return [found[p] if found is not None else next(fresh) for found, p in zip(cached, positions)]

    def _window_exact(self) -> bool:
        """Whether a word's tag depends only on :data:`WINDOW` tokens either side: the
        pipeline's tok2vec is a maxout window encoder of ``depth * window_size <= WINDOW``
        and its tagger listens to it (spaCy's English pipelines)."""
        if self._exact is not None:
            return self._exact
        nlp = self.nlp
        try:
            encode = nlp.config["components"]["tok2vec"]["model"]["encode"]
            listener = nlp.config["components"]["tagger"]["model"]["tok2vec"]["@architectures"]
        except (KeyError, TypeError):
            self._exact = False
            return False
        ruler = nlp.get_pipe("attribute_ruler") if "attribute_ruler" in nlp.pipe_names else None
        longest = max((len(p["patterns"][0]) for p in ruler.patterns), default=1) if ruler is not None else 1
        self._exact = (str(encode.get("@architectures", "")).startswith("spacy.MaxoutWindowEncoder")
                       and int(encode["depth"]) * int(encode["window_size"]) <= WINDOW
                       and str(listener).startswith("spacy.Tok2VecListener") and longest - 1 <= WINDOW)
        return self._exact

    def _tag_batch(self, texts: Sequence[Text]) -> list[tuple[PosTag, ...]]:
        if any(len(t.columns) != 1 or not t.words for t in texts):
            return [self._tag(t) for t in texts]
        from spacy.tokens import Doc

        nlp = self.nlp
        pipes = [nlp.get_pipe(name) for name in _TAGGING_PIPES if name in nlp.pipe_names]
        if not any(name in nlp.pipe_names for name in ("tagger", "morphologizer")):
            raise ConfigError(
                f"The spaCy pipeline given to SpacyTagger has no tagger (pipes: {nlp.pipe_names})."
            )
        docs, indices = [], []
        for text in texts:
            spans = [(s, e) for _, s, e in text.word_spans()]
            tokens, spaces, word_tokens = _tokens(text.columns[0], spans)
            docs.append(Doc(nlp.vocab, words=tokens or [""], spaces=spaces or [False]))
            indices.append(word_tokens)
        for pipe in pipes:
            docs = list(pipe.pipe(docs, batch_size=64))
        return [tuple(PosTag(doc[i].tag_, doc[i].pos_) for i in word_tokens) for doc, word_tokens in zip(docs, indices)]

    def _tag(self, text: Text) -> tuple[PosTag, ...]:
        from spacy.tokens import Doc

        nlp = self.nlp
        pipes = [nlp.get_pipe(name) for name in _TAGGING_PIPES if name in nlp.pipe_names]
        if not any(name in nlp.pipe_names for name in ("tagger", "morphologizer")):
            raise ConfigError(
                f"The spaCy pipeline given to SpacyTagger has no tagger (pipes: {nlp.pipe_names})."
            )
        spans = text.word_spans()
        tags: list[PosTag] = []
        for column, string in enumerate(text.columns):
            word_spans = [(s, e) for c, s, e in spans if c == column]
            tokens, spaces, word_tokens = _tokens(string, word_spans)
            if not word_tokens:
                continue
            doc = Doc(nlp.vocab, words=tokens, spaces=spaces)
            for pipe in pipes:
                doc = pipe(doc)
            tags.extend(PosTag(doc[i].tag_, doc[i].pos_) for i in word_tokens)
        return tuple(tags)

    def __repr__(self) -> str:
        return f"SpacyTagger(cache_size={self.cache_size})"


def _tokens(
    string: str, word_spans: Sequence[tuple[int, int]]
) -> tuple[list[str], list[bool], list[int]]:
    """Tokens of ``string`` (its words plus punctuation runs in the gaps), whether each is
    followed by white space, and the token index of each word."""
    pieces: list[tuple[int, int, bool]] = [(s, e, True) for s, e in word_spans]
    cursor = 0
    for s, e in [*word_spans, (len(string), len(string))]:
        for match in _GAP_TOKEN.finditer(string, cursor, s):
            pieces.append((match.start(), match.end(), False))
        cursor = e
    pieces.sort()
    tokens = [string[s:e] for s, e, _ in pieces]
    spaces = [e < len(string) and string[e].isspace() for _, e, _ in pieces]
    word_tokens = [i for i, (_, _, is_word) in enumerate(pieces) if is_word]
    return tokens, spaces, word_tokens


def tags_kept(tagger: Tagger, text: Text, tags: Sequence[PosTag], pairs: Sequence[tuple[int, str]]) -> list[bool]:
    """For each ``(position, substitute)``: does ``tagger`` read the substitute, put in
    ``text``, with the part of speech ``tags`` gives the original word ("acute writing" ->
    "piercing writing" reads "piercing" as a verb)? One word in a window when the tagger can
    (:meth:`SpacyTagger.tags_at`), else whole sentences (in a batch when it can)."""
    changed = [text.replace(p, s) for p, s in pairs]
    tags_at = getattr(tagger, "tags_at", None)
    if tags_at is not None:
        fits = [k for k, new in enumerate(changed) if len(new) == len(text)]
        found = dict(zip(fits, tags_at([changed[k] for k in fits], [pairs[k][0] for k in fits])))
        return [k in found and found[k].pos == tags[p].pos for k, (p, _) in enumerate(pairs)]
    many = getattr(tagger, "many", None)
    retagged = many(changed) if many is not None else [tagger(t) for t in changed]
    return [len(new) == len(text) and len(new_tags) == len(text) and new_tags[p].pos == tags[p].pos
            for (p, _), new, new_tags in zip(pairs, changed, retagged)]

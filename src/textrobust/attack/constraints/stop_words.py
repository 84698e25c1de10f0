"""Position constraint: stop words are never edited."""

from __future__ import annotations

from collections.abc import Iterable

from textrobust.attack.constraints.base import Configured, parse_enum
from textrobust.attack.constraints.context import CompareTo
from textrobust.config import Config
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["StopWords", "StopWordsConfig"]


class StopWordsConfig(Config):
    words: frozenset[str]
    case_sensitive: bool = False
    compare_to: CompareTo = CompareTo.ORIGINAL


class StopWords(Configured[StopWordsConfig]):
    """No edit of a position holding a stop word.

    ``words``: the list (default :func:`textrobust.assets.stop_words`, the project's 407
    words); matched lower-cased unless ``case_sensitive``. ``compare_to="original"`` looks
    at the word in the original text (a stop word stays one even after an edit next to it);
    ``"parent"`` at the word in the current text, as TextAttack's ``StopwordModification``.

    >>> StopWords({"the", "a"}).allowed(Text.from_string("The film"), Text.from_string("The film"), frozenset({0, 1}))
    frozenset({1})
    """

    def __init__(
        self,
        words: Iterable[str] | None = None,
        *,
        case_sensitive: bool = False,
        compare_to: CompareTo | str = CompareTo.ORIGINAL,
    ) -> None:
        if words is None:
            from textrobust.assets import stop_words

            words = stop_words()
        if isinstance(words, str):
            raise ConfigError("The 'words' parameter of StopWords must be a collection of words, not one string.")
        words = frozenset(words) if case_sensitive else frozenset(w.lower() for w in words)
        self.config = StopWordsConfig(
            words=words,
            case_sensitive=case_sensitive,
            compare_to=parse_enum(CompareTo, compare_to, "compare_to", "StopWords"),
        )

    def allowed(self, original: Text, current: Text, positions: frozenset[int]) -> frozenset[int]:
        text = original if self.config.compare_to is CompareTo.ORIGINAL else current
        words = text.words
        stop = self.config.words
        if self.config.case_sensitive:
            return frozenset(p for p in positions if words[p] not in stop)
        return frozenset(p for p in positions if words[p].lower() not in stop)

"""Bounded cost per example: a limit on input length, applied before any analysis.

A text longer than ``max_words`` words is, by policy, either cut to its first
``max_words`` words (``truncate``, the default: the zoo's victims read at most their
``max_length`` tokens anyway, so the cut changes nothing they see) or turned into a
per-example error naming the limit (``error``). Without the limit one 50,000-word row
makes a word-importance ranking build 50,000 texts of 50,000 words. ``summary.json``
lists the ids of the analysed examples that were cut or rejected (``length_limit``: the
first :data:`MAX_LISTED_IDS` of each, with their counts; :meth:`LengthReport.summary`);
the report says how many.

>>> from textrobust.data.examples import Dataset, Example
>>> from textrobust.text import Text
>>> data = Dataset("d", (Example("a", Text.from_string("one two three four"), 0),), ("x",))
>>> cut, report = limit_length(data, 2, "truncate")
>>> str(cut[0].text), report.truncated
('one two', ('a',))
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from textrobust.data.examples import Dataset, Example
from textrobust.errors import ConfigError
from textrobust.text import Text, split_words

__all__ = ["DEFAULT_MAX_WORDS", "MAX_LISTED_IDS", "LengthPolicy", "LengthReport", "check_length_policy",
           "check_max_words", "default_max_words", "limit_length"]

#: The limit for victims that do not say how much they read.
DEFAULT_MAX_WORDS = 512
#: How many ids of cut (and of rejected) texts ``summary.json`` lists; the counts are whole.
MAX_LISTED_IDS = 100


class LengthPolicy(StrEnum):
    TRUNCATE = "truncate"
    ERROR = "error"


@dataclass(frozen=True)
class LengthReport:
    """What the limit did: ids cut (``truncate``) or rejected (``error``)."""

    max_words: int
    policy: str
    truncated: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()

    def summary(self, limit: int | None = None) -> dict[str, Any]:
        """What ``summary.json`` holds (``length_limit``): the limit, the policy, the ids
        cut (``truncated``) and rejected (``rejected``), each the first ``limit`` (default
        :data:`MAX_LISTED_IDS`) in data order, and their counts (``truncated_count``,
        ``rejected_count``).

        >>> LengthReport(2, "truncate", truncated=("a", "b", "c")).summary(limit=2)
        {'max_words': 2, 'policy': 'truncate', 'truncated': ['a', 'b'], 'truncated_count': 3, 'rejected': [], \
'rejected_count': 0}
        """
        shown = MAX_LISTED_IDS if limit is None else limit
        return {"max_words": self.max_words, "policy": self.policy,
                "truncated": list(self.truncated[:shown]), "truncated_count": len(self.truncated),
                "rejected": list(self.rejected[:shown]), "rejected_count": len(self.rejected)}

    def only(self, ids: Collection[str]) -> LengthReport:
        """This report restricted to the examples ``ids`` (those an audit analysed: the
        limit is applied to the whole data set, but only the analysed ids are reported)."""
        keep = set(ids)
        return replace(self, truncated=tuple(i for i in self.truncated if i in keep),
                       rejected=tuple(i for i in self.rejected if i in keep))


def default_max_words(victim: Any) -> int:
    """The victim's ``max_length`` (tokens it reads) when it has one, else 512."""
    for owner in (victim, getattr(victim, "tokenizer", None), getattr(victim, "vocab", None)):
        value = getattr(owner, "max_length", None)
        if isinstance(value, int) and value > 0:
            return max(value, 16)
    return DEFAULT_MAX_WORDS


def _cut(column: str, limit: int) -> str:
    words, gaps = split_words(column)
    if len(words) <= limit:
        return column
    out = [gaps[0]]
    for word, gap in zip(words[:limit], gaps[1:limit + 1]):
        out += [word, gap]
    return "".join(out).rstrip()


def _truncated(example: Example, limit: int) -> Example:
    columns = [_cut(c, limit) for c in example.text.columns]
    text = Text.from_pair(columns[0], columns[1]) if len(columns) == 2 else Text.from_string(columns[0])
    frozen = [p for p in example.text.frozen if p < len(text)]
    return replace(example, text=text.freeze(frozen))


def check_max_words(max_words: int | None, *, optional: bool = True) -> None:
    """``max_words`` is a whole number from 1 to 10 million, or (``optional``) ``None``
    for the victim's own limit; 0 is refused, not read as "the default"."""
    if max_words is None and optional:
        return
    if isinstance(max_words, bool) or not isinstance(max_words, int) or not 1 <= max_words <= 10_000_000:
        raise ConfigError(f"The '--max-words' option must be an integer from 1 to 10,000,000 (leave it out "
                          f"for what the victim reads). Got {max_words!r} instead.")


def check_length_policy(policy: str | LengthPolicy) -> LengthPolicy:
    """``policy`` as a :class:`LengthPolicy`, or a :class:`ConfigError` naming the choices."""
    try:
        return LengthPolicy(policy)
    except ValueError:
        raise ConfigError(f"The '--length-policy' option must be truncate or error. Got {policy!r} instead.") from None


def limit_length(dataset: Dataset, max_words: int, policy: str | LengthPolicy = "truncate"
                 ) -> tuple[Dataset, LengthReport]:
    """``dataset`` with every text within ``max_words`` words per column (see the module)."""
    check_max_words(max_words, optional=False)
    policy = check_length_policy(policy)
    long_ids = {e.id for e in dataset if any(len(split_words(c)[0]) > max_words for c in e.text.columns)}
    if not long_ids:
        return dataset, LengthReport(max_words, policy.value)
    if policy is LengthPolicy.ERROR:
        kept = tuple(e for e in dataset if e.id not in long_ids)
        ordered = tuple(e.id for e in dataset if e.id in long_ids)
        return replace(dataset, examples=kept), LengthReport(max_words, policy.value, rejected=ordered)
    examples = tuple(_truncated(e, max_words) if e.id in long_ids else e for e in dataset)
    ordered = tuple(e.id for e in dataset if e.id in long_ids)
    return replace(dataset, examples=examples), LengthReport(max_words, policy.value, truncated=ordered)

"""Gender-swap data augmentation: the "debiased" training option of the zoo.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 4.2.1, after Zhao et al. (2018, 2019):
"We augment the training split by swapping all male entities with the corresponding
female entities and vice-versa." Pass a :class:`GenderSwap` as ``augment`` to
:func:`textrobust.zoo.train_victim`; each training example is kept and, when it holds a
gendered word, followed by its swapped copy (same label, id ``<id>+swap``).

Departures: words with several partners take the first in pair order ("her" becomes
"his", not "him": telling the possessive from the object needs a parser, which the paper
also skips and names as the reason the debiasing is incomplete, Appendix A.4); names are
not swapped (Zhao et al. also anonymise names).

>>> from textrobust.data.examples import Example
>>> from textrobust.text import Text
>>> swap = GenderSwap()
>>> [str(e.text) for e in swap(Example("1", Text.from_string("He loved his mother."), 1))]
['He loved his mother.', 'She loved her father.']
"""

from __future__ import annotations

from collections.abc import Iterable

from textrobust.attack.candidates.inflection import match_case
from textrobust.attack.candidates.protected import GENDER_PAIRS
from textrobust.data.examples import Example
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["GenderSwap", "gender_swap"]


class GenderSwap:
    """``augment`` callable for ``train_victim``: ``example -> [example, swapped]``
    (``[example]`` when nothing is gendered). ``pairs``: (male, female) word pairs."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = GENDER_PAIRS, *, keep_original: bool = True) -> None:
        mapping: dict[str, str] = {}
        count = 0
        for pair in pairs:
            if isinstance(pair, str) or len(pair) != 2:
                raise ConfigError(f"The 'pairs' parameter of GenderSwap must hold (male, female) pairs. Got {pair!r}.")
            a, b = (str(w).lower() for w in pair)
            mapping.setdefault(a, b)
            mapping.setdefault(b, a)
            count += 1
        self._mapping = mapping
        self._count = count
        self.keep_original = keep_original

    def swap(self, text: Text) -> Text:
        """``text`` with every gendered word swapped (case kept)."""
        changes = {
            i: match_case(word, self._mapping[word.lower()])
            for i, word in enumerate(text.words)
            if word.lower() in self._mapping
        }
        return text.replace(changes) if changes else text

    def __call__(self, example: Example) -> list[Example]:
        swapped = self.swap(example.text)
        if swapped == example.text:
            return [example]
        twin = Example(f"{example.id}+swap", swapped, example.label)
        return [example, twin] if self.keep_original else [twin]

    def __repr__(self) -> str:
        return f"GenderSwap({self._count} pairs, keep_original={self.keep_original})"


def gender_swap() -> GenderSwap:
    """The default gender swap over :data:`~textrobust.attack.candidates.protected.GENDER_PAIRS`."""
    return GenderSwap()

"""Protected groups and the token pairs whose counterfactual bias is measured.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 4 and Appendix A.4: gendered pairs from
Zhao et al. (2018) -- reused from :data:`textrobust.attack.candidates.protected.
GENDER_PAIRS`, in (male, female) order, so a positive bias means the model prefers the
female word -- plus nationality, religion and sexual-orientation tokens after the
CheckList lexicons (Ribeiro et al., 2020) that the paper's Figure 7 uses.

For the non-gender groups every two words of a group form a pair, in list order
(``(american, british)``: positive bias = preference for ``british``). Pairs without test
sentences cost nothing: only pairs whose first word occurs in the data are measured.

The blacklist of the neighbourhood construction (footnote 7) is every word of every
group in use, so no protected token is added while building neighbours. The paper adds
the gender-definition word lists of Zhao et al. (2018b); the gendered pairs here cover
most of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from textrobust.attack.candidates.inflection import is_word
from textrobust.attack.candidates.protected import GENDER_PAIRS
from textrobust.errors import ConfigError
from textrobust.registry import Registry

__all__ = [
    "NATIONALITY_WORDS",
    "PROTECTED_GROUPS",
    "RELIGION_WORDS",
    "SEXUAL_ORIENTATION_WORDS",
    "ProtectedGroup",
    "ProtectedPair",
    "protected_groups",
    "protected_words",
]

#: Nationality adjectives (single words), after CheckList's ``nationality`` lexicon.
NATIONALITY_WORDS: tuple[str, ...] = (
    "american", "british", "canadian", "australian", "irish", "french", "german", "italian",
    "spanish", "russian", "chinese", "japanese", "korean", "indian", "mexican", "brazilian",
    "african", "asian", "european", "israeli", "iranian", "arab", "turkish", "egyptian",
    "nigerian", "polish", "swedish", "greek", "vietnamese", "pakistani",
)  # fmt: skip

#: Religion adjectives, after CheckList's ``religion_adj`` lexicon.
RELIGION_WORDS: tuple[str, ...] = (
    "christian", "catholic", "protestant", "jewish", "muslim", "islamic", "hindu", "buddhist",
    "sikh", "mormon", "atheist", "evangelical", "orthodox",
)  # fmt: skip

#: Sexual-orientation adjectives, after CheckList's ``sexual_adj`` lexicon.
SEXUAL_ORIENTATION_WORDS: tuple[str, ...] = (
    "gay", "straight", "lesbian", "bisexual", "heterosexual", "homosexual", "queer", "asexual",
    "transgender",
)  # fmt: skip


@dataclass(frozen=True)
class ProtectedPair:
    """``p = (first, second)`` of a group; positive bias favours ``second``."""

    group: str
    first: str
    second: str

    @property
    def name(self) -> str:
        return f"{self.first},{self.second}"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ProtectedGroup:
    """A named group of protected words and the pairs measured within it."""

    name: str
    pairs: tuple[ProtectedPair, ...]
    citation: str = ""

    @property
    def words(self) -> frozenset[str]:
        return frozenset(w for p in self.pairs for w in (p.first, p.second))

    @classmethod
    def from_pairs(cls, name: str, pairs: Iterable[tuple[str, str]], citation: str = "") -> ProtectedGroup:
        out = []
        for pair in pairs:
            if isinstance(pair, str) or len(pair) != 2:
                raise ConfigError(f"The pairs of group '{name}' must be (word, word) tuples. Got {pair!r}.")
            a, b = (str(w).lower() for w in pair)
            if not (is_word(a) and is_word(b)) or a == b:
                raise ConfigError(f"The pairs of group '{name}' must hold two different single words. Got {pair!r}.")
            out.append(ProtectedPair(name, a, b))
        return cls(name, tuple(dict.fromkeys(out)), citation)

    @classmethod
    def all_pairs(cls, name: str, words: Sequence[str], citation: str = "") -> ProtectedGroup:
        """Every two words of ``words``, in list order."""
        return cls.from_pairs(name, combinations(words, 2), citation)


#: Group name -> factory of the :class:`ProtectedGroup`.
PROTECTED_GROUPS: Registry[Callable[[], ProtectedGroup]] = Registry("protected group")
PROTECTED_GROUPS.add(
    "gender",
    lambda: ProtectedGroup.from_pairs("gender", GENDER_PAIRS, "Zhao et al. 2018"),
    "gendered word pairs (male, female) after Zhao et al. 2018: he/she, his/her, man/woman, actor/actress, ...",
)
PROTECTED_GROUPS.add(
    "nationality",
    lambda: ProtectedGroup.all_pairs("nationality", NATIONALITY_WORDS, "CheckList, Ribeiro et al. 2020"),
    "nationality adjectives (american, british, chinese, ...), every two of them",
)
PROTECTED_GROUPS.add(
    "religion",
    lambda: ProtectedGroup.all_pairs("religion", RELIGION_WORDS, "CheckList, Ribeiro et al. 2020"),
    "religion adjectives (christian, jewish, muslim, ...), every two of them",
)
PROTECTED_GROUPS.add(
    "sexual_orientation",
    lambda: ProtectedGroup.all_pairs("sexual_orientation", SEXUAL_ORIENTATION_WORDS, "CheckList, Ribeiro et al. 2020"),
    "sexual-orientation adjectives (gay, straight, lesbian, ...), every two of them",
)


def protected_groups(names: Iterable[str] = ("gender",)) -> tuple[ProtectedGroup, ...]:
    """The groups named (see :data:`PROTECTED_GROUPS`); ``"all"`` is every group."""
    names = list(names)
    if "all" in names:
        names = PROTECTED_GROUPS.names()
    return tuple(PROTECTED_GROUPS.get(n)() for n in dict.fromkeys(names))


def protected_words(groups: Iterable[ProtectedGroup]) -> frozenset[str]:
    """Every word of ``groups`` (the neighbourhood blacklist)."""
    return frozenset(w for g in groups for w in g.words)

"""Protected-word pairs for bias work: each word of a pair proposes its partner.

:data:`GENDER_PAIRS` is a list of gendered word pairs in the style of Zhao et al. (2018),
"Gender Bias in Coreference Resolution" / "Learning Gender-Neutral Word Embeddings"
(he/she, his/her, man/woman, actor/actress, ...). A word in several pairs proposes every
partner, in list order: "her" proposes "his" and "him" (English gives no way to tell the
possessive from the object without parsing; the caller picks, e.g. by the victim's
output or a POS check). Candidates keep the original word's case; scores are 1.0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textrobust.attack.candidates.inflection import is_word, match_case
from textrobust.attack.problem import Substitution
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["GENDER_PAIRS", "ProtectedPairs"]

#: Gendered word pairs (male, female), after Zhao et al. (2018)'s lists.
GENDER_PAIRS: tuple[tuple[str, str], ...] = (
    ("he", "she"), ("his", "her"), ("him", "her"), ("himself", "herself"),
    ("man", "woman"), ("men", "women"), ("boy", "girl"), ("boys", "girls"),
    ("male", "female"), ("males", "females"), ("gentleman", "lady"), ("gentlemen", "ladies"),
    ("guy", "gal"), ("guys", "gals"), ("lad", "lass"), ("sir", "madam"),
    ("mr", "mrs"), ("mr", "ms"), ("father", "mother"), ("fathers", "mothers"),
    ("dad", "mom"), ("dads", "moms"), ("daddy", "mommy"), ("papa", "mama"),
    ("son", "daughter"), ("sons", "daughters"), ("brother", "sister"), ("brothers", "sisters"),
    ("husband", "wife"), ("husbands", "wives"), ("boyfriend", "girlfriend"),
    ("boyfriends", "girlfriends"), ("groom", "bride"), ("grooms", "brides"),
    ("bridegroom", "bride"), ("fiance", "fiancee"), ("widower", "widow"),
    ("uncle", "aunt"), ("uncles", "aunts"), ("nephew", "niece"), ("nephews", "nieces"),
    ("grandfather", "grandmother"), ("grandfathers", "grandmothers"), ("grandpa", "grandma"),
    ("grandson", "granddaughter"), ("grandsons", "granddaughters"), ("stepfather", "stepmother"),
    ("stepson", "stepdaughter"), ("king", "queen"), ("kings", "queens"), ("prince", "princess"),
    ("princes", "princesses"), ("lord", "lady"), ("lords", "ladies"), ("duke", "duchess"),
    ("emperor", "empress"), ("monk", "nun"), ("monks", "nuns"), ("priest", "priestess"),
    ("god", "goddess"), ("gods", "goddesses"), ("hero", "heroine"), ("heroes", "heroines"),
    ("actor", "actress"), ("actors", "actresses"), ("waiter", "waitress"), ("waiters", "waitresses"),
    ("steward", "stewardess"), ("host", "hostess"), ("hosts", "hostesses"),
    ("headmaster", "headmistress"), ("businessman", "businesswoman"),
    ("businessmen", "businesswomen"), ("chairman", "chairwoman"), ("chairmen", "chairwomen"),
    ("congressman", "congresswoman"), ("spokesman", "spokeswoman"), ("salesman", "saleswoman"),
    ("policeman", "policewoman"), ("sportsman", "sportswoman"), ("schoolboy", "schoolgirl"),
    ("fraternity", "sorority"), ("bachelor", "spinster"), ("masculine", "feminine"),
    ("manhood", "womanhood"), ("boyhood", "girlhood"), ("brotherhood", "sisterhood"),
    ("patriarch", "matriarch"), ("paternal", "maternal"), ("paternity", "maternity"),
)  # fmt: skip


class ProtectedPairs:
    """Each word of a pair proposes its partner(s), in both directions, case kept."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = GENDER_PAIRS) -> None:
        partners: dict[str, dict[str, None]] = {}
        count = 0
        for pair in pairs:
            if not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2:
                raise ConfigError(f"The 'pairs' parameter of ProtectedPairs must hold (word, word) pairs. Got {pair!r}.")
            a, b = (str(w).lower() for w in pair)
            if not (is_word(a) and is_word(b)) or a == b:
                raise ConfigError(
                    f"The 'pairs' parameter of ProtectedPairs must hold pairs of two different single "
                    f"words. Got {pair!r}."
                )
            partners.setdefault(a, {}).setdefault(b)
            partners.setdefault(b, {}).setdefault(a)
            count += 1
        self._partners = {w: tuple(p) for w, p in partners.items()}
        self._count = count

    @property
    def words(self) -> frozenset[str]:
        """Every protected word (lower case)."""
        return frozenset(self._partners)

    def partners(self, word: str) -> tuple[str, ...]:
        """The lower-case partners of ``word`` (any case), or ()."""
        return self._partners.get(word.lower(), ())

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        words = text.words
        out: dict[int, list[Substitution]] = {}
        for position in positions:
            word = words[position]
            subs: list[Substitution] = []
            for partner in self.partners(word):
                cased = match_case(word, partner)
                if cased != word and all(s.word != cased for s in subs):
                    subs.append(Substitution(position, cased, 1.0))
            out[position] = subs
        return out

    def __repr__(self) -> str:
        return f"ProtectedPairs({self._count} pairs, {len(self._partners)} words)"

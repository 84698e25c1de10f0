"""People's substitutes for every content word: CoInCo (Concepts in Context).

CoInCo (Kremer, Erk, Padó and Thater, "What Substitutes Tell Us -- Analysis of an
'All-Words' Lexical Substitution Corpus", EACL 2014; CC-BY-3.0-US, MASC sentences) asked
about six readers per sentence to write substitutes for each content word; ``freq`` is how
many wrote each. The project's shared data holds the MASC documents of CoInCo's dev portion
only; SWORDS test was drawn from the others, which are held out and never read here.

What people wrote is a positive: a substitute several of them thought of keeps the meaning.
What they did not write is *not* a negative (SWORDS found that CoInCo misses most acceptable
substitutes), so a judge trained on CoInCo uses its substitutes as positives against
candidates people did not write only as weak, down-weighted negatives.

:func:`load_coinco` reads the XML (gzipped or not) into :class:`CoincoToken` rows: the
target sentence, the token's character offset in it, its word form, lemma and TreeTagger
part of speech, and the substitutes with their counts. Tokens marked ``problematic`` and
tokens without substitutes are skipped unless asked for.
"""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from textrobust.errors import DataError

__all__ = ["CoincoToken", "load_coinco", "treetagger_pos"]


@dataclass(frozen=True)
class CoincoToken:
    """One content word of a CoInCo sentence with the substitutes people wrote for it."""

    sentence_id: str  # "MASCfile:MASCsentID", as SWORDS's ``coinco_ids`` name them
    sentence: str
    offset: int
    word: str
    lemma: str
    tag: str  # TreeTagger's tag (NN, VV, JJ, RB, ...)
    substitutes: tuple[tuple[str, int], ...]  # (lemma, how many people wrote it)
    problematic: bool = False

    @property
    def pos(self) -> str | None:
        return treetagger_pos(self.tag)


def treetagger_pos(tag: str) -> str | None:
    """WordNet's part of speech (n, v, a, r) of a TreeTagger tag, or None (not content)."""
    if tag.startswith("NP"):
        return None  # proper nouns
    if tag.startswith("N"):
        return "n"
    if tag.startswith("V"):
        return "v"
    if tag.startswith("J"):
        return "a"
    if tag.startswith("RB"):
        return "r"
    return None


def _attr(element: ET.Element, name: str, where: str) -> str:
    value = element.get(name)
    if value is None:
        raise DataError(f"{where}: a <{element.tag}> lacks the attribute {name!r}.")
    return value


def _text(element: ET.Element | None) -> str:
    return " ".join((element.text or "").split()) if element is not None else ""


def load_coinco(path: str | Path, *, keep_problematic: bool = False,
                keep_empty: bool = False) -> list[CoincoToken]:
    """The tokens of a CoInCo XML file (``.xml`` or ``.xml.gz``) in file order. A malformed
    file is a :class:`~textrobust.errors.DataError` naming the sentence and the field."""
    path = Path(path)
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as handle:
            root = ET.parse(handle).getroot()
    except FileNotFoundError:
        raise DataError(f"No CoInCo file at {path}.") from None
    except (OSError, EOFError, ET.ParseError) as exc:
        raise DataError(f"{path} is not a CoInCo XML file (gzip or plain): {exc}.") from None
    out: list[CoincoToken] = []
    sentences = root.findall("sent") if root.tag != "sent" else [root]
    if not sentences:
        raise DataError(f"CoInCo file {path} holds no <sent> element.")
    for number, sent in enumerate(sentences, 1):
        where = f"CoInCo file {path}, sentence {number}"
        sentence_id = f"{_attr(sent, 'MASCfile', where)}:{_attr(sent, 'MASCsentID', where)}"
        where = f"CoInCo file {path}, sentence {sentence_id}"
        target = sent.find("targetsentence")
        if target is None:
            raise DataError(f"{where} lacks its <targetsentence>.")
        sentence = _text(target)
        tokens = sent.find("tokens")
        if tokens is None:
            raise DataError(f"{where} lacks its <tokens>.")
        cursor = 0
        for token in tokens.findall("token"):
            word = _attr(token, "wordform", where)
            found = sentence.find(word, cursor)
            if found < 0:
                raise DataError(f"{where}: the token {word!r} (attribute 'wordform') is not in the target "
                                f"sentence after offset {cursor}.")
            cursor = found + len(word)
            subs = token.find("substitutions")
            pairs: list[tuple[str, int]] = []
            for sub in subs.findall("subst") if subs is not None else ():
                lemma = _attr(sub, "lemma", where)
                raw = _attr(sub, "freq", where)
                try:
                    freq = int(raw)
                except ValueError:
                    raise DataError(f"{where}: the attribute 'freq' of the substitute {lemma!r} must be a whole "
                                    f"number; got {raw!r}.") from None
                pairs.append((lemma, freq))
            problematic = token.get("problematic") == "yes"
            if (problematic and not keep_problematic) or (not pairs and not keep_empty):
                continue
            out.append(CoincoToken(sentence_id, sentence, found, word, token.get("lemma") or word.lower(),
                                   _attr(token, "posTT", where), tuple(pairs), problematic))
    return out

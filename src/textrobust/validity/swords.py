"""People's judgements of substitutes in context: the SWORDS benchmark, its split and its scorer.

SWORDS (Lee, Donahue, Jia, Iyabor and Liang, "Swords: A Benchmark for Lexical Substitution
with Improved Data Coverage and Quality", NAACL 2021; CC-BY-3.0-US) asked people, for a
target word in its context and a candidate substitute, "is this an acceptable substitute
here?": 3 readers per candidate, 10 where any of the first 3 said yes. A candidate is
**acceptable** when more than half of its readers said yes (ratio > 0.5) and
**conceivable** when at least 10% did. Only the dev split ships with the project's shared
data (``../shared/data/swords/``); its test split is held out for independent checks and is
never read here.

:func:`load_swords` reads the benchmark's JSON (gzipped or not). :func:`swords_part` splits
the dev targets **by context** into a part to tune on and a held-out part reported on (a
third of the contexts, chosen by a hash of the context id; the same rule everywhere).
:func:`score` scores any candidate source's proposals as the SWORDS scorer does
(``swords/eval.py`` of the p-lambda/swords repository, read for its definitions): the
proposals and the judged substitutes are lemmatised with WordNet's lemmatiser under the
target's part of speech (morphy, shortest lemma), merged by lemma (their readers' labels
pooled, ``UNSURE`` dropped), and any equal to the target's lemma are dropped. Then:

- **lenient precision**: of the proposals that people judged, the share acceptable
  (unjudged proposals are left out: SWORDS's "lenient");
- **strict precision**: the same over every proposal (unjudged ones count as wrong);
- **conceivable**: of the judged proposals, the share conceivable;
- **recall of acceptable**: acceptable substitutes proposed over all acceptable substitutes,
  pooled over targets (multi-word substitutes included: a one-word source cannot reach them,
  :attr:`SwordsScore.reachable` says how many are single words);
- **F@10** (lenient and strict, acceptable and conceivable): SWORDS's generative metric on
  the first 10 proposals of a ranked source: precision over those returned, recall over
  ``min(10, |reference|)``, micro-averaged over targets; lenient drops unjudged proposals
  before the top 10 is taken;
- **first proposal acceptable**: of the targets with at least one judged proposal, the share
  whose first judged proposal is acceptable (lenient, as the F@10 above).

The scoring is written here (the SWORDS library needs its Docker assets and the network);
the definitions follow its ``evaluate_pr_at_k`` and ``preprocess_*_for_evaluation``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from textrobust.errors import DataError
from textrobust.text import Text

__all__ = [
    "ACCEPTABLE",
    "CONCEIVABLE",
    "HELD_OUT",
    "TUNE",
    "JudgedSubstitute",
    "SwordsScore",
    "SwordsTarget",
    "load_swords",
    "score",
    "sentence_around",
    "swords_part",
    "wordnet_lemmatizer",
]

#: Ratios of readers saying yes: acceptable above, conceivable at or above.
ACCEPTABLE = 0.5
CONCEIVABLE = 0.1

#: The parts of SWORDS dev.
Part = Literal["tune", "held_out"]
TUNE: Part = "tune"
HELD_OUT: Part = "held_out"

#: SWORDS's parts of speech -> WordNet's.
WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
_LABELS = {"TRUE": True, "FALSE": False, "UNSURE": None, "TRUE_IMPLICIT": True}


@dataclass(frozen=True)
class JudgedSubstitute:
    """One candidate people judged: how many said yes and no (unsure dropped)."""

    substitute: str
    yes: int
    no: int
    sources: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        total = self.yes + self.no
        return self.yes / total if total else 0.0

    @property
    def acceptable(self) -> bool:
        return self.yes + self.no > 0 and self.ratio > ACCEPTABLE

    @property
    def conceivable(self) -> bool:
        return self.yes + self.no > 0 and self.ratio >= CONCEIVABLE


@dataclass(frozen=True)
class SwordsTarget:
    """A target word in its context with the substitutes people judged for it; ``offset``
    is the target's character offset in ``context``; ``pos`` one of NOUN, VERB, ADJ, ADV."""

    id: str
    context_id: str
    context: str
    target: str
    offset: int
    pos: str
    substitutes: tuple[JudgedSubstitute, ...]
    coinco_ids: tuple[str, ...] = ()

    @property
    def wordnet_pos(self) -> str:
        return WORDNET_POS.get(self.pos, "n")

    def in_sentence(self, max_words: int = 80) -> tuple[Text, int]:
        """The sentence of the context that holds the target (cut at ., ! or ? followed by
        space; white space runs made one space), as a :class:`~textrobust.text.Text`, and
        the target's word position in it: what a candidate source sees in an audit (one
        sentence, not a paragraph). A sentence over ``max_words`` words is cut to a window
        around the target. A :class:`~textrobust.errors.DataError` when the tokeniser does
        not see the target as one word there."""
        return sentence_around(self.context, self.offset, self.target, max_words=max_words)


def swords_part(context_id: str) -> Part:
    """The part of SWORDS dev a context belongs to: ``held_out`` for a third of the contexts
    (the first byte of the SHA-256 of the context id below 86), ``tune`` for the rest. The
    held-out part is for reporting only: never tuned on."""
    return "held_out" if hashlib.sha256(context_id.encode("utf-8")).digest()[0] < 86 else "tune"


def _field(record: Mapping[str, Any], name: str, kind: type, where: str) -> Any:
    if not isinstance(record, Mapping) or name not in record:
        raise DataError(f"{where} lacks the field {name!r}.")
    value = record[name]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise DataError(f"{where}: the field {name!r} must be a {kind.__name__}; got {type(value).__name__}.")
    return value


def load_swords(path: str | Path) -> list[SwordsTarget]:
    """The targets of a SWORDS JSON file (``.json`` or ``.json.gz``: keys ``contexts``,
    ``targets``, ``substitutes``, ``substitute_labels``), in the file's order. A malformed
    file is a :class:`~textrobust.errors.DataError` naming the record and the field."""
    path = Path(path)
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise DataError(f"No SWORDS file at {path}.") from None
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path} is not a SWORDS JSON file (gzip or plain): {exc}.") from None
    where = f"SWORDS file {path}"
    if not isinstance(data, dict):
        raise DataError(f"{where}: the top level must be an object with 'contexts', 'targets', 'substitutes' "
                        "and 'substitute_labels'.")
    contexts = _field(data, "contexts", dict, where)
    targets = _field(data, "targets", dict, where)
    substitutes = _field(data, "substitutes", dict, where)
    labels = _field(data, "substitute_labels", dict, where)
    judged: dict[str, list[JudgedSubstitute]] = {tid: [] for tid in targets}
    for sid, sub in substitutes.items():
        at = f"{where}, substitute {sid!r}"
        tid = _field(sub, "target_id", str, at)
        word = _field(sub, "substitute", str, at)
        if tid not in judged:
            raise DataError(f"{at}: its 'target_id' {tid!r} is not a target of the file.")
        if sid not in labels:
            raise DataError(f"{at} has no entry in 'substitute_labels'.")
        votes = labels[sid]
        if not isinstance(votes, list):
            raise DataError(f"{at}: its 'substitute_labels' entry must be a list of TRUE / FALSE / UNSURE.")
        bad = [v for v in votes if v not in _LABELS]
        if bad:
            raise DataError(f"{at}: the label {bad[0]!r} in 'substitute_labels' is not TRUE, FALSE or UNSURE.")
        extra = sub.get("extra")
        sources = (extra.get("sources") or ()) if isinstance(extra, dict) else ()
        judged[tid].append(JudgedSubstitute(
            word, sum(_LABELS[v] is True for v in votes), sum(_LABELS[v] is False for v in votes),
            tuple(str(s) for s in sources)))
    out = []
    for tid, target in targets.items():
        at = f"{where}, target {tid!r}"
        cid = _field(target, "context_id", str, at)
        if cid not in contexts:
            raise DataError(f"{at}: its 'context_id' {cid!r} is not a context of the file.")
        context = _field(contexts[cid], "context", str, f"{where}, context {cid!r}")
        word = _field(target, "target", str, at)
        offset = _field(target, "offset", int, at)
        pos = _field(target, "pos", str, at)
        if pos not in WORDNET_POS:
            raise DataError(f"{at}: the field 'pos' must be one of {', '.join(WORDNET_POS)}; got {pos!r}.")
        if context[offset:offset + len(word)] != word:
            raise DataError(f"{at}: the field 'offset' ({offset}) does not point at the target {word!r} in its "
                            f"context (found {context[offset:offset + len(word)]!r}).")
        extra = contexts[cid].get("extra")
        coinco = tuple(str(i) for i in extra.get("coinco_ids") or ()) if isinstance(extra, dict) else ()
        out.append(SwordsTarget(tid, cid, context, word, offset, pos, tuple(judged[tid]), coinco))
    return out


_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+")


def sentence_around(context: str, offset: int, word: str, *, max_words: int = 80) -> tuple[Text, int]:
    """``context``'s sentence around the ``word`` at character ``offset`` (see
    :meth:`SwordsTarget.in_sentence`)."""
    start, end = 0, len(context)
    for match in _BOUNDARY.finditer(context):
        if match.end() <= offset:
            start = match.end()
        elif match.start() >= offset + len(word):
            end = match.start()
            break
    piece = context[start:end]
    local = offset - start
    squeezed = re.sub(r"\s+", " ", piece)
    at = len(re.sub(r"\s+", " ", piece[:local]))
    lead = len(squeezed) - len(squeezed.lstrip())
    squeezed, at = squeezed.strip(), at - lead
    text = Text.from_string(squeezed)
    spans = text.word_spans()
    position = next((i for i, (_, a, b) in enumerate(spans) if a == at and b == at + len(word)), None)
    if position is None:
        raise DataError(f"The target {word!r} at offset {offset} is not one word of its sentence {squeezed!r}.")
    if len(text) > max_words:
        lo = max(0, min(position - max_words // 2, len(text) - max_words))
        first, last = spans[lo][1], spans[min(len(text), lo + max_words) - 1][2]
        text = Text.from_string(squeezed[first:last])
        position -= lo
    return text, position


# ---- scoring ---------------------------------------------------------------------------------

Lemmatizer = Callable[[str, str], str]


def wordnet_lemmatizer(reader: Any | None = None) -> Lemmatizer:
    """WordNet's lemmatiser as SWORDS uses it (NLTK's ``WordNetLemmatizer``: the shortest
    of morphy's lemmas under the WordNet part of speech, else the word), lower-cased, over
    the project's WordNet (:func:`textrobust.assets.loaders.wordnet`)."""
    if reader is None:
        from textrobust.assets.loaders import wordnet

        reader = wordnet()
    memo: dict[tuple[str, str], str] = {}

    def lemma(word: str, pos: str) -> str:
        key = (word, pos)
        found = memo.get(key)
        if found is None:
            lemmas = reader._morphy(word.lower(), pos)
            found = (min(lemmas, key=len) if lemmas else word).lower().strip()
            memo[key] = found
        return found

    return lemma


@dataclass(frozen=True)
class _Reference:
    """One target's judged substitutes by lemma (readers' votes pooled)."""

    votes: dict[str, tuple[int, int]]

    def judged(self, lemma: str) -> bool:
        yes, no = self.votes.get(lemma, (0, 0))
        return yes + no > 0

    def ratio(self, lemma: str) -> float:
        yes, no = self.votes.get(lemma, (0, 0))
        return yes / (yes + no) if yes + no else 0.0

    def acceptable(self, lemma: str) -> bool:
        return self.judged(lemma) and self.ratio(lemma) > ACCEPTABLE

    def conceivable(self, lemma: str) -> bool:
        return self.judged(lemma) and self.ratio(lemma) >= CONCEIVABLE

    def all(self, kind: str) -> set[str]:
        check = self.acceptable if kind == "acceptable" else self.conceivable
        return {lemma for lemma in self.votes if check(lemma)}


def _reference(target: SwordsTarget, lemma: Lemmatizer) -> _Reference:
    own = lemma(target.target, target.wordnet_pos)
    votes: dict[str, tuple[int, int]] = {}
    for sub in target.substitutes:
        key = lemma(sub.substitute, target.wordnet_pos)
        if key == own:
            continue
        yes, no = votes.get(key, (0, 0))
        votes[key] = (yes + sub.yes, no + sub.no)
    return _Reference(votes)


def _proposals(target: SwordsTarget, proposed: Iterable[str], lemma: Lemmatizer) -> list[str]:
    """Proposals as lemmas, first occurrence kept, the target's own lemma dropped."""
    own = lemma(target.target, target.wordnet_pos)
    out: list[str] = []
    seen = {own}
    for word in proposed:
        key = lemma(word, target.wordnet_pos)
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


@dataclass(frozen=True)
class SwordsScore:
    """A source's figures on a set of SWORDS targets (see the module docstring)."""

    targets: int
    proposals: int
    judged: int
    acceptable_proposed: int
    conceivable_proposed: int
    acceptable_total: int
    reachable: int
    first_judged: int
    first_acceptable: int
    f10: Mapping[str, float] = field(default_factory=dict)

    @property
    def per_target(self) -> float:
        return self.proposals / self.targets if self.targets else math.nan

    @property
    def lenient_precision(self) -> float:
        return self.acceptable_proposed / self.judged if self.judged else math.nan

    @property
    def strict_precision(self) -> float:
        return self.acceptable_proposed / self.proposals if self.proposals else math.nan

    @property
    def conceivable_share(self) -> float:
        return self.conceivable_proposed / self.judged if self.judged else math.nan

    @property
    def recall(self) -> float:
        return self.acceptable_proposed / self.acceptable_total if self.acceptable_total else math.nan

    @property
    def first_proposal_acceptable(self) -> float:
        return self.first_acceptable / self.first_judged if self.first_judged else math.nan

    def as_dict(self) -> dict[str, Any]:
        return {"targets": self.targets, "proposals": self.proposals, "judged": self.judged,
                "per_target": self.per_target, "lenient_precision": self.lenient_precision,
                "strict_precision": self.strict_precision, "conceivable": self.conceivable_share,
                "recall": self.recall, "acceptable_proposed": self.acceptable_proposed,
                "acceptable_total": self.acceptable_total, "reachable": self.reachable,
                "first_proposal_acceptable": self.first_proposal_acceptable, "first_judged": self.first_judged,
                **{f"f10_{k}": v for k, v in self.f10.items()}}


def _f(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def score(targets: Sequence[SwordsTarget], proposals: Mapping[str, Sequence[str]], *,
          lemmatizer: Lemmatizer | None = None, k: int = 10) -> SwordsScore:
    """Score ``proposals`` (target id -> substitutes, best first; a target without an entry
    proposed nothing) on ``targets`` as the SWORDS scorer does (module docstring)."""
    lemma = lemmatizer if lemmatizer is not None else wordnet_lemmatizer()
    n_proposed = judged = acc = conc = acc_total = reachable = first_judged = first_acc = 0
    # F@k counters per (mode, kind): hits, returned, reference
    counts = {(m, c): [0, 0, 0] for m in ("lenient", "strict") for c in ("acceptable", "conceivable")}
    for target in targets:
        ref = _reference(target, lemma)
        mine = _proposals(target, proposals.get(target.id, ()), lemma)
        n_proposed += len(mine)
        seen = [p for p in mine if ref.judged(p)]
        judged += len(seen)
        acc += sum(ref.acceptable(p) for p in mine)
        conc += sum(ref.conceivable(p) for p in seen)
        acceptable = ref.all("acceptable")
        acc_total += len(acceptable)
        reachable += sum(" " not in a for a in acceptable)
        if seen:
            first_judged += 1
            first_acc += ref.acceptable(seen[0])
        for (mode, kind), row in counts.items():
            reference = ref.all(kind)
            top = (seen if mode == "lenient" else mine)[:k]
            row[0] += sum(p in reference for p in top)
            row[1] += len(top)
            row[2] += min(len(reference), k)
    f10 = {}
    for (mode, kind), (hits, returned, reference_n) in counts.items():
        p = hits / returned if returned else 0.0
        r = hits / reference_n if reference_n else 0.0
        f10[f"{mode}_{kind}"] = _f(p, r)
    return SwordsScore(len(targets), n_proposed, judged, acc, conc, acc_total, reachable, first_judged, first_acc,
                       f10)

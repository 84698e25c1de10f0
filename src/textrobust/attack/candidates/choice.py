"""Which substitutes an analysis counts: the validated source (the default) or the paper's.

Every analysis of textrobust measures robustness to meaning-preserving substitutions, so
each one that substitutes synonyms (the first-order attack, TEF, the radius and PR
perturbation space, MSR's MCTS, the second-order patch pairs) takes the same setting,
``candidates``: ``"validated"`` (since issue 46 :class:`~textrobust.attack.candidates.people.
PeopleSubstitutes`: broad proposals judged in context by a model learned from people's
judgements, measured on held-out SWORDS) or ``"paper"`` (the paper's own source, as
published, so its numbers stay reproducible). Issue 39's source, judged by a model trained
on the labelled set, stays registered as ``validated_labelled``. The validated source runs
a masked LM per sentence, so one instance per settings and placement is shared in a
process (:func:`shared_validated`): its models load once, on the run's device and float
type, and its verdicts are cached per sentence and position, which an audit running
several analyses over the same sentences reuses.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from textrobust.attack.candidates.people import PeopleSubstitutes
from textrobust.attack.candidates.validated import MEASURED, ValidatedSynonyms
from textrobust.attack.problem import CandidateSource, Substitution
from textrobust.devices import Placement
from textrobust.errors import ConfigError
from textrobust.text import Text
from textrobust.validity.overrides import UserLabels

__all__ = [
    "ACCEPT_VALIDITY_HELP",
    "CANDIDATES_HELP",
    "MIN_VALIDITY_HELP",
    "CandidateChoice",
    "ContentPositions",
    "TopCandidates",
    "check_choice",
    "choice_note",
    "coverage",
    "per_word_note",
    "shared_labelled",
    "shared_validated",
    "tried",
    "validated_settings",
    "validated_source",
]

#: The ``candidates`` setting of every analysis that substitutes synonyms.
CandidateChoice = Literal["validated", "paper"]

#: Its help text (the settings' field description and the CLI option's help).
CANDIDATES_HELP = ("where substitutes come from: validated (substitutes judged in context by a model learned from "
                   "people's judgements, the default; measured on held-out SWORDS, benchmarks/results/validity.md) "
                   "or paper (the paper's own source, as published, to reproduce its numbers)")

#: The ``min_validity`` setting's help (issue 47).
MIN_VALIDITY_HELP = ("try substitutes down to this probability that people accept them (the validated source's "
                     "calibrated judge; its min_probability); None: the source's own default. Lower finds more "
                     "flips, each weighted by its probability")
#: The ``accept_validity`` setting's help (issue 47).
ACCEPT_VALIDITY_HELP = ("a flip whose probability of keeping the meaning is below this does not end the search: it "
                        "keeps looking within the query budget for a more probably valid one (banning the least "
                        "valid swap each time) and keeps the best; None: the first flip ends it (the attack's default: 0.15, "
                        "on the scale of the combination measured on readers' findings, textrobust.validity.combination)")


def validated_settings(min_validity: float | None) -> dict[str, Any]:
    """The validated source's settings for ``min_validity``: none for None, else its
    ``min_probability`` (the source learned from people gives calibrated probabilities)."""
    if min_validity is None:
        return {}
    return {"min_probability": float(min_validity)}


_SHARED: dict[tuple[str, Placement, tuple[tuple[str, Any], ...]], Any] = {}


def check_choice(value: str, subject: str = "The '--candidates' option") -> str:
    """``value`` when it names a choice, else a :class:`~textrobust.errors.ConfigError`
    whose message starts with ``subject``."""
    if value not in ("validated", "paper"):
        raise ConfigError(f"{subject} must be 'validated' or 'paper'. Got {value!r} instead.")
    return value


def _shared(kind: type, placement: Placement | None, settings: dict[str, Any]) -> Any:
    key = (kind.__name__, placement or Placement(), tuple(sorted(settings.items())))
    try:
        source = _SHARED.get(key)
    except TypeError:  # an unhashable setting: a source of its own
        return kind(placement=placement, **settings)
    if source is None:
        source = _SHARED[key] = kind(placement=placement, **settings)
    return source


def shared_validated(*, placement: Placement | None = None, **settings: Any) -> PeopleSubstitutes:
    """The process's validated source for ``settings`` and ``placement`` (where its models
    load: the run's ``--device`` and ``--dtype``; None: the CPU in float32, the same source
    as ``Placement()``), created on first call; models load on first use. Since issue 46 it
    is :class:`~textrobust.attack.candidates.people.PeopleSubstitutes`: broad proposals
    judged by a model learned from people's judgements (SWORDS, CoInCo). The candidate
    source registered as ``validated``."""
    return _shared(PeopleSubstitutes, placement, settings)


def shared_labelled(*, placement: Placement | None = None, **settings: Any) -> ValidatedSynonyms:
    """The process's :class:`ValidatedSynonyms` (issue 39's source, its judge trained on the
    labelled set read by reader agents) for ``settings`` and ``placement``: the validated
    source before issue 46, kept for comparison (registered as ``validated_labelled``)."""
    return _shared(ValidatedSynonyms, placement, settings)


@runtime_checkable
class _EvidenceSource(CandidateSource, Protocol):
    """A candidate source that explains its verdicts (as :class:`ValidatedSynonyms`)."""

    def evidence(self, text: Text, position: int, substitute: str | None = None) -> Any: ...


def _evidence_source(source: CandidateSource) -> _EvidenceSource:
    """``source``, which a wrapper's ``evidence`` needs to have ``evidence`` itself."""
    if not isinstance(source, _EvidenceSource):
        raise AttributeError(f"{source!r} has no 'evidence'.")
    return source


class TopCandidates:
    """At most ``k`` of ``source``'s candidates per position (best first)."""

    def __init__(self, source: CandidateSource, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"The 'k' parameter of TopCandidates must be an int >= 1. Got {k!r} instead.")
        self.source = source
        self.k = k

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        return {p: subs[: self.k] for p, subs in self.source.candidates(text, positions).items()}

    def evidence(self, text: Text, position: int, substitute: str | None = None) -> Any:
        return _evidence_source(self.source).evidence(text, position, substitute)

    def __repr__(self) -> str:
        return f"TopCandidates({self.source!r}, k={self.k})"


class ContentPositions:
    """``source``'s candidates at positions whose word is not in ``stop_words`` (lower
    case); stop words get none, as in the engine's recipes."""

    def __init__(self, source: CandidateSource, stop_words: Collection[str]) -> None:
        self.source = source
        self.stop_words = frozenset(w.lower() for w in stop_words)

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        words = text.words
        kept = [p for p in positions if words[p].lower() not in self.stop_words]
        return self.source.candidates(text, kept) if kept else {}

    def evidence(self, text: Text, position: int, substitute: str | None = None) -> Any:
        return _evidence_source(self.source).evidence(text, position, substitute)

    def __repr__(self) -> str:
        return f"ContentPositions({self.source!r}, {len(self.stop_words)} stop words)"


def validated_source(k: int | None = None, *, skip_stop_words: bool = False,
                     placement: Placement | None = None, user_labels: UserLabels | None = None,
                     min_validity: float | None = None) -> CandidateSource:
    """The shared validated source with default settings, its models on ``placement``
    (None: the CPU in float32), at most ``k`` candidates per position (None: its own
    ``max_candidates``), stop words skipped when asked, a user's ``user_labels``
    (``--labelled``) applied when given, substitutes down to ``min_validity``
    (:func:`validated_settings`) when given."""
    labels = {} if user_labels is None else {"user_labels": user_labels}
    source: CandidateSource = shared_validated(placement=placement, **labels, **validated_settings(min_validity))
    if k is not None:
        source = TopCandidates(source, k)
    if skip_stop_words:
        from textrobust.assets import stop_words

        source = ContentPositions(source, stop_words())
    return source


def tried(source: CandidateSource, text: Text) -> tuple[int, int]:
    """(content words of ``text``, substitutes ``source`` proposes for them): a run counts
    these over its own sentences for the coverage line (issue 46 item 6). Content words:
    alphabetic words that are not stop words."""
    from textrobust.assets import stop_words

    stops = {w.lower() for w in stop_words()}
    positions = [i for i, w in enumerate(text.words) if w.isalpha() and w.lower() not in stops]
    if not positions:
        return 0, 0
    found = source.candidates(text, positions)
    return len(positions), sum(len(found.get(p, ())) for p in positions)


def coverage(candidates: str) -> str:
    """What "robust" means in a section's point and on the front page (issues 39, 46): robust
    to the substitutes the validated source tries, which cover the share of the substitutes
    people accept that it found on SWORDS's held-out part (its recall), not to every
    paraphrase. '' for the paper's sources."""
    if candidates != "validated":
        return ""
    from textrobust.validity.people_judge import MEASURED as PEOPLE

    return (f"robust here means robust to the substitutes the validated source tries, which cover about "
            f"{PEOPLE['recall']:.0%} of those people accept (its recall on held-out SWORDS judgements), not to every "
            "paraphrase")


def per_word_note(per_word: float | None) -> str:
    """The substitutes tried per content word in a run's own sentences, as a clause."""
    if per_word is None or math.isnan(per_word):
        return ""
    return f"{per_word:.2f} substitutes tried per content word in these sentences"


def choice_note(candidates: str, paper_source: str) -> str:
    """One sentence for a report section: where its substitutes came from and how often
    such a substitute is acceptable to people (SWORDS) or keeps the meaning (the labelled set)."""
    from textrobust.validity.people_judge import MEASURED as PEOPLE

    if candidates == "paper":
        return (f"Substitutes: the paper's own source ({paper_source}; --candidates paper). Judged by people "
                f"(SWORDS, held-out), the papers' sources propose acceptable substitutes only "
                f"{PEOPLE['paper_precision'].get('embedding', math.nan):.0%} (counter-fitted neighbours) to "
                f"{PEOPLE['paper_precision'].get('wordnet', math.nan):.0%} (WordNet) of the time, so part of what this "
                "section counts as brittleness is the model rightly following a changed meaning.")
    return (f"Substitutes: the validated source (--candidates validated), judged by a model learned from people's "
            f"judgements: on held-out SWORDS targets {PEOPLE['precision']:.1%} of what it proposes is acceptable to "
            f"most people, its first proposal {PEOPLE['first']:.0%} of the time, and it finds {PEOPLE['recall']:.0%} "
            f"of the substitutes people accept ({PEOPLE['per_target']:.2f} per word; "
            "benchmarks/results/validity.md), so a figure here covers those substitutes, not every paraphrase.")

"""The findings a headline figure rests on, and the figures recomputed over what people confirmed.

Issue 40. ``textrobust review`` shows each finding (:func:`findings`) and stores each
judgement (:mod:`textrobust.validity.reviews`); this module turns the judgements into the
*reviewed figures* that the report and ``summary.json`` show beside the automatic ones
(:func:`reviewed_figures`):

- first-order attack: accuracy under attack counting only the flips a person confirmed
  (a rejected flip's example counts as not flipped: no flip that keeps the meaning is known
  for it, though the search, which stops at its first flip, may have missed one), with
  the unreviewed (and disputed) flips as an interval: ``accuracy_under_attack_low``
  when every one of them is valid, ``accuracy_under_attack_high`` (= the confirmed-only
  figure) when none is; the attack success rate likewise;
- second order: the success rate over the confirmed findings (``success_rate``, the low
  end), up to every unreviewed one being real (``success_rate_high``);
- radius: the share of attacked examples falsified at ``r = 1`` by a confirmed adversarial
  example, with the same interval.

Every reviewed block also counts the findings, how many were judged, confirmed, rejected,
disputed, the reviewed share, and the reviewers' agreement. The radius finding of an
example is its smallest known adversarial example (the one its upper bound and
``falsified_r1`` rest on); PR stores no adversarial text, so it has no findings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from textrobust.validity.reviews import Agreement, Finding, ReviewLog, Status, Swap, agreement, statuses
from textrobust.text import Text

__all__ = ["FIGURES", "ReviewState", "RunFindings", "findings", "load_reviews", "reviewed_figures", "reviewed_keys",
           "reviewed_point", "run_findings"]

#: Per analysis with findings: the automatic figures that get a reviewed twin
#: (summary field, label, format).
FIGURES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "attack": (("accuracy_under_attack", "accuracy under attack", "%"),
               ("success_rate", "attack success rate", "%")),
    "second-order": (("success_rate", "second-order success rate", "%"),),
    "radius": (("falsified_r1", "falsified at r = 1 (one word flips it)", "%"),),
}
_COUNTS = ("findings", "judged", "confirmed", "rejected", "disputed", "unreviewed", "reviewed_share",
           "agreement", "agreement_items", "kappa")


def reviewed_keys(analysis: str) -> tuple[str, ...]:
    """The keys of ``analysis``'s reviewed block in ``summary.json`` (``ANALYSIS.reviewed.KEY``
    for ``--require``); none for an analysis without findings."""
    if analysis not in FIGURES:
        return ()
    figures = [f"{name}{end}" for name, _, _ in FIGURES[analysis] for end in ("", "_low", "_high")]
    return (*_COUNTS, *figures)


# ---- findings -------------------------------------------------------------------------------------
def _name(label_names: Sequence[str], index: int | None) -> str:
    if index is None:
        return "n/a"
    return str(label_names[index]) if 0 <= index < len(label_names) else str(index)


def _probabilities(label_names: Sequence[str], values: Sequence[float] | None) -> str:
    if not values:
        return "n/a"
    return ", ".join(f"{_name(label_names, i)} {float(v):.3f}" for i, v in enumerate(values))


def _argmax(values: Sequence[float] | None) -> int | None:
    return None if not values else max(range(len(values)), key=lambda i: values[i])


def _swaps(original: Text, changed: Text, kind: str) -> tuple[Swap, ...]:
    if len(original.words) != len(changed.words):
        return ()
    return tuple(Swap(p, original.words[p], changed.words[p], kind) for p in original.diff(changed))


def findings(analysis: str, run_id: str, records: Sequence[Any], label_names: Sequence[str]) -> list[Finding]:
    """The findings of one stored run of ``analysis`` (its typed records), in record order;
    none for an analysis without findings."""
    build = {"attack": _attack, "second-order": _second_order, "radius": _radius}.get(analysis)
    if build is None:
        return []
    out = []
    for record in records:
        found = build(analysis, run_id, record, label_names)
        if found is not None:
            out.append(found)
    return out


def _attack(analysis: str, run_id: str, record: Any, names: Sequence[str]) -> Finding | None:
    from textrobust.attack.results import Status as AttackStatus

    r = record.result
    if r.status is not AttackStatus.SUCCEEDED or r.perturbed is None:
        return None
    lines = (("label", _name(names, r.label)),
             ("prediction", f"{_name(names, r.original_prediction)} -> {_name(names, r.perturbed_prediction)}"),
             ("probabilities before", _probabilities(names, r.original_probabilities)),
             ("probabilities after", _probabilities(names, r.perturbed_probabilities)),
             *_evidence(r.extras.get("evidence") or []))
    return Finding(f"{analysis}/{r.example_id}", analysis, run_id, r.example_id, "first-order attack", r.original,
                   r.perturbed, _swaps(r.original, r.perturbed, "substitution"), lines)


def _number(value: Any) -> str:
    return "n/a" if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value:.2f}"


def _evidence(rows: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    """The validated source's evidence for each swap of an attack (stored with its result)."""
    return tuple((f"evidence: {e.get('word')} -> {e.get('substitute')}",
                  f"proposed by {'+'.join(e.get('routes') or []) or '-'}, cosine {_number(e.get('cosine'))}, "
                  f"causal LM change {_number(e.get('causal_lm'))}, WordNet sense {e.get('sense_rank')}, "
                  f"verdict {'kept' if e.get('kept') else e.get('reason')}") for e in rows)


def _second_order(analysis: str, run_id: str, record: Any, names: Sequence[str]) -> Finding | None:
    from textrobust.attack.results import Status as AttackStatus

    r = record.result
    if r.status is not AttackStatus.SUCCEEDED or r.patch is None:
        return None
    patched = r.patch.apply(r.vulnerable)
    at = r.patch.position  # the words as they stand in the neighbour (the patch matches their case)
    swaps = (*_swaps(r.original, r.vulnerable, "neighbour"), Swap(at, r.vulnerable.words[at], patched.words[at], "patch"))
    lines = (("label of x0", _name(names, r.label)),
             ("patch", f"{r.patch.source} -> {r.patch.target}"),
             ("x0", _probabilities(names, r.original_probabilities)),
             ("neighbour", _probabilities(names, r.vulnerable_probabilities)),
             ("neighbour with the patch", _probabilities(names, r.vulnerable_patched_probabilities)),
             ("prediction", f"{_name(names, _argmax(r.vulnerable_probabilities))} -> "
                            f"{_name(names, _argmax(r.vulnerable_patched_probabilities))}"))
    return Finding(f"{analysis}/{r.example_id}", analysis, run_id, r.example_id, "second-order finding",
                   r.original, r.vulnerable, swaps, lines, patched)


def _radius(analysis: str, run_id: str, record: Any, names: Sequence[str]) -> Finding | None:
    r = record.result
    if not r.attacked:
        return None
    found: list[tuple[int, str, Text]] = []
    for method, outcome in (r.methods or {}).items():
        if outcome.success and outcome.perturbed is not None:
            found.append((r.text.l0(outcome.perturbed), method, outcome.perturbed))
    for proof in (r.prover.proofs if r.prover is not None else ()):
        if proof.adversarial is not None:
            found.append((r.text.l0(proof.adversarial), "prover", proof.adversarial))
    if not found:
        return None
    l0, method, text = min(found, key=lambda item: (item[0], item[1]))
    lines = (("label", _name(names, r.label)), ("found by", method), ("words changed", str(l0)))
    return Finding(f"{analysis}/{r.example_id}", analysis, run_id, r.example_id, "radius adversarial example",
                   r.text, text, _swaps(r.text, text, "substitution"), lines)


# ---- judgements ----------------------------------------------------------------------------------
class ReviewState:
    """The judgements of some runs read once: each item's status and the agreement."""

    def __init__(self, current: Mapping[tuple[str, str], Any]) -> None:
        self.current = dict(current)
        self.status: dict[str, Status] = statuses(self.current)

    def of(self, item: str) -> Status:
        return self.status.get(item, Status.UNREVIEWED)

    def agreement(self, items: Sequence[str]) -> Agreement:
        return agreement(self.current, items)


def load_reviews(store_path: Path, run_ids: Sequence[str]) -> ReviewState:
    """The judgements stored for ``run_ids`` in the run store at ``store_path`` (none
    when the file is absent)."""
    from textrobust.store import RunStore

    if not Path(store_path).is_file():
        return ReviewState({})
    with RunStore(store_path) as store:
        return ReviewState(ReviewLog(store).current(run_ids))


# ---- the reviewed figures ------------------------------------------------------------------------
def _share(count: int, total: int) -> float:
    return count / total if total else math.nan


def reviewed_figures(analysis: str, summary: Any, found: Sequence[Finding], state: ReviewState) -> dict[str, Any] | None:
    """The reviewed block of one analysis (None for an analysis without findings): the
    counts, the reviewers' agreement, and each figure of :data:`FIGURES` as the
    confirmed-only value with its interval (``_low`` .. ``_high``)."""
    if analysis not in FIGURES:
        return None
    items = [f.item for f in found]
    count = {s: sum(state.of(i) is s for i in items) for s in Status}
    confirmed, rejected = count[Status.CONFIRMED], count[Status.REJECTED]
    open_ = count[Status.DISPUTED] + count[Status.UNREVIEWED]
    judged = confirmed + rejected + count[Status.DISPUTED]
    agreed = state.agreement(items)
    out: dict[str, Any] = {
        "findings": len(items), "judged": judged, "confirmed": confirmed, "rejected": rejected,
        "disputed": count[Status.DISPUTED], "unreviewed": count[Status.UNREVIEWED],
        "reviewed_share": _share(judged, len(items)), "agreement": agreed.share,
        "agreement_items": agreed.items, "kappa": agreed.kappa, "reviewers": list(agreed.reviewers),
    }
    if analysis == "attack":
        n, attacked = summary.examples, summary.succeeded + summary.failed
        robust = summary.failed + rejected  # a rejected flip's example: no flip that keeps the meaning is known
        out.update(_interval("accuracy_under_attack", _share(robust + open_, n), _share(robust, n),
                             _share(robust + open_, n)))
        out.update(_interval("success_rate", _share(confirmed, attacked), _share(confirmed, attacked),
                             _share(confirmed + open_, attacked)))
    elif analysis == "second-order":
        attacked = summary.succeeded + summary.failed
        out.update(_interval("success_rate", _share(confirmed, attacked), _share(confirmed, attacked),
                             _share(confirmed + open_, attacked)))
    else:  # radius: examples falsified at r = 1 by a confirmed example of one word
        one = [f for f in found if len(f.swaps) <= 1]
        sure = sum(state.of(f.item) is Status.CONFIRMED for f in one)
        maybe = sum(state.of(f.item) in (Status.DISPUTED, Status.UNREVIEWED) for f in one)
        out.update(_interval("falsified_r1", _share(sure, summary.attacked), _share(sure, summary.attacked),
                             _share(sure + maybe, summary.attacked)))
    return out


def _interval(name: str, value: float, low: float, high: float) -> dict[str, float]:
    return {name: value, f"{name}_low": low, f"{name}_high": high}


def reviewed_point(sections: Sequence[Mapping[str, Any]]) -> str | None:
    """The verdict's line on how much of it people reviewed (None without findings)."""
    parts = []
    for section in sections:
        block = section.get("reviewed")
        if block and block.get("findings"):
            parts.append(f"{section.get('name')} {block['judged']} of {block['findings']} "
                         f"({block['confirmed']} confirmed, {block['rejected']} rejected"
                         + (f", {block['disputed']} disputed" if block.get("disputed") else "") + ")")
    if not parts:
        return None
    return ("Reviewed by people (textrobust review): " + "; ".join(parts) + ". The reviewed figures beside each "
            "section count only confirmed findings, the unreviewed ones as an interval.")


# ---- a run folder's findings ---------------------------------------------------------------------
class RunFindings:
    """The findings of the latest run of each analysis with findings in a run folder's store,
    with the run ids they belong to, the data's label names and name."""

    def __init__(self, found: Sequence[Finding], run_ids: Sequence[str], label_names: Sequence[str],
                 data_name: str) -> None:
        self.findings = list(found)
        self.run_ids = list(run_ids)
        self.label_names = list(label_names)
        self.data_name = data_name

    def __len__(self) -> int:
        return len(self.findings)


def run_findings(folder: str | Path) -> RunFindings:
    """Read the findings of the run folder ``folder`` (its ``store.sqlite``); a
    :class:`~textrobust.errors.StoreError` when there is no store."""
    from textrobust.analyses import ANALYSES
    from textrobust.analyses.stored import read_records
    from textrobust.errors import StoreError
    from textrobust.store import RunStore

    path = Path(folder) / "store.sqlite"
    if not path.is_file():
        raise StoreError(f"No run store in '{folder}' (expected {path}); give the --out folder of a run.")
    found: list[Finding] = []
    run_ids: list[str] = []
    names: list[str] = []
    data_name = ""
    with RunStore(path) as store:
        for name in FIGURES:
            run = store.latest_run(name)
            if run is None or "settings" not in run.config:
                continue
            config = run.config
            names = list(config.get("label_names") or names)
            data_name = str(config.get("data_name") or data_name)
            records, _ = read_records(ANALYSES.get(name)(config["settings"]), run)
            found += findings(name, run.run_id, records, names)
            run_ids.append(run.run_id)
    return RunFindings(found, run_ids, names, data_name)

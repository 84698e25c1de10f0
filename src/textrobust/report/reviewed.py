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
  example, with the same interval;
- the expected valid success rate (issue 47; attack, radius, PR): each finding counts by its
  probability of keeping the meaning, a confirmed one 1, a rejected one 0, with the 95%
  interval of :mod:`textrobust.validity.estimate` (:func:`reviewed_validity`): its ``_low``
  and ``_high`` are that interval, not the all-valid / none-valid bounds of the counts above;
- PR: the share of scored examples *falsified* (a misclassified text of ``Omega_r`` is
  known) counting only the examples with a confirmed sample (``falsified_share``, the low
  end), up to every example whose kept samples are not all rejected
  (``falsified_share_high``). The rule, and why: the PR analysis keeps the first few
  misclassified texts it drew for each example (``keep``, default 3; Yang et al. 2022,
  equations 6-9, count every one of them as a failure). One of them confirmed (its swaps
  keep the meaning) is a real counter-example, so the example is falsified. An example
  whose every kept sample was rejected has *no confirmed counter-example among those
  kept*, and counts as not falsified here, as a rejected attack flip does; but that does
  not make it robust: the kept samples are a few of its misclassified draws, and any
  other may keep the meaning. ``unsettled`` counts those examples (every kept sample
  rejected, more misclassified draws than kept); ``unstored`` the falsified examples
  with no sample to read (a run written before the samples were kept, or ``keep = 0``),
  which count as open (in the high end). PR_hat itself is not recomputed: a few read
  samples per example cannot re-estimate the share of ``Omega_r`` that keeps both the
  meaning and the label, so mean PR and the share above the threshold stay automatic.

Every reviewed block also counts the findings, how many were judged, confirmed, rejected,
disputed, the reviewed share, and the reviewers' agreement (PR: over the samples, each a
finding). The radius finding of an example is its smallest known adversarial example (the
one its upper bound and ``falsified_r1`` rest on).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from textrobust.validity.reviews import Agreement, Finding, ReviewLog, Status, Swap, agreement, statuses
from textrobust.text import Text

__all__ = ["FIGURES", "ReviewState", "RunFindings", "findings", "load_reviews", "review_rule", "reviewed_figures",
           "reviewed_keys", "reviewed_point", "reviewed_validity", "run_findings", "settle_first"]

#: Per analysis with findings: the automatic figures that get a reviewed twin
#: (summary field, label, format).
FIGURES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "attack": (("accuracy_under_attack", "accuracy under attack", "%"),
               ("success_rate", "attack success rate", "%"),
               ("expected_valid_success_rate", "expected valid success rate", "%")),
    "second-order": (("success_rate", "second-order success rate", "%"),
                     ("expected_valid_success_rate", "expected valid second-order success rate", "%")),
    "radius": (("falsified_r1", "falsified at r = 1 (one word flips it)", "%"),
               ("expected_valid_success_rate", "expected valid success rate at r = 1", "%")),
    # the label is the PR section's headline (textrobust.analyses.radius.analysis.FALSIFIED_LABEL)
    "pr": (("falsified_share", "falsified (a misclassified text found in Omega_r)", "%"),
           ("expected_valid_success_rate", "expected valid share misclassified", "%")),
}
_COUNTS = ("findings", "judged", "confirmed", "rejected", "disputed", "unreviewed", "reviewed_share",
           "agreement", "agreement_items", "kappa")
#: Counts of one analysis's reviewed block beyond :data:`_COUNTS` (PR: by example).
_EXTRA: dict[str, tuple[str, ...]] = {"pr": ("examples_confirmed", "examples_rejected", "unsettled", "unstored")}


def review_rule(analysis: str, block: Mapping[str, Any]) -> str | None:
    """How ``analysis``'s reviewed figure follows the judgements, as the report says it
    beside the rule every section shares (only confirmed findings count); None when that
    rule says it all."""
    if analysis != "pr":
        return None
    return ("PR: each kept misclassified sample is a finding. An example counts as falsified when one of its "
            "samples is confirmed; one whose every kept sample was rejected has no confirmed counter-example "
            "among those kept, which does not make it robust: they are the first few of its misclassified draws "
            f"({block.get('unsettled', 0)} such example(s) had more draws than were kept). Falsified examples "
            f"with no sample kept count as open ({block.get('unstored', 0)}). Mean PR is not recomputed from a "
            "few read samples.")


def reviewed_keys(analysis: str) -> tuple[str, ...]:
    """The keys of ``analysis``'s reviewed block in ``summary.json`` (``ANALYSIS.reviewed.KEY``
    for ``--require``); none for an analysis without findings."""
    if analysis not in FIGURES:
        return ()
    figures = [f"{name}{end}" for name, _, _ in FIGURES[analysis] for end in ("", "_low", "_high")]
    return (*_COUNTS, *_EXTRA.get(analysis, ()), *figures)


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
    build = {"attack": _attack, "second-order": _second_order, "radius": _radius, "pr": _pr}.get(analysis)
    if build is None:
        return []
    out: list[Finding] = []
    for record in records:
        out += build(analysis, run_id, record, label_names)
    return out


def _attack(analysis: str, run_id: str, record: Any, names: Sequence[str]) -> list[Finding]:
    from textrobust.attack.results import Status as AttackStatus

    r = record.result
    if r.status is not AttackStatus.SUCCEEDED or r.perturbed is None:
        return []
    lines = (("label", _name(names, r.label)),
             ("prediction", f"{_name(names, r.original_prediction)} -> {_name(names, r.perturbed_prediction)}"),
             ("probabilities before", _probabilities(names, r.original_probabilities)),
             ("probabilities after", _probabilities(names, r.perturbed_probabilities)),
             _valid_line(r.extras.get("validity")),
             *_evidence(r.extras.get("evidence") or []))
    return [Finding(f"{analysis}/{r.example_id}", analysis, run_id, r.example_id, "first-order attack", r.original,
                    r.perturbed, _swaps(r.original, r.perturbed, "substitution"), lines)]


def _number(value: Any) -> str:
    return "n/a" if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value:.2f}"


def _evidence(rows: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    """The validated source's evidence for each swap of an attack (stored with its result)."""
    return tuple((f"evidence: {e.get('word')} -> {e.get('substitute')}",
                  f"proposed by {'+'.join(e.get('routes') or []) or '-'}, cosine {_number(e.get('cosine'))}, "
                  f"causal LM change {_number(e.get('causal_lm'))}, WordNet sense {e.get('sense_rank')}, "
                  f"verdict {'kept' if e.get('kept') else e.get('reason')}") for e in rows)


def _second_order(analysis: str, run_id: str, record: Any, names: Sequence[str]) -> list[Finding]:
    from textrobust.attack.results import Status as AttackStatus

    r = record.result
    if r.status is not AttackStatus.SUCCEEDED or r.patch is None:
        return []
    patched = r.patch.apply(r.vulnerable)
    at = r.patch.position  # the words as they stand in the neighbour (the patch matches their case)
    swaps = (*_swaps(r.original, r.vulnerable, "neighbour"), Swap(at, r.vulnerable.words[at], patched.words[at], "patch"))
    lines = (("label of x0", _name(names, r.label)),
             ("patch", f"{r.patch.source} -> {r.patch.target}"),
             ("x0", _probabilities(names, r.original_probabilities)),
             ("neighbour", _probabilities(names, r.vulnerable_probabilities)),
             ("neighbour with the patch", _probabilities(names, r.vulnerable_patched_probabilities)),
             ("prediction", f"{_name(names, _argmax(r.vulnerable_probabilities))} -> "
                            f"{_name(names, _argmax(r.vulnerable_patched_probabilities))}"),
             _valid_line(getattr(record, "validity", None)))
    return [Finding(f"{analysis}/{r.example_id}", analysis, run_id, r.example_id, "second-order finding",
                    r.original, r.vulnerable, swaps, lines, patched)]


def _valid_line(validity: Mapping[str, Any] | None) -> tuple[str, str]:
    """The review page's line with a finding's probability of keeping the meaning (issue 47)."""
    from textrobust.analyses.validity_figures import combined_phrase, finding_note

    if not validity or validity.get("probability") is None:
        return ("probability it keeps the meaning", "n/a (not judged: the validated source's judge could not load)")
    return ("probability it keeps the meaning", finding_note(validity).removeprefix("P(valid) ")
            + f" (the judge's calibrated probability; {combined_phrase(validity)})")


def _kept_validity(record: Any, k: int) -> Mapping[str, Any] | None:
    """The probability of the ``k``-th kept PR sample of ``record`` (from 1), or None."""
    kept = getattr(record, "validity", None) or ()
    return kept[k - 1] if k - 1 < len(kept) else None


def _radius(analysis: str, run_id: str, record: Any, names: Sequence[str]) -> list[Finding]:
    from textrobust.analyses.radius.analysis import smallest_adversarial

    r = record.result
    smallest = smallest_adversarial(r)
    if smallest is None:
        return []
    l0, method, text = smallest
    lines = (("label", _name(names, r.label)), ("found by", method), ("words changed", str(l0)),
             _valid_line(getattr(record, "validity", None)))
    return [Finding(f"{analysis}/{r.example_id}", analysis, run_id, r.example_id, "radius adversarial example",
                    r.text, text, _swaps(r.text, text, "substitution"), lines)]


def _pr(analysis: str, run_id: str, record: Any, names: Sequence[str]) -> list[Finding]:
    """The kept misclassified samples of one PR example, one finding each (item
    ``pr/EXAMPLE_ID/K``, K from 1); none for a result stored before they were kept."""
    r = record.result
    e = r.estimate
    if r.skipped or e is None or r.text is None or not e.samples:
        return []
    wrong = e.evaluated - e.robust
    how = "enumerated (Omega_r is small: PR is exact)" if e.exact else "drawn uniformly from Omega_r"
    label = _name(names, r.label)
    before = f"{r.probabilities[r.label]:.3f}" if 0 <= r.label < len(r.probabilities) else "n/a"
    out = []
    for k, sample in enumerate(e.samples, 1):
        probs = sample.probabilities
        after = f"{probs[r.label]:.3f}" if 0 <= r.label < len(probs) else "n/a"
        lines = (("label", label),
                 ("prediction", f"{_name(names, r.predicted)} -> {_name(names, _argmax(probs))}"),
                 (f"probability of the label ({label})", f"{before} -> {after}"),
                 ("probabilities before", _probabilities(names, r.probabilities)),
                 ("probabilities after", _probabilities(names, probs)),
                 ("sample", f"misclassified sample {k} of the {len(e.samples)} kept: text {sample.draw + 1:,} of "
                            f"{e.evaluated:,} {how}, {wrong:,} of them misclassified"),
                 ("PR of the example", f"{e.pr:.3f}" + ("" if e.exact else f" (interval {e.low:.3f} .. {e.high:.3f})")
                  + f", r = {e.radius} word(s)"),
                 _valid_line(_kept_validity(record, k)))
        swaps = tuple(Swap(s.position, s.word, s.substitute, "substitution") for s in sample.swaps)
        out.append(Finding(f"{analysis}/{r.example_id}/{k}", analysis, run_id, r.example_id, "PR misclassified sample",
                           r.text, sample.text(r.text), swaps, lines, among=wrong))
    return out


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


def reviewed_validity(validity: Mapping[str, Any] | None, state: ReviewState) -> tuple[dict[str, Any] | None, Any]:
    """A section's ``validity`` block with each reviewed finding's outcome (confirmed 1,
    rejected 0, disputed and unreviewed open) and the reviewed expected valid rate
    (:class:`~textrobust.validity.estimate.Estimate`, NaN without a block)."""
    from dataclasses import replace as with_outcome

    from textrobust.validity.estimate import Estimate, estimate, units_from_dicts

    if not validity or not validity.get("examples"):
        return None, Estimate(math.nan, math.nan, math.nan)
    outcome = {Status.CONFIRMED: 1.0, Status.REJECTED: 0.0}
    units = [with_outcome(u, outcome=outcome.get(state.of(u.item))) for u in units_from_dicts(validity["units"])]
    block = {**validity, "units": [u.to_dict() for u in units]}
    return block, estimate(units, int(validity["examples"]))


def reviewed_figures(analysis: str, summary: Any, found: Sequence[Finding], state: ReviewState,
                     validity: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The reviewed block of one analysis (None for an analysis without findings): the
    counts, the reviewers' agreement, and each figure of :data:`FIGURES` as the
    confirmed-only value with its interval (``_low`` .. ``_high``); PR's by example
    (:func:`_pr_figures`); the expected valid success rate from the section's ``validity``
    block (:func:`reviewed_validity`; n/a without one)."""
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
    elif analysis == "radius":  # examples falsified at r = 1 by a confirmed example of one word
        one = [f for f in found if len(f.swaps) <= 1]
        sure = sum(state.of(f.item) is Status.CONFIRMED for f in one)
        maybe = sum(state.of(f.item) in (Status.DISPUTED, Status.UNREVIEWED) for f in one)
        out.update(_interval("falsified_r1", _share(sure, summary.attacked), _share(sure, summary.attacked),
                             _share(sure + maybe, summary.attacked)))
    else:
        out.update(_pr_figures(summary, found, state))
    _, expected = reviewed_validity(validity, state)
    out.update(expected.fields("expected_valid_success_rate"))
    return out


def _pr_figures(summary: Any, found: Sequence[Finding], state: ReviewState) -> dict[str, Any]:
    """PR's reviewed figure by example (the rule is the module docstring's): confirmed
    when one kept sample is, open while one is unreviewed or disputed (or none was kept),
    not falsified when every kept sample was rejected."""
    by_example: dict[str, list[Finding]] = {}
    for finding in found:
        by_example.setdefault(finding.example_id, []).append(finding)
    sure = open_ = rejected = unsettled = 0
    for samples in by_example.values():
        said = [state.of(f.item) for f in samples]
        if Status.CONFIRMED in said:
            sure += 1
        elif Status.UNREVIEWED in said or Status.DISPUTED in said:
            open_ += 1
        else:
            rejected += 1
            unsettled += int(samples[0].among > len(samples))  # misclassified draws nobody read
    scored = summary.pr.scored
    unstored = max(summary.pr.falsified - len(by_example), 0)  # falsified, but no sample kept to read
    return {"examples_confirmed": sure, "examples_rejected": rejected, "unsettled": unsettled, "unstored": unstored,
            **_interval("falsified_share", _share(sure, scored), _share(sure, scored),
                        _share(sure + open_ + unstored, scored))}


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
    return RunFindings(settle_first(found, _settle_items(Path(folder))), run_ids, names, data_name)


def _settle_items(folder: Path) -> list[str]:
    """The findings an inconclusive verdict names (``summary.json``'s ``verdict.settle``;
    none when the file or the list is absent)."""
    import json

    try:
        verdict = json.loads((folder / "summary.json").read_text(encoding="utf-8")).get("verdict") or {}
    except (OSError, ValueError, AttributeError):
        return []
    settle = verdict.get("settle") if isinstance(verdict, Mapping) else None
    return [str(item) for item in settle] if isinstance(settle, list) else []


def settle_first(found: Sequence[Finding], settle: Sequence[str]) -> list[Finding]:
    """``found`` with the findings whose review would settle the verdict first, in the
    verdict's order (issue 47), the others after them as they were."""
    rank = {item: i for i, item in enumerate(settle)}
    first = sorted((f for f in found if f.item in rank), key=lambda f: rank[f.item])
    return first + [f for f in found if f.item not in rank]

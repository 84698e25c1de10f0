"""What people found when they read SO-Beam's findings (issue 38), and whether that is
enough for second-order to set an audit's level.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 3.3.3 and Table 4: on 100 successful SO-Beam
attacks, people scored naturalness 3.87 for x0 and 3.63 for the vulnerable examples (a drop
of 0.24) and the synonym patch kept the sentiment of 71% of the vulnerable examples.

The project's own reading (``src/textrobust/resources/second_order/labelled.tsv``, protocol
and figures in ``benchmarks/results/second_order.md``) is recorded here per group of
settings, measured on the test half of the sentence split. Second-order sets the verdict's
level only when the figures of the settings in use meet the targets of issue 48, restated
on the readers' own scale: the neighbours' naturalness at least :data:`TARGET_RATIO` of the
test sentences' (the paper's 3.63 / 3.87, both read by the same readers in the same
session), the patch keeps the sentiment at least :data:`TARGET_KEEPS` of the time, on at
least :data:`MIN_FINDINGS` findings. Settings never read have no evidence and do not set it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MEASURED", "MIN_FINDINGS", "TARGET_DROP", "TARGET_KEEPS", "TARGET_RATIO", "ReaderEvidence", "gate",
           "reader_evidence"]

#: Issue 48's targets: the neighbours' naturalness over the test sentences' (the paper's
#: 3.63 / 3.87 = 0.94), the patch keeps the sentiment (the paper: 71%; the issue asks 85%),
#: on at least this many findings of the settings.
TARGET_RATIO = 0.94
TARGET_KEEPS = 0.85
MIN_FINDINGS = 60
#: Issue 38's target, kept for the record: a drop of at most 0.25 (it compared our readers'
#: scale with the paper's; the ratio above does not).
TARGET_DROP = 0.25


@dataclass(frozen=True)
class ReaderEvidence:
    """People's reading of one group of settings' findings: the mean naturalness drop
    (1-5 scale, x0 minus vulnerable example), the share of vulnerable examples whose
    sentiment the patch kept (both readings positive or both negative, the paper's rule),
    how many findings, where it was measured, and the naturalness ratio (the neighbours'
    mean naturalness over the test sentences', the same readers)."""

    name: str
    # max_k, margin, fluency (None: off), sentences, pos_check, content (content words only),
    # fluent first (pick = "fluent": the most fluent of a step's vulnerable neighbours)
    checks: tuple[int, float, float | None, bool, bool, bool, bool]
    naturalness_drop: float
    patch_keeps: float
    findings: int
    measured: str
    naturalness_ratio: float

    @property
    def meets_targets(self) -> bool:
        return (self.naturalness_ratio >= TARGET_RATIO and self.patch_keeps >= TARGET_KEEPS
                and self.findings >= MIN_FINDINGS)


#: Measured figures per group of checks (SO-Beam, the default fill-in and patch rule), on the
#: test half of labelled.tsv (reader 1; benchmarks/results/second_order.md, issue 38).
MEASURED: tuple[ReaderEvidence, ...] = (
    # the paper's count (k <= 6, no checks): 56 test findings, CNN and MiniLM (rounds 1, 4 and 5)
    ReaderEvidence("baseline", (6, 0.0, None, False, False, False, False), naturalness_drop=2.0,
                   patch_keeps=0.6964, findings=56, measured="test half, 2026-11-28", naturalness_ratio=0.5971),
    # the previous defaults (k <= 3, margin 0.05, fluency 1.0 x x0, fragment and POS checks): 28 test
    # findings, most of them made with an older validated source (round 2)
    ReaderEvidence("tuned", (3, 0.05, 1.0, True, True, False, False), naturalness_drop=1.2857, patch_keeps=0.75,
                   findings=28, measured="test half, 2026-11-28", naturalness_ratio=0.7410),
    # the checks set before any label came back (margin 0.1, fluency 1.5): 4 findings only
    ReaderEvidence("checks_k3_m0.10_f1.5", (3, 0.1, 1.5, True, True, False, False), naturalness_drop=1.0,
                   patch_keeps=0.75, findings=4, measured="test half, 2026-11-28", naturalness_ratio=0.8),
    # the shipped defaults: the previous ones and content words only (rounds 4-7, the default CNN; 25 of
    # the 43 made with today's judge and read in round 6: drop 1.64, keeps 64%)
    ReaderEvidence("content", (3, 0.05, 1.0, True, True, True, False), naturalness_drop=1.4884,
                   patch_keeps=0.6977, findings=43, measured="test half, 2026-11-28", naturalness_ratio=0.6938),
    # issue 48's shipped default (Neighbor_1, fluency floor 0.9 x x0, the most fluent flip): rounds 8-9, 118
    # findings on unseen test sentences, the default CNN 101 and MiniLM 17, Rotten Tomatoes 61 and tweets 57
    ReaderEvidence("neighbor1", (1, 0.05, 0.9, True, True, True, True), naturalness_drop=0.5678,
                   patch_keeps=0.7627, findings=118, measured="test half, 2026-11-28", naturalness_ratio=0.8810),
)



def _checks_of(settings: Mapping[str, Any]) -> tuple[int, float, float | None, bool, bool, bool, bool]:
    from textrobust.analyses.second_order.analysis import DEFAULT_MAX_K

    fluency = settings.get("fluency") or None
    return (int(settings.get("max_k") or DEFAULT_MAX_K["so-beam"]), round(float(settings.get("margin") or 0.0), 4),
            None if fluency is None else round(float(fluency), 4), bool(settings.get("sentences", False)),
            bool(settings.get("pos_check", False)), bool(settings.get("content", False)),
            settings.get("pick", "clearest") == "fluent")


def reader_evidence(settings: Mapping[str, Any]) -> ReaderEvidence | None:
    """The people's reading of findings made with ``settings`` (a second-order section's
    settings), or None when these settings were never read (another method, fill-in or
    patch rule, or other checks)."""
    from textrobust.fill_in.registry import DEFAULT_FILL_IN

    if settings.get("method", "so-beam") != "so-beam" or settings.get("fill_in", DEFAULT_FILL_IN) != DEFAULT_FILL_IN:
        return None
    if settings.get("candidates", "validated") != "validated":
        return None
    key = _checks_of(settings)
    return next((e for e in MEASURED if e.checks == key), None)


def gate(settings: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether second-order findings made with ``settings`` may set the verdict's level,
    and a sentence saying why (for the verdict's points)."""
    found = reader_evidence(settings)
    if found is None:
        return False, ("Second-order does not set the level: findings made with these settings were never checked "
                       "by readers (issue 38's reading covers SO-Beam with the default fill-in and patch rule).")
    figures = (f"read blind by LLM reader agents under the paper's protocol, the vulnerable examples read "
               f"{found.naturalness_ratio:.2f} as natural as the test sentences ({found.naturalness_drop:.2f} points "
               f"lower) and the synonym patch keeps the sentiment of {found.patch_keeps:.0%} "
               f"({found.findings} findings, {found.measured})")
    if found.meets_targets:
        return True, f"Second-order counts toward the level: {figures}."
    return False, (f"Second-order does not set the level: {figures}; it would need a ratio of at least "
                   f"{TARGET_RATIO:.2f} and at least {TARGET_KEEPS:.0%} on at least {MIN_FINDINGS} findings.")

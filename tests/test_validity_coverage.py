"""The audit tells the truth about coverage (issue 39): each section that uses the validated
source says how many substitutes per content word it tried, and its point says "robust to
the N substitutes tried per word" rather than a bare "robust"."""

from __future__ import annotations

from dataclasses import fields

from textrobust.analyses.attack.analysis import AttackSummary, attack_section, candidates_note
from textrobust.analyses.sections import headline, with_substitutes
from textrobust.attack.candidates.choice import choice_note, coverage
from textrobust.attack.candidates.validated import MEASURED
from textrobust.sections import Section

TRIED = f"{MEASURED['per_word']:.2f}"


def test_a_validated_section_says_what_robust_covers_and_a_paper_one_does_not_pretend() -> None:
    section = Section(headline=[headline("certified at r = 1", 0.8, "%")], point="80% certified at r = 1.")
    point = with_substitutes(section, "validated", "WordNet").point or ""
    assert f"robust here means robust to the {TRIED} validated substitutes tried per content word" in point
    assert coverage("paper") == ""
    assert with_substitutes(section, "paper", "WordNet").point == \
        "80% certified at r = 1 (substitutes: the paper's substitutes)."


def test_the_substitutes_headline_and_the_attack_notes_give_the_count_tried() -> None:
    assert f"tries {TRIED} substitutes per content word" in choice_note("validated", "x")
    assert f"{TRIED} tried per content word" in candidates_note("validated", "textfooler")
    summary = AttackSummary(**{f.name: 0 for f in fields(AttackSummary)})
    summary = AttackSummary(**{**{f.name: getattr(summary, f.name) for f in fields(AttackSummary)},
                               "success_rate": 0.1, "succeeded": 1, "failed": 9})
    point = attack_section(summary, [], ["neg", "pos"], "textfooler", "validated").point or ""
    assert f"robust to the {TRIED} validated substitutes tried per content word" in point
    paper = attack_section(summary, [], ["neg", "pos"], "textfooler", "paper").point or ""
    assert "tried per content word" not in paper

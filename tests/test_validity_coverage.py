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


def test_the_front_page_says_what_robust_covers_once_and_each_point_keeps_its_own_figure() -> None:
    from textrobust.audit.verdict import verdict
    from textrobust.report.html import render_html
    from textrobust.report.testing import validate_section

    class _Radius:
        name, title, paper = "radius", "Radius", "Yang et al. 2022"

        class settings:  # noqa: N801 - a stand-in for an analysis's settings
            @staticmethod
            def to_dict() -> dict[str, str]:
                return {"candidates": "validated"}

    summary = AttackSummary(**{f.name: 0 for f in fields(AttackSummary)})
    summary = AttackSummary(**{**{f.name: getattr(summary, f.name) for f in fields(AttackSummary)},
                               "success_rate": 0.1, "succeeded": 1, "failed": 9})
    points = [attack_section(summary, [], ["neg", "pos"], "textfooler", "validated").point,
              with_substitutes(Section(headline=[headline("certified", 0.8, "%")], point="80% certified at r = 1."),
                               "validated", "WordNet").point,
              with_substitutes(Section(headline=[headline("PR", 0.9, "float")], point="Mean PR 0.90."),
                               "validated", "WordNet").point]
    sections = [{"name": name, "risk": risk, "point": point, "settings": {"candidates": "validated"}}
                for name, risk, point in zip(("attack", "radius", "pr"), (0.1, 0.2, 0.1), points)]
    clause = coverage("validated")
    assert all(clause in (p or "") for p in points)  # each section's own point keeps its count
    found = verdict(sections, gates={})
    assert sum(p.count(clause[1:]) for p in found["points"]) == 1  # said once...
    assert found["points"][0] == f"R{clause[1:]}."  # ...as the first point, under the verdict's headline
    assert "80% certified at r = 1 (substitutes: validated synonyms)." in found["points"]
    assert any(p.startswith("textfooler (validated synonyms): 1 of 10") and "labelled set; a low rate" in p
               for p in found["points"])
    report = validate_section(_Radius(), Section(headline=[headline("certified", 0.8, "%")], point=points[1]),
                              units=5)
    report["verdict"] = found
    page = render_html(report)
    front = page[page.index('class="verdict '):]
    front = front[: front.index("</div>")]
    assert front.count(clause[1:]) == 1
    # a verdict with no validated section says nothing about it
    assert not any(clause[1:] in p for p in verdict([{**sections[0], "point": "a"}], gates={})["points"])

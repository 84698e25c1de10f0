"""The audit tells the truth about coverage (issues 39, 46): each section that uses the
validated source says what "robust" covers (the share of the substitutes people accept
that the source finds, its recall on held-out SWORDS), the attack counts the substitutes it
tried per content word in this run's own sentences, and the front page says both once."""

from __future__ import annotations

from dataclasses import fields

from textrobust.analyses.attack.analysis import AttackSummary, attack_section, candidates_note, per_word
from textrobust.analyses.sections import headline, with_substitutes
from textrobust.attack.candidates.choice import choice_note, coverage, per_word_note
from textrobust.attack.results import AttackResult
from textrobust.sections import Section
from textrobust.validity.people_judge import MEASURED as PEOPLE

RECALL = f"{PEOPLE['recall']:.0%}"


def _summary(**values: float) -> AttackSummary:
    summary = AttackSummary(**{f.name: 0 for f in fields(AttackSummary)})
    return AttackSummary(**{**{f.name: getattr(summary, f.name) for f in fields(AttackSummary)},
                            "success_rate": 0.1, "succeeded": 1, "failed": 9, **values})


def test_a_validated_section_says_what_robust_covers_and_a_paper_one_does_not_pretend() -> None:
    section = Section(headline=[headline("certified at r = 1", 0.8, "%")], point="80% certified at r = 1.")
    point = with_substitutes(section, "validated", "WordNet").point or ""
    assert f"which cover about {RECALL} of those people accept" in point
    assert coverage("paper") == ""
    assert with_substitutes(section, "paper", "WordNet").point == \
        "80% certified at r = 1 (substitutes: the paper's substitutes)."


def test_the_notes_give_the_people_figures_and_the_attack_counts_what_it_tried_here() -> None:
    assert f"{PEOPLE['precision']:.1%} of what it proposes is acceptable to most people" in choice_note("validated", "x")
    assert f"finds {RECALL} of the substitutes people accept" in candidates_note("validated", "textfooler")
    point = attack_section(_summary(substitutes_per_word=0.75), [], ["neg", "pos"], "textfooler", "validated").point
    assert "0.75 substitutes tried per content word in these sentences" in (point or "")
    heads = attack_section(_summary(substitutes_per_word=0.75), [], ["neg", "pos"], "textfooler", "validated").headline
    assert any(h.label == "substitutes tried per content word" and h.value == 0.75 for h in heads)
    paper = attack_section(_summary(), [], ["neg", "pos"], "textfooler", "paper").point or ""
    assert "tried per content word" not in paper
    assert per_word_note(float("nan")) == "" and per_word_note(None) == ""


def test_substitutes_per_word_counts_the_run_s_own_sentences() -> None:
    from textrobust.attack.results import Status
    from textrobust.text import Text

    def result(tried: list[int] | None) -> AttackResult:
        text = Text.from_string("a fine film")
        return AttackResult("e", 1, Status.FAILED, text, text, 1, 1, (0.4, 0.6), (0.4, 0.6), 3, 0.1,
                            extras={} if tried is None else {"tried": tried})

    assert per_word([result([4, 2]), result([6, 1]), result(None)]) == 0.3
    assert per_word([result(None)]) != per_word([result(None)])  # NaN: nothing counted


def test_the_front_page_says_what_robust_covers_once_with_this_run_s_count() -> None:
    from textrobust.audit.verdict import verdict
    from textrobust.report.html import render_html
    from textrobust.report.testing import validate_section

    class _Radius:
        name, title, paper = "radius", "Radius", "Yang et al. 2022"

        class settings:  # noqa: N801 - a stand-in for an analysis's settings
            @staticmethod
            def to_dict() -> dict[str, str]:
                return {"candidates": "validated"}

    attack = attack_section(_summary(substitutes_per_word=0.5), [], ["neg", "pos"], "textfooler", "validated")
    points = [attack.point,
              with_substitutes(Section(headline=[headline("certified", 0.8, "%")], point="80% certified at r = 1."),
                               "validated", "WordNet").point,
              with_substitutes(Section(headline=[headline("PR", 0.9, "float")], point="Mean PR 0.90."),
                               "validated", "WordNet").point]
    sections = [{"name": name, "risk": risk, "point": point, "settings": {"candidates": "validated"},
                 "headline": [h.to_dict() for h in heads]}
                for name, risk, point, heads in zip(("attack", "radius", "pr"), (0.1, 0.2, 0.1), points,
                                                    (attack.headline, [], []))]
    clause = coverage("validated")
    assert all(clause in (p or "") for p in points)  # each section's own point keeps it
    found = verdict(sections, gates={})
    assert sum(p.count(clause[1:]) for p in found["points"]) == 1  # said once...
    assert found["points"][0] == f"R{clause[1:]} (0.50 substitutes tried per content word in these sentences)."
    assert "80% certified at r = 1 (substitutes: validated substitutes)." in found["points"]
    assert any(p.startswith("textfooler (validated substitutes): 1 of 10") and "people accept on held-out" in p
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

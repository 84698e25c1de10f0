"""Figures of the labelled second-order findings (issue 38): Table 4 per phase, settings and
half, agreement of the double-read quarter, and the dev-half view of each check (which
findings a check would have kept, and their Table 4).

    python benchmarks/second_order_labels/measure.py            # prints markdown
    python benchmarks/second_order_labels/measure.py --json     # the figures as JSON

Zhang et al., "Double Perturbation", NAACL 2021, Table 4 (naturalness 3.87 -> 3.63; the patch
keeps the sentiment of 85% of x0 and 71% of the vulnerable examples).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from textrobust.validity.second_order import LabelledFinding, cohen_kappa, load_labelled, table4

PAPER = {"naturalness_x0": 3.87, "naturalness_neighbour": 3.63, "naturalness_drop": 0.24, "keeps_x0": 0.85,
         "keeps_neighbour": 0.71}


def _fmt(value: float, percent: bool = False) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    return f"{value:.0%}" if percent else f"{value:.2f}"


def table4_row(name: str, rows: Sequence[LabelledFinding]) -> str:
    t = table4(rows)
    return (f"| {name} | {t.findings} | {_fmt(t.naturalness_x0)} | {_fmt(t.naturalness_neighbour)} | "
            f"{_fmt(t.naturalness_drop)} | {_fmt(t.naturalness_ratio)} | {_fmt(t.keeps_x0, True)} | "
            f"{_fmt(t.keeps_neighbour, True)} | {_fmt(t.patch_ok, True)} |")


HEADER = ("| findings | n | naturalness x0 | naturalness x~0 | drop | ratio x~0 / x0 | patch keeps sentiment, x0 | "
          "patch keeps sentiment, x~0 | patch a synonym here (x~0) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|")


def agreement(found: Sequence[LabelledFinding]) -> dict[str, Any]:
    """Reader 1 against reader 2 on the double-read items."""
    first = {f.item: f for f in found if f.reader == 1}
    pairs = [(first[f.item], f) for f in found if f.reader == 2 and f.item in first]
    out: dict[str, Any] = {"items": len(pairs)}
    scale = [1, 2, 3, 4, 5]
    for name in ("nat_x0", "nat_neighbour"):
        values = [(getattr(a, name), getattr(b, name)) for a, b in pairs]
        out[name] = {"exact": _share([x == y for x, y in values]), "within_1": _share([abs(x - y) <= 1 for x, y in values]),
                     "kappa": cohen_kappa(values), "weighted_kappa": cohen_kappa(values, weights=scale)}
    for name in ("sent_neighbour", "sent_neighbour_patched"):
        values = [(getattr(a, name), getattr(b, name)) for a, b in pairs]
        out[name] = {"exact": _share([x == y for x, y in values]), "kappa": cohen_kappa(values)}
    for name, get in (("keeps_neighbour", lambda f: f.keeps_neighbour), ("patch_ok", lambda f: f.patch_ok)):
        values = [(get(a), get(b)) for a, b in pairs]
        out[name] = {"exact": _share([x == y for x, y in values]), "kappa": cohen_kappa(values)}
    return out


def _share(values: Sequence[bool]) -> float:
    return sum(values) / len(values) if values else math.nan


def check_views(found: Sequence[LabelledFinding]) -> list[tuple[str, Callable[[LabelledFinding], bool]]]:
    """Post-hoc versions of the checks, applied to a finding's texts and probabilities."""
    from textrobust.analyses.attribution.grammar import LinkGrammarErrors
    from textrobust.analyses.second_order.checks import is_fragment_edit, touches_stop_word
    from textrobust.assets import stop_words
    from textrobust.attack.candidates.tagging import SpacyTagger
    from textrobust.text import Text

    stops = frozenset(w.lower() for w in stop_words())
    tagger = SpacyTagger()

    def fragments(f: LabelledFinding) -> bool:
        x0, nb = Text.from_string(f.x0), Text.from_string(f.neighbour)
        if len(x0) != len(nb):
            return False
        state = list(x0.words)
        for p in x0.diff(nb):
            state[p] = nb.words[p]
        return not any(is_fragment_edit(state, p, nb.words[p], stops) or
                       is_fragment_edit(list(x0.words), p, nb.words[p], stops) for p in x0.diff(nb))

    def content(f: LabelledFinding) -> bool:
        x0, nb = Text.from_string(f.x0), Text.from_string(f.neighbour)
        return len(x0) == len(nb) and not any(touches_stop_word(list(x0.words), p, nb.words[p], stops)
                                              for p in x0.diff(nb))

    grammar = LinkGrammarErrors()

    def link_grammar(f: LabelledFinding) -> bool:
        """x~0 leaves no more words unlinked (CMU Link Grammar's null count) than x0."""
        before, after = grammar.errors([f.x0, f.neighbour])
        return bool(after <= before)

    def pos(f: LabelledFinding) -> bool:
        x0, nb = Text.from_string(f.x0), Text.from_string(f.neighbour)
        patched = Text.from_string(f.neighbour_patched.replace("[[", "").replace("]]", ""))
        if not len(x0) == len(nb) == len(patched):
            return False
        a, b, c = tagger(x0), tagger(nb), tagger(patched)
        return all(a[p].pos == b[p].pos for p in x0.diff(nb)) and b[f.patch_position].pos == c[f.patch_position].pos

    def ratio(f: LabelledFinding) -> float:
        return f.ppl_neighbour / f.ppl_x0 if f.ppl_x0 and not math.isnan(f.ppl_neighbour) else math.inf

    views: list[tuple[str, Callable[[LabelledFinding], bool]]] = [("all (margin 0, no checks)", lambda f: True)]
    for m in (0.05, 0.1, 0.15):
        views.append((f"margin {m}", lambda f, m=m: f.margin >= m))
    for r in (1.25, 1.5, 2.0):
        views.append((f"fluency <= {r} x x0", lambda f, r=r: ratio(f) <= r))
    views.append(("no fragments", fragments))
    views.append(("POS in context", pos))
    views.append(("content words only", content))
    views.append(("link-grammar null count <= x0's", link_grammar))
    for r in (1.25, 1.5):
        for m in (0.05, 0.1):
            views.append((f"all four: fluency {r}, margin {m}",
                          lambda f, r=r, m=m: ratio(f) <= r and f.margin >= m and fragments(f) and pos(f)))
    return views


def speed(paths: Sequence[str]) -> None:
    """Seconds per attacked sentence (skipped ones left out) of generation runs, with the
    load average each record saw (1-minute figure)."""
    import statistics

    print("| run | sentences attacked | success | median s | mean s | max s | load average (1 min) median |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for path in paths:
        recs = [json.loads(line) for line in open(path) if line.strip()]
        attacked = [r for r in recs if r["status"] != "skipped"]
        if not attacked:
            continue
        secs = [r["seconds"] for r in attacked]
        loads = [r["load_average"][0] for r in attacked if r.get("load_average")]
        ok = sum(r["status"] == "succeeded" for r in attacked)
        print(f"| {attacked[0]['victim']}, {attacked[0]['settings']} | {len(attacked)} | {ok / len(attacked):.0%} | "
              f"{statistics.median(secs):.1f} | {statistics.mean(secs):.1f} | {max(secs):.1f} | "
              f"{statistics.median(loads) if loads else 'n/a'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--path")
    parser.add_argument("--speed", nargs="+", help="findings JSONL files: a speed table instead")
    parser.add_argument("--since-phase", type=int, default=0, help="also the agreement of the phases from this one")
    args = parser.parse_args()
    if args.speed:
        speed(args.speed)
        return
    found = load_labelled(args.path)
    groups: dict[tuple[int, str, str], list[LabelledFinding]] = {}
    for f in found:
        groups.setdefault((f.phase, f.settings, f.half), []).append(f)
    if args.json:
        print(json.dumps({f"{k[0]}/{k[1]}/{k[2]}": {**table4(v).__dict__, "naturalness_ratio": table4(v).naturalness_ratio}
                          for k, v in sorted(groups.items())}
                         | {"agreement": agreement(found)}, indent=1, default=str))
        return
    print("| findings | n | naturalness x0 | naturalness x~0 | drop | ratio | keeps, x0 | keeps, x~0 | patch ok |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| paper (Table 4, 100 SO-Beam successes) | 100 | 3.87 | 3.63 | 0.24 | 0.94 | 85% | 71% | n/a |")
    for (phase, settings, half), rows in sorted(groups.items()):
        print(table4_row(f"phase {phase}, {settings}, {half}", rows))
        for victim in sorted({f.victim for f in rows}):
            print(table4_row(f"  ... {victim}", [f for f in rows if f.victim == victim]))
        for corpus in sorted({f.corpus for f in rows}):
            print(table4_row(f"  ... {corpus}", [f for f in rows if f.corpus == corpus]))
    print()
    print("Agreement (double-read items):", json.dumps(agreement(found), default=lambda x: round(x, 3)))
    if args.since_phase:
        recent = [f for f in found if f.phase >= args.since_phase]
        print(f"Agreement, phases >= {args.since_phase}:", json.dumps(agreement(recent), default=lambda x: round(x, 3)))
    print()
    for half, use in (("dev", "for choosing"), ("test", "reported, not for choosing")):
        rows = [f for f in found if f.settings == "baseline" and f.half == half and f.reader == 1]
        print(f"{half.capitalize()} half, the paper's-count (baseline) findings of every phase, what each check "
              f"keeps post hoc ({len(rows)} findings; {use}):")
        print("| check | n | naturalness x0 | naturalness x~0 | drop | ratio | keeps, x0 | keeps, x~0 | patch ok |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, keep in check_views(rows):
            print(table4_row(name, [f for f in rows if keep(f)]))
        print()


if __name__ == "__main__":
    main()

"""SO-Beam findings for people to read (issue 38): the sentence split, the runs, the blinded
chunks, the merge of the readers' labels.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 3.3.3 and A.2: 100 successful SO-Beam attacks
read by people, naturalness 1-5 of x0 and of the vulnerable example, and whether the synonym
patch keeps the sentiment a reader gives (Table 4).

    python benchmarks/second_order_labels/generate.py split              # sentences.tsv (dev/test by sentence)
    python benchmarks/second_order_labels/generate.py extend --n 120 --round 1   # append more (a pool spent)
    python benchmarks/second_order_labels/generate.py run --victim V --victim-name cnn --half dev --phase 1 \
        --settings baseline --out /work/labelwork/so/findings_p1_cnn.jsonl
    python benchmarks/second_order_labels/generate.py floor --fluency 0.9 --name neighbor1 --other neighbor1_f1.0 \
        --out FLOORED FINDINGS...                                          # a stricter floor, post hoc (exact)
    python benchmarks/second_order_labels/generate.py chunks --phase 1 FINDINGS...   # blinded chunks + key
    python benchmarks/second_order_labels/generate.py merge               # labels_*.tsv -> labelled.tsv

The runs append one JSON line per sentence (resumable: sentences already in the file are
skipped), successes and failures alike, with every probability, the victim, the corpus and
the settings; only the chunks (what readers see) are blinded.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import random
import re
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SENTENCES = HERE / "sentences.tsv"
WORK = Path(os.environ.get("SO_LABELWORK", "/work/labelwork/so"))
#: sentences drawn per corpus, and the seed of the draw
PER_CORPUS = {"rotten_tomatoes": 240, "tweets": 120}
SEED = 38
_TWEET_STRIP = re.compile(r"https?://\S+|www\.\S+|\bRT\b:?|@\w+:?|&amp;?")


def clean_tweet(text: str) -> str:
    """A tweet without links, handles, "RT" and "#" marks (the hashtag's word is kept)."""
    return " ".join(_TWEET_STRIP.sub(" ", text).replace("#", "").split()).strip(" :-")


def _half(text: str) -> str:
    """dev or test, from a hash of the sentence (fixed before anything is tuned)."""
    digest = hashlib.sha256(f"issue38|{text}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "test"


def make_split(args: argparse.Namespace) -> None:
    """Draw the sentences (Rotten Tomatoes test split; tweets test split, clean non-neutral
    ones of 8-35 words) and write them with their half to ``sentences.tsv``."""
    rows = []
    for corpus, n in PER_CORPUS.items():
        pool = _pool(corpus)
        rng = random.Random(SEED)
        picked = rng.sample(pool, min(n, len(pool)))
        print(corpus, "pool", len(pool))
        for order, (e, text) in enumerate(picked):
            rows.append({"corpus": corpus, "example_id": e.id, "half": _half(text), "order": order,
                         "label": e.label, "text": text})
    with SENTENCES.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    for corpus in PER_CORPUS:
        mine = [r for r in rows if r["corpus"] == corpus]
        print(corpus, len(mine), "dev", sum(r["half"] == "dev" for r in mine))


def _pool(corpus: str) -> list[tuple[Any, str]]:
    """The test-split examples of ``corpus`` that may be drawn, with their (cleaned) text."""
    from textrobust.data import load_dataset

    pool = []
    for e in load_dataset(corpus, split="test").examples:
        text = clean_tweet(str(e.text)) if corpus == "tweets" else str(e.text)
        words = len(text.split())
        if corpus == "tweets" and (e.label == 1 or not 8 <= words <= 35 or not text.isascii()
                                   or text.endswith("...")):
            continue
        if corpus == "rotten_tomatoes" and not 4 <= words <= 40:
            continue
        pool.append((e, text))
    return pool


def extend_split(args: argparse.Namespace) -> None:
    """Append ``--n`` more sentences per corpus to ``sentences.tsv`` (a half's pool is spent):
    drawn from the same pool without the sentences already there, with a seed of their own
    (``--round``); the existing rows and the hash rule that assigns the halves stay."""
    existing = load_sentences()
    have = {(r["corpus"], r["example_id"]) for r in existing}
    rows = []
    for corpus in PER_CORPUS:
        pool = [(e, text) for e, text in _pool(corpus) if (corpus, e.id) not in have]
        rng = random.Random(f"{SEED}-extend-{args.round}")
        first = 1 + max(int(r["order"]) for r in existing if r["corpus"] == corpus)
        for order, (e, text) in enumerate(rng.sample(pool, min(args.n, len(pool))), first):
            rows.append({"corpus": corpus, "example_id": e.id, "half": _half(text), "order": order,
                         "label": e.label, "text": text})
    with SENTENCES.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(existing[0]), delimiter="\t", lineterminator="\n")
        writer.writerows(rows)
    for corpus in PER_CORPUS:
        mine = [r for r in rows if r["corpus"] == corpus]
        print(corpus, "appended", len(mine), "dev", sum(r["half"] == "dev" for r in mine))


def load_sentences() -> list[dict[str, str]]:
    with SENTENCES.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _plan(half: str, limit: int | None, after_row: int = 0) -> list[dict[str, str]]:
    """The sentences of ``half`` in run order: corpora interleaved 2:1 (RT, RT, tweet);
    with ``after_row``, only the rows of ``sentences.tsv`` after that many (those appended by
    a later ``extend``)."""
    rows = [r for r in load_sentences()[after_row:] if half in ("all", r["half"])]
    rt = [r for r in rows if r["corpus"] == "rotten_tomatoes"]
    tw = [r for r in rows if r["corpus"] == "tweets"]
    out: list[dict[str, str]] = []
    while rt or tw:
        out.extend(rt[:2])
        out.extend(tw[:1])
        rt, tw = rt[2:], tw[1:]
    return out[:limit] if limit else out


def run(args: argparse.Namespace) -> None:
    """SO-Beam on the sentences of ``--half`` with ``--settings``; one JSON line each."""
    import torch

    from textrobust.analyses.second_order import Neighbourhood, PatchFinder, SecondOrderAttack
    from textrobust.analyses.second_order.analysis import patch_synonyms, second_order_search
    from textrobust.analyses.second_order.analysis import SecondOrderSettings
    from textrobust.attack.results import Status
    from textrobust.data.examples import Example
    from textrobust.fill_in.neighbourhood import load_fill_in
    from textrobust.lm import CausalLM
    from textrobust.text import Text
    from textrobust.victims.query import QueryLayer
    from textrobust.zoo.io import load_victim

    torch.set_num_threads(args.threads)
    settings = SecondOrderSettings(**json.loads(args.settings_json)) if args.settings_json else SecondOrderSettings()
    out = Path(args.out)
    done = set()
    if out.is_file():
        done = {json.loads(line)["example_id"] for line in out.read_text().splitlines() if line.strip()}
    if args.skip_used:  # sentences any earlier run attacked (so a new round reads new sentences)
        for path in WORK.glob("*.jsonl"):
            if path.resolve() != out.resolve():
                done |= {json.loads(line)["example_id"] for line in path.read_text().splitlines() if line.strip()}
    layer = QueryLayer(load_victim(args.victim))
    neighbourhood = Neighbourhood(load_fill_in(settings.fill_in), kappa=settings.kappa, delta=settings.delta)
    lm = CausalLM.default()
    from textrobust.analyses.second_order.analysis import build_checks

    checks = build_checks(settings, lm.perplexity)
    attack = SecondOrderAttack(layer, neighbourhood, second_order_search(settings, 0),
                               patches=PatchFinder(layer, patch_synonyms(settings.candidates)),
                               budget=settings.budget, min_gap=settings.min_gap, name=settings.method,
                               checks=checks)
    plan = _plan(args.half, None, args.after_row)
    if args.reverse:
        plan = plan[::-1]
    if args.limit:
        plan = plan[:args.limit]
    for row in plan:
        if row["example_id"] in done:
            continue
        example = Example(row["example_id"], Text.from_string(row["text"]), int(row["label"]))
        started = time.perf_counter()
        r = attack.attack(example)
        ppl: list[float] = []
        if r.status is Status.SUCCEEDED:
            ppl = [float(v) for v in lm.perplexity([str(r.original), str(r.vulnerable)])]
        patched_x0 = str(r.patch.apply(r.original)) if r.patch else None
        record: dict[str, Any] = {
            "example_id": row["example_id"], "corpus": row["corpus"], "half": row["half"], "phase": args.phase,
            "victim": args.victim_name, "settings": args.settings, "settings_json": settings.model_dump(mode="json"),
            "status": r.status.value, "x0": str(r.original), "x0_patched": patched_x0,
            "neighbour": str(r.vulnerable), "neighbour_patched": str(r.patch.apply(r.vulnerable)) if r.patch else None,
            "patch": None if r.patch is None else {"position": r.patch.position, "source": r.patch.source,
                                                    "target": r.patch.target, "score": r.patch.score},
            "l0": r.l0, "p_x0": r.original_probabilities, "p_x0_patched": r.original_patched_probabilities,
            "p_neighbour": r.vulnerable_probabilities, "p_neighbour_patched": r.vulnerable_patched_probabilities,
            "queries": r.queries, "seconds": round(time.perf_counter() - started, 2),
            "search_seconds": round(r.seconds, 2), "fill_requests": r.fill_requests,
            "ppl_x0": ppl[0] if ppl else None, "ppl_neighbour": ppl[1] if ppl else None,
            "extras": {k: v for k, v in r.extras.items() if isinstance(v, (int, float, str))},
            "accepted": r.extras.get("accepted", []),
            "load_average": [round(v, 2) for v in os.getloadavg()],
        }
        with out.open("a") as f:
            f.write(json.dumps(record) + "\n")
        print(row["example_id"], r.status.value, record["seconds"], flush=True)


def chosen_ratio(rec: dict[str, Any]) -> float | None:
    """The perplexity ratio to x0 that the checks measured for a success's neighbour (1.0 for
    x0 itself; None when the run kept no record of it)."""
    if rec["l0"] == 0:
        return 1.0
    return next((ratio for text, ratio, *_ in rec.get("accepted") or () if text == rec["neighbour"]), None)


def floor(args: argparse.Namespace) -> None:
    """Split a run's findings made with one fluency floor by a stricter one (issue 48). With
    ``pick = "fluent"`` and one changed word the search reports the most fluent flip that passed
    the checks, so the findings a stricter floor keeps are exactly what a run with it reports
    (the others would have failed; x0 itself always passes): those are renamed ``--name``
    (their settings' fluency set to ``--fluency``), the rest ``--other``. Failures and skips keep ``--name`` too (a
    stricter floor fails them as well)."""
    out = Path(args.out)
    kept = other = 0
    with out.open("w") as f:
        for path in args.findings:
            for line in Path(path).read_text().splitlines():
                if not line.strip():
                    continue
                rec = json.loads(line)
                settings = rec["settings_json"]
                fluent = settings.get("pick") == "fluent" or settings.get("fluent_first")  # the first run's name
                if not (fluent and (settings.get("max_k") or 1) == 1):
                    raise SystemExit(f"{path}: {rec['example_id']} was not made with pick fluent and max_k 1")
                ratio = chosen_ratio(rec) if rec["status"] == "succeeded" else None
                if rec["status"] == "succeeded" and rec["l0"] > 0 and (ratio is None or ratio > args.fluency):
                    rec = {**rec, "settings": args.other}
                    other += 1
                else:
                    rec = {**rec, "settings": args.name, "settings_json": {**settings, "fluency": args.fluency}}
                    kept += rec["status"] == "succeeded"
                f.write(json.dumps(rec) + "\n")
    print(json.dumps({"kept": kept, "other": other, "file": str(out)}))


# ---- blinded chunks -------------------------------------------------------------------------------
CHUNK_COLUMNS = ("item", "x0", "x0_patched", "neighbour", "neighbour_patched", "patch")


def _mark(text: str, position: int) -> str:
    """``text`` with the word at ``position`` (a Text word index) wrapped in [[ ]]."""
    from textrobust.text import Text

    t = Text.from_string(text)
    _, start, end = t.word_spans()[position]
    return text[:start] + "[[" + text[start:end] + "]]" + text[end:]


def make_chunks(args: argparse.Namespace) -> None:
    """Blind, shuffle and cut the successful findings of ``FINDINGS`` not yet in a round into
    chunk_NN.tsv (all items) and double_NN.tsv (a quarter, same ids), with key_<round>.json
    (item -> finding) and the empty READY_<round> that tells the lead engineer to start
    readers. ``--phase`` here is the reading round: a round may mix findings of both phases."""
    def ident(rec: dict[str, Any]) -> tuple[str, ...]:
        return (rec["example_id"], rec["victim"], rec["settings"], str(rec["phase"]))

    chunked = {ident(rec) for path in WORK.glob("key_*.json") for rec in json.loads(path.read_text()).values()}
    findings = []
    for path in args.findings:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                if rec["status"] == "succeeded" and ident(rec) not in chunked:  # each finding is read once
                    chunked.add(ident(rec))  # two processes may have attacked the same sentence
                    findings.append(rec)
    rng = random.Random(f"chunks-{args.phase}")
    rng.shuffle(findings)
    key = {}
    items = []
    for i, rec in enumerate(findings):
        seed = "|".join((str(args.phase), str(i), rec["example_id"], rec["victim"], rec["settings"]))
        item = f"s{args.phase}-" + hashlib.sha1(seed.encode()).hexdigest()[:8]
        pos = rec["patch"]["position"]
        key[item] = rec
        items.append({"item": item, "x0": rec["x0"], "x0_patched": _mark(rec["x0_patched"], pos),
                      "neighbour": rec["neighbour"], "neighbour_patched": _mark(rec["neighbour_patched"], pos),
                      "patch": f"{rec['patch']['source']} -> {rec['patch']['target']}"})
    first = args.first_chunk
    size = args.chunk_size
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    if len(chunks) > 1 and len(chunks[-1]) < 50:
        chunks[-2].extend(chunks.pop())
    written = []
    for j, chunk in enumerate(chunks):
        written.append(_write_chunk(WORK / f"chunk_{first + j:02d}.tsv", chunk))
    doubles = rng.sample(items, -(-len(items) // 4))  # at least a quarter
    rng.shuffle(doubles)
    dchunks = [doubles[i:i + size] for i in range(0, len(doubles), size)]
    if len(dchunks) > 1 and len(dchunks[-1]) < 50:
        dchunks[-2].extend(dchunks.pop())
    for j, chunk in enumerate(dchunks):
        written.append(_write_chunk(WORK / f"double_{first + j:02d}.tsv", chunk))
    (WORK / f"key_{args.phase}.json").write_text(json.dumps(key, indent=1))
    (WORK / f"READY_{args.phase}").touch()
    print(json.dumps({"items": len(items), "double": len(doubles), "files": written}))


def _write_chunk(path: Path, rows: list[dict[str, str]]) -> str:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CHUNK_COLUMNS, delimiter="\t", lineterminator="\n",
                                quoting=csv.QUOTE_MINIMAL)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: r[k].replace("\t", " ").replace("\n", " ") for k in CHUNK_COLUMNS})
    return f"{path.name} ({len(rows)})"


# ---- merge the readers' labels -------------------------------------------------------------------
LABEL_COLUMNS = ("item", "nat_x0", "nat_neighbour", "sent_x0", "sent_x0_patched", "sent_neighbour",
                 "sent_neighbour_patched", "patch_ok", "note")
PROTOCOL = HERE / "PROTOCOL.txt"
LABELLED = HERE.parent.parent / "src" / "textrobust" / "resources" / "second_order" / "labelled.tsv"


def _read_labels(path: Path) -> list[dict[str, str]]:
    """A reader's label file, checked loosely (normalised case; rows with bad values dropped
    with a message)."""
    rows = []
    with path.open(newline="") as f:
        for raw in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            row = {k: (raw.get(k) or "").strip() for k in LABEL_COLUMNS}
            for k in ("sent_x0", "sent_x0_patched", "sent_neighbour", "sent_neighbour_patched", "patch_ok"):
                row[k] = row[k].lower()
            ok = (row["nat_x0"] in "12345" and row["nat_neighbour"] in "12345" and row["nat_x0"] and row["nat_neighbour"]
                  and all(row[k] in ("pos", "neg", "neu") for k in LABEL_COLUMNS[3:7])
                  and row["patch_ok"] in ("yes", "no"))
            if not ok:
                print(f"{path.name}: dropped a bad row {raw}")
                continue
            row["note"] = row["note"].replace("\t", " ")
            rows.append(row)
    return rows


def merge(args: argparse.Namespace) -> None:
    """Every labels_chunk_*.tsv (reader 1) and labels_double_*.tsv (reader 2) joined with the
    key files into labelled.tsv (protocol lines first)."""
    from textrobust.validity.second_order import COLUMNS

    key: dict[str, dict[str, Any]] = {}
    for path in sorted(WORK.glob("key_*.json")):
        key.update(json.loads(path.read_text()))
    out_rows = []
    first_item: dict[tuple[str, ...], str] = {}  # finding -> the item reader 1's reading is stored under
    for reader, pattern in ((1, "labels_chunk_*.tsv"), (2, "labels_double_*.tsv")):
        seen = set()
        seen_findings: set[tuple[str, ...]] = set()
        for path in sorted(WORK.glob(pattern)):
            for row in _read_labels(path):
                rec = key.get(row["item"])
                if rec is None or row["item"] in seen:
                    print(f"{path.name}: item {row['item']} unknown or repeated; skipped")
                    continue
                seen.add(row["item"])
                finding = (rec["example_id"], rec["victim"], rec["settings"], str(rec["phase"]))
                if finding in seen_findings:  # chunked twice in round 5 (two runs found it): the first reading
                    print(f"{path.name}: item {row['item']} is a finding read already; skipped")
                    continue
                seen_findings.add(finding)
                if reader == 1:
                    first_item[finding] = row["item"]
                elif first_item.get(finding, row["item"]) != row["item"]:
                    # the second reading of a finding chunked twice: stored under the first reading's item
                    row = {**row, "item": first_item[finding]}
                p = rec["patch"]
                out_rows.append({
                    "item": row["item"], "phase": rec["phase"], "half": rec["half"], "corpus": rec["corpus"],
                    "victim": rec["victim"], "settings": rec["settings"], "example_id": rec["example_id"],
                    "x0": rec["x0"], "x0_patched": rec["x0_patched"], "neighbour": rec["neighbour"],
                    "neighbour_patched": rec["neighbour_patched"], "patch_source": p["source"],
                    "patch_target": p["target"], "patch_position": p["position"], "l0": rec["l0"],
                    "p_x0": f"{rec['p_x0'][1]:.4f}", "p_x0_patched": f"{rec['p_x0_patched'][1]:.4f}",
                    "p_neighbour": f"{rec['p_neighbour'][1]:.4f}",
                    "p_neighbour_patched": f"{rec['p_neighbour_patched'][1]:.4f}",
                    "ppl_x0": "" if rec["ppl_x0"] is None else f"{rec['ppl_x0']:.2f}",
                    "ppl_neighbour": "" if rec["ppl_neighbour"] is None else f"{rec['ppl_neighbour']:.2f}",
                    "reader": reader, **{k: row[k] for k in LABEL_COLUMNS[1:]}})
    out_rows.sort(key=lambda r: (r["phase"], r["item"], r["reader"]))
    target = Path(args.out) if args.out else LABELLED
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", newline="") as f:
        for line in PROTOCOL.read_text().splitlines():
            f.write(f"# {line}".rstrip() + "\n")
        f.write("\t".join(COLUMNS) + "\n")
        for r in out_rows:
            f.write("\t".join(str(r[c]).replace("\t", " ").replace("\n", " ") for c in COLUMNS) + "\n")
    print(json.dumps({"rows": len(out_rows), "reader1": sum(r["reader"] == 1 for r in out_rows),
                      "reader2": sum(r["reader"] == 2 for r in out_rows), "file": str(target)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("split")
    x = sub.add_parser("extend", help="append more sentences per corpus to sentences.tsv")
    x.add_argument("--n", type=int, required=True)
    x.add_argument("--round", type=int, required=True, help="the draw's seed suffix (one per extension)")
    p = sub.add_parser("run")
    p.add_argument("--victim", required=True)
    p.add_argument("--victim-name", required=True)
    p.add_argument("--half", choices=("dev", "test", "all"), required=True)
    p.add_argument("--phase", type=int, required=True)
    p.add_argument("--settings", default="baseline")
    p.add_argument("--settings-json", default="")
    p.add_argument("--limit", type=int)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--skip-used", action="store_true", help="skip sentences in any other findings file of the work folder")
    p.add_argument("--reverse", action="store_true", help="the plan from its end (a second process on other sentences)")
    p.add_argument("--after-row", type=int, default=0, help="only sentences.tsv rows after this many (a later extend's)")
    p.add_argument("--out", required=True)
    fl = sub.add_parser("floor", help="split findings by a stricter fluency floor (pick fluent, max_k 1)")
    fl.add_argument("--fluency", type=float, required=True)
    fl.add_argument("--name", required=True, help="the settings name of the findings the floor keeps")
    fl.add_argument("--other", required=True, help="the settings name of the others")
    fl.add_argument("--out", required=True)
    fl.add_argument("findings", nargs="+")
    c = sub.add_parser("chunks")
    c.add_argument("--phase", type=int, required=True)
    c.add_argument("--first-chunk", type=int, default=1)
    c.add_argument("--chunk-size", type=int, default=80)
    c.add_argument("findings", nargs="+")
    m = sub.add_parser("merge")
    m.add_argument("--out", help="write here instead of the shipped labelled.tsv")
    args = parser.parse_args()
    {"split": make_split, "extend": extend_split, "run": run, "floor": floor, "chunks": make_chunks,
     "merge": merge}[args.command](args)


if __name__ == "__main__":
    main()

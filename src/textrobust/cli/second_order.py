"""``textrobust second-order`` and ``textrobust bias``: the double-perturbation analyses.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt). ``register(app)`` adds both commands to the
``textrobust`` app; :func:`demo_step` runs a short second-order attack for ``textrobust
demo``. Each command writes a run folder (``store.sqlite``, ``summary.json``; the bias
command also its tables and figures), resumes with ``--resume``, shows a progress bar
and ends with a summary table; errors of the hierarchy print without a traceback and
exit with code 2.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from textrobust.cli.common import console, fail, load_victim, write_json
from textrobust.errors import ConfigError, TextRobustError

__all__ = ["demo_step", "register", "run_bias", "run_second_order"]

_DEFAULT_MAX_K = {"so-beam": 6, "so-enum": 2, "random": 6}


def _dataset(name: str, split: str, n: int | None) -> Any:
    from textrobust.data import load_dataset

    return load_dataset(name, split=split).take(n)


def _fmt(value: Any, kind: str = "") -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:.1%}" if kind == "%" else f"{value:+.4f}" if kind == "b" else f"{value:,.2f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


# ---- second order ----------------------------------------------------------------------------
def _search(method: str, *, max_k: int | None, beam_width: int, seed: int) -> Any:
    from textrobust.second_order import SECOND_ORDER_SEARCHES

    if method not in SECOND_ORDER_SEARCHES:
        raise ConfigError(
            f"The '--method' option must be one of {SECOND_ORDER_SEARCHES.names()}. Got {method!r} instead."
        )
    k = max_k if max_k is not None else _DEFAULT_MAX_K[method]
    factory = SECOND_ORDER_SEARCHES.get(method)
    if method == "so-beam":
        return factory(beam_width=beam_width, max_k=k)
    if method == "random":
        return factory(max_k=k, seed=seed)
    return factory(max_k=k)


def run_second_order(
    *,
    victim: str = "default",
    data: str = "rotten_tomatoes",
    split: str = "test",
    method: str = "so-beam",
    n: int | None = 20,
    budget: int | None = 50_000,
    fill_in: str | None = None,
    beam_width: int = 20,
    max_k: int | None = None,
    kappa: int = 20,
    delta: float = 3.0,
    min_gap: float = 0.0,
    seed: int = 0,
    out: Path = Path("runs/second-order"),
    resume: bool = False,
    quality: bool = True,
    kind: str = "second-order",
    progress: bool = True,
) -> dict[str, Any]:
    """Run a second-order attack over a data set into the run folder ``out``; return the
    JSON-ready summary (also written to ``out/summary.json``)."""
    from textrobust.runner import make_progress
    from textrobust.second_order import Neighbourhood, PatchFinder, SecondOrderAttack, second_order_dataset
    from textrobust.second_order.neighbourhood import load_fill_in
    from textrobust.store import RunStore
    from textrobust.versions import package_versions
    from textrobust.victims.query import QueryLayer

    started = time.perf_counter()
    search = _search(method, max_k=max_k, beam_width=beam_width, seed=seed)
    model, path = load_victim(victim)
    dataset = _dataset(data, split, n)
    layer = QueryLayer(model, batch_size=256)
    neighbourhood = Neighbourhood(load_fill_in(fill_in), kappa=kappa, delta=delta)
    attack = SecondOrderAttack(layer, neighbourhood, search, patches=PatchFinder(layer), budget=budget,
                               min_gap=min_gap, name=method)
    lm = None
    if quality:
        from textrobust.lm import CausalLM

        lm = CausalLM.default()
    config = {"victim": str(path), "victim_card": getattr(model, "card", None), "data": data, "split": split,
              "n": n, "budget": budget, "method": method, "fill_in": fill_in or "default",
              "attack": attack.describe(), "quality": quality}
    out.mkdir(parents=True, exist_ok=True)
    store = RunStore(out / "store.sqlite")
    run = store.resume_or_start(kind, config, seed, resume=resume)
    bar = make_progress() if progress else None
    if bar is not None:
        with bar:
            _, summary = second_order_dataset(attack, dataset, run, lm=lm, progress=bar,
                                              description=f"{method} on {dataset.name}/{split}")
    else:
        _, summary = second_order_dataset(attack, dataset, run, lm=lm)
    stats = layer.stats()
    result = {
        "run_id": run.run_id,
        "kind": kind,
        "victim": str(path),
        "data": dataset.name,
        "split": split,
        "seed": seed,
        "method": method,
        "attack": attack.describe(),
        "summary": summary,
        "fill_in": {"name": fill_in or "default", **neighbourhood.stats()},
        "query_layer": {"queries": stats.queries, "cache_hits": stats.cache_hits, "batches": stats.batches,
                        "forward_seconds": stats.forward_seconds, "hit_rate": stats.hit_rate},
        "seconds": time.perf_counter() - started,
        "store": str(out / "store.sqlite"),
        "versions": package_versions(),
    }
    run.finish(result)
    write_json(out / "summary.json", result)
    return result


def _print_second_order(result: dict[str, Any]) -> None:
    s = result["summary"]
    table = Table(title=f"{result['method']} on {result['data']}/{result['split']} ({Path(result['victim']).name})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    rows = [
        ("examples", s["examples"], ""), ("vulnerable example found", s["succeeded"], ""),
        ("not found", s["failed"], ""), ("skipped (no synonym patch applies)", s["skipped"], ""),
        ("errors", s["errors"], ""), ("attack success rate", s["success_rate"], "%"),
        ("x0 itself vulnerable", s["vulnerable_at_start"], ""), ("words changed (l0)", s["l0"], ""),
        ("median perplexity before", s["median_perplexity_before"], ""),
        ("median perplexity after", s["median_perplexity_after"], ""),
        ("queries per example", s["queries_per_example"], ""),
        ("fill-in requests per example", s["fill_requests_per_example"], ""),
        ("seconds per example", s["seconds_per_example"], ""), ("budget exhausted", s["budget_exhausted"], ""),
    ]
    for name, value, kind in rows:
        table.add_row(name, _fmt(value, kind))
    console.print(table)


# ---- bias --------------------------------------------------------------------------------------
def run_bias(
    *,
    victim: str = "default",
    data: str = "rotten_tomatoes",
    split: str = "test",
    n: int | None = None,
    groups: tuple[str, ...] = ("gender",),
    max_k: int = 3,
    exact_up_to: int = 2,
    samples: int = 200,
    eps: float = 0.005,
    label: int | None = None,
    both_directions: bool = False,
    fill_in: str | None = None,
    kappa: int = 20,
    delta: float = 3.0,
    seed: int = 0,
    out: Path = Path("runs/bias"),
    resume: bool = False,
    kind: str = "bias",
    progress: bool = True,
    neighbourhood: Any | None = None,
) -> dict[str, Any]:
    """Measure B_{p,k} over a data set into the run folder ``out`` and write the report
    (``bias.json``, ``bias.md``, ``bias_vs_k.png/.svg``, ``histograms.png/.svg``) beside
    the store; return the JSON-ready summary (also ``out/summary.json``). A prebuilt
    ``neighbourhood`` (e.g. one shared between victims, with its fill-in cache) may be
    passed instead of building one from ``fill_in``."""
    from textrobust.bias import BiasConfig, bias_dataset, protected_groups, write_bias_report
    from textrobust.bias.report import bias_table
    from textrobust.runner import make_progress
    from textrobust.second_order import Neighbourhood
    from textrobust.second_order.neighbourhood import load_fill_in
    from textrobust.store import RunStore
    from textrobust.versions import package_versions
    from textrobust.victims.query import QueryLayer

    started = time.perf_counter()
    config = BiasConfig(max_k=max_k, exact_up_to=exact_up_to, samples=samples, eps=eps, label=label,
                        both_directions=both_directions, seed=seed)
    chosen = protected_groups(groups)
    model, path = load_victim(victim)
    dataset = _dataset(data, split, n)
    layer = QueryLayer(model, cache_size=2_000_000)
    hood = neighbourhood if neighbourhood is not None else Neighbourhood(load_fill_in(fill_in), kappa=kappa,
                                                                         delta=delta)
    run_config = {"victim": str(path), "victim_card": getattr(model, "card", None), "data": data, "split": split,
                  "n": n, "groups": list(groups), "bias": config.to_dict(), "neighbourhood": hood.describe(),
                  "fill_in": fill_in or "default"}
    out.mkdir(parents=True, exist_ok=True)
    store = RunStore(out / "store.sqlite")
    run = store.resume_or_start(kind, run_config, seed, resume=resume)
    fills_before = hood.requests
    bar = make_progress() if progress else None
    if bar is not None:
        with bar:
            records, summary = bias_dataset(layer, hood, dataset, run, groups=chosen, config=config, progress=bar,
                                            description=f"bias on {dataset.name}/{split}")
    else:
        records, summary = bias_dataset(layer, hood, dataset, run, groups=chosen, config=config)
    label_index = layer.num_labels - 1 if label is None else label
    title = f"B_(p,k) of {Path(str(path)).name} on {dataset.name}/{split} (f_soft = P({layer.label_names[label_index]}))"
    files = write_bias_report(records, out, max_k=max_k, bins=config.bins, title=title)
    rows = bias_table(records, max_k=max_k)
    stats = layer.stats()
    result = {
        "run_id": run.run_id,
        "kind": kind,
        "victim": str(path),
        "data": dataset.name,
        "split": split,
        "seed": seed,
        "groups": list(groups),
        "config": config.to_dict(),
        "f_soft_label": layer.label_names[label_index],
        "summary": summary,
        "rows": [r.to_dict() for r in rows],
        "files": files,
        "fill_in": {"name": fill_in or "default", "requests_now": hood.requests - fills_before},
        "query_layer": {"queries": stats.queries, "cache_hits": stats.cache_hits,
                        "forward_seconds": stats.forward_seconds},
        "seconds": time.perf_counter() - started,
        "store": str(out / "store.sqlite"),
        "versions": package_versions(),
    }
    run.finish(result)
    write_json(out / "summary.json", result)
    return result


def _print_bias(result: dict[str, Any], max_k: int) -> None:
    table = Table(title=f"B_(p,k) on X_filter, f_soft = P({result['f_soft_label']}) ({Path(result['victim']).name})")
    for col in ["pair", "# original", f"# perturbed k={max_k}"] + [f"B k={k}" for k in range(max_k + 1)]:
        table.add_column(col, justify="left" if col == "pair" else "right")
    for row in result["rows"]:
        b = row["B"]["filter"]
        table.add_row(row["pair"], str(row["originals"]["filter"]), _fmt(row["texts"]["filter"].get(str(max_k), 0)),
                      *[_fmt(b.get(str(k)) if b.get(str(k)) is not None else float("nan"), "b")
                        for k in range(max_k + 1)])
    console.print(table)
    s = result["summary"]
    console.print(f"anchors (test sentences x protected word): {s['anchors']:,}; pairs: {s['pairs']:,}; "
                  f"errors: {s['errors']}; seconds: {result['seconds']:.1f}")


# ---- registration ---------------------------------------------------------------------------------
def register(app: typer.Typer) -> None:
    """Add ``second-order`` and ``bias`` to the ``textrobust`` app."""

    @app.command("second-order")
    def second_order_cmd(
        method: Annotated[str, typer.Option(help="so-beam, so-enum or random.")] = "so-beam",
        victim: Annotated[str, typer.Option(help="'default' or a victim folder.")] = "default",
        data: Annotated[str, typer.Option(help="Bundled data set or a file path.")] = "rotten_tomatoes",
        split: Annotated[str, typer.Option(help="Split to attack.")] = "test",
        n: Annotated[int | None, typer.Option(help="Only the first n examples.")] = 20,
        budget: Annotated[int | None, typer.Option(help="Victim queries per example (each neighbour costs 2).")] = 50_000,
        fill_in: Annotated[str | None, typer.Option(help="Fill-in model (default: the measured default).")] = None,
        beam_width: Annotated[int, typer.Option(help="SO-Beam: texts kept per step.")] = 20,
        max_k: Annotated[int | None, typer.Option(help="Most words changed (default: 6, SO-Enum 2).")] = None,
        kappa: Annotated[int, typer.Option(help="Neighbourhood: at most kappa words per position.")] = 20,
        delta: Annotated[float, typer.Option(help="Neighbourhood: keep words within delta of the best logit.")] = 3.0,
        min_gap: Annotated[float, typer.Option(help="Also require this total-variation gap (0 = the paper).")] = 0.0,
        seed: Annotated[int, typer.Option(help="Random seed (random baseline).")] = 0,
        out: Annotated[Path, typer.Option(help="Run folder (store.sqlite, summary.json).")] = Path("runs/second-order"),
        resume: Annotated[bool, typer.Option(help="Resume the latest run in --out.")] = False,
        quality: Annotated[bool, typer.Option(help="Perplexity (causal LM) of x0 and the vulnerable example.")] = True,
    ) -> None:
        """Second-order attack (Zhang et al. 2021): find a sentence near each test sentence
        whose label a single synonym swap flips."""
        try:
            result = run_second_order(victim=victim, data=data, split=split, method=method, n=n, budget=budget,
                                      fill_in=fill_in, beam_width=beam_width, max_k=max_k, kappa=kappa, delta=delta,
                                      min_gap=min_gap, seed=seed, out=out, resume=resume, quality=quality)
        except TextRobustError as exc:
            fail(exc)
        _print_second_order(result)
        console.print(f"summary: {out / 'summary.json'}")

    @app.command("bias")
    def bias_cmd(
        victim: Annotated[str, typer.Option(help="'default' or a victim folder.")] = "default",
        data: Annotated[str, typer.Option(help="Bundled data set or a file path.")] = "rotten_tomatoes",
        split: Annotated[str, typer.Option(help="Split to measure on.")] = "test",
        n: Annotated[int | None, typer.Option(help="Only the first n examples (default: all).")] = None,
        group: Annotated[list[str] | None, typer.Option(help="Protected group(s): gender, nationality, religion, "
                                                                "sexual_orientation or all (repeatable).")] = None,
        max_k: Annotated[int, typer.Option(help="Largest neighbourhood distance k.")] = 3,
        exact_up_to: Annotated[int, typer.Option(help="Enumerate Neighbor_k in full up to this k; sample above.")] = 2,
        samples: Annotated[int, typer.Option(help="Random walks per test sentence for a sampled k.")] = 200,
        eps: Annotated[float, typer.Option(help="X_filter: |F_soft(x0)| below this.")] = 0.005,
        label: Annotated[int | None, typer.Option(help="Class index of f_soft (default: the last label).")] = None,
        both_directions: Annotated[bool, typer.Option(help="Also use sentences holding the second word.")] = False,
        fill_in: Annotated[str | None, typer.Option(help="Fill-in model (default: the measured default).")] = None,
        seed: Annotated[int, typer.Option(help="Seed of the neighbourhood samples.")] = 0,
        out: Annotated[Path, typer.Option(help="Run folder (store, summary, tables, figures).")] = Path("runs/bias"),
        resume: Annotated[bool, typer.Option(help="Resume the latest run in --out.")] = False,
    ) -> None:
        """Counterfactual token bias B_(p,k) (Zhang et al. 2021) over the neighbourhoods of
        the test sentences holding a protected word."""
        try:
            result = run_bias(victim=victim, data=data, split=split, n=n, groups=tuple(group or ["gender"]),
                              max_k=max_k, exact_up_to=exact_up_to, samples=samples, eps=eps, label=label,
                              both_directions=both_directions, fill_in=fill_in, seed=seed, out=out, resume=resume)
        except TextRobustError as exc:
            fail(exc)
        _print_bias(result, max_k)
        console.print(f"summary: {out / 'summary.json'}\nfigures: {out / 'bias_vs_k.png'}, {out / 'histograms.png'}")


def demo_step(out: Path, *, n: int) -> dict[str, Any]:
    """A short second-order run for ``textrobust demo``: SO-Beam (beam 20, k <= 6, 20,000
    queries per example) on the first ``n`` Rotten Tomatoes test sentences against the
    default victim, without perplexity scoring; returns the JSON-ready summary.

    Neighbourhoods come from the ``minilm_mlm`` fill-in whatever the package default is:
    the causal-LM route answers about 1.4 requests/s on two cores (measured), and one
    sentence needs 100-900 requests; minilm_mlm answers about 250/s."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"The 'n' parameter of demo_step must be an int >= 1. Got {n!r} instead.")
    # The demo uses the project's MiniLM + trained-head fill-in: the measured default
    # (Gemma propose-and-rescore) has the best recall but is ~300x slower (benchmarks/results/fill_in.md).
    result = run_second_order(method="so-beam", n=n, budget=20_000, max_k=6, out=out, quality=False,
                              kind="demo-second-order", progress=False, fill_in="minilm_mlm")
    s = result["summary"]
    return {
        "step": "second-order (SO-Beam, Zhang et al. 2021)",
        "fill_in": "minilm_mlm",
        "examples": s["examples"],
        "success_rate": s["success_rate"],
        "l0": s["l0"],
        "skipped_no_patch": s["skipped"],
        "queries_per_example": s["queries_per_example"],
        "seconds_per_example": s["seconds_per_example"],
        "seconds": result["seconds"],
        "summary": str(out / "summary.json"),
    }

"""``textrobust radius`` and ``textrobust pr``: robustness radius bounds and the PR metric.

Yang et al., "Quantifying Robustness to Adversarial Word Substitutions"
(../shared/papers/robustness-radius-pdp-prover-pr.txt). ``radius`` runs PDP and the
baselines (Table 2), the prover for r = 1..max-radius (Table 3) and writes the bounds on
the robustness radius per example, Figure 3/4 and the prover's throughput against the
victim's raw forward speed; ``pr`` estimates PR_hat with its Hoeffding interval per
example and draws the violin plot (Figure 5). Each writes a run folder (``store.sqlite``,
``summary.json``, figures), resumes with ``--resume``, shows a progress bar and ends with
summary tables; errors of the hierarchy print without a traceback and exit with code 2.
:func:`demo_step` runs a short version of both for ``textrobust demo``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from textrobust.cli.common import console, fail, fmt, load_data, load_victim, write_json
from textrobust.errors import ConfigError, TextRobustError

__all__ = ["register", "run_radius_cmd", "run_pr_cmd", "demo_step", "print_radius", "print_pr"]


def register(app: typer.Typer) -> None:
    """Add ``radius`` and ``pr`` to the ``textrobust`` app."""
    app.command("radius")(radius_cmd)
    app.command("pr")(pr_cmd)


def _methods(text: str) -> tuple[str, ...]:
    return tuple(m.strip() for m in text.split(",") if m.strip())


def _victim_batch(victim: Any, batch: int) -> None:
    # TorchVictim splits each call into chunks of its own batch_size (64 by default); the
    # prover sends hundreds of texts per call, so let the victim take them in one go.
    if isinstance(getattr(victim, "batch_size", None), int):
        victim.batch_size = batch


# ---- radius ---------------------------------------------------------------------------------
def run_radius_cmd(
    victim_ref: str,
    data_name: str,
    split: str,
    n: Optional[int],
    out: Path,
    resume: bool,
    seed: int,
    settings: Any,
    *,
    batch_size: int = 256,
    victim_batch: int = 256,
    measure_speed: bool = True,
    kind: str = "radius",
    victim: Any = None,
) -> dict[str, Any]:
    """Run the radius analysis into ``out`` and return the summary (also written to
    ``out/summary.json``); figures go beside it."""
    from textrobust.radius.analysis import RadiusAnalysis, probe_texts, raw_forward_speed, run_radius
    from textrobust.radius.plots import substitution_scatter, yield_plot
    from textrobust.runner import make_progress
    from textrobust.store import RunStore
    from textrobust.versions import package_versions

    started = time.perf_counter()
    if victim is None:
        victim, victim_path = load_victim(victim_ref)
    else:
        victim_path = Path(victim_ref)
    _victim_batch(victim, victim_batch)
    dataset = load_data(data_name, split).take(n)
    analysis = RadiusAnalysis(victim, settings, batch_size=batch_size)
    config = {"victim": str(victim_path), "victim_card": getattr(victim, "card", None), "data": data_name,
              "split": split, "n": n, "batch_size": batch_size, "victim_batch": victim_batch,
              "analysis": analysis.describe()}
    out.mkdir(parents=True, exist_ok=True)
    store = RunStore(out / "store.sqlite")
    run = store.resume_or_start(kind, config, seed, resume=resume)
    with make_progress() as progress:
        records, summary = run_radius(analysis, dataset, run, progress=progress,
                                      description=f"radius on {dataset.name}/{split}")
    figures: dict[str, str] = {}
    if summary["attacked"]:
        title = f"{Path(str(victim_path)).name} on {dataset.name}/{split}"
        figures["figure4"] = str(yield_plot(summary["curves"], out / "figure4_yield.png", title=title))
        if "pdp" in settings.methods and len(settings.methods) > 1:
            others = [m for m in settings.methods if m != "pdp"]
            figures["figure3"] = str(substitution_scatter(records, out / "figure3_substitutions.png",
                                                          others=others, title=title))
    if measure_speed and settings.prover:
        texts = probe_texts(records, dataset.examples, 2048, seed=seed)
        if texts:
            summary["raw_forward"] = raw_forward_speed(victim, texts)
            through = summary.get("throughput", {})
            speed = summary["raw_forward"]["texts_per_second"]
            if through.get("texts"):
                summary["throughput"]["share_of_raw_speed"] = through["texts_per_second"] / speed
    result = {
        "run_id": run.run_id,
        "kind": kind,
        "victim": str(victim_path),
        "data": dataset.name,
        "split": split,
        "seed": seed,
        "analysis": analysis.describe(),
        "summary": summary,
        "figures": figures,
        "seconds": time.perf_counter() - started,
        "store": str(out / "store.sqlite"),
        "versions": package_versions(),
    }
    run.finish(result)
    write_json(out / "summary.json", result)
    return result


def print_radius(result: dict[str, Any]) -> None:
    """Table 2, Table 3, the bounds and the prover's throughput as rich tables."""
    s = result["summary"]
    t2 = s["table2"]
    table = Table(title=f"Table 2: attacks on {result['data']}/{result['split']} ({Path(result['victim']).name}), "
                        f"{t2['attacks']} attacked")
    optimality = s.get("optimality", {})
    for col in ("method", "#Succ", "succ %", "#Win", "%S", "mean words", "queries", "seconds", "optimal/exact",
                "missed"):
        table.add_column(col, justify="right" if col != "method" else "left")
    for name, row in t2["methods"].items():
        o = optimality.get(name)
        table.add_row(name, fmt(row["succ"]), fmt(row["succ_rate"], "%"), fmt(row["wins"]),
                      fmt(row["percent_substituted"]), fmt(row["mean_l0"]), fmt(row["mean_queries"]),
                      fmt(row["mean_seconds"]), f"{o['optimal']}/{o['exact']}" if o else "-",
                      fmt(o["missed"]) if o else "-")
    console.print(table)
    if "table3" in s:
        table = Table(title="Table 3: found / certified / unknown per radius (PDP, then the prover)")
        for col in ("r", "%F", "T(s)", "%C", "T(s) ", "%U", "T(s)  "):
            table.add_column(col, justify="right")
        for row in s["table3"]:
            table.add_row(str(row["r"]), fmt(row["found_pct"]), fmt(row["found_seconds"]),
                          fmt(row["certified_pct"]), fmt(row["certified_seconds"]),
                          fmt(row["unknown_pct"]), fmt(row["unknown_seconds"]))
        console.print(table)
        b, th = s["bounds"], s["throughput"]
        table = Table(title="bounds on the robustness radius R, and prover speed")
        table.add_column("metric")
        table.add_column("value", justify="right")
        rows = [("examples with bounds", b["examples"], ""), ("mean lower bound (all examples)", b["mean_lower"], ""),
                (f"mean upper bound (the {b['with_upper']} with an adversarial example)", b["mean_upper"], ""), ("R exact", b["exact_share"], "%"),
                ("proven robust on all of Omega", b["robust_everywhere_share"], "%"),
                ("prover texts checked", th["texts"], ""), ("prover texts / s", th["texts_per_second"], ""),
                ("share of prover time in forward passes", th["forward_share"], "%")]
        if "raw_forward" in s:
            rows.append(("raw forward texts / s (physical limit)", s["raw_forward"]["texts_per_second"], ""))
            if "share_of_raw_speed" in th:
                rows.append(("prover speed / raw speed", th["share_of_raw_speed"], "%"))
        for name, value, kind in rows:
            table.add_row(name, fmt(value, kind))
        console.print(table)


def _radius_settings(**options: Any) -> Any:
    from textrobust.radius.analysis import RadiusSettings

    return RadiusSettings(**options)


def radius_cmd(
    victim: Annotated[str, typer.Option(help="'default' or a victim folder.")] = "default",
    data: Annotated[str, typer.Option(help="Bundled data set or a file path.")] = "rotten_tomatoes",
    split: Annotated[str, typer.Option(help="Split to analyse.")] = "test",
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples.")] = 50,
    seed: Annotated[int, typer.Option(help="Random seed (PDP draws, PSO).")] = 0,
    out: Annotated[Path, typer.Option(help="Run folder (store.sqlite, summary.json, figures).")] = Path("runs/radius"),
    resume: Annotated[bool, typer.Option(help="Resume the latest radius run in --out.")] = False,
    eta: Annotated[int, typer.Option(help="Synonyms kept per position (S(X,p) has eta + 1 words).")] = 5,
    min_cos: Annotated[Optional[float], typer.Option(help="Cosine floor of a synonym (counter-fitted GloVe).")] = 0.5,
    tau: Annotated[float, typer.Option(help="Maximum share of substituted words of an adversarial example.")] = 0.25,
    methods: Annotated[str, typer.Option(help="Comma-separated methods of: pdp, greedy, pso.")] = "pdp,greedy,pso",
    top_k: Annotated[int, typer.Option(help="PDP: texts kept per step (K).")] = 10,
    lookahead: Annotated[int, typer.Option(help="PDP: texts drawn for the look-ahead.")] = 4,
    prover: Annotated[bool, typer.Option(help="Certify radii with the exhaustive prover.")] = True,
    max_radius: Annotated[int, typer.Option(help="Largest radius r of Table 3.")] = 4,
    time_limit: Annotated[float, typer.Option(help="Prover seconds per example (then 'unknown').")] = 30.0,
    batch_size: Annotated[int, typer.Option(help="Texts per query-layer call of the attacks.")] = 256,
    prover_batch: Annotated[int, typer.Option(help="Texts per query-layer call of the prover.")] = 512,
    pso_pop: Annotated[int, typer.Option(help="PSO particles.")] = 60,
    pso_iters: Annotated[int, typer.Option(help="PSO iterations.")] = 20,
    speed: Annotated[bool, typer.Option(help="Measure the victim's raw forward speed for comparison.")] = True,
) -> None:
    """Bounds on the robustness radius: PDP and baselines (upper), the prover (lower)."""
    try:
        settings = _radius_settings(eta=eta, min_cos=min_cos, tau=tau, methods=_methods(methods), top_k=top_k,
                                    lookahead_samples=lookahead, prover=prover, max_radius=max_radius,
                                    time_limit=time_limit, prover_batch=prover_batch, pso_pop_size=pso_pop,
                                    pso_max_iters=pso_iters, seed=seed)
        result = run_radius_cmd(victim, data, split, n, out, resume, seed, settings, batch_size=batch_size,
                                victim_batch=max(batch_size, prover_batch), measure_speed=speed)
    except TextRobustError as exc:
        fail(exc)
    print_radius(result)
    console.print(f"summary: {out / 'summary.json'}")


# ---- pr -----------------------------------------------------------------------------------------
def run_pr_cmd(
    victim_ref: str,
    data_name: str,
    split: str,
    n: Optional[int],
    out: Path,
    resume: bool,
    seed: int,
    settings: Any,
    *,
    threshold: float = 0.9,
    victim_batch: int = 256,
    kind: str = "pr",
    victim: Any = None,
) -> dict[str, Any]:
    """Run the PR analysis into ``out``; return the summary (also ``out/summary.json``)."""
    from textrobust.radius.analysis import PRAnalysis, run_pr
    from textrobust.radius.plots import pr_violin
    from textrobust.runner import make_progress
    from textrobust.store import RunStore
    from textrobust.versions import package_versions

    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"The '--threshold' option must be in [0, 1]. Got {threshold} instead.")
    started = time.perf_counter()
    if victim is None:
        victim, victim_path = load_victim(victim_ref)
    else:
        victim_path = Path(victim_ref)
    _victim_batch(victim, victim_batch)
    dataset = load_data(data_name, split).take(n)
    analysis = PRAnalysis(victim, settings)
    config = {"victim": str(victim_path), "victim_card": getattr(victim, "card", None), "data": data_name,
              "split": split, "n": n, "threshold": threshold, "analysis": analysis.describe()}
    out.mkdir(parents=True, exist_ok=True)
    store = RunStore(out / "store.sqlite")
    run = store.resume_or_start(kind, config, seed, resume=resume)
    with make_progress() as progress:
        records, summary = run_pr(analysis, dataset, run, progress=progress, threshold=threshold,
                                  description=f"PR on {dataset.name}/{split}")
    values = [r["pr"]["pr"] for r in records if not r.get("skipped") and "pr" in r]
    figures = {}
    if values:
        name = Path(str(victim_path)).name
        figures["violin"] = str(pr_violin({name: values}, out / "figure5_pr_violin.png",
                                          title=f"PR_hat, r = {settings.fraction:.0%} of length"))
    result = {
        "run_id": run.run_id,
        "kind": kind,
        "victim": str(victim_path),
        "data": dataset.name,
        "split": split,
        "seed": seed,
        "analysis": analysis.describe(),
        "summary": summary,
        "figures": figures,
        "seconds": time.perf_counter() - started,
        "store": str(out / "store.sqlite"),
        "versions": package_versions(),
    }
    run.finish(result)
    write_json(out / "summary.json", result)
    return result


def print_pr(result: dict[str, Any]) -> None:
    s = result["summary"]
    a = result["analysis"]
    table = Table(title=f"PR on {result['data']}/{result['split']} ({Path(result['victim']).name}), "
                        f"N = {a['samples']} (eps={a['settings']['epsilon']}, delta={a['settings']['delta']})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    rows = [("examples", s["examples"], ""), ("scored (correctly classified)", s["scored"], ""),
            ("skipped (misclassified)", s["skipped"], ""), ("computed exactly (small spaces)", s["exact"], ""),
            (f"share with PR > {s['threshold']}", s["share_above_threshold"], "%"), ("mean PR", s["mean_pr"], ""),
            ("median PR", s["quantiles"]["median"], ""), ("min PR", s["quantiles"]["min"], ""),
            ("mean radius r", s["mean_radius"], ""), ("seconds per example", s["mean_seconds"], "")]
    for name, value, kind in rows:
        table.add_row(name, fmt(value, kind))
    console.print(table)


def pr_cmd(
    victim: Annotated[str, typer.Option(help="'default' or a victim folder.")] = "default",
    data: Annotated[str, typer.Option(help="Bundled data set or a file path.")] = "rotten_tomatoes",
    split: Annotated[str, typer.Option(help="Split to analyse.")] = "test",
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples.")] = 50,
    seed: Annotated[int, typer.Option(help="Random seed of the samples.")] = 0,
    out: Annotated[Path, typer.Option(help="Run folder (store.sqlite, summary.json, violin plot).")] = Path("runs/pr"),
    resume: Annotated[bool, typer.Option(help="Resume the latest PR run in --out.")] = False,
    eta: Annotated[int, typer.Option(help="Synonyms kept per position.")] = 5,
    min_cos: Annotated[Optional[float], typer.Option(help="Cosine floor of a synonym.")] = 0.5,
    epsilon: Annotated[float, typer.Option(help="Hoeffding: the error bound eps.")] = 0.025,
    delta: Annotated[float, typer.Option(help="Hoeffding: the failure probability delta.")] = 0.005,
    samples: Annotated[Optional[int], typer.Option(help="N (default: the smallest N Hoeffding allows).")] = None,
    fraction: Annotated[float, typer.Option(help="r as a share of the text length.")] = 0.25,
    threshold: Annotated[float, typer.Option(help="Report the share of examples with PR above this.")] = 0.9,
    batch_size: Annotated[int, typer.Option(help="Texts per query-layer call.")] = 1024,
) -> None:
    """PR_hat, the share of Omega_r a victim still classifies right, with its guarantee."""
    from textrobust.radius.analysis import PRSettings

    try:
        settings = PRSettings(eta=eta, min_cos=min_cos, epsilon=epsilon, delta=delta, samples=samples,
                              fraction=fraction, batch_size=batch_size, seed=seed)
        result = run_pr_cmd(victim, data, split, n, out, resume, seed, settings, threshold=threshold,
                            victim_batch=min(batch_size, 512))
    except TextRobustError as exc:
        fail(exc)
    print_pr(result)
    console.print(f"summary: {out / 'summary.json'}")


# ---- demo -----------------------------------------------------------------------------------------
def demo_step(out: Path, *, n: int, resume: bool = False) -> dict[str, Any]:
    """A short radius + PR run on the default victim (first ``n`` test examples): PDP,
    greedy and a small PSO, the prover up to r = 3 (10 s per example), PR with the
    paper's guarantee. Writes ``out/radius`` and ``out/pr``; returns both summaries."""
    from textrobust.radius.analysis import PRSettings, RadiusSettings

    settings = RadiusSettings(methods=("pdp", "greedy", "pso"), pso_pop_size=20, pso_max_iters=10,
                              max_radius=3, time_limit=10.0)
    victim, path = load_victim("default")
    radius = run_radius_cmd(str(path), "rotten_tomatoes", "test", n, Path(out) / "radius", resume, 0, settings,
                            kind="demo-radius", victim=victim)
    print_radius(radius)
    pr = run_pr_cmd(str(path), "rotten_tomatoes", "test", n, Path(out) / "pr", resume, 0, PRSettings(),
                    kind="demo-pr", victim=victim)
    print_pr(pr)
    return {"radius": radius["summary"], "pr": pr["summary"], "figures": {**radius["figures"], **pr["figures"]},
            "seconds": radius["seconds"] + pr["seconds"]}

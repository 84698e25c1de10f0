"""The package's import graph has no cycles: every import (module level, inside functions
and under ``TYPE_CHECKING``, as grimp reads them) goes one way between two modules.

A cycle is a set of modules that import each other, directly or through others (a
strongly connected component of the graph with more than one module); the test names
each with the import lines that close it.
"""

from __future__ import annotations

import grimp


def _components(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of ``graph`` (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                child = edges[node][i]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
    return found


def _describe(graph: grimp.ImportGraph, component: list[str]) -> str:
    members = set(component)
    lines = [f"cycle of {len(component)} modules: {', '.join(component)}"]
    for importer in component:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(f"  {importer}:{detail['line_number']} -> {imported}: {detail['line_contents']}")
    return "\n".join(lines)


def test_components_finds_a_cycle_and_leaves_a_chain_alone() -> None:
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b", line_number=1, line_contents="import pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c", line_number=1, line_contents="import pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a", line_number=7, line_contents="import pkg.a")
    graph.add_import(importer="pkg.c", imported="pkg.d", line_number=2, line_contents="import pkg.d")
    cycles = [c for c in _components(graph) if len(c) > 1]
    assert cycles == [["pkg.a", "pkg.b", "pkg.c"]]
    assert "pkg.c:7 -> pkg.a: import pkg.a" in _describe(graph, cycles[0])


def test_no_import_cycles() -> None:
    graph = grimp.build_graph("textrobust")
    cycles = [c for c in _components(graph) if len(c) > 1]
    assert not cycles, "Import cycles (move the shared part into its own module, or make the lower " \
        "module not import the upper one):\n" + "\n".join(_describe(graph, c) for c in cycles)

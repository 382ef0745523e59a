"""The package's rooms: no import circle between its modules, and no module over 500 lines.

The import graph is read from the source with ``ast`` (nothing is imported): every ``import``
and ``from ... import`` of a ``discord_mcp`` module counts, wherever it stands (inside a
function, under ``if TYPE_CHECKING:``, in a ``try``), because a circle hidden in a function is
still a circle a reader has to hold in their head. ``from discord_mcp.runs import Engine``,
where ``runs/__init__.py`` only re-exports ``Engine`` from ``runs/engine/engine.py``, counts as
an import of ``runs.engine.engine`` (the module that defines it), not of the package; the
package's own ``__init__`` importing its modules is an edge like any other. Importing ``a.b.c``
also runs ``a/__init__`` and ``a/b/__init__``; those implicit edges are left out (every module
of a package with re-exports would otherwise be in a circle with its ``__init__``).

A circle is a strongly connected component of more than one module. Offenders would be listed
in ``KNOWN_CIRCLES``, ``KNOWN_ROOM_CIRCLES`` and ``KNOWN_LONG`` (issue 37 emptied them). The
lists only shrink: a new offender fails, and so does an entry that no longer offends (take it
out) or a circle that changed shape (write down the new one, which the failure prints).
"""

from __future__ import annotations

import ast
import functools
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "discord_mcp"
MAX_LINES = 500

# Circles between modules, each the set of modules of one strongly connected component (names
# relative to ``discord_mcp``): none since issue 37. The lower module defines what the higher one
# needs (a ``Protocol``), and nothing imports upward.
KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset()

# Circles between rooms (the package's folders and top-level modules, see ``room``): none since
# issue 37.
KNOWN_ROOM_CIRCLES: frozenset[frozenset[str]] = frozenset()

# Modules over MAX_LINES lines: none since issue 37 (each was split along a seam a reader can
# name).
KNOWN_LONG: frozenset[str] = frozenset()


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module
    lines: int
    # name bound at module level by ``from X import name [as alias]`` -> (X, name)
    reexports: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    where: str  # "line 12", or for rooms "decisions.answers line 12 imports files.store"


def _module_name(path: Path, root: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), True
    return ".".join(parts), False


def load_package(root: Path = ROOT) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        name, is_package = _module_name(path, root)
        source = path.read_text(encoding="utf-8")
        modules[name] = Module(
            name, path, is_package, ast.parse(source, str(path)), len(source.splitlines())
        )
    for module in modules.values():
        for node in _module_level(module.tree.body):
            if isinstance(node, ast.ImportFrom):
                base = _absolute(module, node)
                for alias in node.names:
                    if alias.name != "*":
                        module.reexports[alias.asname or alias.name] = (base, alias.name)
    return modules


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run when the module is imported (through if/try, not into functions)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level(block)
            for handler in node.handlers:
                yield from _module_level(handler.body)


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _owner(modules: dict[str, Module], dotted: str) -> str | None:
    """The longest module of the package that ``dotted`` names (or lies in)."""
    while dotted:
        if dotted in modules:
            return dotted
        dotted = dotted.rpartition(".")[0]
    return None


def _defining(modules: dict[str, Module], base: str, name: str, seen: frozenset[str]) -> str:
    """The module that ``from base import name`` really reaches, through ``__init__`` re-exports."""
    submodule = f"{base}.{name}"
    if submodule in modules:
        return submodule
    package = modules[base]
    origin = package.reexports.get(name)
    if not package.is_package or origin is None or base in seen:
        return base
    source, original = origin
    owner = _owner(modules, source)
    if owner is None or owner != source:
        return base  # re-exported from outside the package, or from a name inside a module
    return _defining(modules, owner, original, seen | {base})


def import_graph(modules: dict[str, Module]) -> set[Edge]:
    edges: set[Edge] = set()
    for module in modules.values():
        for node in ast.walk(module.tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [t for a in node.names if (t := _owner(modules, a.name)) is not None]
            elif isinstance(node, ast.ImportFrom):
                base = _owner(modules, _absolute(module, node))
                if base is None:
                    continue
                for alias in node.names:
                    if alias.name == "*" or base != _absolute(module, node):
                        targets.append(base)
                    else:
                        targets.append(_defining(modules, base, alias.name, frozenset()))
            for target in targets:
                if target != module.name:
                    edges.add(Edge(module.name, target, f"line {node.lineno}"))
    return edges


def room(module: str) -> str:
    """The room a module lives in: its top folder under the package, or itself at the top. A
    ``__main__`` (``python -m discord_mcp.server``) is an entry point, a room of its own above
    all others: it may start any command, and nothing imports it."""
    parts = module.split(".")
    if parts[-1] == "__main__":
        return module
    return parts[1] if len(parts) > 1 else parts[0]


def room_graph(edges: set[Edge]) -> set[Edge]:
    """Rooms import each other when one of their modules does (one example kept per pair)."""
    examples: dict[tuple[str, str], Edge] = {}
    for edge in sorted(edges, key=lambda e: (e.source, e.target)):
        pair = (room(edge.source), room(edge.target))
        if pair[0] != pair[1] and pair not in examples:
            examples[pair] = edge
    return {
        Edge(*pair, f"{_short(e.source)} {e.where} imports {_short(e.target)}")
        for pair, e in examples.items()
    }


def circles(nodes: set[str], edges: set[Edge]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    following: dict[str, set[str]] = {n: set() for n in nodes}
    for edge in edges:
        following[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(following[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(following[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _short(name: str) -> str:
    return name.removeprefix(f"{PACKAGE}.")


def describe(component: frozenset[str], edges: set[Edge]) -> str:
    """The circle's modules and, for each, one way back to itself through the others."""
    inside = sorted(
        (e for e in edges if e.source in component and e.target in component),
        key=lambda e: (e.source, e.target),
    )
    following: dict[str, list[Edge]] = {}
    for edge in inside:
        following.setdefault(edge.source, []).append(edge)
    lines = [f"circle of {len(component)}: {', '.join(sorted(_short(m) for m in component))}"]
    shown: set[tuple[str, ...]] = set()
    for start in sorted(component):
        path = _shortest_cycle(start, following)
        key = tuple(sorted(e.source for e in path))
        if key in shown:
            continue
        shown.add(key)
        steps = " -> ".join(f"{_short(e.source)} ({e.where})" for e in path)
        lines.append(f"    {steps} -> {_short(start)}")
    return "\n".join(lines)


def _shortest_cycle(start: str, following: dict[str, list[Edge]]) -> list[Edge]:
    came: dict[str, Edge] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for edge in following.get(node, []):
            if edge.target == start:
                path = [edge]
                while path[0].source != start:
                    path.insert(0, came[path[0].source])
                return path
            if edge.target not in came:
                came[edge.target] = edge
                queue.append(edge.target)
    raise AssertionError(f"{start} is in no circle")


def _as_known(component: frozenset[str]) -> str:
    return "frozenset({" + ", ".join(f'"{_short(m)}"' for m in sorted(component)) + "})"


@functools.cache
def _package() -> tuple[dict[str, Module], set[Edge]]:
    modules = load_package()
    return modules, import_graph(modules)


def _circle_report(
    nodes: set[str], edges: set[Edge], known: frozenset[frozenset[str]], name: str
) -> list[str]:
    found = {frozenset(_short(m) for m in c): c for c in circles(nodes, edges)}
    new = [found[c] for c in found if c not in known]
    report = [describe(c, edges) for c in sorted(new, key=sorted)]
    report += [
        f"{name} lists a circle that is gone or changed shape (take it out): {sorted(c)}"
        for c in sorted(known - set(found), key=sorted)
    ]
    if new:
        report.append(f"as {name} entries:\n" + "\n".join(map(_as_known, new)))
    return report


def test_no_module_imports_in_a_circle() -> None:
    modules, edges = _package()
    report = _circle_report(set(modules), edges, KNOWN_CIRCLES, "KNOWN_CIRCLES")
    assert not report, "\n\n".join(report)


def test_no_room_imports_in_a_circle() -> None:
    """Rooms (discord_mcp's folders and top modules) form layers: a room that imports
    another is not imported back by it, even through other rooms."""
    modules, edges = _package()
    rooms = {room(m) for m in modules}
    report = _circle_report(rooms, room_graph(edges), KNOWN_ROOM_CIRCLES, "KNOWN_ROOM_CIRCLES")
    assert not report, "\n\n".join(report)


def test_no_module_is_over_500_lines() -> None:
    modules, _ = _package()
    long = {_short(m.name): m.lines for m in modules.values() if m.lines > MAX_LINES}
    report = [
        f"{name}: {lines} lines (over {MAX_LINES}: split it along a seam a reader can name)"
        for name, lines in sorted(long.items())
        if name not in KNOWN_LONG
    ]
    report += [
        f"KNOWN_LONG lists {name}, which is no longer over {MAX_LINES} lines (take it out)"
        for name in sorted(KNOWN_LONG - set(long))
    ]
    assert not report, "\n".join(report)


FRAMEWORK = ("fastmcp", "mcp")
"""The MCP framework: one module owns it (CLAUDE.md's choke points); the tool modules get the
server object from it."""
FRAMEWORK_OWNER = "server.app"


def test_only_the_server_app_imports_the_mcp_framework() -> None:
    modules, _ = _package()
    found: set[str] = set()
    for module in modules.values():
        for node in ast.walk(module.tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if any(n.split(".")[0] in FRAMEWORK for n in names):
                found.add(_short(module.name))
    assert found == {FRAMEWORK_OWNER}, f"the MCP framework is imported by {sorted(found)}"


def test_the_graph_sees_imports_in_functions_and_through_reexports(tmp_path: Path) -> None:
    """The reader itself: a circle hidden in a function and one through a package's
    ``__init__`` are both found, and an import of a re-exported name is not taken for one."""
    package = tmp_path / PACKAGE
    (package / "room").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "room" / "__init__.py").write_text(
        "from discord_mcp.room.low import Low\n", encoding="utf-8"
    )
    (package / "room" / "low.py").write_text(
        "class Low:\n    def up(self):\n        from discord_mcp import high\n", encoding="utf-8"
    )
    (package / "room" / "sibling.py").write_text("from . import Low\n", encoding="utf-8")
    (package / "high.py").write_text("from discord_mcp.room import Low\n", encoding="utf-8")
    modules = load_package(tmp_path)
    edges = import_graph(modules)
    pairs = {(e.source, e.target) for e in edges}
    assert ("discord_mcp.high", "discord_mcp.room.low") in pairs
    assert ("discord_mcp.room.low", "discord_mcp.high") in pairs
    assert ("discord_mcp.room.sibling", "discord_mcp.room.low") in pairs
    assert ("discord_mcp.room.sibling", "discord_mcp.room") not in pairs
    assert circles(set(modules), edges) == [frozenset({"discord_mcp.high", "discord_mcp.room.low"})]

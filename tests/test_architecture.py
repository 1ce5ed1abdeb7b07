"""The Python package's import graph, computed from its source with ``ast``: no import circle and
no module importing another module's private name.

What counts as an import: every ``import`` and ``from ... import`` statement anywhere in a
module of ``python/vegaslab`` (at module level, inside functions, methods, ``try`` blocks and
``if`` branches), except inside ``if TYPE_CHECKING:`` blocks, which never run, so they order
nothing at import time and cannot form a circle that bites.

How a statement becomes edges of the graph (nodes are the package's modules; a package's
``__init__.py`` is the package's own module, named like the package):

- ``import a.b.c`` imports ``a.b.c`` and, on the way, the packages ``a`` and ``a.b``;
- ``from P import n`` imports ``P`` and, when ``P.n`` is a module, ``P.n`` too;
- a package on the way that is an ancestor of the importing module adds no edge: Python
  imports a module's ancestors before the module itself, so that edge orders nothing new. A
  *name* taken from an ancestor's ``__init__`` (``from . import ScenarioError``) still counts,
  because it needs that ``__init__`` to have run.

A private name is one starting with ``_`` that is not a dunder (``__version__``). Importing one
from another module (``from .results import _frame``), or reading one as an attribute of an
imported module (``vegaslab._load_core()``), couples the two modules through something the
owner may change freely, so it is refused. The one exception is ``_core``: the compiled
extension, private so that users go through the Python API, and imported by the few modules
that bridge to it.

The package is in layers (:data:`LAYERS`, lowest first; docs/architecture.md, "Layers"): a
module may import its own layer and the layers below it, never a layer above, counting imports
inside functions as well. A name that moved up a layer stays readable from its old module
through :func:`vegaslab.deprecation.moved_names`, which finds the new module by its path when
outside code reads the old name: the old module imports nothing of the higher layer.

Run as a script, it prints the circles, the private imports and the upward imports it finds
and the graph's size (``python tests/test_architecture.py [PACKAGE_DIR]``).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "python" / "vegaslab"

#: Private names any module may import: the compiled extension module.
ALLOWED_PRIVATE = frozenset({"_core"})

#: The package's layers, lowest first, each with the modules and packages it holds (a package
#: with all its modules). A module belongs to the longest name listed that is the module or one
#: of its packages; the package ``vegaslab`` itself (its ``__init__``, which re-exports the public
#: API) names only that module, so every new module must be placed here before the test passes.
#: The old module paths kept for one release (:func:`alias_modules`) belong to the top layer:
#: each imports the module it stands for.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # what every layer needs: errors, old-path warnings, Ctrl-C, safe files, the bridge to the
    # compiled core, scenario text, Weigle and Feng's alpha/beta heuristics (computed by the core),
    # the core's registry of algorithms and its schema of the normalised scenario, spelling hints,
    # the base class of Python controllers
    ("foundation", ("vegaslab.errors", "vegaslab.deprecation", "vegaslab.interrupts", "vegaslab.safe_io",
                    "vegaslab.outdir", "vegaslab.core", "vegaslab.scenario", "vegaslab.heuristics",
                    "vegaslab.registry", "vegaslab.schema", "vegaslab.spelling", "vegaslab.controller")),
    # one run: simulate it, its results as columns and tables, its plots, what they mark and
    # the files they are written to, the fairness index
    ("run", ("vegaslab.simulation", "vegaslab.results", "vegaslab.columns", "vegaslab.plots", "vegaslab.figure_marks",
             "vegaslab.figure_formats", "vegaslab.fairness")),
    # many runs, and the other systems a run is compared with: sweeps with their engine and
    # store, ns-2, the Linux kernel's BPF congestion controls and the testbed, the benchmark
    ("engines", ("vegaslab.sweeps", "vegaslab.ns2", "vegaslab.kernel", "vegaslab.testbed", "vegaslab.bench")),
    # the papers: catalog, comparison, claims, metrics, runner, robustness studies
    ("study", ("vegaslab.study",)),
    # what a study found, as the report's pages, figures and tables
    ("report", ("vegaslab.report",)),
    # the front doors: the package's public API, reproduce (a study and its report), the command line
    ("front", ("vegaslab", "vegaslab.__main__", "vegaslab.reproduction", "vegaslab.cli")),
)


@dataclass
class Graph:
    modules: dict[str, Path]
    edges: dict[str, set[str]] = field(default_factory=dict)
    #: (importing module, line, the private name, where it was taken from)
    private: list[tuple[str, int, str, str]] = field(default_factory=list)


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of the package."""
    root = package_dir.name
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir).with_suffix("")
        parts = [root, *rel.parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__")) and name not in ALLOWED_PRIVATE


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _statements(tree: ast.AST):
    """Every import statement and attribute read, skipping ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Attribute)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def build(package_dir: Path = PACKAGE_DIR) -> Graph:
    modules = module_names(package_dir)
    graph = Graph(modules, {m: set() for m in modules})
    for mod, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        ancestors = set(_ancestors(mod))
        here = mod if is_package else mod.rpartition(".")[0]  # what `from . import` means
        aliases: dict[str, str] = {}  # local name -> package module it is bound to
        edges = graph.edges[mod]

        def add(target: str, *, named: bool) -> None:
            """An edge to ``target`` and the packages on its way (ancestors of ``mod`` only when
            ``named``: a name is read from that ``__init__``)."""
            for pkg in _ancestors(target):
                if pkg in modules and pkg not in ancestors and pkg != mod:
                    edges.add(pkg)
            if target in modules and target != mod and (named or target not in ancestors):
                edges.add(target)

        nodes = list(_statements(tree))
        for node in nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] != package_dir.name:
                        continue
                    add(a.name, named=False)
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source.split(".")[0] != package_dir.name:
                    continue
                for a in node.names:
                    sub = f"{source}.{a.name}"
                    if sub in modules or a.name in ALLOWED_PRIVATE:  # a submodule (`_core`: compiled)
                        add(source, named=False)
                        add(sub, named=False)
                        aliases[a.asname or a.name] = sub
                    else:  # a name defined in `source`
                        add(source, named=True)
                        if _is_private(a.name) and source != mod:
                            graph.private.append((mod, node.lineno, a.name, source))
        for node in nodes:  # `vegaslab._load_core()` after `import vegaslab`
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and _is_private(node.attr):
                owner = aliases[node.value.id]
                if owner != mod and f"{owner}.{node.attr}" not in modules:
                    graph.private.append((mod, node.lineno, node.attr, owner))
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each as one
    circle through it: ``[a, b, c, a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def strongconnect(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.edges[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph.edges):
        if v not in index:
            strongconnect(v)
    return [_circle_through(graph, set(c)) + [f"({len(c)} modules in this circle)"] for c in found]


def _circle_through(graph: Graph, component: set[str]) -> list[str]:
    """One circle inside a strongly connected component, by a breadth-first search back to its
    first module."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.edges[v] & component):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(component)  # pragma: no cover - a component always has a circle


# --------------------------------------------------------------------------- tests


def test_the_package_has_no_import_circle():
    graph = build()
    found = cycles(graph)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_module_imports_another_modules_private_name():
    graph = build()
    assert not graph.private, "private names imported across modules:\n" + "\n".join(
        f"{mod} (line {line}) takes {name} from {source}" for mod, line, name, source in graph.private)


def alias_modules(graph: Graph) -> set[str]:
    """The deprecated alias modules (old paths kept for one release): they call
    ``alias_module`` of :mod:`vegaslab.deprecation`."""
    return {m for m, path in graph.modules.items() if "alias_module(" in path.read_text(encoding="utf-8")
            and not m.endswith(".deprecation")}


def test_the_package_never_imports_its_own_deprecated_aliases():
    graph = build()
    aliases = alias_modules(graph)
    assert len(aliases) >= 8
    offenders = sorted(f"{m} imports {a}" for m, targets in graph.edges.items() for a in targets & aliases)
    assert not offenders, offenders


def layer_of(graph: Graph, layers=LAYERS) -> dict[str, int]:
    """Module -> the number of its layer (0 the lowest); a module no layer holds is left out."""
    root = next(iter(graph.modules)).split(".")[0] if graph.modules else ""
    aliases = alias_modules(graph)
    out = {}
    for mod in graph.modules:
        if mod in aliases:
            out[mod] = len(layers) - 1
            continue
        best = None
        for i, (_, names) in enumerate(layers):
            for name in names:
                if mod == name or (name != root and mod.startswith(name + ".")):
                    if best is None or len(name) > best[1]:
                        best = (i, len(name))
        if best is not None:
            out[mod] = best[0]
    return out


def upward_imports(graph: Graph, layers=LAYERS) -> list[tuple[str, str, str, str]]:
    """(module, its layer, imported module, the higher layer it is in) for every import that
    goes up."""
    where = layer_of(graph, layers)
    return sorted((m, layers[where[m]][0], t, layers[where[t]][0]) for m, targets in graph.edges.items()
                  for t in targets if m in where and t in where and where[t] > where[m])


def test_every_module_belongs_to_one_layer():
    graph = build()
    where = layer_of(graph)
    assert not sorted(set(graph.modules) - set(where)), "modules in no layer of LAYERS"
    names = [n for _, ns in LAYERS for n in ns]
    assert len(names) == len(set(names)), "a name in two layers"
    assert not [n for n in names if n not in graph.modules], "a layer names a module that does not exist"


def test_no_module_imports_a_module_of_a_higher_layer():
    up = upward_imports(build())
    assert not up, "imports from a lower layer to a higher one:\n" + "\n".join(
        f"{m} ({lm}) imports {t} ({lt})" for m, lm, t, lt in up)


def test_an_import_inside_a_function_from_a_lower_to_a_higher_layer_is_found(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "base.py": "def f():\n    from .top import g\n",
        "mid/__init__.py": "",
        "mid/m.py": "from .. import base\n",
        "top.py": "from .mid import m\ndef g(): pass\n",
    })
    layers = (("low", ("pkg.base",)), ("middle", ("pkg.mid",)), ("high", ("pkg", "pkg.top")))
    graph = build(root)
    assert layer_of(graph, layers) == {"pkg": 2, "pkg.base": 0, "pkg.mid": 1, "pkg.mid.m": 1, "pkg.top": 2}
    assert upward_imports(graph, layers) == [("pkg.base", "low", "pkg.top", "high")]


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def f():\n    from .sub import c\n",
        "sub/__init__.py": "",
        "sub/c.py": "import pkg.a\n",
    })
    found = cycles(build(root))
    assert [c[:-1] for c in found] == [["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]]


def test_a_name_taken_from_the_packages_init_is_an_edge_to_it(tmp_path):
    # __init__ re-exports from a module that reads a name back from __init__: a real circle
    # (the name may not be defined yet when the module runs).
    root = _package(tmp_path, {
        "__init__.py": "from .a import f\nclass Error(Exception): pass\n",
        "a.py": "from . import Error\ndef f(): pass\n",
    })
    assert [c[:-1] for c in cycles(build(root))] == [["pkg", "pkg.a", "pkg"]]


def test_importing_a_sibling_does_not_count_as_importing_the_package(tmp_path):
    # `from . import b` or `from .b import g` needs the package itself only as the way to b,
    # and the package was imported before `a` in any case.
    root = _package(tmp_path, {
        "__init__.py": "from .a import f\n",
        "a.py": "from . import b\nfrom .b import g\ndef f(): pass\n",
        "b.py": "def g(): pass\n",
    })
    graph = build(root)
    assert cycles(graph) == []
    assert graph.edges["pkg.a"] == {"pkg.b"}


def test_type_checking_imports_are_left_out(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n",
        "b.py": "from .a import _helper\n",
    })
    graph = build(root)
    assert graph.edges["pkg.a"] == set()
    assert graph.private == [("pkg.b", 1, "_helper", "pkg.a")]


def test_private_names_imported_or_read_across_modules_are_found(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "def _load(): pass\n__version__ = '1'\n",
        "a.py": ("import pkg\nfrom . import __version__, _core\nfrom .b import _g\n"
                 "def f():\n    return pkg._load()\n"),
        "b.py": "def _g(): pass\n",
    })
    assert sorted(build(root).private) == [("pkg.a", 3, "_g", "pkg.b"), ("pkg.a", 5, "_load", "pkg")]


if __name__ == "__main__":
    g = build(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE_DIR)
    found = cycles(g)
    for c in found:
        print("circle:", " -> ".join(c))
    for mod, line, name, source in g.private:
        print(f"private: {mod} (line {line}) takes {name} from {source}")
    up = upward_imports(g)
    for mod, lm, target, lt in up:
        print(f"upward: {mod} ({lm}) imports {target} ({lt})")
    print(f"{len(g.modules)} modules, {sum(map(len, g.edges.values()))} edges, {len(found)} circles "
          f"({sum(int(c[-1].split()[0][1:]) for c in found)} modules in circles), {len(g.private)} private imports, "
          f"{len(up)} upward imports across {len(LAYERS)} layers")

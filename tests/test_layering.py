"""The project's import graph: no cycle among its modules, and the packages' dependency direction holds.

cli -> synth -> verifier -> serving -> executors -> sandbox -> constraints -> catalog: no package
imports one to its left. The cli/ package (and the root cli.py, which only runs `cli.main`) is the
wiring layer: its modules may import every package, and no package imports it. The sandbox (isolation, the fork server, the pool of
workers), the executors (where units of work run: local processes or Ray actors) and serving
(gym and MCP over one env session) sit below the verifier, which uses all three. Every import counts, including the ones inside functions and under TYPE_CHECKING: a
deferred import still makes two modules depend on each other.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYER = {"catalog": 0, "constraints": 1, "sandbox": 2, "executors": 3, "serving": 4, "verifier": 5, "synth": 6,
         "cli": 7}  # a package imports only its own rank or lower; cli, the wiring, is above them all
PACKAGES = tuple(LAYER)
WIRING = "cli"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            modules[module_name(path)] = path
    return modules


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The project module `name` refers to (itself, or its nearest enclosing package); None if not ours."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `module` imports, anywhere in its body."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import sub` imports the submodule pkg.sub when there is one
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        found |= {target for target in (resolve(name, modules) for name in names) if target and target != module}
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {module: imports_of(module, path, modules) for module, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None (iterative depth-first search, modules in sorted order)."""
    state: dict[str, str] = {}  # "open" while on the current path, then "done"
    for start in sorted(graph):
        if start in state:
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = "open"
        while stack:
            target = next(stack[-1], None)
            if target is None:
                state[path.pop()] = "done"
                stack.pop()
            elif state.get(target) == "open":
                return path[path.index(target):] + [target]
            elif target not in state:
                state[target] = "open"
                path.append(target)
                stack.append(iter(sorted(graph.get(target, ()))))
    return None


def test_the_graph_sees_the_known_edges(graph):
    assert "catalog.store" in graph["catalog.search.index"] and "catalog.search.vectors" in graph["catalog.search.index"]
    assert "catalog.search.embeddings" in graph["catalog.search.vectors"] and "catalog.search.index" not in graph["catalog.search.vectors"]
    wired = {target.split(".")[0] for module, targets in graph.items() if module.split(".")[0] == WIRING
             for target in targets}
    assert wired == set(PACKAGES)  # the cli package's modules wire them all (and import each other)
    assert "cli.commands.verify" in graph["cli.parser"] and "cli.parser" in graph["cli.entry"]


def test_the_root_script_only_runs_the_cli_package():
    tree = ast.parse((ROOT / "cli.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert imported == {WIRING}


def test_no_package_imports_the_cli(graph):
    wrong = sorted(f"{module} imports {target}" for module, targets in graph.items()
                   if module.split(".")[0] != WIRING for target in targets if target.split(".")[0] == WIRING)
    assert wrong == []


def test_no_import_cycle_among_the_projects_modules(graph):
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph) or [])}"


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None  # a diamond is no cycle
    assert find_cycle({"a": {"b"}, "b": {"b2"}, "b2": {"b"}}) == ["b", "b2", "b"]


def test_no_package_imports_one_to_its_left(graph):
    wrong = sorted(f"{module} imports {target}" for module, targets in graph.items()
                   for target in targets if LAYER[target.split(".")[0]] > LAYER[module.split(".")[0]])
    assert wrong == [], "dependency direction is " + " -> ".join(sorted(LAYER, key=LAYER.get, reverse=True)) + ":\n" + "\n".join(wrong)

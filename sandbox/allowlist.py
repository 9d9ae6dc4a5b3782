"""What env code may import, and the static check done before any env code is loaded."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from catalog.runtime import local_module_names

ALLOWED_IMPORTS = frozenset({
    "__future__", "abc", "collections", "copy", "dataclasses", "datetime", "decimal", "enum", "fractions",
    "functools", "itertools", "json", "math", "operator", "random", "re", "statistics", "string", "typing",
    "typing_extensions", "uuid", "zoneinfo", "textwrap", "numbers", "bisect", "heapq",
    "sqlmodel", "sqlalchemy", "pydantic", "pydantic_core", "annotated_types", "catalog",
})


def _optional_imports(tree: ast.AST) -> set[ast.AST]:
    """Import statements guarded by `except ImportError` (or ModuleNotFoundError)."""
    guarded: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError") or
                isinstance(h.type, ast.Tuple) and any(getattr(e, "id", "") in ("ImportError", "ModuleNotFoundError")
                                                      for e in h.type.elts) for h in node.handlers):
            for statement in node.body:
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    guarded.add(statement)
    return guarded


def check_imports(env_dir: Path, allow_modules: Iterable[str] = ()) -> list[str]:
    """Imports in the env's modules that are neither allowed nor the env's own helper modules.

    `allow_modules` are the installed third-party modules this env was allowed at import
    (its manifest's `allow_modules`), allowed for it alone.
    """
    local = local_module_names(env_dir) | set(allow_modules)
    problems = []
    for path in sorted(env_dir.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError as exc:
            problems.append(f"syntax error in {path.name}: {exc.msg}")
            continue
        optional = _optional_imports(tree)
        for node in ast.walk(tree):
            if node in optional:
                continue  # inside `try: ... except ImportError`: it fails cleanly at run time
            names: list[str] = []
            line = 0
            if isinstance(node, ast.Import):
                names, line = [alias.name for alias in node.names], node.lineno
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names, line = [node.module], node.lineno
            for name in names:
                top = name.split(".")[0]
                if top not in ALLOWED_IMPORTS and top not in local:
                    problems.append(f"import {name} ({path.name}:{line})")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
                problems.append(f"__import__ call ({path.name}:{node.lineno})")
    return problems

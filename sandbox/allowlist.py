"""What env code may import, and the static check done before any env code is loaded.

Three kinds of module. `ALLOWED_IMPORTS` are the real modules. `STUBBED_IMPORTS` (subprocess,
socket, ctypes...) may be imported but not used: a worker gives env code a stand-in
(sandbox/_stubs.py) whose every use raises `SandboxRefusal` at the call, naming the module, so a
real file with an unused `import subprocess` at its top loads, and a call that uses it is refused
in one line. A module is stubbed when importing it is plausible in real code that never uses it,
the import itself does nothing (the stand-in is code of ours: nothing of the real module is
loaded), and everything it could do is refused twice over: at the call by the stand-in, and
under it by seccomp or the audit hook (processes, sockets) or by never giving the real module at
all (ctypes, whose native calls could rewrite the process's memory where seccomp cannot see).
Submodules (`ctypes.util`, `multiprocessing.pool`) are not stubbed and stay refused, as does
every other module: those with harmless submodules (`urllib.parse`) would be refused under a
stand-in's name, and private or runtime modules (`_socket`, `asyncio`) have no plausible unused
import. Which names `import --allow-module` can never allow is `never_allowed`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType

from catalog.runtime import local_module_names

ALLOWED_IMPORTS = frozenset({
    "__future__", "abc", "collections", "copy", "dataclasses", "datetime", "decimal", "enum", "fractions",
    "functools", "itertools", "json", "math", "operator", "random", "re", "statistics", "string", "typing",
    "typing_extensions", "uuid", "zoneinfo", "textwrap", "numbers", "bisect", "heapq",
    "sqlmodel", "sqlalchemy", "pydantic", "pydantic_core", "annotated_types", "catalog",
})
# module -> what using it would do (the refusal says it); each is also pruned from the worker's module cache
STUBBED_IMPORTS: Mapping[str, str] = MappingProxyType({
    "subprocess": "start processes", "multiprocessing": "start processes", "pty": "start processes",
    "socket": "open sockets", "ssl": "open network connections", "smtplib": "open network connections",
    "ftplib": "open network connections", "webbrowser": "open a browser", "select": "wait on sockets and pipes",
    "selectors": "wait on sockets and pipes", "ctypes": "call native code", "mmap": "map memory",
    "fcntl": "control file descriptors", "termios": "control terminals", "resource": "change process limits",
})
# What the sandbox never gives env code, whatever its manifest allows: processes, sockets, native calls.
NEVER_ALLOWED = frozenset({
    *STUBBED_IMPORTS, "_posixsubprocess", "_socket", "_ctypes", "pyseccomp", "_multiprocessing", "_ssl",
    "asyncio", "http", "urllib", "_thread",
})


def never_allowed(name: str) -> bool:
    """Whether `--allow-module` can never allow this module (a top-level name): a flag naming it is refused."""
    return name.split(".")[0] in NEVER_ALLOWED


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
    """Imports in the env's modules that are neither allowed, stubbed nor the env's own helper modules.

    `allow_modules` are the installed third-party modules this env was allowed at import
    (its manifest's `allow_modules`), allowed for it alone. Each problem reads `import NAME (FILE:LINE)`.
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
                if name in STUBBED_IMPORTS:
                    continue  # a stand-in: the import loads, a use is refused at the call
                if top not in ALLOWED_IMPORTS and top not in local:
                    problems.append(f"import {name} ({path.name}:{line})")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
                problems.append(f"__import__ call ({path.name}:{node.lineno})")
    return problems

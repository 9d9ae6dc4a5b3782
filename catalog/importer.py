"""Import an externally written class-based environment (EnvScaler/BFCL style) into the catalog.

The module, plus the sibling modules it imports from its own folder tree (by plain, package or
relative import), is copied into a new env folder; relative imports in the copied files are
made absolute so the folder is self-contained. Third-party imports that are not installed are
named: unguarded ones stop the import with the install command; ones inside
`try/except ImportError` are reported and left to the module's own fallback. The class is
loaded once with each init config to prove the env works before anything is written: in the
sandbox by default (verifier/loadcheck.py), since loading runs the module's code.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import libcst as cst

from catalog.models import EnvManifest, Provenance, ToolDescriptor
from catalog.pids import process_alive
from catalog.runtime import ClassRuntime, EnvLoadError, load_module
from catalog.store import Catalog, CatalogError, EnvHandle

__all__ = ["import_class_env", "ImportReport", "ImportProblem", "LoadCheck", "in_process_check", "clean_stale_checks"]

_CHECK_PREFIX = ".import-check-"


class ImportProblem(CatalogError):
    """The module cannot become a catalog env; the message says what to do."""


@dataclass
class ImportReport:
    """What the import did, for the CLI to print."""

    handle: EnvHandle
    files: list[str]
    optional_missing: list[str] = field(default_factory=list)
    failure_exceptions: list[str] = field(default_factory=list)


def _imports(source: str) -> list[tuple[str, int, bool]]:
    module = cst.parse_module(source)
    found: list[tuple[str, int, bool]] = []

    class Visitor(cst.CSTVisitor):
        guarded = 0

        def visit_Try(self, node: cst.Try) -> None:
            if any(h.type is not None and re.search(r"ImportError|ModuleNotFoundError", module.code_for_node(h.type))
                   for h in node.handlers):
                self.guarded += 1

        def leave_Try(self, node: cst.Try) -> None:
            if any(h.type is not None and re.search(r"ImportError|ModuleNotFoundError", module.code_for_node(h.type))
                   for h in node.handlers):
                self.guarded -= 1

        def visit_Import(self, node: cst.Import) -> None:
            for alias in node.names:
                found.append((module.code_for_node(alias.name), 0, self.guarded > 0))

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            name = module.code_for_node(node.module) if node.module is not None else ""
            found.append((name, len(node.relative), self.guarded > 0))
            if node.module is None and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    found.append((module.code_for_node(alias.name), len(node.relative), self.guarded > 0))

    module.visit(Visitor())
    return found


def _resolve_local(name: str, level: int, importer: Path, roots: list[Path]) -> Path | None:
    """The file a local import refers to, searching the importer's folder and its packages' roots."""
    parts = [p for p in name.split(".") if p]
    bases = [importer.parent.parents[level - 2] if level >= 2 else importer.parent] if level else roots
    for base in bases:
        for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if parts and candidate.is_file():
                return candidate
    return None


def _package_roots(path: Path) -> list[Path]:
    """The module's folder and every ancestor up to the top of its package (`__init__.py` chain)."""
    roots = [path.parent]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
        roots.append(folder)
    return roots


class _MakeAbsolute(cst.CSTTransformer):
    """Rewrite `from .x import y` (and `from . import x`) as imports relative to the env folder."""

    def __init__(self, package: list[str]) -> None:
        self.package = package

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        if not updated.relative:
            return updated
        level = len(updated.relative)
        base = self.package[: len(self.package) - (level - 1)] if level > 1 else list(self.package)
        tail = cst.Module([]).code_for_node(updated.module).split(".") if updated.module is not None else []
        dotted = ".".join([*base, *tail])
        if not dotted:
            raise ImportProblem("`from . import x` at the top of the env folder cannot be made absolute")
        return updated.with_changes(relative=[], module=cst.parse_expression(dotted))


def _collect(entry: Path) -> tuple[dict[Path, Path], list[str], list[str]]:
    """Files to copy (source -> path inside the env folder), missing required and optional packages."""
    roots = _package_roots(entry)
    top = roots[-1]
    files: dict[Path, Path] = {}
    missing: list[str] = []
    optional: list[str] = []
    queue = [entry]
    while queue:
        current = queue.pop()
        if current in files:
            continue
        files[current] = current.relative_to(top) if current != entry else Path("env.py")
        for name, level, guarded in _imports(current.read_text(encoding="utf-8")):
            local = _resolve_local(name, level, current, [current.parent, *roots])
            if local is not None:
                queue.append(local)
                init = local.parent / "__init__.py"
                while init.is_file() and top in init.parents:
                    queue.append(init)
                    init = init.parent.parent / "__init__.py"
                continue
            if level or not name:
                continue
            head = name.split(".")[0]
            if head in sys.stdlib_module_names or head in ("catalog",):
                continue
            if importlib.util.find_spec(head) is None:
                (optional if guarded else missing).append(head)
    return files, sorted(set(missing)), sorted(set(optional) - set(missing))


def _copy_text(source: Path, entry: Path, top: Path) -> str:
    text = source.read_text(encoding="utf-8")
    module = cst.parse_module(text)
    if source == entry:
        package = list(entry.parent.relative_to(top).parts)
    else:
        relative = source.relative_to(top)
        package = list(relative.parent.parts)
    return module.visit(_MakeAbsolute(package)).code


def _raised_exceptions(source: str, class_name: str) -> list[str]:
    """Exception types a class raises itself: its failure convention (EnvScaler/BFCL)."""
    module = cst.parse_module(source)
    names: set[str] = set()
    for node in module.body:
        if isinstance(node, cst.ClassDef) and node.name.value == class_name:
            for match in re.finditer(r"raise\s+([A-Za-z_][A-Za-z0-9_]*)", module.code_for_node(node)):
                names.add(match.group(1))
    return sorted(names)


def _entry_class(source: str, wanted: str | None) -> str:
    module = cst.parse_module(source)
    classes = [n for n in module.body if isinstance(n, cst.ClassDef)]
    if wanted:
        if wanted not in [c.name.value for c in classes]:
            raise ImportProblem(f"No class {wanted!r}; the module defines {[c.name.value for c in classes]}")
        return wanted
    def has_tools(node: cst.ClassDef) -> bool:
        return any(isinstance(s, cst.FunctionDef) and not s.name.value.startswith("_") for s in node.body.body)
    candidates = [c.name.value for c in classes if has_tools(c)]
    if len(candidates) != 1:
        raise ImportProblem(f"Cannot tell which class is the env: {candidates or 'none with public methods'}; "
                            "pass --class NAME")
    return candidates[0]


class LoadCheck(Protocol):
    """Loads an env folder and resets it with every state; returns its tools or raises ImportProblem."""

    def __call__(self, folder: Path, entry: str, failure_exceptions: list[str],
                 states: dict[str, dict[str, Any]]) -> list[ToolDescriptor]: ...


def in_process_check(folder: Path, entry: str, failure_exceptions: list[str],
                     states: dict[str, dict[str, Any]]) -> list[ToolDescriptor]:
    """The load check in this process: for code the caller vouches for (`import --trusted`)."""
    try:
        module = load_module(folder / "env.py", f"envforge_import_{folder.name.replace('-', '_').replace('.', '_')}")
    except EnvLoadError as exc:
        raise ImportProblem(str(exc)) from exc
    runtime = ClassRuntime(getattr(module, entry), failure_exceptions=failure_exceptions)
    for name, config in states.items():
        try:
            runtime.reset(config)
            runtime.snapshot()
        except Exception as exc:
            raise ImportProblem(f"Config {name!r} does not load into {entry}: {exc}") from exc
    return list(runtime.tools.values())


def clean_stale_checks(root: Path) -> None:
    """Remove load-check folders left in the catalog by imports that were killed."""
    for folder in root.glob(f"{_CHECK_PREFIX}*"):
        pid = folder.name.rsplit("-", 1)[-1]
        if pid.isdigit() and (int(pid) == os.getpid() or process_alive(int(pid))):
            continue
        shutil.rmtree(folder, ignore_errors=True)



def _class_doc(source: str, entry: str) -> str:
    """The env class's docstring, read from the source (the code is not imported here)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == entry:
            return (ast.get_docstring(node) or "").strip()
    return ""


def _configs(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """Init configs by state name; a file may hold one config, an EnvScaler record or a list."""
    states: dict[str, dict[str, Any]] = {}
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ImportProblem(f"Config {path} is not readable JSON: {exc}") from exc
        items = data if isinstance(data, list) else [data]
        for index, item in enumerate(items, 1):
            config = item.get("init_config", item) if isinstance(item, dict) else None
            if isinstance(config, str):
                config = json.loads(config)
            if not isinstance(config, dict):
                raise ImportProblem(f"Config {path} item {index} is not a JSON object")
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", path.stem) + (f"-{index}" if len(items) > 1 else "")
            states[name] = config
    return states


def import_class_env(path: Path, catalog: Catalog, *, class_name: str | None = None, configs: list[Path] = (),
                     env_id: str | None = None, replace: bool = False, check: LoadCheck | None = None) -> ImportReport:
    """Turn `path` (a module defining an environment class) into a catalog env; see module doc.

    `check` loads the copied files and every config; it runs the module's code, so pass the
    sandboxed one (verifier.loadcheck.sandbox_load_check) for code you do not trust. Without it,
    the check runs in this process (`in_process_check`): trusted code only.
    """
    path = Path(path).resolve()
    if not path.is_file() or path.suffix != ".py":
        raise ImportProblem(f"{path} is not a Python file")
    source = path.read_text(encoding="utf-8")
    try:
        entry = _entry_class(source, class_name)
    except cst.ParserSyntaxError as exc:
        raise ImportProblem(f"{path} does not parse: {exc}") from exc
    files, missing, optional = _collect(path)
    if missing:
        raise ImportProblem(f"{path.name} imports packages that are not installed: {', '.join(missing)}. "
                            f"Install them (pip install {' '.join(missing)}) or make the imports optional.")
    states = _configs(list(configs))
    if not states:
        states = {"empty": {}}
    top = _package_roots(path)[-1]
    texts = {str(target): _copy_text(origin, path, top) for origin, target in files.items()}
    env_id = env_id or re.sub(r"[^A-Za-z0-9_.-]", "-", re.sub(r"(?<!^)(?=[A-Z])", "-", entry).lower())
    failure_exceptions = [e for e in _raised_exceptions(source, entry) if e != "NotImplementedError"]

    # Prove it works before writing: load the copied files and reset with every config.
    clean_stale_checks(Path(catalog.root))
    staging = Path(catalog.root) / f"{_CHECK_PREFIX}{env_id}-{os.getpid()}"
    try:
        for relative, text in texts.items():
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            (staging / relative).write_text(text, encoding="utf-8")
        tools = (check or in_process_check)(staging, entry, failure_exceptions, states)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    doc = _class_doc(source, entry)
    manifest = EnvManifest(
        id=env_id, name=entry, kind="class", entry=entry, topic="imported", description=doc.split("\n\n")[0],
        tools=tools, failure_exceptions=failure_exceptions,
        provenance=Provenance(backend="import", source=str(path)),
    )
    extra = {k: v for k, v in texts.items() if k != "env.py"}
    handle = catalog.write_env(manifest, texts["env.py"], states, [], replace=replace, extra_files=extra)
    return ImportReport(handle, sorted(texts), optional, failure_exceptions)

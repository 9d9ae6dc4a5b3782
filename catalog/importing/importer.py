"""Import an externally written environment into the catalog, in any of four conventions.

The conventions (catalog/importing/conventions.py): a class with state in attributes (EnvScaler/BFCL), one
class per tool over a shared data dict (tau-bench), a toolkit of decorated methods over a pydantic
database (tau2-bench), module-level functions over a module-level dict. Detected from the syntax
tree, or forced (`convention=`).

The module, plus the sibling modules it imports from its own folder tree (by plain, package or
relative import), is copied into a new env folder; relative imports in the copied files are
made absolute and every copied package folder gets an `__init__.py`, so the package path
(`from pkg.sub.module import X`) resolves inside the folder, in the sandbox too. A package
`__init__.py` the copied modules import no name from is only on the way to them: it is copied as
a marker without its code (a framework's top package importing its LLM client never runs). An
entry that is a package's `__init__.py` is copied to its package place too, where
`catalog.runtime.load_module` loads it as that package. The package
root is found by walking up while `__init__.py` exists, or named (`package_root=`). Imports
that do not resolve are named: not installed (with the install command), not found under the
package root, or a module that fails to load. Ones inside `try/except ImportError` are reported
and left to the module's own fallback. How the env signals failure is inferred from the syntax
tree (catalog/importing/failures.py) or declared. The env is loaded once with each init config to prove
it works before anything is written: in the sandbox by default (sandbox/loadcheck.py), since
loading runs the module's code.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import libcst as cst

from catalog.importing.conventions import ConventionError, Detected, detect
from catalog.importing.failures import infer_failure, merge_failure, with_helpers
from catalog.models import Convention, EnvManifest, FailureConvention, Provenance, ToolDescriptor
from catalog.names import check_env_id
from catalog.runs.pids import process_alive
from catalog.runtime import EnvLoadError, load_module, runtime_for
from catalog.store import Catalog, CatalogError, EnvHandle, runtime_options

__all__ = ["import_env", "import_class_env", "ImportReport", "ImportProblem", "LoadCheck", "in_process_check",
           "clean_stale_checks", "check_allowed_modules"]

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
    convention: Convention = "class"
    failure: FailureConvention = field(default_factory=FailureConvention)
    third_party: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Import:
    """One imported module: `import module` (`names` None) or `from module import names` (`*` for a star)."""

    module: str
    level: int
    guarded: bool  # inside `try/except ImportError`: the module's own fallback handles its absence
    names: tuple[str, ...] | None = None


def _imports(source: str) -> list[_Import]:
    module = cst.parse_module(source)
    found: list[_Import] = []

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
                found.append(_Import(module.code_for_node(alias.name), 0, self.guarded > 0))

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            name = module.code_for_node(node.module) if node.module is not None else ""
            names = ("*",) if isinstance(node.names, cst.ImportStar) else \
                tuple(module.code_for_node(alias.name) for alias in node.names)
            found.append(_Import(name, len(node.relative), self.guarded > 0, names))

    module.visit(Visitor())
    return found


def _through_symlink(path: Path, top: Path) -> bool:
    """True if `path` or a folder between it and `top` is a symlink (its target could be any host file)."""
    while path != top and top in path.parents:
        if path.is_symlink():
            return True
        path = path.parent
    return False


def _resolve_local(name: str, level: int, importer: Path, roots: list[Path]) -> Path | None:
    """The file a local import refers to, searching the importer's folder and its packages' roots.

    `from . import x` names the importer's package itself: its `__init__.py`.
    """
    parts = [p for p in name.split(".") if p]
    bases = [importer.parent.parents[level - 2] if level >= 2 else importer.parent] if level else roots
    for base in bases:
        if not parts and level and (base / "__init__.py").is_file():
            return base / "__init__.py"
        for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if parts and candidate.is_file():
                return candidate
    return None


def _needed(statement: _Import, importer: Path, roots: list[Path]) -> list[Path] | None:
    """The local files whose code an import runs for what it names; None if it is not a local import.

    `from pkg import sub` needs the submodule, `from pkg import name` (or `import pkg`) the
    package's `__init__.py`; `from pkg.sub.mod import name` needs only `mod`. The packages above
    a needed file are only the path to it (`_package_chain`): their `__init__.py` code is not needed.
    """
    module = _resolve_local(statement.module, statement.level, importer, roots)
    needed: list[Path] = []
    from_module = statement.names is None  # `import pkg.mod`: the module itself
    for name in statement.names or ():
        dotted = f"{statement.module}.{name}" if statement.module else name
        sub = None if name == "*" else _resolve_local(dotted, statement.level, importer, roots)
        if sub is None:
            from_module = True
        else:
            needed.append(sub)
    if module is not None and (from_module or module.name != "__init__.py"):
        needed.append(module)
    return needed if module is not None or needed else None


def _package_chain(path: Path, top: Path) -> list[Path]:
    """The `__init__.py` of every package above `path`, up to `top`: Python runs them to reach it."""
    chain = []
    folder = path.parent.parent if path.name == "__init__.py" else path.parent
    while (folder / "__init__.py").is_file() and top in (folder / "__init__.py").parents:
        chain.append(folder / "__init__.py")
        folder = folder.parent
    return chain


def _package_roots(path: Path, package_root: Path | None = None) -> list[Path]:
    """The module's folder and every ancestor up to the top of its package.

    The top is the folder the package path starts from: `package_root` if named, else the parent
    of the last folder of the `__init__.py` chain.
    """
    roots = [path.parent]
    folder = path.parent
    if package_root is not None:
        while folder != package_root and folder.parent != folder:
            folder = folder.parent
            roots.append(folder)
        return roots
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


MARKER = "# envforge: only a package marker here; the env's modules need none of this package's __init__.py code\n"


@dataclass
class _Collected:
    """What the entry module pulls in: files to copy, package markers, and imports that are not local."""

    files: dict[Path, Path]
    trees: dict[Path, ast.Module]
    optional: list[str]
    third_party: list[str]
    markers: list[Path] = field(default_factory=list)  # `__init__.py`s on the way to a needed module, copied as MARKER


def _unresolved(name: str, path: Path, roots: list[Path], top: Path, named_root: bool) -> str:
    """Why an absolute import that is neither local nor installed does not resolve (one clause)."""
    head = name.split(".")[0]
    under = [root for root in roots if (root / head).is_dir() or (root / f"{head}.py").is_file()]
    if under:
        module = "/".join(name.split("."))
        return f"`{name}` is not found under the package root {under[-1]} (no {module}.py or {module}/__init__.py)"
    ancestors = [folder for folder in path.parents if folder.name == head]
    if ancestors and not named_root:
        return (f"`{head}` is not installed and looks like the package {path.name} is in ({ancestors[0]}): "
                f"pass --package-root {ancestors[0].parent}")
    if named_root:
        return f"`{head}` is not found under the package root {top} and is not installed (pip install {head})"
    return f"`{head}` is not installed (pip install {head})"


def _collect(entry: Path, package_root: Path | None) -> _Collected:
    """Files to copy (source -> path inside the env folder) and the third-party modules imported.

    Raises ImportProblem naming every import that does not resolve, and every local module that
    does not parse.
    """
    roots = _package_roots(entry, package_root)
    top = roots[-1]
    files: dict[Path, Path] = {}
    trees: dict[Path, ast.Module] = {}
    problems: list[str] = []
    optional: list[str] = []
    third_party: list[str] = []
    # Packages Python passes through to reach a needed module: their `__init__.py` runs then, but an
    # `__init__.py` nothing imports a name from is only a marker (a framework's top package that
    # imports its LLM client, its user simulator): copied without its code.
    chain: set[Path] = set(_package_chain(entry, top)) if entry.name == "__init__.py" else set()
    why: dict[Path, str] = {}  # a package's `__init__.py` needed for names: which import needs it
    queue = [entry]
    while queue:
        current = queue.pop()
        if current in files:
            continue
        shown = current.relative_to(top)
        files[current] = shown if current != entry else Path("env.py")
        if current != entry and _through_symlink(current, top):
            problems.append(f"{shown} is a symlink (or inside one): import copies regular files "
                            "only, never what a link points to; replace it with a copy")
            continue
        text = current.read_text(encoding="utf-8")
        try:
            trees[current] = ast.parse(text)
            found = _imports(text)
        except (SyntaxError, cst.ParserSyntaxError) as exc:
            detail = str(exc).splitlines()[0]
            problems.append(f"{current.name} does not parse: {detail}" if current == entry else
                            f"imports a module that fails: {shown}: SyntaxError: {detail}")
            continue
        for statement in found:
            name, level = statement.module, statement.level
            needed = _needed(statement, current, [current.parent, *roots])
            outside = [path for path in needed or () if top not in path.parents]
            if outside:
                common = Path(os.path.commonpath([outside[0], entry]))
                problems.append(f"`{'.' * level}{name}` is outside the package root {top}: pass --package-root "
                                f"{common.parent}")
                continue
            if needed is not None:
                for path in needed:
                    queue.append(path)
                    chain.update(_package_chain(path, top))
                    if path.name == "__init__.py" and path not in why:
                        what = ", ".join(f"`{n}`" for n in statement.names) if statement.names else "the package"
                        why[path] = (f"{path.relative_to(top)} runs because {shown} imports {what} from it; "
                                     "import that from the module that defines it and this __init__.py is left out")
                continue
            if level or not name:
                continue
            head = name.split(".")[0]
            if head in sys.stdlib_module_names or head in ("catalog",):
                continue
            if importlib.util.find_spec(head) is not None:
                third_party.append(head)
            elif statement.guarded:
                optional.append(head)
            else:
                clause = _unresolved(name, current, roots, top, package_root is not None)
                problems.append(clause if current == entry else
                                f"{shown}: {clause}" + (f" ({why[current]})" if current in why else ""))
    if problems:
        unique = list(dict.fromkeys(problems))
        raise ImportProblem(f"{entry.name}: " + "; ".join(unique))
    markers = sorted(path.relative_to(top) for path in chain - set(files) if path != entry)
    return _Collected(files, trees, sorted(set(optional)), sorted(set(third_party)), markers)


def _copy_text(source: Path, entry: Path, top: Path) -> str:
    text = source.read_text(encoding="utf-8")
    module = cst.parse_module(text)
    if source == entry:
        package = list(entry.parent.relative_to(top).parts)
    else:
        relative = source.relative_to(top)
        package = list(relative.parent.parts)
    return module.visit(_MakeAbsolute(package)).code


def _package_inits(texts: dict[str, str]) -> dict[str, str]:
    """An empty `__init__.py` for every copied folder without one, so the package path resolves as a package."""
    inits: dict[str, str] = {}
    for relative in list(texts):
        for folder in Path(relative).parents:
            if str(folder) != "." and str(folder / "__init__.py") not in texts:
                inits[str(folder / "__init__.py")] = ""
    return inits


def check_allowed_modules(names: list[str]) -> None:
    """Raise ImportProblem (one line) for an `--allow-module` name that is not an installed module."""
    for name in names:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ImportProblem(f"--allow-module {name!r}: give a top-level module name (e.g. yaml)")
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            raise ImportProblem(f"--allow-module {name}: no installed module {name!r} (pip install {name})")


class LoadCheck(Protocol):
    """Loads an env folder as `manifest` says and resets it with every state; returns its tools or raises ImportProblem."""

    def __call__(self, folder: Path, manifest: EnvManifest, states: dict[str, dict[str, Any]]) -> list[ToolDescriptor]: ...


def in_process_check(folder: Path, manifest: EnvManifest, states: dict[str, dict[str, Any]]) -> list[ToolDescriptor]:
    """The load check in this process: for code the caller vouches for (`import --trusted`)."""
    try:
        module = load_module(folder / "env.py", f"envforge_import_{folder.name.replace('-', '_').replace('.', '_')}")
        runtime = runtime_for(module, "class", manifest.entry, **runtime_options(manifest))
    except EnvLoadError as exc:
        raise ImportProblem(str(exc)) from exc
    for name, config in states.items():
        try:
            runtime.reset(config)
            runtime.snapshot()
        except Exception as exc:
            raise ImportProblem(f"Config {name!r} does not load into {manifest.name}: {exc}") from exc
    return list(runtime.tools.values())


def clean_stale_checks(root: Path) -> None:
    """Remove load-check folders left in the catalog by imports that were killed."""
    for folder in root.glob(f"{_CHECK_PREFIX}*"):
        pid = folder.name.rsplit("-", 1)[-1]
        if pid.isdigit() and (int(pid) == os.getpid() or process_alive(int(pid))):
            continue
        shutil.rmtree(folder, ignore_errors=True)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ImportProblem(f"Config {path} is not readable JSON: {exc}") from exc


def _state_name(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", path.stem)


def _configs(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """Init configs by state name.

    A file may hold one config, an EnvScaler record or a list; a folder of JSON files is one
    config with a key per file (`users.json` -> `users`), as data-dict envs load their data.
    """
    states: dict[str, dict[str, Any]] = {}
    for path in paths:
        if path.is_dir():
            files = sorted(path.glob("*.json"))
            if not files:
                raise ImportProblem(f"Config folder {path} holds no .json files")
            states[_state_name(path)] = {_state_name(f): _read_json(f) for f in files}
            continue
        data = _read_json(path)
        items = data if isinstance(data, list) else [data]
        for index, item in enumerate(items, 1):
            config = item.get("init_config", item) if isinstance(item, dict) else None
            if isinstance(config, str):
                config = json.loads(config)
            if not isinstance(config, dict):
                raise ImportProblem(f"Config {path} item {index} is not a JSON object")
            name = _state_name(path) + (f"-{index}" if len(items) > 1 else "")
            states[name] = config
    return states


def _safe_imports(path: Path) -> list[_Import]:
    try:
        return _imports(path.read_text(encoding="utf-8"))
    except cst.ParserSyntaxError:
        return []  # reported with its place when the module is collected


def _module_name(path: Path, top: Path) -> str:
    """A name for an env that is not a class: its module's, or its package's for generic file names."""
    generic = {"__init__", "tools", "tool", "env", "envs", "src", "functions", "api", "main"}
    for part in [path.stem, *(p.name for p in path.parents if top in p.parents or p == top)]:
        if part and part not in generic:
            return part
    return path.stem


def _detect(path: Path, collected: _Collected, convention: Convention | None, entry: str | None) -> Detected:
    tree = collected.trees[path]
    others = [t for p, t in collected.trees.items() if p != path]
    try:
        return detect(tree, others, convention=convention, wanted=entry)
    except ConventionError as exc:
        raise ImportProblem(f"{path.name}: {exc}") from None


def import_env(path: Path, catalog: Catalog, *, class_name: str | None = None, configs: Sequence[Path] = (),
               env_id: str | None = None, replace: bool = False, check: LoadCheck | None = None,
               convention: Convention | None = None, package_root: Path | None = None,
               allow_modules: Sequence[str] = (), failure_exceptions: Sequence[str] = (),
               error_prefixes: Sequence[str] = ()) -> ImportReport:
    """Turn `path` (a module in one of the four conventions) into a catalog env; see module doc.

    `class_name` names the entry when several fit (a class, a tool list or the state dict).
    `check` loads the copied files and every config; it runs the module's code, so pass the
    sandboxed one (sandbox.loadcheck.sandbox_load_check) for code you do not trust. Without it,
    the check runs in this process (`in_process_check`): trusted code only.
    """
    if env_id is not None:
        check_env_id(env_id)  # before anything is read or written: `--id ../x` is a path, not a name
    path = Path(path).resolve()
    if not path.is_file() or path.suffix != ".py":
        raise ImportProblem(f"{path} is not a Python file")
    root = None
    if package_root is not None:
        root = Path(package_root).resolve()
        if not root.is_dir():
            raise ImportProblem(f"--package-root {package_root} is not a folder")
        heads = {found.module.split(".")[0] for found in _safe_imports(path) if not found.level}
        if (root / "__init__.py").is_file() or (root.name in heads and not (root / root.name).exists()):
            root = root.parent  # the package itself was named: its path starts in the folder holding it
        if root not in path.parents:
            raise ImportProblem(f"{path} is not under the package root {root}")
    check_allowed_modules(list(allow_modules))
    collected = _collect(path, root)
    found = _detect(path, collected, convention, class_name)
    states = _configs(list(configs)) or {"empty": {}}
    top = _package_roots(path, root)[-1]
    texts = {str(target): _copy_text(origin, path, top) for origin, target in collected.files.items()}
    if path.name == "__init__.py":  # the package's own modules import it by its package path: the same code there
        texts[str(path.relative_to(top))] = texts["env.py"]
    texts.update({str(marker): MARKER for marker in collected.markers})
    texts.update(_package_inits(texts))
    name = found.name if found.convention in ("class", "toolkit") else _module_name(path, top)
    env_id = env_id or re.sub(r"[^A-Za-z0-9.-]", "-", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()).strip("-")
    check_env_id(env_id)
    classes = [n.name for tree in collected.trees.values() for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    scopes = with_helpers(found.scopes, collected.trees.values())
    failure = merge_failure(infer_failure(scopes, classes), exceptions=failure_exceptions,
                            error_prefixes=error_prefixes)
    manifest = EnvManifest(
        id=env_id, name=name, kind="class", entry=found.entry or "", init="auto", topic="imported",
        description=found.doc.split("\n\n")[0], failure_exceptions=list(failure.exceptions),
        convention=found.convention, failure=failure, allow_modules=sorted(set(allow_modules)), strict_args=False,
        provenance=Provenance(backend="import", source=str(path)),
    )

    # Prove it works before writing: load the copied files and reset with every config.
    clean_stale_checks(Path(catalog.root))
    staging = Path(catalog.root) / f"{_CHECK_PREFIX}{env_id}-{os.getpid()}"
    try:
        for relative, text in texts.items():
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            (staging / relative).write_text(text, encoding="utf-8")
        tools = (check or in_process_check)(staging, manifest, states)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    manifest = manifest.model_copy(update={"tools": tools})
    extra = {k: v for k, v in texts.items() if k != "env.py"}
    handle = catalog.write_env(manifest, texts["env.py"], states, [], replace=replace, extra_files=extra)
    return ImportReport(handle, sorted(texts), collected.optional, list(failure.exceptions), found.convention,
                        failure, collected.third_party)


import_class_env = import_env  # the name it had when only the class convention was known

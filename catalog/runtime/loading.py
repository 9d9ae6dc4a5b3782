"""Load an env module from its folder and find its env class (never by a name from outside the folder)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import keyword
import sys
import traceback
from pathlib import Path
from types import ModuleType

from catalog.envkit import Env
from catalog.errors import EnvforgeError


class EnvLoadError(RuntimeError, EnvforgeError):
    """An environment module cannot be loaded or does not follow a known convention."""


def local_module_names(folder: Path) -> set[str]:
    """Top-level names of an env folder's own modules and packages (helpers beside env.py)."""
    return {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}


def package_place(path: Path) -> tuple[str, Path] | None:
    """The package env.py is also, as its dotted name and `__init__.py`, if it is one.

    `import` copies an entry that is a package's `tools/__init__.py` to both places (the package's
    own modules import it by its package path), so env.py is that package when a package
    `__init__.py` in its folder holds the same code: loaded once, under its package name, it is
    one module whichever way it is reached.
    """
    try:
        code = path.read_bytes()
    except OSError:
        return None  # loading it says why
    if not code.strip():
        return None
    for init in sorted(path.parent.glob("*/**/__init__.py")):
        parts = init.parent.relative_to(path.parent).parts
        if all(p.isidentifier() and not keyword.iskeyword(p) for p in parts) and not init.is_symlink() \
                and init.read_bytes() == code:
            return ".".join(parts), init
    return None


def load_module(path: Path, name: str | None = None) -> ModuleType:
    """Import a Python file as a fresh module (its folder is importable for sibling modules).

    An env.py that is also a package's `__init__.py` (`package_place`) is imported as that package,
    its parent packages first, as Python would import it.
    """
    path = Path(path).resolve()
    name = name or f"envforge_env_{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise EnvLoadError(f"Cannot import {path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = path.parent
    place = package_place(path)
    # Helper modules beside env.py are this env's own: hide same-named modules other envs loaded,
    # and forget this env's after loading (the env module keeps its references).
    local_names = local_module_names(folder) - {path.stem}
    stashed = {k: v for k, v in sys.modules.items() if k.split(".")[0] in local_names}
    for key in stashed:
        del sys.modules[key]
    sys.modules[name] = module
    sys.path.insert(0, str(folder))
    try:
        if place is None:
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(place[0])  # a name of the folder's own (stashed, first on the path)
            found = getattr(module, "__file__", None)
            if found is None or Path(found).resolve() != place[1].resolve():
                raise ImportError(f"{place[0]} is not the env folder's package (it is {found or 'built in'})")
            sys.modules[name] = module
    except Exception as exc:
        sys.modules.pop(name, None)
        raise EnvLoadError(f"Importing {path} failed: {_failing_module(exc, path, place and place[1])}{type(exc).__name__}: {exc}") from exc
    finally:
        sys.path.remove(str(folder))
        for key in [k for k in sys.modules if k.split(".")[0] in local_names]:
            del sys.modules[key]
        sys.modules.update(stashed)
    return module


def _failing_module(exc: BaseException, path: Path, same: Path | None = None) -> str:
    """`imports a module that fails (helper.py): ` when the error came from a module env.py imports.

    `same` is the package `__init__.py` env.py was loaded as (its code, not another module's).
    """
    frames = [f.filename for f in traceback.extract_tb(exc.__traceback__)
              if Path(f.filename).is_relative_to(path.parent)]
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).is_relative_to(path.parent):
        frames.append(exc.filename)
    if frames and Path(frames[-1]) not in (path, same):
        return f"it imports a module that fails ({Path(frames[-1]).relative_to(path.parent)}): "
    return ""


def find_entry(module: ModuleType, entry: str | None = None) -> type:
    """Return the env class of a module: `entry` by name, else its single `Env` subclass."""
    if entry:
        found = getattr(module, entry, None)
        if not isinstance(found, type):
            raise EnvLoadError(f"{module.__file__} has no class {entry!r}")
        return found
    candidates = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Env) and v is not Env
                  and v.__module__ == module.__name__]
    if len(candidates) != 1:
        names = [c.__name__ for c in candidates]
        raise EnvLoadError(f"{module.__file__}: expected exactly one Env subclass, found {names or 'none'}; name one")
    return candidates[0]

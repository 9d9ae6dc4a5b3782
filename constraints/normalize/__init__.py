"""Rewrite an imported env of another convention into class-convention source (libcst, no execution).

The extractor and the spec-only simulator read one convention: a class whose public methods are
the tools over state in `self.<attr>`. catalog.importing.conventions runs the other three as such a class
(the state attributes are the data dict's keys, the database's fields, the module dict's keys),
so their source can be rewritten into the class that runtime behaves as:

- `tool_classes`: each tool's static `invoke(data, ...)` becomes a method named as `get_info()`
  names it, with `data["users"]` (a constant str key) as `self.users`;
- `functions`: module functions (helpers too) become methods, `LIBRARY["books"]` becomes
  `self.books` and a call `helper(...)` becomes `self.helper(...)`;
- `toolkit`: the decorated methods and their helpers stay methods, `self.db.products` (read)
  becomes `self.products`.

A rewrite is made only where it keeps the code's meaning under that runtime. Any other use of the
data dict, the database or the module dict (passed whole, `.get(...)` on it, iterated, rebound,
a database field assigned) becomes a marker expression `(lambda: "envforge: ...")` that the
extractor lists as unfollowed and the simulator abstains on when it reaches it; a tool that
rebinds the name, uses `self` where there was none, or carries a decorator that may wrap it gets
the marker as its first statement, so it always abstains (never wrong: abstain instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import libcst as cst

from constraints.normalize.common import MARK, Normalized, NormalizeError
from constraints.normalize.functions import rewrite_functions
from constraints.normalize.tool_classes import ToolClasses
from constraints.normalize.toolkit import rewrite_toolkit

__all__ = ["NormalizeError", "Normalized", "MARK", "class_source", "env_modules"]


def env_modules(folder: Path) -> dict[str, str]:
    """The env folder's other Python files (relative posix path -> text): where tool classes may live."""
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(folder.rglob("*.py")) if p.relative_to(folder).as_posix() != "env.py"}


def class_source(source: str, convention: str, entry: str | None,
                 modules: Mapping[str, str] | None = None) -> Normalized:
    """The class-convention source `convention`'s runtime behaves as; raises NormalizeError."""
    try:
        if convention == "tool_classes":
            return ToolClasses(source, entry, dict(modules or {})).build()
        if convention == "functions":
            return rewrite_functions(source, entry)
        if convention == "toolkit":
            return rewrite_toolkit(source, entry, dict(modules or {}))
    except cst.ParserSyntaxError as exc:
        raise NormalizeError(f"env source does not parse: line {exc.raw_line}: {exc.message}") from exc
    raise NormalizeError(f"no class-convention rewrite for convention {convention!r}")

"""`toolkit`: the decorated methods and their helpers stay methods, `self.db.products` (read) becomes `self.products`."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

import libcst as cst

from constraints.normalize.common import (
    Normalized,
    NormalizeError,
    _as_ast,
    _bound_names,
    _class,
    _class_problem,
    _decorator_names,
    _emit,
    _init,
    _is_docstring,
    _marker_statement,
    _rebinds,
    _Rewrite,
    _rewrite,
    _statements,
    _usable_key,
    _with_first,
    reasons,
)


def rewrite_toolkit(source: str, entry: str | None, modules: dict[str, str]) -> Normalized:
    """A toolkit class over `self.db`: the same class without bases and decorators, fields as attributes."""
    module = cst.parse_module(source)
    classes = [s for s in module.body if isinstance(s, cst.ClassDef) and s.name.value == entry]
    if len(classes) != 1:
        raise NormalizeError(f"no toolkit class {entry!r} in the module")
    toolkit = classes[0]
    methods = [s for s in _statements(toolkit.body) if isinstance(s, cst.FunctionDef)]
    taken = {m.name.value for m in methods}
    marker = _tool_marker(toolkit)
    fields = _database_fields(module, toolkit) or _db_names(methods, taken)
    problem = _class_problem(toolkit, "env.py", {"env.py": source, **modules}, set())
    members: list[cst.BaseStatement] = []
    marked: dict[str, list[str]] = {}
    for statement in _statements(toolkit.body):
        if _is_docstring(statement):
            continue
        if not isinstance(statement, cst.FunctionDef):
            if isinstance(statement, cst.SimpleStatementLine) and all(
                    isinstance(s, cst.AnnAssign) and s.value is None for s in statement.body):
                continue  # `db: ShopDB`: an annotation, no class attribute
            members.append(statement)
            taken.update(_bound_names(statement))
            continue
        name = statement.name.value
        if name == "__init__":
            continue  # the runtime builds the instance; the state is the database's fields
        whole = [problem] if problem else []
        tree = _as_ast(statement)
        if _rebinds(tree, {"self"}, {"self"}) or not statement.params.params or \
                statement.params.params[0].name.value != "self":
            whole.append("self is not the first parameter or is rebound")
        decorators = _decorator_names(statement)
        if [d for d in decorators if d != marker]:
            whole.append(f"decorated with {', '.join(d for d in decorators if d != marker)}")
        if decorators and marker in decorators and not _marks_only(module, marker, modules):
            whole.append(f"the tool decorator {marker} may wrap the method")
        if not name.startswith("_") and marker not in decorators and marker:
            pass  # a public method that is not a tool: the runtime binds it on the instance; kept as a method
        transformer = _Rewrite(holder=None, taken=taken, db=True)
        method = _rewrite(statement.with_changes(decorators=[]), transformer)
        if whole:
            method = _with_first(method, _marker_statement("; ".join(whole)))
        members.append(method)
        if reasons(method):
            marked[name] = reasons(method)
    public_non_tools = [m.name.value for m in methods if not m.name.value.startswith("_")
                        and marker not in _decorator_names(m)]
    if public_non_tools:
        # The runtime exposes only decorated methods as tools; a public undecorated one stays callable
        # from tools but must not become a tool of the class convention.
        members = [_renamed(m, public_non_tools) for m in members]
    members.insert(0, _init(fields))
    header = [s for s in module.body if not isinstance(s, cst.ClassDef) or s.name.value != entry]
    doc = toolkit.get_docstring()
    return Normalized(_emit([s for s in header if not _is_docstring(s)], _class(toolkit.name.value, doc, members)),
                      toolkit.name.value, marked)


def _database_fields(module: cst.Module, toolkit: cst.ClassDef) -> list[str]:
    """The fields of the database class `db` is annotated with, when the module defines it."""
    tree = ast.parse(cst.Module(body=[toolkit]).code).body[0]
    annotations = [n.annotation for n in ast.walk(tree) if isinstance(n, ast.AnnAssign) and
                   isinstance(n.target, ast.Name) and n.target.id == "db"]
    annotations += [a.annotation for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "__init__"
                    for a in n.args.args if a.arg == "db" and a.annotation is not None]
    names = {n.id for a in annotations for n in ast.walk(a) if isinstance(n, ast.Name)}
    for statement in ast.parse(module.code).body:
        if isinstance(statement, ast.ClassDef) and statement.name in names:
            return [s.target.id for s in statement.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    return []


def _db_names(methods: Sequence[cst.FunctionDef], taken: set[str]) -> list[str]:
    """The `self.db.<name>` the methods read: the database fields the code names."""
    names: list[str] = []
    for method in methods:
        for node in ast.walk(_as_ast(method)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and \
                    isinstance(node.value.value, ast.Name) and node.value.value.id == "self" and \
                    node.value.attr == "db" and _usable_key(node.attr, taken) and node.attr not in names:
                names.append(node.attr)
    return names


def _renamed(member: cst.BaseStatement, hidden: list[str]) -> cst.BaseStatement:
    """A public non-tool method made private (`_nt_<name>`), with `self.<name>` uses renamed to match."""

    class Rename(cst.CSTTransformer):
        def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
            if isinstance(original_node.value, cst.Name) and original_node.value.value == "self" and \
                    original_node.attr.value in hidden:
                return updated_node.with_changes(attr=cst.Name(f"_nt_{original_node.attr.value}"))
            return updated_node

        def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
            if original_node.name.value in hidden:
                return updated_node.with_changes(name=cst.Name(f"_nt_{original_node.name.value}"))
            return updated_node

    return cst.ensure_type(member.visit(Rename()), cst.FunctionDef) if isinstance(member, cst.FunctionDef) else member


def _tool_marker(toolkit: cst.ClassDef) -> str:
    """The decorator most public methods carry (as catalog.importing.conventions.marked_tools reads it)."""
    counts: dict[str, int] = {}
    for statement in _statements(toolkit.body):
        if isinstance(statement, cst.FunctionDef) and not statement.name.value.startswith("_"):
            for name in set(_decorator_names(statement)) - {"staticmethod", "classmethod", "property", "?"}:
                counts[name] = counts.get(name, 0) + 1
    return max(sorted(counts), key=lambda m: counts[m]) if counts else ""


def _marks_only(module: cst.Module, marker: str, modules: Mapping[str, str], depth: int = 0) -> bool:
    """True if the tool decorator is known to return the function it decorates (it only marks it).

    Read from the module, or the env module it is imported from, when that defines it:
    `def marker(...)` whose inner function returns its own parameter on every return; otherwise
    unknown (the decorator may wrap the method).
    """
    tree = ast.parse(module.code)
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef) and statement.name == marker:
            return _returns_its_argument(statement)
        if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level and depth < 8:
            for alias in statement.names:
                if (alias.asname or alias.name) == marker:
                    base = statement.module.replace(".", "/")
                    for candidate in (f"{base}.py", f"{base}/__init__.py"):
                        if candidate in modules:
                            return _marks_only(cst.parse_module(modules[candidate]), alias.name, modules, depth + 1)
    return False


_CODE_ATTRIBUTES = {"__code__", "__defaults__", "__kwdefaults__", "__globals__", "__closure__", "__call__"}


def _changes_code(function: ast.FunctionDef) -> bool:
    """The decorator assigns what a call of the function runs (its code, defaults, ...)."""
    return any(isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load) and n.attr in _CODE_ATTRIBUTES
               for n in ast.walk(function)) or any(isinstance(n, ast.Name) and n.id in ("setattr", "exec", "eval")
                                                   for n in ast.walk(function))


def _only_returns_first_argument(function: ast.FunctionDef) -> bool:
    if len(function.args.args) != 1 or any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Yield,
                                                            ast.YieldFrom)) for s in ast.walk(function) if s is not function):
        return False
    argument = function.args.args[0].arg
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    return bool(returns) and all(isinstance(r.value, ast.Name) and r.value.id == argument for r in returns) and \
        not _rebinds(function, {argument}, {argument})


def _returns_its_argument(function: ast.FunctionDef) -> bool:
    """`def mark(f): ...; return f` itself, or a factory `def deco(...): def mark(f): ...; return f; return mark`."""
    if _changes_code(function):
        return False
    if _only_returns_first_argument(function):
        return True
    inner = [s for s in function.body if isinstance(s, ast.FunctionDef)]
    if len(inner) != 1 or not inner[0].args.args:
        return False
    argument = inner[0].args.args[0].arg
    returns = [n for n in ast.walk(inner[0]) if isinstance(n, ast.Return)]
    outer = [s for s in function.body if isinstance(s, ast.Return)]
    return bool(returns) and all(isinstance(r.value, ast.Name) and r.value.id == argument for r in returns) and \
        len(outer) == 1 and isinstance(outer[0].value, ast.Name) and outer[0].value.id == inner[0].name and \
        not _rebinds(inner[0], {argument}, {argument})

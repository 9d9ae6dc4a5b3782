"""`functions`: module functions become methods, `LIBRARY["books"]` becomes `self.books`, `helper(...)` becomes `self.helper(...)`."""

from __future__ import annotations

import ast

import libcst as cst

from constraints.normalize.common import (
    Normalized,
    NormalizeError,
    _as_ast,
    _bound_names,
    _class,
    _emit,
    _init,
    _is_docstring,
    _marker_statement,
    _rebinds,
    _Rewrite,
    _rewrite,
    _state_keys,
    _uses,
    _with_first,
    reasons,
)


def _literal_all(module: cst.Module) -> list[str] | None:
    for statement in ast.parse(module.code).body:
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                     for t in statement.targets):
            try:
                value = ast.literal_eval(statement.value)
            except ValueError:
                raise NormalizeError("__all__ is not a literal list of names") from None
            return [str(v) for v in value]
    return None


def rewrite_functions(source: str, entry: str | None) -> Normalized:
    """Module functions over a module-level dict: the functions become methods, the dict's keys attributes."""
    if not entry:
        raise NormalizeError("the functions convention needs the module dict's name (the manifest's entry)")
    module = cst.parse_module(source)
    exported = _literal_all(module)
    functions = [s for s in module.body if isinstance(s, cst.FunctionDef)]
    names: dict[str, str] = {}
    for function in functions:
        name = function.name.value
        public = not name.startswith("_") and (exported is None or name in exported)
        names[name] = name if public or name.startswith("_") else f"_fn_{name}"
    tools = {n for n, method in names.items() if n == method and not n.startswith("_")}
    if len(set(names.values())) != len(names) or not tools:
        raise NormalizeError("the module's functions cannot be made methods (no public function, or a name clash)")
    taken = set(names.values()) | set(names)
    header: list[cst.BaseStatement] = []
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) or _is_docstring(statement):
            continue
        if isinstance(statement, cst.SimpleStatementLine) and entry in _bound_names(statement) and \
                _bound_names(statement) == [entry]:
            continue  # the module dict itself: its keys are the instance's attributes
        header.append(statement)
    header_bound = {n for s in header if isinstance(s, cst.SimpleStatementLine) for n in _bound_names(s)}
    methods: list[cst.BaseStatement] = []
    marked: dict[str, list[str]] = {}
    keys: list[str] = []
    for function in functions:
        whole = []
        tree = _as_ast(function)
        if _rebinds(tree, {entry}, set()):
            whole.append(f"{entry} is rebound or shadowed in the function")
        if _rebinds(tree, set(names), set()):
            whole.append("a module function's name is rebound or shadowed in the function")
        if _uses(tree, "self"):
            whole.append("the function uses the name self")
        if function.decorators:
            whole.append("the function carries a decorator that may wrap it")
        if entry in header_bound or "self" in header_bound or taken & header_bound:
            whole.append("module code rebinds the dict or a function name")
        transformer = _Rewrite(holder=entry, taken=taken, calls=names)
        rewritten = _rewrite(function.with_changes(decorators=[]), transformer)
        params = rewritten.params
        if params.posonly_params:
            params = params.with_changes(posonly_params=[cst.Param(cst.Name("self")), *params.posonly_params])
        else:
            params = params.with_changes(params=[cst.Param(cst.Name("self")), *params.params])
        method = rewritten.with_changes(name=cst.Name(names[function.name.value]), params=params)
        if whole:
            method = _with_first(method, _marker_statement("; ".join(whole)))
        methods.append(method)
        keys += [k for k in _state_keys([function], entry, taken) if k not in keys]
        if reasons(method):
            marked[names[function.name.value]] = reasons(method)
    doc = module.get_docstring()
    return Normalized(_emit(header, _class(entry, doc, [_init(keys), *methods])), entry, marked)

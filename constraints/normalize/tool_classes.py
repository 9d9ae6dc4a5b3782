"""`tool_classes`: each tool's static `invoke(data, ...)` becomes a method, `data["users"]` becomes `self.users`."""

from __future__ import annotations

import ast
import keyword

import libcst as cst

from constraints.normalize.common import (
    _PLAIN,
    Normalized,
    NormalizeError,
    _as_ast,
    _bound_names,
    _class,
    _class_problem,
    _decorator_names,
    _emit,
    _find_class,
    _init,
    _is_docstring,
    _is_future,
    _marker_statement,
    _rebinds,
    _Rewrite,
    _rewrite,
    _state_keys,
    _statements,
    _uses,
    _with_docstring,
    _with_first,
    reasons,
)


class ToolClasses:
    """One class per tool with a static `invoke(data, ...)`: the tools become methods of one class."""

    def __init__(self, source: str, entry: str | None, modules: dict[str, str]) -> None:
        self.modules = {"env.py": source, **modules}
        self.entry = entry
        self.trees: dict[str, cst.Module] = {}

    def tree(self, path: str) -> cst.Module:
        if path not in self.trees:
            self.trees[path] = cst.parse_module(self.modules[path])
        return self.trees[path]

    def resolve(self, path: str, name: str) -> tuple[str, cst.ClassDef]:
        """The file and class a name in `path` refers to (following `from x import Name` re-exports)."""
        found = _find_class(path, name, self.modules)
        if found is None:
            raise NormalizeError(f"cannot find tool class {name} in the env's files (from {path})")
        return found

    def tool_list(self) -> list[str]:
        for statement in self.tree("env.py").body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                            small.targets[0].target, cst.Name) and small.targets[0].target.value == self.entry and \
                            isinstance(small.value, (cst.List, cst.Tuple)) and all(
                                isinstance(e.value, cst.Name) for e in small.value.elements):
                        return [cst.ensure_type(e.value, cst.Name).value for e in small.value.elements]
        raise NormalizeError(f"no literal tool list {self.entry!r} in the env module (the tools cannot be read "
                             "without running the code)")

    def build(self) -> Normalized:
        names = self.tool_list()
        header: dict[str, str] = {}  # bound name -> its statement's code
        statements: list[cst.BaseStatement] = []
        futures: list[cst.BaseStatement] = []
        tools: list[tuple[str, cst.FunctionDef, str, list[str]]] = []  # name, invoke, path, [description, problem]
        for class_name in names:
            path, klass = self.resolve("env.py", class_name)
            own = {s.name.value: s for s in _statements(klass.body) if isinstance(s, cst.FunctionDef)}
            invoke, info = own.get("invoke"), own.get("get_info")
            if invoke is None or info is None:
                raise NormalizeError(f"tool class {class_name} does not define invoke and get_info itself")
            schema = _static_info(info, class_name)
            problem = _class_problem(klass, path, self.modules, set())
            tools.append((schema["name"], invoke, path, [schema.get("description") or "", problem or ""]))
        taken = {name for name, *_ in tools}
        if len(taken) != len(tools):
            raise NormalizeError("two tool classes give the same tool name")
        conflicts: set[str] = set()
        for path in dict.fromkeys(p for _, _, p, _ in tools):
            for statement in self.tree(path).body:
                if _is_docstring(statement) or isinstance(statement, cst.ClassDef):
                    for name in _bound_names(statement):
                        header.setdefault(name, "<class>")  # classes are not carried over: a use abstains
                    continue
                if _is_future(statement):
                    if not futures:
                        futures.append(statement)
                    continue
                if not isinstance(statement, (cst.SimpleStatementLine, cst.FunctionDef)):
                    conflicts.add(path)  # module code the rewrite does not model
                    continue
                code = cst.Module(body=[statement]).code
                bound = _bound_names(statement)
                if any(header.get(n, code) != code for n in bound):
                    conflicts.add(path)
                    continue
                if any(n in taken or n == "self" for n in bound):
                    conflicts.add(path)
                    continue
                if all(n in header for n in bound) and bound:
                    continue
                for name in bound:
                    header[name] = code
                statements.append(statement)
        methods: list[cst.BaseStatement] = []
        marked: dict[str, list[str]] = {}
        keys: list[str] = []
        for name, invoke, path, (description, problem) in tools:
            method, reasons, used = self.method(name, invoke, taken, path in conflicts, description, problem)
            methods.append(method)
            keys += [k for k in used if k not in keys]
            if reasons:
                marked[name] = reasons
        klass = _class(self.entry or "Tools", None, [_init(keys), *methods])
        return Normalized(_emit([*futures, *statements], klass), self.entry or "Tools", marked)

    def method(self, name: str, invoke: cst.FunctionDef, taken: set[str], conflict: bool,
               description: str, problem: str) -> tuple[cst.FunctionDef, list[str], list[str]]:
        params = [*invoke.params.posonly_params, *invoke.params.params]
        if not params:
            raise NormalizeError(f"{name}: invoke takes no data argument")
        holder = params[0].name.value
        whole: list[str] = []
        tree = _as_ast(invoke)
        if _rebinds(tree, {holder}, {holder}):
            whole.append(f"{holder} is rebound in the tool")
        if _uses(tree, "self"):
            whole.append("the tool uses the name self")
        if problem:
            whole.append(problem)
        if conflict:
            whole.append("its module binds names another tool module binds differently, or runs module code")
        if [d for d in _decorator_names(invoke) if d not in _PLAIN]:
            whole.append("invoke carries a decorator that may wrap it")
        transformer = _Rewrite(holder=holder, taken=taken)
        rewritten = _rewrite(invoke.with_changes(decorators=[]), transformer)
        if params[0] in invoke.params.posonly_params:
            rest = cst.Parameters(posonly_params=[cst.Param(cst.Name("self"))] + list(rewritten.params.posonly_params[1:]),
                                  params=rewritten.params.params)
        else:
            rest = cst.Parameters(params=[cst.Param(cst.Name("self")), *rewritten.params.params[1:]])
        rest = rest.with_changes(star_arg=rewritten.params.star_arg, kwonly_params=rewritten.params.kwonly_params,
                                 star_kwarg=rewritten.params.star_kwarg)
        method = rewritten.with_changes(name=cst.Name(name), params=rest)
        method = _with_docstring(method, description)
        if whole:
            method = _with_first(method, _marker_statement("; ".join(whole)))
        return method, reasons(method), _state_keys([invoke], holder, taken)


def _static_info(info: cst.FunctionDef, class_name: str) -> dict[str, str]:
    """The tool's name (and description) from `get_info()`'s literal return value."""
    tree = _as_ast(info)
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
    try:
        value = ast.literal_eval(returns[0].value) if len(returns) == 1 and returns[0].value is not None else None
    except ValueError:
        value = None
    schema = value.get("function", value) if isinstance(value, dict) else None
    if not isinstance(schema, dict) or not isinstance(schema.get("name"), str) or not schema["name"].isidentifier() \
            or keyword.iskeyword(schema["name"]) or schema["name"].startswith("_"):
        raise NormalizeError(f"{class_name}.get_info() does not return a literal schema with a plain function name")
    description = schema.get("description")
    return {"name": schema["name"], "description": description if isinstance(description, str) else ""}

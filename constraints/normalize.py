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

import ast
import json
import keyword
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import ExpressionContext, ExpressionContextProvider, MetadataWrapper

__all__ = ["NormalizeError", "Normalized", "MARK", "class_source", "env_modules"]

MARK = "envforge: "
_PLAIN = {"staticmethod"}


class NormalizeError(ValueError):
    """The env cannot be rewritten into the class convention (the message says why)."""


@dataclass
class Normalized:
    """Class-convention source equivalent to an env of another convention, and its entry class."""

    source: str
    entry: str
    marked: dict[str, list[str]] = field(default_factory=dict)  # method -> why it (partly) abstains


def env_modules(folder: Path) -> dict[str, str]:
    """The env folder's other Python files (relative posix path -> text): where tool classes may live."""
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(folder.rglob("*.py")) if p.relative_to(folder).as_posix() != "env.py"}


def class_source(source: str, convention: str, entry: str | None,
                 modules: Mapping[str, str] | None = None) -> Normalized:
    """The class-convention source `convention`'s runtime behaves as; raises NormalizeError."""
    try:
        if convention == "tool_classes":
            return _ToolClasses(source, entry, dict(modules or {})).build()
        if convention == "functions":
            return _functions(source, entry)
        if convention == "toolkit":
            return _toolkit(source, entry, dict(modules or {}))
    except cst.ParserSyntaxError as exc:
        raise NormalizeError(f"env source does not parse: line {exc.raw_line}: {exc.message}") from exc
    raise NormalizeError(f"no class-convention rewrite for convention {convention!r}")


# --- markers and checks -------------------------------------------------------------------------
def _marker(reason: str) -> cst.BaseExpression:
    return cst.parse_expression(f"(lambda: {json.dumps(MARK + reason)})")


def _marker_statement(reason: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Expr(_marker(reason))])


def _usable_key(key: object, taken: set[str]) -> bool:
    """A key that is a plain public attribute name, not one the class uses for a method."""
    return isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key) and \
        not key.startswith("_") and key not in taken


def _rebinds(function: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str], own: set[str]) -> set[str]:
    """Which of `names` the function binds anywhere (assignment, loop, nested parameter, global, ...).

    `own` are the function's own parameters (the data dict's name), not counted as rebinding.
    """
    found: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and node.id in names:
            found.add(node.id)
        elif isinstance(node, ast.arg) and node.arg in names and not (
                node.arg in own and any(node is a for a in _all_args(function))):
            found.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.update(set(node.names) & names)
        elif isinstance(node, ast.ExceptHandler) and node.name in names:
            found.add(node.name)
        elif isinstance(node, ast.alias) and (node.asname or node.name).split(".")[0] in names:
            found.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function \
                and node.name in names:
            found.add(node.name)
    return found


def _all_args(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = function.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
            *([a.kwarg] if a.kwarg else [])]


def _uses(function: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(function))


def _as_ast(node: cst.FunctionDef) -> ast.FunctionDef | ast.AsyncFunctionDef:
    parsed = ast.parse(cst.Module(body=[node]).code).body[0]
    assert isinstance(parsed, (ast.FunctionDef, ast.AsyncFunctionDef))
    return parsed


class _Rewrite(cst.CSTTransformer):
    """Rewrites state access in one function; unrewritable uses become markers (see the module docstring)."""

    METADATA_DEPENDENCIES = (ExpressionContextProvider,)

    def __init__(self, *, holder: str | None, taken: set[str], db: bool = False,
                 calls: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.holder = holder  # the data dict's / module dict's name (subscripted), None for toolkit
        self.db = db  # toolkit: `self.db.X` is the state
        self.taken = taken
        self.calls = dict(calls or {})  # module function -> method name (functions convention)

    def visit_Parameters(self, node: cst.Parameters) -> bool:
        return False  # defaults are evaluated where the function is defined: left as they are (a use abstains)

    def visit_Annotation(self, node: cst.Annotation) -> bool:
        return False

    def visit_Global(self, node: cst.Global) -> bool:
        return False  # a declaration, not a use (a function that rebinds the name is marked as a whole)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
        return False

    def _context(self, node: cst.CSTNode) -> ExpressionContext | None:
        return self.get_metadata(ExpressionContextProvider, node, None)

    def _mark(self, reason: str) -> cst.BaseExpression:
        return _marker(reason)

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        value = original_node.value
        if self.holder is None or not (isinstance(value, cst.Name) and value.value == self.holder):
            return updated_node
        index = original_node.slice[0].slice if len(original_node.slice) == 1 else None
        key = index.value.evaluated_value if isinstance(index, cst.Index) and isinstance(
            index.value, (cst.SimpleString, cst.ConcatenatedString)) else None
        if _usable_key(key, self.taken):
            assert isinstance(key, str)
            return cst.Attribute(value=cst.Name("self"), attr=cst.Name(key))
        reason = f"{self.holder}[...] with a key other than a constant public attribute name"
        return updated_node.with_changes(value=self._mark(reason))

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        updated_node = updated_node.with_changes(attr=original_node.attr)  # an attribute name is not a use
        if not self.db:
            return updated_node
        inner = original_node.value
        if isinstance(inner, cst.Attribute) and _is_self_db(inner):
            name = original_node.attr.value
            if self._context(original_node) is ExpressionContext.LOAD and _usable_key(name, self.taken):
                return cst.Attribute(value=cst.Name("self"), attr=cst.Name(name))
            why = f"self.db.{name} assigned or deleted" if self._context(original_node) is not ExpressionContext.LOAD \
                else f"self.db.{name} is not a plain database field name"
            return cst.Attribute(value=self._mark(why), attr=original_node.attr)
        if _is_self_db(original_node):
            return cst.Attribute(value=self._mark("self.db used other than as self.db.<field>"), attr=original_node.attr)
        return updated_node

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = original_node.func
        if isinstance(func, cst.Name) and func.value in self.calls:
            return updated_node.with_changes(func=cst.Attribute(value=cst.Name("self"),
                                                                attr=cst.Name(self.calls[func.value])))
        return updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if self._context(original_node) is not ExpressionContext.LOAD:
            return updated_node
        if self.holder is not None and original_node.value == self.holder:
            return self._mark(f"{self.holder} used other than as {self.holder}['<key>']")
        if original_node.value in self.calls:
            return self._mark(f"function {original_node.value} used other than by a call")
        return updated_node


def _is_self_db(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" \
        and node.attr.value == "db"


def reasons(function: cst.FunctionDef) -> list[str]:
    """Why parts of a rewritten function abstain: the texts of the markers left in it."""
    found = []
    for node in ast.walk(_as_ast(function)):
        if isinstance(node, ast.Lambda) and isinstance(node.body, ast.Constant) and \
                isinstance(node.body.value, str) and node.body.value.startswith(MARK):
            found.append(node.body.value[len(MARK):])
    return list(dict.fromkeys(found))


def _rewrite(function: cst.FunctionDef, transformer: _Rewrite) -> cst.FunctionDef:
    """Run `transformer` over one function (with expression contexts) and return the rewritten function."""
    module = MetadataWrapper(cst.Module(body=[function])).visit(transformer)
    rewritten = module.body[0]
    assert isinstance(rewritten, cst.FunctionDef)
    return rewritten


def _statements(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of a block (a one-line `x: pass` body as one statement line)."""
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    assert isinstance(suite, cst.SimpleStatementSuite)
    return [cst.SimpleStatementLine(list(suite.body))]


def _with_first(function: cst.FunctionDef, statement: cst.SimpleStatementLine) -> cst.FunctionDef:
    """Put `statement` first in the body, after a docstring."""
    body = _statements(function.body)
    at = 1 if function.get_docstring() is not None else 0
    body.insert(at, statement)
    return function.with_changes(body=cst.IndentedBlock(body=body))


def _with_docstring(function: cst.FunctionDef, doc: str | None) -> cst.FunctionDef:
    if not doc or function.get_docstring() is not None:
        return function
    return _with_first(function, cst.SimpleStatementLine([cst.Expr(cst.SimpleString(json.dumps(doc)))]))


def _init(attributes: Sequence[str]) -> cst.FunctionDef:
    """`__init__` naming the state attributes (documentation for readers of the spec; never run)."""
    lines = [f"        self.{name} = {name}" for name in attributes] or ["        pass"]
    text = f"class _X:\n    def __init__(self{''.join(', ' + n for n in attributes)}):\n" + "\n".join(lines) + "\n"
    node = cst.parse_module(text).body[0]
    assert isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock)
    init = node.body.body[0]
    assert isinstance(init, cst.FunctionDef)
    return init


def _state_keys(functions: Sequence[cst.FunctionDef], holder: str, taken: set[str]) -> list[str]:
    """The constant keys `holder[...]` is read with: the state attributes the code names."""
    keys: list[str] = []
    for function in functions:
        for node in ast.walk(_as_ast(function)):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == holder and \
                    isinstance(node.slice, ast.Constant) and _usable_key(node.slice.value, taken) and \
                    node.slice.value not in keys:
                keys.append(str(node.slice.value))
    return keys


def _class(name: str, doc: str | None, members: Sequence[cst.BaseStatement]) -> cst.ClassDef:
    body: list[cst.BaseStatement | cst.BaseSmallStatement] = []
    if doc:
        body.append(cst.SimpleStatementLine([cst.Expr(cst.SimpleString(json.dumps(doc)))]))
    body.extend(members)
    return cst.ClassDef(name=cst.Name(name), body=cst.IndentedBlock(
        body=[b for b in body if isinstance(b, cst.BaseStatement)] or [cst.SimpleStatementLine([cst.Pass()])]))


def _emit(header: Sequence[cst.BaseStatement], klass: cst.ClassDef) -> str:
    body = [s for s in header if isinstance(s, (cst.SimpleStatementLine, cst.BaseCompoundStatement))]
    return cst.Module(body=[*body, klass]).code


def _bound_names(statement: cst.BaseStatement) -> list[str]:
    """Names a module-level statement binds (imports, assignments, defs, classes)."""
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    parsed = ast.parse(cst.Module(body=[statement]).code).body
    names: list[str] = []
    for node in parsed:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in node.names]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return names


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and \
        isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value,
                                                               (cst.SimpleString, cst.ConcatenatedString))


def _is_future(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(s, cst.ImportFrom) and isinstance(s.module, cst.Name) and s.module.value == "__future__"
        for s in statement.body)


def _decorator_names(function: cst.FunctionDef) -> list[str]:
    names = []
    for decorator in function.decorators:
        node = decorator.decorator
        node = node.func if isinstance(node, cst.Call) else node
        names.append(node.attr.value if isinstance(node, cst.Attribute) else
                     node.value if isinstance(node, cst.Name) else "?")
    return names


_HOOKS = {"__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__init_subclass__", "__set_name__",
          "__class_getitem__", "__new__"}
_PLAIN_BASES = {"object", "ABC", "abc.ABC", "Generic"}


def _class_problem(klass: cst.ClassDef, path: str, modules: Mapping[str, str], names: set[str],
                   depth: int = 0) -> str | None:
    """Why a class's attribute access may work beyond its own body (None if it does not).

    Its bases must be plain or env classes (found by their imports) that are plain in turn: no
    metaclass or class decorator, no attribute hooks, no descriptors (decorated methods), and no
    computed class attributes, and no binding of `names`. (A plain method or literal in a base
    cannot change what the rewritten class resolves: its own methods and the instance's
    attributes come first, and any other `self.x` abstains.)
    """
    if klass.keywords or klass.decorators:
        return f"class {klass.name.value} has a metaclass, class keywords or decorators"
    if depth > 8:
        return "the class hierarchy is too deep to read"
    for base in klass.bases:
        dotted = cst.Module(body=[]).code_for_node(base.value)
        if dotted in _PLAIN_BASES or dotted.startswith("Generic["):
            continue
        found = _find_class(path, dotted, modules)
        if found is None:
            return f"base class {dotted} of {klass.name.value} is not env code the rewrite can read"
        base_path, base_class = found
        for statement in _statements(base_class.body):
            bound = set(_bound_names(statement)) if not _is_docstring(statement) else set()
            if bound & _HOOKS:
                return f"base class {dotted} defines {', '.join(sorted(bound & _HOOKS))}"
            if isinstance(statement, cst.FunctionDef) and \
                    [d for d in _decorator_names(statement) if d not in ("staticmethod", "classmethod", "abstractmethod")]:
                return f"base class {dotted} defines a decorated member {statement.name.value}"
            if bound & names:
                return f"base class {dotted} binds {', '.join(sorted(bound & names))}"
            if isinstance(statement, cst.SimpleStatementLine) and not _literal_bindings(statement):
                return f"base class {dotted} binds a computed class attribute (it may be a descriptor)"
        problem = _class_problem(base_class, base_path, modules, names, depth + 1)
        if problem:
            return problem
    return None


def _literal_bindings(statement: cst.SimpleStatementLine) -> bool:
    """Every assignment in the statement binds a literal (no descriptor can hide in it)."""
    for node in ast.parse(cst.Module(body=[statement]).code).body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and value is not None:
            try:
                ast.literal_eval(value)
            except ValueError:
                return False
        elif not isinstance(node, (ast.AnnAssign, ast.Pass, ast.Expr)):
            return False
    return True


def _find_class(path: str, name: str, modules: Mapping[str, str], depth: int = 0) -> tuple[str, cst.ClassDef] | None:
    """The env file and class a (plain) name in `path` refers to, or None if it is not there.

    `from x import Name` re-exports are followed through the env's own files.
    """
    if "." in name or path not in modules or depth > 8:
        return None
    for statement in cst.parse_module(modules[path]).body:
        if isinstance(statement, cst.ClassDef) and statement.name.value == name:
            return path, statement
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar) and \
                        small.module is not None and not small.relative:
                    for alias in small.names:
                        local = alias.asname.name if alias.asname else alias.name
                        if isinstance(local, cst.Name) and local.value == name and isinstance(alias.name, cst.Name):
                            base = cst.Module(body=[]).code_for_node(small.module).replace(".", "/")
                            for candidate in (f"{base}.py", f"{base}/__init__.py"):
                                if candidate in modules:
                                    return _find_class(candidate, alias.name.value, modules, depth + 1)
    return None


# --- tool_classes -------------------------------------------------------------------------------
class _ToolClasses:
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


# --- functions ----------------------------------------------------------------------------------
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


def _functions(source: str, entry: str | None) -> Normalized:
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


# --- toolkit ------------------------------------------------------------------------------------
def _toolkit(source: str, entry: str | None, modules: dict[str, str]) -> Normalized:
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

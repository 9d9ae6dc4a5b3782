"""What every rewrite shares: the marker of an unfollowed use, the checks that a rewrite keeps the code's meaning, and libcst helpers."""

from __future__ import annotations

import ast
import json
import keyword
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import ExpressionContext, ExpressionContextProvider, MetadataWrapper

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

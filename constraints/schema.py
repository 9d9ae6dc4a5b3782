"""What a module declares besides its tools: imports, constants, functions, SQLModel tables.

Read with libcst only (nothing is imported or executed), so specs can be extracted from
untrusted code.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from constraints.ir import Node, Translator

SCALAR_KINDS = {
    "str": "str", "int": "int", "float": "float", "bool": "bool", "datetime": "datetime", "date": "date",
    "time": "time", "Decimal": "decimal", "dict": "json", "list": "json", "Dict": "json", "List": "json", "Any": "json",
}


def annotation_kind(text: str | None) -> tuple[str, bool]:
    """Map an annotation's source to (column kind, optional): 'dt.datetime | None' -> ('datetime', True)."""
    if not text:
        return "any", True
    optional = "None" in re.split(r"[\s|\[\],]+", text) or text.startswith("Optional")
    core = re.sub(r"Optional\[(.*)\]", r"\1", text)
    parts = [p.strip() for p in core.split("|") if p.strip() and p.strip() != "None"]
    base = parts[0] if parts else "Any"
    base = base.split("[")[0].split(".")[-1]
    return SCALAR_KINDS.get(base, "other"), optional


def literal_values(text: str | None) -> list[Any] | None:
    """Values of a `Literal[...]` annotation, if the annotation is one."""
    if not text or "Literal[" not in text:
        return None
    inner = text[text.index("Literal[") + len("Literal["):text.rindex("]")]
    try:
        node = cst.parse_expression(f"[{inner}]")
    except cst.ParserSyntaxError:
        return None
    values: list[Any] = []
    for element in cst.ensure_type(node, cst.List).elements:
        value = element.value
        if isinstance(value, cst.SimpleString):
            values.append(value.evaluated_value)
        elif isinstance(value, cst.Integer):
            values.append(int(value.value))
        else:
            return None
    return values


def imports_of(module: cst.Module) -> dict[str, str]:
    """Local name -> dotted origin, for the module's top-level imports."""
    names: dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = _dotted(alias.name)
                    local = cst.ensure_type(alias.asname.name, cst.Name).value if alias.asname else dotted.split(".")[0]
                    names[local] = dotted if alias.asname else dotted.split(".")[0]
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                origin = ("." * len(small.relative)) + (_dotted(small.module) if small.module else "")
                for alias in small.names:
                    name = alias.name.value
                    local = str(cst.ensure_type(alias.asname.name, cst.Name).value if alias.asname else name)
                    names[local] = f"{origin}.{name}"
    return names


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def function_ir(translator: Translator, node: cst.FunctionDef) -> dict[str, Any]:
    """Parameters (with defaults as normalized forms) and body of a function or method."""
    params = []
    for param in [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]:
        params.append({
            "name": param.name.value, "posonly": param in node.params.posonly_params,
            "annotation": translator.source(param.annotation.annotation) if param.annotation else None,
            "default": translator.expr(param.default) if param.default is not None else None,
            "has_default": param.default is not None,
        })
    variadic = not isinstance(node.params.star_arg, cst.MaybeSentinel) or node.params.star_kwarg is not None
    decorators = [translator.source(d.decorator) for d in node.decorators]
    return {"name": node.name.value, "params": params, "body": translator.block(node.body), "variadic": variadic,
            "decorators": decorators, "doc": node.get_docstring() or "", "line": translator.line(node)}


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def table_of(translator: Translator, node: cst.ClassDef) -> dict[str, Any] | None:
    """The schema of a SQLModel table class (`class X(Base, table=True)`), else None."""
    if not any(k.keyword is not None and k.keyword.value == "table" and translator.source(k.value) == "True"
               for k in node.keywords):
        return None
    table: dict[str, Any] = {"class": node.name.value, "name": node.name.value.lower(), "columns": {}}
    for statement in node.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and translator.source(small.targets[0].target) == "__tablename__":
                if isinstance(small.value, cst.SimpleString):
                    table["name"] = small.value.evaluated_value
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                table["columns"][small.target.value] = _column(translator, small)
    table["pk"] = [c for c, info in table["columns"].items() if info["primary_key"]]
    return table


def _column(translator: Translator, node: cst.AnnAssign) -> dict[str, Any]:
    annotation = translator.source(node.annotation.annotation)
    kind, optional = annotation_kind(annotation)
    column: dict[str, Any] = {"annotation": annotation, "kind": kind, "optional": optional, "primary_key": False,
                              "unique": False, "foreign_key": None, "default": None, "has_default": False,
                              "default_factory": None}
    value = node.value
    if isinstance(value, cst.Call) and translator.source(value.func).split(".")[-1] == "Field":
        positional = [a for a in value.args if a.keyword is None]
        if positional:
            column["default"], column["has_default"] = translator.expr(positional[0].value), True
        if (default := _keyword(value, "default")) is not None:
            column["default"], column["has_default"] = translator.expr(default), True
        if (factory := _keyword(value, "default_factory")) is not None:
            column["default_factory"], column["has_default"] = translator.source(factory), True
        for flag in ("primary_key", "unique"):
            if (flag_value := _keyword(value, flag)) is not None:
                column[flag] = translator.source(flag_value) == "True"
        if (foreign := _keyword(value, "foreign_key")) is not None and isinstance(foreign, cst.SimpleString):
            column["foreign_key"] = foreign.evaluated_value
        if (sa_type := _keyword(value, "sa_type")) is not None and "JSON" in translator.source(sa_type):
            column["kind"] = "json"
        if (sa_column := _keyword(value, "sa_column")) is not None and "JSON" in translator.source(sa_column):
            column["kind"] = "json"
    elif value is not None:
        column["default"], column["has_default"] = translator.expr(value), True
    elif optional:
        column["default"], column["has_default"] = {"t": "const", "v": None}, True
    return column


def module_parts(translator: Translator, module: cst.Module) -> dict[str, Any]:
    """Constants, functions and classes at the top level of a module."""
    constants: dict[str, Node] = {}
    functions: dict[str, Any] = {}
    classes: dict[str, cst.ClassDef] = {}
    unsure: set[str] = set()  # names module code may rebind or change after their definition ("*": any)
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom, cst.Pass)) or (
                        isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))):
                    continue
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                        small.targets[0].target, (cst.Name, cst.Tuple))) and not (
                        isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)):
                    unsure.add("*")
                    continue
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name):
                        if target.value in constants or target.value in functions:
                            unsure.add(target.value)
                        constants[target.value] = translator.expr(small.value)
                    elif isinstance(target, cst.Tuple) and isinstance(small.value, cst.Tuple):
                        for t, v in zip(target.elements, small.value.elements, strict=False):
                            if isinstance(t.value, cst.Name):
                                constants[t.value.value] = translator.expr(v.value)
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value:
                    constants[small.target.value] = translator.expr(small.value)
        elif isinstance(statement, cst.FunctionDef):
            if statement.name.value in constants or statement.name.value in functions:
                unsure.add(statement.name.value)
            functions[statement.name.value] = function_ir(translator, statement)
        elif isinstance(statement, cst.ClassDef):
            classes[statement.name.value] = statement
        elif not _is_main_guard(statement):
            unsure.add("*")  # an if/for/try/with at module level may bind or change anything
    return {"constants": constants, "functions": functions, "classes": classes, "unsure": unsure}


def _is_main_guard(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.If) and isinstance(statement.test, cst.Comparison) and \
        isinstance(statement.test.left, cst.Name) and statement.test.left.value == "__name__"

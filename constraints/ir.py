"""Normalized forms: a small JSON expression/statement language translated from libcst nodes.

Every guard, effect and binding in a constraint spec is written in this language, and one
interpreter (constraints.interpreter) runs it. The language is a restricted Python: names,
attributes, subscripts, calls, arithmetic, comparisons, boolean logic, f-strings, literals and
comprehensions; statements assign, branch, loop over lists, return, raise, try and delete.
Anything else becomes an explicit `unsupported` node carrying its source, so the analysis never
silently drops code and the interpreter abstains when it reaches one.

Expression nodes are dicts keyed by "t", statement nodes by "s" (plus "line" and "src").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

Node = dict[str, Any]

BINARY = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
    cst.Modulo: "%", cst.Power: "**", cst.BitOr: "|", cst.BitAnd: "&",
}
COMPARE = {
    cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=", cst.In: "in", cst.NotIn: "not in", cst.Is: "is", cst.IsNot: "is not",
}
UNARY = {cst.Minus: "-", cst.Plus: "+", cst.Not: "not", cst.BitInvert: "~"}
AUGMENTED = {
    cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*", cst.DivideAssign: "/",
    cst.FloorDivideAssign: "//", cst.ModuloAssign: "%", cst.BitOrAssign: "|",
}


class Translator:
    """Translates the libcst nodes of one module into normalized forms."""

    def __init__(self, module: cst.Module, wrapper: MetadataWrapper | None = None) -> None:
        self.module = module
        self._positions = wrapper.resolve(PositionProvider) if wrapper is not None else {}

    def source(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    def line(self, node: cst.CSTNode) -> int:
        position = self._positions.get(node)
        return position.start.line if position is not None else 0

    def unsupported(self, node: cst.CSTNode, why: str) -> Node:
        return {"t": "unsupported", "src": self.source(node), "why": why}

    # --- expressions --------------------------------------------------------------------
    def expr(self, node: cst.BaseExpression) -> Node:  # noqa: C901 - one dispatch table
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return {"t": "const", "v": {"True": True, "False": False, "None": None}[node.value]}
            return {"t": "name", "id": node.value}
        if isinstance(node, cst.Integer):
            return {"t": "const", "v": int(node.value.replace("_", ""), 0)}
        if isinstance(node, cst.Float):
            return {"t": "const", "v": float(node.value.replace("_", ""))}
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            value = node.evaluated_value
            if not isinstance(value, str):
                return self.unsupported(node, "bytes literal")
            return {"t": "const", "v": value}
        if isinstance(node, cst.FormattedString):
            return self._fstring(node)
        if isinstance(node, cst.Attribute):
            return {"t": "attr", "obj": self.expr(node.value), "name": node.attr.value}
        if isinstance(node, cst.Subscript):
            if len(node.slice) != 1:
                return self.unsupported(node, "multi-dimensional subscript")
            index = node.slice[0].slice
            if isinstance(index, cst.Index):
                return {"t": "sub", "obj": self.expr(node.value), "index": self.expr(index.value)}
            if isinstance(index, cst.Slice):
                parts = [None if p is None else self.expr(p) for p in (index.lower, index.upper, index.step)]
                return {"t": "sub", "obj": self.expr(node.value), "index": {"t": "slice", "parts": parts}}
            return self.unsupported(node, "subscript form")
        if isinstance(node, cst.Call):
            return self._call(node)
        if isinstance(node, cst.BinaryOperation):
            op = BINARY.get(type(node.operator))
            if op is None:
                return self.unsupported(node, f"operator {type(node.operator).__name__}")
            return {"t": "bin", "op": op, "l": self.expr(node.left), "r": self.expr(node.right)}
        if isinstance(node, cst.UnaryOperation):
            return {"t": "unary", "op": UNARY[type(node.operator)], "e": self.expr(node.expression)}
        if isinstance(node, cst.BooleanOperation):
            op = "and" if isinstance(node.operator, cst.And) else "or"
            return {"t": "bool", "op": op, "l": self.expr(node.left), "r": self.expr(node.right)}
        if isinstance(node, cst.Comparison):
            ops = [[COMPARE[type(c.operator)], self.expr(c.comparator)] for c in node.comparisons]
            return {"t": "cmp", "l": self.expr(node.left), "ops": ops}
        if isinstance(node, cst.IfExp):
            return {"t": "ifexp", "test": self.expr(node.test), "then": self.expr(node.body),
                    "else": self.expr(node.orelse)}
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            kind = {cst.List: "list", cst.Tuple: "tuple", cst.Set: "set"}[type(node)]
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return self.unsupported(node, "starred element")
            return {"t": kind, "items": [self.expr(e.value) for e in node.elements]}
        if isinstance(node, cst.Dict):
            items: list[list[Node | None]] = []
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    items.append([self.expr(element.key), self.expr(element.value)])
                else:  # a StarredDictElement: **mapping
                    items.append([None, self.expr(element.value)])
            return {"t": "dict", "items": items}
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            return self._comprehension(node)
        return self.unsupported(node, type(node).__name__)

    def _fstring(self, node: cst.FormattedString) -> Node:
        parts: list[Any] = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(part.value.replace("{{", "{").replace("}}", "}"))
                continue
            if not isinstance(part, cst.FormattedStringExpression):  # no other kind of part exists today
                return self.unsupported(node, type(part).__name__)
            spec = None
            if part.format_spec:
                if not all(isinstance(p, cst.FormattedStringText) for p in part.format_spec):
                    return self.unsupported(node, "nested format spec")
                spec = "".join(p.value for p in part.format_spec if isinstance(p, cst.FormattedStringText))
            parts.append({"e": self.expr(part.expression), "spec": spec, "conv": part.conversion,
                          "src": self.source(part.expression)})
        return {"t": "fstr", "parts": parts}

    def _call(self, node: cst.Call) -> Node:
        args: list[Node] = []
        keywords: dict[str, Node] = {}
        for arg in node.args:
            if arg.star:
                return self.unsupported(node, "star arguments")
            if arg.keyword is not None:
                keywords[arg.keyword.value] = self.expr(arg.value)
            else:
                args.append(self.expr(arg.value))
        return {"t": "call", "fn": self.expr(node.func), "args": args, "kw": keywords}

    def _comprehension(self, node: Any) -> Node:
        generators = []
        for_in = node.for_in
        while for_in is not None:
            if for_in.asynchronous is not None:
                return self.unsupported(node, "async comprehension")
            generators.append({"target": self.target(for_in.target), "iter": self.expr(for_in.iter),
                               "ifs": [self.expr(i.test) for i in for_in.ifs]})
            for_in = for_in.inner_for_in
        kinds: dict[type[cst.CSTNode], str] = {cst.ListComp: "list", cst.GeneratorExp: "gen", cst.SetComp: "set",
                                               cst.DictComp: "dict"}
        kind = kinds[type(node)]
        out: Node = {"t": "comp", "kind": kind, "gens": generators}
        if kind == "dict":
            out["key"], out["elt"] = self.expr(node.key), self.expr(node.value)
        else:
            out["elt"] = self.expr(node.elt)
        return out

    def target(self, node: cst.BaseExpression) -> Node:
        if isinstance(node, (cst.Tuple, cst.List)):
            return {"t": "tuple", "items": [self.target(e.value) for e in node.elements]}
        return self.expr(node)

    # --- statements ---------------------------------------------------------------------
    def block(self, body: Sequence[cst.CSTNode] | cst.BaseSuite) -> list[Node]:
        if isinstance(body, cst.BaseSuite):  # an IndentedBlock's statements, a one-line suite's small ones
            body = body.body
        out: list[Node] = []
        for statement in body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    out.append(self._with_position(self.small(small), statement))
            elif isinstance(statement, cst.BaseSmallStatement):
                out.append(self._with_position(self.small(statement), statement))
            else:
                out.append(self._with_position(self.compound(statement), statement))
        return out

    def _with_position(self, node: Node, origin: cst.CSTNode) -> Node:
        if "line" not in node:
            node["line"] = self.line(origin)
        if "src" not in node:  # rendering a compound statement's source is costly: only when needed
            source = self.source(origin)
            node["src"] = source.splitlines()[0] if source else ""
        return node

    def small(self, node: cst.CSTNode) -> Node:
        if isinstance(node, cst.Assign):
            return {"s": "assign", "targets": [self.target(t.target) for t in node.targets], "value": self.expr(node.value)}
        if isinstance(node, cst.AnnAssign):
            if node.value is None:
                return {"s": "pass"}
            return {"s": "assign", "targets": [self.target(node.target)], "value": self.expr(node.value)}
        if isinstance(node, cst.AugAssign):
            op = AUGMENTED.get(type(node.operator))
            if op is None:
                return {"s": "unsupported", "why": f"operator {type(node.operator).__name__}"}
            return {"s": "augassign", "target": self.target(node.target), "op": op, "value": self.expr(node.value)}
        if isinstance(node, cst.Expr):
            if isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString)):
                return {"s": "pass"}  # docstring
            return {"s": "expr", "e": self.expr(node.value)}
        if isinstance(node, cst.Return):
            return {"s": "return", "e": None if node.value is None else self.expr(node.value)}
        if isinstance(node, cst.Raise):
            return {"s": "raise", "e": None if node.exc is None else self.expr(node.exc)}
        if isinstance(node, cst.Pass):
            return {"s": "pass"}
        if isinstance(node, cst.Break):
            return {"s": "break"}
        if isinstance(node, cst.Continue):
            return {"s": "continue"}
        if isinstance(node, cst.Del):
            targets = [e.value for e in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
            return {"s": "del", "targets": [self.target(t) for t in targets]}
        return {"s": "unsupported", "why": type(node).__name__}

    def compound(self, node: cst.CSTNode) -> Node:
        if isinstance(node, cst.If):
            orelse: list[Node] = []
            if isinstance(node.orelse, cst.If):
                orelse = [self._with_position(self.compound(node.orelse), node.orelse)]
            elif isinstance(node.orelse, cst.Else):
                orelse = self.block(node.orelse.body)
            return {"s": "if", "test": self.expr(node.test), "body": self.block(node.body), "orelse": orelse,
                    "src": f"if {self.source(node.test)}:"}
        if isinstance(node, cst.For):
            if node.asynchronous is not None:
                return {"s": "unsupported", "why": "async for"}
            return {"s": "for", "target": self.target(node.target), "iter": self.expr(node.iter),
                    "body": self.block(node.body), "orelse": self.block(node.orelse.body) if node.orelse else [],
                    "src": f"for {self.source(node.target)} in {self.source(node.iter)}:"}
        if isinstance(node, cst.Try):
            handlers = []
            for handler in node.handlers:
                types: list[str] | None = None
                if handler.type is not None:
                    if isinstance(handler.type, cst.Tuple):
                        elements = [e.value for e in handler.type.elements]
                    else:
                        elements = [handler.type]
                    types = [self.source(e).split(".")[-1] for e in elements]
                name = cst.ensure_type(handler.name.name, cst.Name).value if handler.name is not None else None
                handlers.append({"types": types, "name": name, "body": self.block(handler.body)})
            return {"s": "try", "body": self.block(node.body), "handlers": handlers,
                    "orelse": self.block(node.orelse.body) if node.orelse else [],
                    "final": self.block(node.finalbody.body) if node.finalbody else [], "src": "try:"}
        return {"s": "unsupported", "why": type(node).__name__}


def walk(nodes: Any) -> Any:
    """Yield every dict node inside a normalized form (expressions and statements)."""
    if isinstance(nodes, dict):
        yield nodes
        for value in nodes.values():
            yield from walk(value)
    elif isinstance(nodes, list):
        for value in nodes:
            yield from walk(value)


def render(node: Any) -> str:
    """Render an expression node back as compact Python-like text (for specs and messages)."""
    if node is None:
        return "None"
    kind = node.get("t")
    if kind == "const":
        return repr(node["v"])
    if kind == "name":
        return node["id"]
    if kind == "attr":
        return f"{render(node['obj'])}.{node['name']}"
    if kind == "sub":
        return f"{render(node['obj'])}[{render(node['index'])}]"
    if kind == "call":
        args = [render(a) for a in node["args"]] + [f"{k}={render(v)}" for k, v in node["kw"].items()]
        return f"{render(node['fn'])}({', '.join(args)})"
    if kind == "bin":
        return f"({render(node['l'])} {node['op']} {render(node['r'])})"
    if kind == "unary":
        return f"{node['op']} {render(node['e'])}" if node["op"] == "not" else f"{node['op']}{render(node['e'])}"
    if kind == "bool":
        return f"({render(node['l'])} {node['op']} {render(node['r'])})"
    if kind == "cmp":
        return render(node["l"]) + "".join(f" {op} {render(r)}" for op, r in node["ops"])
    if kind == "ifexp":
        return f"({render(node['then'])} if {render(node['test'])} else {render(node['else'])})"
    if kind == "fstr":
        return "f" + repr("".join(p if isinstance(p, str) else "{" + p["src"] + "}" for p in node["parts"]))
    if kind in ("list", "tuple", "set"):
        return {"list": "[{}]", "tuple": "({})", "set": "{{{}}}"}[kind].format(", ".join(render(i) for i in node["items"]))
    if kind == "dict":
        return "{" + ", ".join(f"{render(k)}: {render(v)}" if k else f"**{render(v)}" for k, v in node["items"]) + "}"
    if kind == "comp":
        return f"<{node['kind']} comprehension>"
    if kind == "slice":
        return ":".join("" if p is None else render(p) for p in node["parts"])
    if kind == "unsupported":
        return f"<unsupported: {node['src']}>"
    if kind == "raises":
        return node["src"]
    return f"<{kind}>"

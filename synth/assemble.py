"""From artefacts to a catalog entry: the plan of a blueprint, tool descriptors, the manifest.

Nothing here imports generated code: descriptors come from the constraint spec (parameter
types) and the docstrings read with `ast`, so an env can be described before it ever runs.
"""

from __future__ import annotations

import ast
from typing import Any

from catalog.models import EnvManifest, Provenance, Quality, ToolDescriptor, ToolKind
from catalog.plan import Plan
from catalog.tools.schema import parse_docstring
from constraints.extract import extract_spec
from constraints.spec import ConstraintSpec, Param
from synth.procedural.blueprint import Blueprint
from synth.procedural.compiler import compile_env, rules_of
from verifier.gate.intent import plan_from_spec

__all__ = ["plan_of", "descriptors", "manifest_of", "entry_of"]


def entry_of(source: str) -> str:
    """The name of the module's `Env` subclass (the last class deriving from `Env`)."""
    tree = ast.parse(source)
    names = [n.name for n in tree.body if isinstance(n, ast.ClassDef)
             and any(isinstance(b, ast.Name) and b.id == "Env" for b in n.bases)]
    if not names:
        raise ValueError("the module defines no subclass of Env")
    return names[-1]


def plan_of(bp: Blueprint) -> tuple[Plan, str]:
    """The plan (intent) of a blueprint, and the intended program's source it was read from."""
    source = compile_env(bp)
    spec = extract_spec(source, "sql", entry_of(source))
    plan = plan_from_spec(spec, bp.env_id, "synthesis: compiled from the blueprint before any code was written")
    plan.invariants = list(bp.invariants)
    return plan, source


def _json_schema(param: Param, doc: str | None) -> dict[str, Any]:
    base: dict[str, Any] = {"type": param.json_type} if param.json_type else {}
    schema: dict[str, Any] = {"anyOf": [base, {"type": "null"}]} if param.nullable else base
    if param.enum:
        schema = {**schema, "enum": list(param.enum)}
    if doc:
        schema["description"] = doc
    if not param.required and param.default_known:
        schema["default"] = param.default
    return schema


def descriptors(source: str, spec: ConstraintSpec) -> list[ToolDescriptor]:
    """OpenAI-style tool descriptors from the spec's parameters and the methods' docstrings."""
    tree = ast.parse(source)
    docs: dict[str, str | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    docs[item.name] = ast.get_docstring(item)
    out = []
    for name, tool in spec.tools.items():
        description, arg_docs = parse_docstring(docs.get(name))
        properties = {p.name: _json_schema(p, arg_docs.get(p.name)) for p in tool.params}
        required = [p.name for p in tool.params if p.required]
        out.append(ToolDescriptor(name=name, kind=ToolKind(tool.kind), description=description,
                                  parameters={"type": "object", "properties": properties, "required": required}))
    return out


def manifest_of(bp: Blueprint, source: str, spec: ConstraintSpec, *, provenance: Provenance,
                quality: Quality | None = None) -> EnvManifest:
    """The manifest of a synthesized env (states and content hash are filled in by the catalog)."""
    return EnvManifest(id=bp.env_id, name=bp.name, kind="sql", entry=entry_of(source), topic=bp.topic,
                       description=bp.description, rules=rules_of(bp), tools=descriptors(source, spec),
                       provenance=provenance, quality=quality)

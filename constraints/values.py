"""Class-env state as Python values for the spec interpreter, and back to its encoding.

A class env's state arrives in the lossless encoding of catalog.state.codec. The interpreter runs on
the decoded values, so int and str keys, tuples, sets and Decimals behave as they do in the env,
and its predicted state is encoded the same way before it is diffed. Only the tagged kinds whose
Python behaviour the interpreter reproduces exactly are decoded; for any other (objects, enums,
subclassed generators) the interpreter abstains. Decoding never imports anything: a class name
in the encoding is data, never a module to load.
"""

from __future__ import annotations

from typing import Any

from catalog.state import codec

__all__ = ["UnmodelledValue", "check_modelled", "decode_state", "encode_value", "encode_attributes",
           "shared_attributes"]

# Kinds of tagged values whose decoded Python value the interpreter handles like the env would.
# A container reached twice is written as a reference to its first place, so aliasing between
# parts of the state is in the encoding and decoding rebuilds it.
MODELLED_KINDS = frozenset({"dict", "tuple", "set", "frozenset", "decimal", "float", "datetime", "date", "time",
                            "timedelta", "bytes", "random", "ref"})
RANDOM_TYPE = "random:Random"


class UnmodelledValue(ValueError):
    """A state value the interpreter does not model faithfully; `str()` says which."""


def check_modelled(data: Any, where: str = "") -> None:
    """Raise UnmodelledValue for the first tagged value outside MODELLED_KINDS."""
    stack: list[tuple[Any, str]] = [(data, where)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, list):
            stack.extend((v, path) for v in node)
        elif isinstance(node, dict):
            kind = node.get(codec.TAG)
            if kind is None:
                stack.extend((v, f"{path}/{k}") for k, v in node.items())
                continue
            if kind not in MODELLED_KINDS:
                raise UnmodelledValue(f"a {kind} value at {path or '/'}")
            if kind == "random" and node.get("type") != RANDOM_TYPE:
                raise UnmodelledValue(f"a random generator of type {node.get('type')} at {path or '/'}")
            if kind == "dict":
                if "items" in node and isinstance(node["items"], dict):
                    stack.extend((v, f"{path}/{k}") for k, v in node["items"].items())
                else:
                    for pair in node.get("pairs", []):
                        stack.extend((v, path) for v in pair)
            elif kind in ("tuple", "set", "frozenset"):
                stack.extend((v, path) for v in node.get("items", []))


_NAMES = codec.TypeNames()  # value types only (check_modelled lets through just random.Random of them)


def decode_state(state: dict[str, Any]) -> dict[str, Any]:
    """The Python values of an encoded state (fresh objects); raises UnmodelledValue."""
    check_modelled(state)
    try:
        decoded = codec.decode(state, _NAMES)
    except ValueError as exc:
        raise UnmodelledValue(str(exc)) from exc
    if not isinstance(decoded, dict):
        raise UnmodelledValue("a state that is not an object")
    return decoded


def shared_attributes(state: dict[str, Any]) -> set[str]:
    """Attributes a reference links to another one (decoded together, or not at all)."""
    linked: set[str] = set()
    stack: list[tuple[Any, str]] = [(value, name) for name, value in state.items()]
    while stack:
        node, owner = stack.pop()
        if isinstance(node, list):
            stack.extend((v, owner) for v in node)
        elif isinstance(node, dict):
            if node.get(codec.TAG) == "ref":
                path = node.get("path")
                target = path[0] if isinstance(path, list) and path else None
                if target != owner:
                    linked |= {owner, str(target)}
                continue
            stack.extend((v, owner) for v in node.values())
    return linked


def encode_value(value: Any) -> Any:
    """The encoding of a value the interpreter produced; raises UnmodelledValue if it has none."""
    try:
        return codec.encode(value)
    except (codec.UnencodableValue, TypeError, ValueError) as exc:
        raise UnmodelledValue(f"cannot encode the result: {exc}") from exc


def encode_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """The encoding of an instance's attributes as the runtime's snapshot writes it.

    Public ones first, then hidden ones, in one pass: a value reached twice is a reference to
    its first place.
    """
    ordered = [n for n in attributes if not n.startswith("_")] + [n for n in attributes if n.startswith("_")]
    encoder = codec.Encoder(_NAMES)
    try:
        return {name: encoder.encode(attributes[name], (name,)) for name in ordered}
    except (codec.UnencodableValue, TypeError, ValueError) as exc:
        raise UnmodelledValue(f"cannot encode the state: {exc}") from exc

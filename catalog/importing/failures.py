"""Infer how an env signals failure, from its syntax tree (never from its text).

Envs written elsewhere refuse in one of three ways: they raise an exception type, they return
an error dict (`{"error": ...}`, `{"success": False, ...}`), or they return an error string
with a common prefix (`"Error: product not found"`). Reading the code with `ast` means a
comment or a string that merely mentions `raise KeyError` counts for nothing.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections import Counter
from collections.abc import Iterable

from catalog.models import FailureConvention

__all__ = ["infer_failure", "merge_failure", "string_prefix", "with_helpers"]

_BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                       if isinstance(value, type) and issubclass(value, BaseException)}
_NOT_FAILURES = {"NotImplementedError", "StopIteration", "SystemExit", "KeyboardInterrupt", "AssertionError"}
_ERROR_WORDS = re.compile(r"\b(error|errors|fail|failed|failure|invalid|denied|cannot|can't|unable|not found|"
                          r"refused|forbidden|insufficient|unknown)\b", re.IGNORECASE)
_PREFIX = re.compile(r"^\s*([A-Za-z][A-Za-z _-]{0,30}?)\s*:")
_ERROR_KEYS = re.compile(r"^(error|errors|error_message|error_msg|err)$", re.IGNORECASE)


def string_prefix(text: str) -> str | None:
    """The prefix of an error string a tool returns ("Error:" of "Error: no such order"), if it is one."""
    match = _PREFIX.match(text)
    if match and len(match.group(1).split()) <= 3 and _ERROR_WORDS.search(match.group(1)):
        return match.group(1).strip() + ":"
    return None


def _returned_text(node: ast.expr | None) -> str | None:
    """The literal text a `return` starts with: a str constant or an f-string's leading constant."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    return None


def _exception_name(node: ast.expr | None, classes: set[str]) -> str | None:
    """The type a `raise` statement names: `raise X(...)`, `raise X`, `raise mod.X(...)`."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr if node.attr[:1].isupper() else None
    if isinstance(node, ast.Name):
        name = node.id
        if name in _BUILTIN_EXCEPTIONS or name in classes or name[:1].isupper():
            return name
    return None


def _called(scope: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "")
    return names


def with_helpers(scopes: Iterable[ast.AST], modules: Iterable[ast.Module]) -> list[ast.AST]:
    """`scopes` plus the module-level helper functions they call, directly or through other helpers.

    A tool that refuses through a helper (`check_range(km)` raising in rules.py) uses the
    helper's exception as its own failure.
    """
    helpers = {n.name: n for module in modules for n in module.body
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found: list[ast.AST] = list(scopes)
    seen: set[str] = set()
    pending = set().union(*(_called(s) for s in found)) if found else set()
    while pending:
        name = pending.pop()
        if name in seen or name not in helpers:
            continue
        seen.add(name)
        found.append(helpers[name])
        pending |= _called(helpers[name])
    return found


def infer_failure(scopes: Iterable[ast.AST], classes: Iterable[str] = ()) -> FailureConvention:
    """Failure conventions used by the functions inside `scopes` (syntax trees: classes, modules).

    Exceptions raised anywhere in them count (`classes`: exception classes the env defines);
    error keys are keys of returned dict literals; an error prefix counts when a returned
    string literal (or an f-string's leading text) starts with it.
    """
    exceptions: set[str] = set()
    keys: set[str] = set()
    prefixes: Counter[str] = Counter()
    known = set(classes)
    trees = list(scopes)
    for tree in trees:
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    name = _exception_name(node.exc, known)
                    if name and name not in _NOT_FAILURES:
                        exceptions.add(name)
                elif isinstance(node, ast.Return):
                    value = node.value
                    if isinstance(value, ast.Dict):
                        for key, item in zip(value.keys, value.values, strict=True):
                            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                                continue
                            if _ERROR_KEYS.match(key.value):
                                keys.add(key.value)
                            elif key.value == "success" and isinstance(item, ast.Constant) and item.value is False:
                                keys.add("success")
                    text = _returned_text(value)
                    prefix = string_prefix(text) if text is not None else None
                    if prefix:
                        prefixes[prefix] += 1
    return FailureConvention(exceptions=sorted(exceptions), error_prefixes=sorted(prefixes), error_keys=sorted(keys))


def merge_failure(inferred: FailureConvention, *, exceptions: Iterable[str] = (),
                  error_prefixes: Iterable[str] = ()) -> FailureConvention:
    """The inferred convention plus what was declared at import."""
    return FailureConvention(exceptions=sorted({*inferred.exceptions, *exceptions}),
                             error_prefixes=sorted({*inferred.error_prefixes, *error_prefixes}),
                             error_keys=list(inferred.error_keys))

"""Spec extraction for `bench export`, as a worker recipe: extraction units on spawned worker processes.

Extraction is most of an export's CPU time and parses trusted source (no env code runs), so the
exporter runs its units on the local executor's processes (`executors.open_pool`); a unit is one
env's `[source, kind, entry, failure_exceptions, convention, modules]` and its result the spec,
or the reason there is none.
"""

from __future__ import annotations

from typing import Any

from constraints.extract import extract_spec
from constraints.spec import ConstraintSpec
from executors import Recipe

__all__ = ["SpecExtraction", "extract"]


def extract(args: list[Any]) -> ConstraintSpec | str:
    """A spec from `[source, kind, entry, failure_exceptions, convention, modules]`, or why there is none."""
    source, kind, entry, failure_exceptions, convention, modules = args
    try:
        return extract_spec(source, kind, entry, failure_exceptions=failure_exceptions, convention=convention,
                            modules=modules)
    except Exception as exc:
        return f"spec extraction failed: {type(exc).__name__}: {exc}"


class _Extractor:
    def run(self, args: list[Any]) -> ConstraintSpec | str:
        return extract(args)


class SpecExtraction(Recipe[list[Any], "ConstraintSpec | str"]):
    """The recipe of an extraction worker (it holds nothing: each unit brings its env's source)."""

    def open(self) -> _Extractor:
        return _Extractor()

"""A spec-extraction process for `bench export`: JSON argument lines in, spec (or reason) lines out.

Run as `python -m verifier.samples._spec_worker`, so it starts wherever the package is importable (a
checkout or an installed package) and never re-runs the caller's main module, as a
multiprocessing `spawn` child would. Extraction parses trusted source; no env code runs.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from constraints.extract import extract_spec
from constraints.spec import ConstraintSpec

__all__ = ["extract", "main"]


def extract(args: list[Any]) -> ConstraintSpec | str:
    """A spec from `[source, kind, entry, failure_exceptions, convention, modules]`, or why there is none."""
    source, kind, entry, failure_exceptions, convention, modules = args
    try:
        return extract_spec(source, kind, entry, failure_exceptions=failure_exceptions, convention=convention,
                            modules=modules)
    except Exception as exc:
        return f"spec extraction failed: {type(exc).__name__}: {exc}"


def main() -> None:
    """Answer each stdin line with one stdout line: the spec's JSON dict, or the reason as a JSON string."""
    for line in sys.stdin:
        spec = extract(json.loads(line))
        sys.stdout.write(json.dumps(spec if isinstance(spec, str) else spec.model_dump(mode="json")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

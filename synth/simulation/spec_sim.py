"""The spec-only simulator behind the common Simulator interface, and the per-code spec cache.

An audit asks hundreds of samples from a few dozen envs, so the constraint spec of each env
module is extracted once per code hash (here, shared with the constrained LLM prompt) rather
than once per sample; extraction failures are cached too, so a module that cannot be analysed
costs one parse, not one per sample.
"""

from __future__ import annotations

import ast
import hashlib
import threading
import time
from typing import Any

from catalog.bench import BenchItem, SimResult
from constraints.extract import ExtractionError, extract_spec
from constraints.simulate import SpecSimulator

__all__ = ["SpecSim", "item_spec"]

_CACHE: dict[str, dict[str, Any] | ExtractionError] = {}
_CACHE_SIZE = 256
_LOCK = threading.Lock()


def item_spec(item: BenchItem) -> dict[str, Any]:
    """The constraint spec of an item's env module (cached by code hash); raises ExtractionError.

    Callers must not mutate the spec: it is shared between samples and threads.
    """
    key = hashlib.sha256("\0".join([item.env_kind, item.env_entry or "", item.env_code]).encode()).hexdigest()
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is None:
        try:
            entry = item.env_entry or (_guess_entry(item.env_code) if item.env_kind == "class" else None)
            cached = extract_spec(item.env_code, item.env_kind, entry)
        except ExtractionError as exc:
            cached = exc
        except (SyntaxError, ValueError, RecursionError) as exc:  # analysis of odd code must not kill an audit
            cached = ExtractionError(f"{type(exc).__name__}: {exc}")
        with _LOCK:
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = cached
    if isinstance(cached, ExtractionError):
        raise cached
    return cached


def _guess_entry(code: str) -> str | None:
    """The env class of a class-convention module that names none (as EnvSimBench items don't).

    It is the class with the most methods, if one has strictly more than the rest (TypedDicts
    have none).
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    counts = sorted(((sum(isinstance(n, ast.FunctionDef) for n in c.body), c.name) for c in tree.body
                     if isinstance(c, ast.ClassDef)), reverse=True)
    if counts and counts[0][0] > 0 and (len(counts) == 1 or counts[0][0] > counts[1][0]):
        return counts[0][1]
    return None


class SpecSim:
    """Predicts from the constraint spec alone; where the spec is incomplete it abstains.

    Its agreement with execution measures how complete the extracted specs are, so an
    abstention is reported as such (never guessed).
    """

    name = "spec"
    mode = "spec"

    def predict(self, item: BenchItem) -> SimResult:
        """Run the spec's program for the item's action on the item's state."""
        t0 = time.monotonic()
        try:
            spec = item_spec(item)
        except ExtractionError as exc:
            return SimResult(abstained=True, reason=f"no constraint spec: {exc}", seconds=time.monotonic() - t0)
        prediction = SpecSimulator(spec).predict(item.state, item.action)
        seconds = time.monotonic() - t0
        if prediction.abstained:
            return SimResult(abstained=True, reason=prediction.reason, seconds=seconds)
        return SimResult(observation=prediction.observation, delta=[op.to_dict() for op in prediction.delta],
                         seconds=seconds)

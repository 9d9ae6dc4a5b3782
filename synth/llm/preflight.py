"""Check every model a command will use before the command does any work or writes any file.

Without it a missing key or a stopped server is found late (after an export of many minutes, or
a catalog lock and a run folder) or not at all (every slot "rejected", a rollout of 0/0 exit 0).
One cheap request per endpoint (GET /models, what `models` probes) with a short timeout; a key
that is required but unset is said without any request. Embedded models are started by envforge
itself: only their files are checked here, and their start is checked when they start.
"""

from __future__ import annotations

from collections.abc import Iterable

from synth.llm.client import probe
from synth.llm.errors import EndpointUnreachable
from synth.llm.registry import ModelSpec, Registry, load_registry

__all__ = ["PREFLIGHT_TIMEOUT", "preflight", "problem_of"]

PREFLIGHT_TIMEOUT = 5.0


def problem_of(spec: ModelSpec, *, timeout: float = PREFLIGHT_TIMEOUT) -> str | None:
    """Why `spec` cannot be used now (one phrase), or None when its key is set and its endpoint answers."""
    if spec.api_key_env and not spec.api_key():
        return f"{spec.name} needs an API key: set {spec.api_key_env}"
    result = probe(spec, timeout=timeout)
    detail = str(result["detail"])
    if result["embedded"]:
        return None if result["reachable"] else f"{spec.name}: {detail}"
    if not result["reachable"]:
        return f"{spec.name} did not answer at {spec.base_url}: {detail}"
    if not detail.startswith("answers") or detail.startswith("answers, but") or detail.startswith("answers with"):
        return f"{spec.name} at {spec.base_url} {detail}"
    return None


def preflight(models: Iterable[str | ModelSpec | None], *, registry: Registry | None = None,
              timeout: float = PREFLIGHT_TIMEOUT) -> None:
    """Raise EndpointUnreachable naming every model of `models` that cannot be used; None entries are skipped.

    Names are resolved in the registry (UnknownModel for a name it lacks); each distinct model is
    checked once, so a generator and a judge on one endpoint cost one request.
    """
    specs: dict[str, ModelSpec] = {}
    for model in models:
        if model is None:
            continue
        if isinstance(model, str):
            registry = registry or load_registry()
            model = registry.resolve(model)
        specs.setdefault(model.name, model)
    problems = [problem for spec in specs.values() if (problem := problem_of(spec, timeout=timeout))]
    if problems:
        raise EndpointUnreachable("; ".join(problems) + " (nothing was run or written)")

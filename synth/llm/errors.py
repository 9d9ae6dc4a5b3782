"""The typed errors of the LLM layer.

Callers (pipeline nodes, the simulator, ``cli.py models``) branch on the kind of failure: an
endpoint that is down needs a start-up hint, a rate limit needs patience, a bad reply needs a
re-ask or a rejection. Every error raised by a call carries the :class:`CallRecord` of that call
(``err.record``) so the cost of failures is never lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog.errors import EnvforgeError

if TYPE_CHECKING:
    from synth.llm.ledger import CallRecord


class LLMError(EnvforgeError):
    """Base class of every error of the LLM layer."""

    def __init__(self, message: str, *, record: CallRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


class RegistryError(LLMError):
    """The model registry (models.toml or a user override) is malformed."""


class UnknownModel(RegistryError):
    """A model name that no registry entry defines; the message lists the known names."""


class EndpointUnreachable(LLMError):
    """The endpoint did not answer (connection refused, DNS, not started); says how to start it."""


class LLMTimeout(EndpointUnreachable):
    """The endpoint accepted the connection but never answered within the timeout."""


class EmbeddedModelMissing(EndpointUnreachable):
    """xllamacpp or the SmolLM2 GGUF is not installed; the message gives the pip commands."""


class RateLimited(LLMError):
    """HTTP 429 on every attempt."""


class ServerError(LLMError):
    """HTTP 5xx on every attempt."""


class RequestRejected(LLMError):
    """A 4xx other than 429 (bad request, bad API key, unknown model): retrying cannot help."""


class MalformedOutput(LLMError):
    """The reply could not be parsed (even after repair) or does not fit the schema."""

    def __init__(self, message: str, *, raw: str, problems: list[str] | None = None,
                 record: CallRecord | None = None) -> None:
        super().__init__(message, record=record)
        self.raw = raw
        self.problems = list(problems or [])


class RepetitionError(MalformedOutput):
    """The model looped (the same n-gram over and over), typically until max_tokens."""

    def __init__(self, message: str, *, raw: str, pattern: str = "", repeats: float = 0.0,
                 record: CallRecord | None = None) -> None:
        super().__init__(message, raw=raw, problems=[message], record=record)
        self.pattern = pattern
        self.repeats = repeats


def describe(err: BaseException) -> str:
    """One line for a CallRecord's ``error`` field: the type name and the first message line."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".strip()


__all__ = [
    "LLMError", "RegistryError", "UnknownModel", "EndpointUnreachable", "LLMTimeout",
    "EmbeddedModelMissing", "RateLimited", "ServerError", "RequestRejected", "MalformedOutput",
    "RepetitionError", "describe",
]

"""LLM backends: the model registry, OpenAI-compatible calls with cost accounting, the embedded model.

Everything generative in envforge talks to models through :class:`LLMClient` (one per model,
usually from :func:`open_client`), and every call lands as a :class:`CallRecord` in a
:class:`UsageLedger` so yield/cost reports come from the API's own token counts.
"""

from synth.llm.client import LLMClient, open_client, probe, schema_instruction
from synth.llm.errors import (
    EmbeddedModelMissing,
    EndpointUnreachable,
    LLMError,
    LLMTimeout,
    MalformedOutput,
    RateLimited,
    RegistryError,
    RepetitionError,
    RequestRejected,
    ServerError,
    UnknownModel,
)
from synth.llm.jsonfix import detect_repetition, parse_json_loose, repair_json, validate
from synth.llm.ledger import CallRecord, Usage, UsageLedger
from synth.llm.registry import ModelSpec, Registry, load_registry

__all__ = [
    "CallRecord", "EmbeddedModelMissing", "EndpointUnreachable", "LLMClient", "LLMError", "LLMTimeout",
    "MalformedOutput", "ModelSpec", "RateLimited", "Registry", "RegistryError", "RepetitionError",
    "RequestRejected", "ServerError", "UnknownModel", "Usage", "UsageLedger", "detect_repetition", "load_registry",
    "open_client", "parse_json_loose", "probe", "repair_json", "schema_instruction", "validate",
]

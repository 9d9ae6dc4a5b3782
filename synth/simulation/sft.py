"""SFT examples for simulators: a verified sample as the chat a simulator is trained on, in one prompt mode.

The prompt is the simulator's own: `plain_messages` or `constrained_messages`, the builders
`LLMSim` sends (so a model trained on these sees at audit time exactly what it was trained on).
The target is the sample's executed truth (observation and Δ) in that mode's answer schema,
written as `answer_text` writes an answer. A sample becomes an example only if its target is a
perfect answer by the audit's own rules: it fits the mode's schema, it passes the constrained
mode's spec check (else `LLMSim` would re-ask or project it), and decoded as `LLMSim` decodes it
it scores FM and strict CM on the audit's scorer. What fails is dropped with its reason (plain
mode's dotted paths cannot address a new key that contains a dot; a spec can be stricter than
the code) rather than trained on.

Token counts are by a `tokenizers` tokenizer file when one is given, else estimated from
characters at `CHARS_PER_TOKEN` (the estimate `LLMSim` itself uses to decide what fits a
context window); a count is the sum over the messages' contents (no chat template).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.bench.items import BenchItem, SimResult
from catalog.bench.strata import rung_of_strata
from catalog.errors import EnvforgeError
from catalog.state.delta import Delta
from constraints.extract import ExtractionError
from constraints.simulate import item_spec
from synth.llm.jsonfix import validate
from synth.simulation.llm_sim import CHARS_PER_TOKEN, MODES
from synth.simulation.prompts import (
    PLAIN_SCHEMA,
    answer_text,
    constrained_messages,
    constrained_schema,
    plain_messages,
    plain_ops,
)
from synth.simulation.validate import check_answer
from verifier.audit.metrics import parse_observation
from verifier.audit.run import score_prediction

__all__ = ["Example", "TokenCounter", "TokenizerError", "chars_counter", "example", "gold_answer", "tokenizer_counter"]

Message = dict[str, str]


class TokenizerError(EnvforgeError):
    """A `--tokenizer` that cannot be loaded (no such file, not a tokenizers file, library missing)."""


@dataclass(frozen=True)
class TokenCounter:
    """How tokens are counted (`name`, said in the report) and the count of one text."""

    name: str
    count: Callable[[str], int]


def chars_counter() -> TokenCounter:
    """The estimate without a tokenizer: characters / CHARS_PER_TOKEN, rounded up."""
    return TokenCounter(f"characters/{CHARS_PER_TOKEN} (no --tokenizer)", lambda text: math.ceil(len(text) / CHARS_PER_TOKEN))


def tokenizer_counter(path: Path | str) -> TokenCounter:
    """A `tokenizers` tokenizer read from a tokenizer.json (or a folder holding one); never downloaded."""
    where = Path(path)
    file = where / "tokenizer.json" if where.is_dir() else where
    if not file.is_file():
        raise TokenizerError(f"--tokenizer {path}: no tokenizer.json there")
    try:
        import tokenizers
    except ImportError as exc:
        raise TokenizerError("--tokenizer needs the `tokenizers` package (pip install tokenizers)") from exc
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(file))
    except Exception as exc:  # the library raises a bare Exception on a bad file
        raise TokenizerError(f"--tokenizer {path}: not a tokenizers file ({str(exc).splitlines()[0][:120]})") from exc
    return TokenCounter(f"tokenizers {tokenizers.__version__} ({file.parent.name}/{file.name})",
                        lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids))


def gold_answer(item: BenchItem, mode: str) -> dict[str, Any]:
    """The sample's executed truth in `mode`'s answer schema.

    plain (EnvSimBench's): the observation as the `str()` of the value (their feedback form) and
    dotted config changes (a delete carries `value: null`, as PLAIN_SCHEMA requires a value);
    constrained: the observation as it is and the Δ with key-list paths.
    """
    if mode == "plain":
        changes = [{"type": op["op"], "path": ".".join(op["path"]), "value": op.get("value")} for op in item.delta]
        return {"feedback": str(item.observation), "config_changes": changes}
    if mode == "constrained":
        return {"observation": item.observation, "delta": item.delta}
    raise ValueError(f"unknown simulator mode {mode!r}; modes: {', '.join(MODES)}")


@dataclass(frozen=True)
class Example:
    """One kept sample: the chat (system, user, assistant), its stratum and its token count."""

    item: BenchItem
    messages: list[Message]
    stratum: str
    tokens: int


def _decoded(item: BenchItem, mode: str, answer: dict[str, Any], spec: Any) -> tuple[SimResult, list[str]]:
    """The answer as LLMSim turns it into a prediction, and the spec violations it would act on."""
    if mode == "plain":
        ops = plain_ops(answer["config_changes"], item.state)
        return SimResult(observation=parse_observation(answer["feedback"]), delta=ops), []
    check = check_answer(answer["observation"], answer["delta"], item.state, spec, item.action.name)
    return (SimResult(observation=parse_observation(answer["observation"]),
                      delta=Delta.dump_python(check.kept, mode="json")), list(check.violations))


def example(item: BenchItem, mode: str, counter: TokenCounter) -> Example | str:
    """The sample as an SFT example in `mode`, or why it cannot be one (its target is not a perfect answer)."""
    spec = None
    if mode == "constrained":
        try:
            spec = item_spec(item)
        except ExtractionError:
            return "no constraint spec (constrained mode abstains)"
        if item.action.name not in spec.tools:
            return "tool not in the constraint spec (constrained mode abstains)"
        prompt, schema = constrained_messages(item, spec), constrained_schema(spec, item.action.name)
    else:
        prompt, schema = plain_messages(item), PLAIN_SCHEMA
    answer = gold_answer(item, mode)
    if validate(answer, schema):
        return "target does not fit the answer schema"
    prediction, violations = _decoded(item, mode, answer, spec)
    if violations:
        return "target breaks the constraint spec (LLMSim would re-ask or project it)"
    scores = score_prediction(item, prediction)
    if not scores["fm"]:
        return "target does not decode to the observation"
    if not scores["cm_strict"]:
        return "target does not decode to the state change (dotted paths)" if mode == "plain" else \
            "target does not decode to the state change"
    messages = [*prompt, {"role": "assistant", "content": answer_text(answer)}]
    tokens = sum(counter.count(m["content"]) for m in messages)
    return Example(item, messages, rung_of_strata(item.strata).name, tokens)

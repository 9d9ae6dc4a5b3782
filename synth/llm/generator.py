"""The LLM generator: the same stages as the procedural one, with a model making the choices.

- mining: the model reads one task statement of the corpus and says whether it implies a
  stateful, domain-specific environment, which ontology domain that is, and describes the env;
- blueprint mode: the model makes the design choices (focus entity, how many entities, how many
  fields a write changes) under a JSON schema whose enums come from the ontology; envforge's
  compiler writes the code. Robust with small models: every answer is a valid choice or rejected;
- code mode: the model writes the Env class itself from the plan's rules and the schema, and is
  re-asked with the static-check and execution problems (at most 5 attempts, by the graph).

Prompts are kept short and outputs capped per node (the embedded 135M model reads ~185 tokens/s,
writes ~30 tokens/s under a schema, and loops when unbounded).
"""

from __future__ import annotations

import random
import threading
from typing import Any

from synth.generators import Usage, split_schema
from synth.llm import LLMClient, LLMError, ModelSpec
from synth.mining import load_corpus
from synth.procedural.blueprint import Blueprint, SizeName
from synth.procedural.compiler import compile_env
from synth.procedural.design import design
from synth.procedural.ontology import load_domains

__all__ = ["LLMGenerator"]

MINE_TOKENS = 120
BLUEPRINT_TOKENS = 60
CODE_TOKENS = 1800


class LLMGenerator:
    """Stages answered by a registry model through the OpenAI-compatible client."""

    name = "llm"

    def __init__(self, spec: ModelSpec, *, mode: str = "blueprint", domain_order: list[str] | None = None,
                 base_url: str | None = None, client: LLMClient | None = None, size: SizeName = "medium") -> None:
        """`spec` is the resolved registry entry; `base_url` where this session reaches it."""
        if mode not in ("blueprint", "code"):
            raise ValueError(f"mode must be blueprint or code, not {mode!r}")
        self.spec, self.model, self.mode = spec, spec.name, mode
        self.can_correct = mode == "code"
        self.domains = {d.id: d for d in load_domains()}
        self.order = domain_order or sorted(self.domains)
        self.size = size
        self._base_url = base_url
        self._client = client
        self._lock = threading.Lock()

    @property
    def client(self) -> LLMClient:
        with self._lock:
            if self._client is None:  # an embedded model without base_url: EndpointUnreachable says so
                self._client = LLMClient(self.spec, base_url=self._base_url or None)
            return self._client

    # --- mining --------------------------------------------------------------------------------
    def topic(self, slot: int, seed: int) -> tuple[dict[str, Any], Usage]:
        corpus = list(load_corpus())
        random.Random(seed).shuffle(corpus)
        statement = corpus[slot % len(corpus)]
        ids = list(self.domains)
        schema = {"type": "object", "additionalProperties": False, "required": ["stateful", "domain", "description"],
                  "properties": {"stateful": {"type": "boolean"}, "domain": {"type": "string", "enum": ids},
                                 "description": {"type": "string", "maxLength": 200}}}
        messages = [{"role": "system", "content": "You map a user request to the software system that would serve it. "
                                                  "Answer JSON only."},
                    {"role": "user", "content": f"Request: {statement['text']}\nDoes it need a stateful database "
                                                f"system (stateful)? Which domain id? Describe that system in one "
                                                f"sentence."}]
        fallback = self.domains[self.order[slot % len(self.order)]]
        try:
            answer, record = self.client.complete_json(messages, schema, stage="mine", max_tokens=MINE_TOKENS, seed=seed)
            usage, note = Usage.of(record), ""
        except LLMError as exc:
            answer, usage, note = {}, Usage.of(getattr(exc, "record", None), str(exc)), f"model failed: {exc}"
        domain = self.domains.get(answer.get("domain", "")) if answer.get("stateful") else None
        if domain is None:
            domain, note = fallback, note or "model found no stateful domain; fell back to the ontology order"
        variant = seed * 100_003 + slot
        bp = design(domain, variant, size_class=self.size)
        description = str(answer.get("description") or "").strip() or bp.description
        mining = {"statement": statement["text"], "corpus_domain": statement.get("domain"),
                  "corpus_stateful": statement.get("stateful", True), "model_stateful": answer.get("stateful"),
                  "model_domain": answer.get("domain"), "note": note}
        return {"domain": domain.id, "seed": variant, "env_id": bp.env_id, "topic": bp.topic,
                "description": description, "mining": mining}, usage

    # --- plan ------------------------------------------------------------------------------------
    def blueprint(self, topic: dict[str, Any]) -> tuple[Blueprint, Usage]:
        domain = self.domains[topic["domain"]]
        movers = [e.name for e in domain.entities if e.transitions]
        schema = {"type": "object", "additionalProperties": False, "required": ["focus", "entities", "width"],
                  "properties": {"focus": {"type": "string", "enum": movers},
                                 "entities": {"type": "integer", "minimum": 2, "maximum": min(4, len(domain.entities))},
                                 "width": {"type": "integer", "minimum": 1, "maximum": 4}}}
        entities = "; ".join(f"{e.name} ({', '.join(e.states) or 'no lifecycle'})" for e in domain.entities)
        messages = [{"role": "system", "content": "You design a tool-use environment. Answer JSON only."},
                    {"role": "user", "content": f"Environment: {topic['description']}\nEntities: {entities}\n"
                                                f"Pick the focus entity, how many entities (2-4), and how many "
                                                f"fields an update tool may change (width 1-4)."}]
        answer, record = self.client.complete_json(messages, schema, stage="plan", max_tokens=BLUEPRINT_TOKENS,
                                                   seed=topic["seed"])
        bp = design(domain, topic["seed"], size_class=self.size, focus=answer["focus"], size=int(answer["entities"]),
                    width=int(answer["width"]))
        bp = bp.model_copy(update={"description": topic.get("description") or bp.description,
                                   "knobs": {**bp.knobs, "chosen_by": self.model}})
        return bp, Usage.of(record)

    def schema(self, bp: Blueprint) -> tuple[str, Usage]:
        return split_schema(compile_env(bp)), Usage()

    # --- code ------------------------------------------------------------------------------------
    def code(self, bp: Blueprint, plan: dict[str, Any], schema: str, feedback: list[str]) -> tuple[str, Usage]:
        if self.mode == "blueprint":
            return compile_env(bp), Usage()
        messages = code_messages(bp, plan, schema, feedback)
        prompt_estimate = sum(len(m["content"]) for m in messages) // 3  # ~3 characters per token for code
        room = self.client.spec.context_window - prompt_estimate
        if room < 256:
            raise LLMError(f"the code prompt (~{prompt_estimate} tokens) does not fit {self.model}'s context window "
                           f"of {self.client.spec.context_window} tokens; use blueprint mode or a larger model")
        answer, record = self.client.complete_json(messages, {"type": "object", "additionalProperties": False,
                                                              "required": ["code"],
                                                              "properties": {"code": {"type": "string"}}},
                                                   stage="code", max_tokens=min(CODE_TOKENS, room), seed=bp.seed)
        body = str(answer["code"]).strip("\n")
        return schema.rstrip() + "\n\n\n" + body + "\n", Usage.of(record)


def code_messages(bp: Blueprint, plan: dict[str, Any], schema: str, feedback: list[str]) -> list[dict[str, str]]:
    """The code-mode prompt: schema, each tool's signature, rules in order and writes, and feedback."""
    lines = []
    for name, tool in plan["tools"].items():
        params = ", ".join(f"{p['name']}: {p.get('annotation', 'str')}" for p in tool["params"])
        rules = "; ".join(f"if {plan['rules'][r]['when_source']}: fail({plan['rules'][r]['message']!r})"
                          for r in tool["preconditions"])
        writes = "; ".join(f"{e['op']} {'.'.join(e['path'])}" + (f" = {e['value']}" if e.get("value") else "")
                           for e in tool["effects"])
        lines.append(f"- @tool(kind={tool['kind']!r}) {name}({params}): {rules or 'no rules'}; writes: {writes or 'none'}")
    entry = "".join(part.capitalize() for part in bp.env_id.split("-")[0].split("_")) + "Env"
    prompt = (f"Write only the class `{entry}(Env)` with `tables = (...)` and these tools, using self.get, "
              f"self.select, self.add, self.delete, self.now(), self.new_id(prefix), `return fail(msg)` and "
              f"`return ok(data=..., message=...)`:\n" + "\n".join(lines) + f"\n\nThe module above it:\n{schema}")
    if feedback:
        prompt += "\n\nYour previous attempt had these problems; fix them:\n" + "\n".join(f"- {f}" for f in feedback[:8])
    return [{"role": "system", "content": "You write Python environment code. Answer JSON {\"code\": ...}."},
            {"role": "user", "content": prompt}]

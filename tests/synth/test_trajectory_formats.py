"""Trajectories as training data: HF chat templates render every line, and runs with and without a simulator load together.

The tokenizer is built here (a `tokenizers` word-level model wrapped in transformers'
`PreTrainedTokenizerFast`; nothing is downloaded) and given two tool chat templates written for
this test after the public conventions: a hermes-style one (tool calls as `<tool_call>` JSON
with `arguments` through `tojson`, tool results in `<tool_response>` carrying the tool's `name`)
and a llama3.1-style one (one call per turn as JSON with `parameters`, results under the
`ipython` role). Both raise, as strict templates do, on a tool message without `name` or a
call whose arguments are text (which `tojson` would encode twice).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest
import tokenizers
import transformers

from catalog.store import Catalog
from constraints.simulate import SpecSimulator
from synth.rollout import RolloutConfig, plan_units, reference_agent, run_rollouts, template_messages

HERMES = """\
{%- if tools %}<|im_start|>system
You may call functions. Their signatures are within <tools></tools>.
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>
Return each call as <tool_call>{"name": ..., "arguments": ...}</tool_call>.<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == "tool" %}
{%- if message.name is not defined or not message.name %}{{ raise_exception("tool message without name") }}{% endif %}
<|im_start|>user
<tool_response>
{"name": "{{ message.name }}", "content": {{ message.content | tojson }}}
</tool_response><|im_end|>
{% elif message.role == "assistant" and message.tool_calls %}<|im_start|>assistant
{{ message.content or "" }}
{%- for call in message.tool_calls %}
{%- if call.function.arguments is string %}{{ raise_exception("arguments must be an object") }}{% endif %}
<tool_call>
{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}
</tool_call>
{%- endfor %}<|im_end|>
{% else %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

LLAMA31 = """\
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == "user" and loop.index0 == 1 and tools %}<|start_header_id|>user<|end_header_id|>

Given the following functions, respond with a JSON function call {"name": ..., "parameters": ...}.
{% for tool in tools %}{{ tool | tojson(indent=4) }}

{% endfor %}{{ message.content }}<|eot_id|>
{%- elif message.role == "assistant" and message.tool_calls %}
{%- if message.tool_calls | length != 1 %}{{ raise_exception("one tool call per turn") }}{% endif %}
{%- set call = message.tool_calls[0].function %}
{%- if call.arguments is string %}{{ raise_exception("arguments must be an object") }}{% endif %}
<|start_header_id|>assistant<|end_header_id|>

{"name": "{{ call.name }}", "parameters": {{ call.arguments | tojson }}}<|eot_id|>
{%- elif message.role == "tool" %}<|start_header_id|>ipython<|end_header_id|>

{{ message.content }}<|eot_id|>
{%- else %}<|start_header_id|>{{ message.role }}<|end_header_id|>

{{ message.content }}<|eot_id|>
{%- endif %}
{%- endfor %}"""


def _tokenizer(template: str) -> Any:
    """A word-level tokenizer trained on a few strings, with `template` as its chat template."""
    model = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    model.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.WordLevelTrainer(special_tokens=["[UNK]", "<s>"])
    model.train_from_iterator(["borrow a book", "transfer the rent", "<tool_call> name arguments"], trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=model, unk_token="[UNK]", bos_token="<s>")
    tokenizer.chat_template = template
    return tokenizer


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Reference rollouts of every reference task, once plain and once with the spec simulator."""
    root = tmp_path_factory.mktemp("trajectories")
    catalog = Catalog(root / "c")
    units, _ = plan_units(catalog, [spec.id for spec in catalog.list()[0] if spec.reference])
    for name, simulator in (("plain", None), ("sim", SpecSimulator())):
        config = RolloutConfig(model="reference", simulator="spec" if simulator else None)
        result = run_rollouts(catalog, units, config, root / name, agent_factory=reference_agent,
                              simulator=simulator, concurrency=1)
        assert len(result.trajectories) == len(units) and not result.errors
    return root / "plain" / "trajectories.jsonl", root / "sim" / "trajectories.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("template", [HERMES, LLAMA31], ids=["hermes", "llama3.1"])
def test_every_line_renders_with_tool_chat_templates(runs: tuple[Path, Path], template: str) -> None:
    tokenizer = _tokenizer(template)
    lines = _lines(runs[0]) + _lines(runs[1])
    rendered = [tokenizer.apply_chat_template(template_messages(line), tools=line["tools"], tokenize=False)
                for line in lines]
    assert len(rendered) == len(lines) == 30
    for line, text in zip(lines, rendered, strict=True):
        for call in (c for m in line["messages"] for c in m.get("tool_calls", [])):
            arguments = call["function"]["arguments"]
            assert json.dumps(json.loads(arguments)) in text  # once-encoded, as the model would write it
            assert json.dumps(arguments) not in text  # never the JSON text encoded again
    assert all(tokenizer.apply_chat_template(template_messages(line), tools=line["tools"]) for line in lines[:2])
    with pytest.raises(Exception, match="arguments must be an object"):  # the file's own form would double-encode
        tokenizer.apply_chat_template(lines[0]["messages"], tools=lines[0]["tools"], tokenize=False)


def test_hermes_needs_the_tool_name_the_lines_carry(runs: tuple[Path, Path]) -> None:
    tokenizer, line = _tokenizer(HERMES), _lines(runs[0])[0]
    messages = template_messages(line)
    tool = next(m for m in messages if m["role"] == "tool")
    assert f'{{"name": "{tool["name"]}", "content": ' in tokenizer.apply_chat_template(messages, tokenize=False)
    nameless = [{k: v for k, v in m.items() if k != "name"} if m["role"] == "tool" else m for m in messages]
    with pytest.raises(Exception, match="tool message without name"):
        tokenizer.apply_chat_template(nameless, tokenize=False)


def test_tool_messages_carry_the_tool_name(runs: tuple[Path, Path]) -> None:
    for line in _lines(runs[0]):
        names = {c["id"]: c["function"]["name"] for m in line["messages"] for c in m.get("tool_calls", [])}
        tool_messages = [m for m in line["messages"] if m["role"] == "tool"]
        assert tool_messages and all(m["name"] == names[m["tool_call_id"]] for m in tool_messages)


def test_runs_with_and_without_a_simulator_load_together(runs: tuple[Path, Path]) -> None:
    plain, sim = runs
    for files in ([plain, sim], [sim, plain]):  # Arrow types a column from the first file: both orders
        loaded = datasets.load_dataset("json", data_files=[str(f) for f in files], split="train")
        assert loaded.num_rows == 30
        assert sorted(loaded["simulator"]) == [""] * 15 + ["spec"] * 15
    for line in _lines(plain):
        assert line["simulator"] == "" and line["verified"] is False and line["first_divergence_json"] == "null"
        assert all(not s["sim"]["simulated"] and s["error"] == "" for s in line["steps"])
    assert {key for line in _lines(plain) for key in line} == {key for line in _lines(sim) for key in line}

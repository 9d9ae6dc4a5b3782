"""TRL's environment_factory protocol, without TRL or torch: schemas through transformers' own get_json_schema,
reset / tools / reward on real envs (in-process reference envs, a synthesized env in the sandbox).

The GRPO run itself (TRL + torch) is tests/serving/adapters/test_train_grpo.py, marked `train`.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from transformers.utils import get_json_schema

from catalog.models import EnvManifest, ToolDescriptor
from catalog.store import Catalog
from serving.adapters.trl import AdapterError, dataset_rows, envforge_reward, environment_factory
from tests.conftest import REFERENCE_IDS

# What get_json_schema writes for the manifest's JSON schema of one parameter: the keys it can express
_EXPRESSIBLE = {"type", "items", "enum", "anyOf", "description", "additionalProperties"}


def _expressible(schema: dict[str, Any]) -> dict[str, Any]:
    """The manifest's parameter schema modulo what get_json_schema cannot express (the adapter's module doc):
    no defaults or validation keywords, and `anyOf [X, null]` written as X with `nullable: true`."""
    options = schema.get("anyOf")
    if options is not None:
        kept = [_expressible(o) for o in options if o != {"type": "null"}]
        nullable = len(kept) < len(options)
        if len(kept) == 1:
            out = kept[0]
        elif all(set(o) == {"type"} and isinstance(o["type"], str) for o in kept):
            out = {"type": sorted({o["type"] for o in kept})}
        else:
            out = {"anyOf": kept}
        out = {**out, **({"nullable": True} if nullable else {})}
        return {**out, **({"description": schema["description"]} if "description" in schema else {})}
    out = {k: v for k, v in schema.items() if k in _EXPRESSIBLE}
    if "items" in out:
        out["items"] = _expressible(out["items"])
    return out


def _expected(descriptor: ToolDescriptor) -> dict[str, Any]:
    properties = descriptor.parameters.get("properties") or {}
    parameters: dict[str, Any] = {"type": "object", "properties": {
        name: {**_expressible(schema), "description": schema.get("description", name)}
        for name, schema in properties.items()}}
    if descriptor.parameters.get("required"):
        parameters["required"] = sorted(descriptor.parameters["required"])
    return {"type": "function", "function": {"name": descriptor.name, "description": descriptor.description,
                                             "parameters": parameters}}


def _schema(method: Any) -> dict[str, Any]:
    schema = get_json_schema(method)
    required = schema["function"]["parameters"].get("required")
    if required is not None:
        schema["function"]["parameters"]["required"] = sorted(required)
    return schema


def test_schemas_are_the_manifests_for_reference_and_synthesized_envs(reference, synthesized):
    catalog, synthesized_ids = synthesized
    compared = 0
    for env_id in [*REFERENCE_IDS, *synthesized_ids]:
        handle = (reference if env_id in REFERENCE_IDS else catalog).get(env_id)
        cls = environment_factory(env_id, catalog=reference if env_id in REFERENCE_IDS else catalog)
        public = sorted(n for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction) if not n.startswith("_"))
        assert public == sorted(["reset", *(t.name for t in handle.manifest.tools)])  # what TRL takes as tools
        for descriptor in handle.manifest.tools:
            assert _schema(getattr(cls, descriptor.name)) == _expected(descriptor), (env_id, descriptor.name)
            compared += 1
    assert compared > 80
    lossless = sum(_expected(t)["function"]["parameters"] == {**t.parameters, "required": sorted(t.parameters["required"])}
                   for t in reference.get("library").manifest.tools)
    assert lossless < len(reference.get("library").manifest.tools)  # defaults exist, and are what is dropped


def test_reset_tools_and_reward_on_a_reference_env(reference):
    Library = environment_factory("library", catalog=reference)
    rows = dataset_rows(Library)
    assert {r["task"] for r in rows} == {t.id for t in reference.get("library").tasks()}
    task = reference.get("library").tasks()[0]
    solver, idle = Library(), Library()
    assert solver.reset(**{**rows[0], "extra": 1}) == \
        next(t for t in reference.get("library").tasks() if t.id == rows[0]["task"]).instruction
    solver.reset(task=task.id)
    idle.reset(task=task.id)
    before = idle.env.state()
    completion: list[dict[str, Any]] = []
    for action in task.solution:
        result = getattr(solver, action.name)(**action.arguments)
        assert isinstance(result, str) and '"success": true' in result
        completion += [{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": action.name}}]},
                       {"role": "tool", "name": action.name, "content": result}]
    assert idle.env.state() == before  # two rollouts never share state
    done = [*completion, {"role": "assistant", "content": "Done."}]
    assert envforge_reward([done, done], [solver, idle]) == [1.0, 0.0]
    assert envforge_reward([completion], [solver]) == [0.0]  # ended on a tool result: cut off, not a success
    assert envforge_reward(["plain text"], [object()]) == [None]
    solver.reset(task=task.id)  # a reused instance starts over
    assert solver.env.state() == before and envforge_reward([done], [solver]) == [0.0]


def test_tasks_cycle_without_a_task_column_and_rows_of_several_envs(reference):
    Bank, Clinic = environment_factory("bank", catalog=reference), environment_factory("clinic", catalog=reference)
    instructions = {t.instruction for t in reference.get("bank").tasks()}
    bank = Bank()
    seen = {bank.reset(prompt=[]) for _ in instructions}
    assert seen == instructions
    rows = dataset_rows(Bank, Clinic)
    assert {r["environment"] for r in rows} == {"bank", "clinic"}


def test_bad_tool_arguments_and_limits_answer_errors(reference):
    Store = environment_factory("store", catalog=reference, max_steps=2)
    store = Store()
    store.reset()
    assert "error" in store.get_product(product_id=7) and "error" in store.get_product(nope="x")
    with pytest.raises(Exception, match="max_steps 2"):  # TRL turns a raising tool into an error result
        store.get_product(product_id="SKU-100")
    assert envforge_reward([[{"role": "assistant", "content": "ok"}]], [store]) == [0.0]


def _manifest_with(tool: ToolDescriptor) -> EnvManifest:
    base = Catalog(root="/nonexistent-envforge-catalog").get("library").manifest
    return base.model_copy(update={"id": "hostile-names", "tools": [tool]})


@pytest.mark.parametrize("tool", [
    ToolDescriptor(name="__class__", description="x"),
    ToolDescriptor(name="reset", description="x"),
    ToolDescriptor(name="get_reward", description="x"),
    ToolDescriptor(name="import os; os.system('id')", description="x"),
    ToolDescriptor(name="lookup", parameters={"type": "object", "properties": {"a-b": {"type": "string"}}}),
    ToolDescriptor(name="lookup", parameters={"type": "object", "properties": {"class": {"type": "string"}}}),
])
def test_names_that_are_not_python_names_are_refused(tmp_path, tool):
    catalog = Catalog(tmp_path)
    source = (Catalog(root="/nonexistent-envforge-catalog").get("library").path / "env.py").read_text()
    handle = catalog.write_env(_manifest_with(tool), source, {"default": {}})
    with pytest.raises(AdapterError, match="cannot be offered"):
        environment_factory(handle.id, catalog=catalog)


def test_a_synthesized_env_runs_sandboxed_and_its_solution_earns_the_reward(synthesized):
    catalog, ids = synthesized
    Env = environment_factory(ids[0], catalog=catalog)
    task = next(t for t in catalog.get(ids[0]).tasks() if not t.refusal and t.solution)
    env = Env()
    assert env.reset(task=task.id) == task.instruction and not env.env.in_process
    for action in task.solution:
        getattr(env, action.name)(**action.arguments)
    assert envforge_reward([[{"role": "assistant", "content": "Done."}]], [env]) == [1.0]

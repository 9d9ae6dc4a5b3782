"""TRL's GRPOTrainer `environment_factory` over a catalog env, and the reward function that scores its episodes.

    factory = environment_factory("library", catalog=None, trusted=None, max_steps=None)
    GRPOTrainer(model, reward_funcs=envforge_reward, environment_factory=factory, train_dataset=rows, ...)
    rows = dataset_rows(factory)  # one row per task: {"prompt": [...], "task": id}

TRL (1.16) calls the factory once per concurrent rollout and reuses the instances: `reset(**row)`
starts an episode on the row's `task` (or the env's next task in turn) and returns its
instruction, which TRL appends to the prompt; every public method of the class is a tool, its
schema read by `transformers.utils.get_json_schema` from the method's annotations and Google
docstring. The class is built per env from its manifest: no code is generated or exec'd, tool and
parameter names must be Python identifiers (`_tools.python_name`), and each method only forwards
its keyword arguments to `ToolEnv.step`, where the env validates them as it does for every client.

`envforge_reward(completions, environments)` is the episode's score, `ToolEnv.evaluate` on each
instance with the completion's final answer (a refusal task needs the agent's decline, so the
reward is a reward function that sees the completion rather than TRL's `get_reward()`, which does
not); an episode that ends on a tool call or result was cut off and scores 0.0.

What the schemas cannot carry (get_json_schema has no way to write it; the manifest keeps it and
the env still enforces it): parameter defaults (an optional parameter is just not required),
validation keywords (minimum, maxLength, pattern, format, nested object properties, $ref), and
`X | None`, which reads `{..X, "nullable": true}` instead of `anyOf [X, null]`. A parameter
without a description is described by its name (get_json_schema requires one).
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Union

from catalog.models import ToolDescriptor
from catalog.store import Catalog
from serving.adapters._tools import AdapterError, final_answer, python_name, result_text
from serving.gym import ToolEnv, make

__all__ = ["EnvforgeEnvironment", "environment_factory", "envforge_reward", "dataset_rows", "annotation_of",
           "AdapterError"]

# Names TRL gives a meaning (`reset`, `get_reward`) and the instance's own attribute (`env`): no tool may take them
RESERVED = frozenset({"reset", "get_reward", "env"})

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None)}


def annotation_of(schema: object) -> Any:
    """The Python annotation whose get_json_schema form is `schema`, as far as one exists (else `Any`)."""
    if not isinstance(schema, Mapping) or not schema:
        return Any
    values = schema.get("enum")
    if isinstance(values, list) and values and all(type(v) in (str, int, float, bool, type(None)) for v in values):
        return Literal[tuple(values)]
    options = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(options, list) and options:
        return Union[tuple(annotation_of(o) for o in options)]  # noqa: UP007 (built from a tuple)
    kind = schema.get("type")
    if isinstance(kind, list) and kind:
        return Union[tuple(annotation_of({**schema, "type": k}) for k in kind)]  # noqa: UP007
    if kind == "array":
        items = schema.get("items")
        return list[annotation_of(items)] if isinstance(items, Mapping) and items else list  # type: ignore[misc]
    if kind == "object":
        extra = schema.get("additionalProperties")
        return dict[str, annotation_of(extra)] if isinstance(extra, Mapping) and extra else dict  # type: ignore[misc]
    return _SCALARS.get(kind, Any) if isinstance(kind, str) else Any


def _docstring(descriptor: ToolDescriptor, names: list[str]) -> str:
    properties = descriptor.parameters.get("properties") or {}
    lines = [descriptor.description or descriptor.name]
    if names:
        lines += ["", "Args:"]
        for name in names:
            text = " ".join(str(properties[name].get("description") or name).split())
            lines.append(f"    {name}: {text}")
    return "\n".join(lines) + "\n"


_UNSET = inspect.Parameter.empty


def _tool_method(descriptor: ToolDescriptor) -> Callable[..., str]:
    """The method TRL offers as tool `descriptor.name`: a signature and docstring read from the manifest, a forwarder."""
    name = python_name("tool", descriptor.name, reserved=RESERVED)
    properties = descriptor.parameters.get("properties") or {}
    if not isinstance(properties, Mapping):
        raise AdapterError(f"tool {name!r}: its parameters' properties are not an object")
    required = set(descriptor.parameters.get("required") or ())
    names = [python_name(f"parameter of tool {name!r}", p) for p in properties]
    annotations = {p: annotation_of(properties[p]) for p in names}
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    for p in names:  # keyword-only: any order of required and optional parameters is a valid signature
        default = _UNSET if p in required else properties[p].get("default")
        parameters.append(inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=annotations[p]))

    def tool(self: EnvforgeEnvironment, /, **arguments: Any) -> str:
        return self._call(name, arguments)

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = _docstring(descriptor, names)
    tool.__annotations__ = dict(annotations)  # no return hint: the schema is the manifest's, which has none
    tool.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return tool


class EnvforgeEnvironment:
    """One TRL rollout's env: a `ToolEnv` of the class's env; tools are the subclass's methods (see the module doc)."""

    env_id: ClassVar[str]
    _catalog: ClassVar[Catalog]
    _options: ClassVar[dict[str, Any]]
    _numbers: ClassVar[itertools.count[int]]

    def __init__(self) -> None:
        self.env: ToolEnv = make(self.env_id, catalog=self._catalog, terminate_on_success=False, **self._options)
        self._tasks = sorted(self.env.tasks)
        self._turn = next(self._numbers)  # instances start at different tasks, each walks all of them in turn

    def reset(self, **row: Any) -> str:
        """Start an episode on the row's `task`, else on the env's next task; returns its instruction.

        The row is the dataset's (untrusted): only `task` is read, an id the env must have.
        """
        task = row.get("task")
        if task is None and self._tasks:
            task = self._tasks[self._turn % len(self._tasks)]
            self._turn += 1
        instruction, _ = self.env.reset(options={"task": task} if task is not None else None)
        return instruction

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        observation, *_ = self.env.step({"name": name, "arguments": arguments})
        return result_text(observation)

    def _score(self, completion: Any) -> float:
        answer: str | None
        if isinstance(completion, str):
            answer, cut_off = completion, False
        else:
            answer, cut_off = final_answer(list(completion))
        return self.env.evaluate(answer, cut_off=cut_off)[0]

    def __del__(self) -> None:
        env = getattr(self, "env", None)
        if env is not None:
            env.close()


def environment_factory(env_id: str, *, catalog: Catalog | Path | str | None = None, trusted: bool | None = None,
                        max_steps: int | None = None) -> type[EnvforgeEnvironment]:
    """The environment class of `env_id` (the class is TRL's zero-argument factory); one instance per rollout.

    `max_steps` caps the tool calls of an episode (calls beyond it answer an error and the episode
    scores 0.0); `catalog` and `trusted` are `serving.make`'s. Raises AdapterError if a tool or
    parameter name cannot be a Python name, CatalogError if the env does not exist.
    """
    catalog = catalog if isinstance(catalog, Catalog) else Catalog(catalog)
    handle = catalog.get(env_id)
    members: dict[str, Any] = {"env_id": handle.id, "_catalog": catalog, "_numbers": itertools.count(),
                               "_options": {"trusted": trusted, "max_steps": max_steps},
                               "__doc__": handle.manifest.description or handle.manifest.name}
    for descriptor in handle.manifest.tools:
        method = _tool_method(descriptor)
        if method.__name__ in members:
            raise AdapterError(f"env {env_id!r} declares tool {method.__name__!r} twice")
        members[method.__name__] = method
    name = "".join(part.capitalize() for part in handle.id.replace(".", "-").replace("_", "-").split("-"))
    return type(f"{name}Environment", (EnvforgeEnvironment,), members)


def envforge_reward(completions: list[Any], environments: list[Any] | None = None, **_: Any) -> list[float | None]:
    """TRL reward function: each episode's `ToolEnv.evaluate` with its completion's final answer (None: not ours)."""
    if environments is None:
        raise AdapterError("envforge_reward scores environments: pass environment_factory to the trainer")
    return [env._score(completion) if isinstance(env, EnvforgeEnvironment) else None
            for completion, env in zip(completions, environments, strict=True)]


def dataset_rows(*factories: type[EnvforgeEnvironment], prompt: str = "") -> list[dict[str, Any]]:
    """One training row per task of each env: `{"prompt", "task"}`, and `"environment"` with several envs.

    The instruction comes from `reset`, appended by TRL to `prompt` (a user message). With several
    factories, pass the trainer `{cls.env_id: cls for cls in factories}`: rows name their env.
    """
    rows = []
    for factory in factories:
        handle = factory._catalog.get(factory.env_id)
        for task in sorted(t.id for t in handle.tasks()):
            row: dict[str, Any] = {"prompt": [{"role": "user", "content": prompt}], "task": task}
            if len(factories) > 1:
                row["environment"] = factory.env_id
            rows.append(row)
    return rows

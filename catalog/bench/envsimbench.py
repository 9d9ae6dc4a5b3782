"""Benchmark item formats: EnvSimBench's JSON array and envforge's own JSONL, plus env-disjoint splits.

- EnvSimBench (reference/envsimbench.md §2): `task_info`, `step_detail` (action, observation as
  the `str()` of the tool's return value, full `config_before`/`config_after`, `config_change`
  with dotted `changes` and `change_count`) and `env_code`. Dotted paths cannot address keys that
  contain dots, so on import Δ is always recomputed from the two configs with `catalog.state.delta.diff`
  (key-list paths) and the dotted `changes` are only cross-checked by their count.
- envforge JSONL: one `BenchItem` per line with key-list paths; this is what simulator SFT data is
  built from, and a key such as `"a.b@x.org"` survives it unchanged.

Readers never drop a sample silently: what they cannot use comes back as a `Problem` with its
place and reason, so an import can be judged (and fixed) rather than quietly shrunk. Writers are
atomic (temp file + rename), so a crash never leaves a half-written benchmark.
"""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError

from catalog.bench.items import BenchItem, item_id
from catalog.jsonmodel import JsonModel
from catalog.models import Action, Outcome, Strata
from catalog.runs.files import atomic_write
from catalog.state.delta import Delta, diff
from catalog.state.jsonable import to_jsonable

__all__ = ["Problem", "to_envsimbench", "from_envsimbench", "write_envsimbench", "read_envsimbench",
           "write_jsonl", "read_jsonl", "split_by_env", "split_envs", "dotted_changes", "parse_content", "entry_class"]


class Problem(JsonModel):
    """A sample or line a reader could not use: where it is (`sample 3 (env_7)`, `line 12`) and why."""

    model_config = ConfigDict(frozen=True)

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


# --- EnvSimBench ----------------------------------------------------------------------------------
def dotted_changes(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """EnvSimBench's `changes` list: dotted path, added/removed/modified, before/after, numeric note."""
    changes = []
    for op in diff(before, after):
        old = _at(before, op.path)
        kind = {"add": "added", "delete": "removed", "modify": "modified"}[op.op]
        note = None
        if kind == "modified" and _number(old) and _number(op.value):
            note = "increase" if op.value > old else "decrease" if op.value < old else None
        changes.append({"path": ".".join(str(key) for key in op.path), "type": kind, "before": None if kind == "added" else old,
                        "after": None if kind == "removed" else op.value, "note": note})
    return changes


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _at(state: dict[str, Any], path: Sequence[str | int]) -> Any:
    node: Any = state
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def to_envsimbench(items: Iterable[BenchItem]) -> list[dict[str, Any]]:
    """Items as EnvSimBench samples (a JSON-ready list); the observation is the Python repr they use."""
    out = []
    for item in items:
        changes = dotted_changes(item.state, item.next_state)
        out.append({
            "task_info": {"env_id": item.env_id, "task_id": item.id, "task": item.task, "step": 0},
            "step_detail": {
                "step": 0,
                "action": {"name": item.action.name, "arguments": item.action.arguments},
                "observation": {"type": "tool", "content": str(item.observation)},
                "config_before": item.state,
                "config_after": item.next_state,
                "config_change": {"changes": changes, "change_count": len(changes)},
            },
            "env_code": item.env_code,
        })
    return out


def parse_content(content: Any) -> Any:
    """An observation's content as data: a Python literal (their repr), else JSON; ValueError if neither."""
    if not isinstance(content, str):
        return to_jsonable(content)
    text = content.strip()
    try:
        return to_jsonable(ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"observation content is neither a Python literal nor JSON: {text[:80]!r}") from exc


_NON_ENV_BASES = {"TypedDict", "BaseModel", "Enum", "IntEnum", "StrEnum", "Exception", "NamedTuple", "Protocol",
                  "SQLModel", "Table"}


def entry_class(code: str) -> tuple[str, bool]:
    """The env class of a module's source and whether it is an envforge SQL env (an `Env` subclass).

    The env class is the top-level class with the most methods (entity TypedDicts and tables have
    none); raises ValueError if the code does not parse or defines no such class.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise ValueError(f"env_code does not parse: {exc.msg} (line {exc.lineno})") from exc
    best: tuple[int, int, ast.ClassDef] | None = None
    for position, node in enumerate(tree.body):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases}
        if bases & _NON_ENV_BASES:
            continue
        methods = sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in node.body)
        if methods and (best is None or (methods, position) > best[:2]):
            best = (methods, position, node)
    if best is None:
        raise ValueError("env_code defines no environment class (a class with methods)")
    node = best[2]
    is_sql = any(isinstance(b, ast.Name) and b.id == "Env" for b in node.bases) and "catalog.envkit" in code
    return node.name, is_sql


def _require(mapping: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise ValueError(f"missing field {where}.{key}" if where else f"missing field {key}")
    value = mapping[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ValueError(f"field {where + '.' if where else ''}{key} should be {names}, got {type(value).__name__}")
    return value


def _sample_item(sample: Any) -> BenchItem:
    """One EnvSimBench sample as a BenchItem; ValueError says why it cannot be used."""
    if not isinstance(sample, dict):
        raise ValueError(f"a sample is an object, got {type(sample).__name__}")
    info = _require(sample, "task_info", dict, "")
    env_id = _require(info, "env_id", str, "task_info")
    detail = _require(sample, "step_detail", dict, "")
    action_data = _require(detail, "action", dict, "step_detail")
    name = _require(action_data, "name", str, "step_detail.action")
    arguments = action_data.get("arguments", {})
    if isinstance(arguments, str):  # some dumps keep the model's raw JSON arguments
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError as exc:
            raise ValueError(f"step_detail.action.arguments is not JSON: {arguments[:80]!r}") from exc
    if not isinstance(arguments, dict):
        raise ValueError(f"step_detail.action.arguments should be an object, got {type(arguments).__name__}")
    observation_data = _require(detail, "observation", dict, "step_detail")
    if "content" not in observation_data:
        raise ValueError("missing field step_detail.observation.content")
    observation = parse_content(observation_data["content"])
    if not isinstance(observation, dict) or not isinstance(observation.get("success"), bool):
        raise ValueError("observation has no boolean 'success' flag (outcome unknown)")
    before = to_jsonable(_require(detail, "config_before", dict, "step_detail"))
    after = to_jsonable(_require(detail, "config_after", dict, "step_detail"))
    change = _require(detail, "config_change", dict, "step_detail")
    count = _require(change, "change_count", int, "step_detail.config_change")
    delta = diff(before, after)
    if count != len(delta):
        raise ValueError(f"change_count {count} disagrees with the recomputed diff of the configs ({len(delta)} ops)")
    code = _require(sample, "env_code", str, "")
    entry, is_sql = entry_class(code)
    action = Action(name=name, arguments=to_jsonable(arguments))
    outcome = Outcome.SUCCESS if observation["success"] else Outcome.FAILURE
    doc = _class_doc(code, entry)
    task = info.get("task")
    return BenchItem(
        id=item_id(env_id, before, action), env_id=env_id, env_kind="sql" if is_sql else "class", env_entry=entry,
        env_code=code, env_doc=doc, state=before, action=action, observation=observation, next_state=after,
        delta=Delta.dump_python(delta, mode="json"), strata=Strata.of(outcome, len(delta), len(arguments)),
        # the step ran the env's Python as is: an ill-typed call ran as Python runs it (envforge's own
        # samples, written out and read back, never hold a call a strict env refused: invalid is no sample)
        env_strict_args=False, origin="envsimbench", task=task if isinstance(task, str) else "")


def _class_doc(code: str, entry: str) -> str:
    for node in ast.parse(code).body:
        if isinstance(node, ast.ClassDef) and node.name == entry:
            return ast.get_docstring(node) or ""
    return ""


def from_envsimbench(data: Any) -> tuple[list[BenchItem], list[Problem]]:
    """Read EnvSimBench samples (the parsed JSON array): usable items, and a Problem for every other one."""
    if not isinstance(data, list):
        return [], [Problem(where="file", reason=f"the top level should be a JSON array of samples, got {type(data).__name__}")]
    items: list[BenchItem] = []
    problems: list[Problem] = []
    for index, sample in enumerate(data):
        env = sample.get("task_info", {}).get("env_id") if isinstance(sample, dict) and \
            isinstance(sample.get("task_info"), dict) else None
        where = f"sample {index}" + (f" ({env})" if isinstance(env, str) else "")
        try:
            items.append(_sample_item(sample))
        except (ValueError, TypeError, ValidationError) as exc:
            problems.append(Problem(where=where, reason=_first_line(exc)))
    return items, problems


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def write_envsimbench(items: Iterable[BenchItem], path: Path | str) -> int:
    """Write items as an EnvSimBench JSON array (atomically); returns how many were written."""
    samples = to_envsimbench(items)
    atomic_write(Path(path), json.dumps(samples, indent=1, ensure_ascii=False) + "\n", fsync=True)
    return len(samples)


def read_envsimbench(path: Path | str) -> tuple[list[BenchItem], list[Problem]]:
    """Read an EnvSimBench JSON file; a file that is not JSON is one Problem, not an exception."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [], [Problem(where=str(path), reason=f"cannot read as JSON: {_first_line(exc)}")]
    return from_envsimbench(data)


# --- envforge JSONL ---------------------------------------------------------------------------------
def write_jsonl(items: Iterable[BenchItem], path: Path | str) -> int:
    """Write one BenchItem per line (atomically); returns how many lines were written."""
    lines = [item.model_dump_json() for item in items]
    atomic_write(Path(path), "".join(line + "\n" for line in lines), fsync=True)
    return len(lines)


def read_jsonl(path: Path | str) -> tuple[list[BenchItem], list[Problem]]:
    """Read envforge JSONL; every line that is not a valid BenchItem is a Problem with its line number."""
    items: list[BenchItem] = []
    problems: list[Problem] = []
    with Path(path).open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except ValueError as exc:  # includes undecodable bytes
                problems.append(Problem(where=f"line {number}", reason=f"not JSON: {_first_line(exc)}"))
                continue
            try:
                items.append(BenchItem.model_validate(data))
            except ValidationError as exc:
                errors = exc.errors()
                reason = errors[0]["msg"] if errors else "invalid"
                if errors and errors[0].get("loc"):
                    reason = f"{'.'.join(map(str, errors[0]['loc']))}: {reason}"
                problems.append(Problem(where=f"line {number}", reason=f"not a benchmark item: {reason}"))
    return items, problems


# --- splits ----------------------------------------------------------------------------------------
def split_envs(sizes: dict[str, int], test_fraction: float = 0.3, seed: int = 0) -> set[str]:
    """The test side of an env-disjoint split: envs (with their item counts) holding about `test_fraction` of the items.

    Envs are shuffled by `seed` and moved to test until it holds `test_fraction` of the items;
    with two or more envs and 0 < test_fraction < 1 both sides get at least one env. Every env
    lands wholly on one side (EnvSimBench's train and test share envs, which flatters a
    simulator trained on them).
    """
    if not 0.0 <= test_fraction <= 1.0:
        raise ValueError(f"test_fraction must be within [0, 1], got {test_fraction}")
    envs = sorted(sizes)
    random.Random(seed).shuffle(envs)
    target = test_fraction * sum(sizes.values())
    test_envs: set[str] = set()
    taken = 0
    for env in envs:
        if taken >= target or (test_fraction < 1.0 and len(test_envs) == len(envs) - 1):
            break
        test_envs.add(env)
        taken += sizes[env]
    if test_fraction > 0.0 and not test_envs and len(envs) >= 2:
        test_envs.add(envs[0])
    return test_envs


def split_by_env(items: Sequence[BenchItem], test_fraction: float = 0.3, seed: int = 0
                 ) -> tuple[list[BenchItem], list[BenchItem]]:
    """Split into (train, test) with disjoint environments, about `test_fraction` of the items in test.

    The envs are split by `split_envs` (weighted by their item counts); input order is kept
    within each side.
    """
    sizes: dict[str, int] = {}
    for item in items:
        sizes[item.env_id] = sizes.get(item.env_id, 0) + 1
    test_envs = split_envs(sizes, test_fraction, seed)
    train = [item for item in items if item.env_id not in test_envs]
    test = [item for item in items if item.env_id in test_envs]
    shared = {i.env_id for i in train} & {i.env_id for i in test}
    if shared:  # cannot happen by construction; the check is the guarantee callers rely on
        raise AssertionError(f"train and test share envs: {sorted(shared)}")
    return train, test

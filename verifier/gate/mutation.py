"""Mutation testing of the quality gate: plant one bug in a known-good env, see if the gate fails it.

Operators (libcst, one change per mutant): negate a guard, drop a guard, flip a comparison
(< vs <=, > vs >=), off-by-one in an integer constant, drop a write, duplicate an accumulating
write, swap + and - in a written value, write the wrong field, swap two guards' error messages.
The mutation score is the share of mutants the gate rejects; false alarms count clean envs it
rejects. Survivors are listed so they can be studied.

The gate runs with the mutation effort preset (verifier/gate/settings.py) and stops a mutant's
run at its first critical failure, since the verdict cannot change.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import libcst as cst
from pydantic import ConfigDict

from catalog.jsonmodel import JsonModel
from catalog.store import EnvHandle, read_env
from executors import LOCAL, Recipe, open_pool
from sandbox.pool import DEFAULT_TIMEOUT, SandboxPool
from verifier.gate.run import verify_env
from verifier.gate.settings import MUTATION

OPERATORS = ("negate_guard", "drop_guard", "flip_comparison", "off_by_one", "drop_write", "duplicate_write",
             "swap_arithmetic", "wrong_field", "swap_message")
MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add", "delete"}


@dataclass
class Mutant:
    """One planted bug: the operator, where, and the mutated source."""

    env_id: str
    operator: str
    site: int
    line: int
    description: str
    source: str


def _is_failure_exit(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Raise):
            return True
        if isinstance(small, cst.Return) and small.value is not None:
            value = small.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "fail":
                return True
            if isinstance(value, cst.Dict):
                for element in value.elements:
                    key = getattr(element, "key", None)
                    if isinstance(key, cst.SimpleString) and key.evaluated_value == "error":
                        return True
    return False


def _is_guard(node: cst.CSTNode) -> TypeGuard[cst.If]:
    return isinstance(node, cst.If) and isinstance(node.body, cst.IndentedBlock) and bool(node.body.body) \
        and _is_failure_exit(node.body.body[0])


def _is_write(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.AugAssign):
        return True
    if isinstance(small, cst.Assign):
        return all(isinstance(t.target, (cst.Attribute, cst.Subscript)) for t in small.targets)
    if isinstance(small, cst.Del):
        return True
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Attribute):
        return small.value.func.attr.value in MUTATORS
    return False


def _message_arg(guard: cst.If) -> cst.BaseExpression | None:
    small = guard.body.body[0].body[0]  # type: ignore[union-attr]  # _is_guard: an indented block opening with a failure exit
    if isinstance(small, cst.Return) and isinstance(small.value, cst.Call) and small.value.args:
        return small.value.args[0].value
    if isinstance(small, cst.Raise) and isinstance(small.exc, cst.Call) and small.exc.args:
        return small.exc.args[0].value
    return None


class _Mutator(cst.CSTTransformer):
    """Applies `operator` at its `target`-th site inside the env class; counts sites otherwise."""

    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self, operator: str, target: int, entry: str) -> None:
        self.operator, self.target, self.entry = operator, target, entry
        self.count = 0
        self.applied: tuple[int, str] | None = None
        self.depth = 0
        self.function: cst.FunctionDef | None = None

    def _hit(self, node: cst.CSTNode, description: str) -> bool:
        index = self.count
        self.count += 1
        if index == self.target and self.applied is None:
            line = self.get_metadata(cst.metadata.PositionProvider, node).start.line
            self.applied = (line, description)
            return True
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        if node.name.value == self.entry:
            self.depth += 1
        return True

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        if original.name.value == self.entry:
            self.depth -= 1
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.function = node
        return True

    def _active(self) -> bool:
        return self.depth > 0 and self.function is not None and self.function.name.value != "__init__"

    # guards ------------------------------------------------------------------------------
    def leave_If(self, original: cst.If, updated: cst.If) -> Any:
        if not self._active() or not _is_guard(original):
            return updated
        if self.operator == "negate_guard" and self._hit(original, "guard condition negated"):
            return updated.with_changes(test=cst.UnaryOperation(cst.Not(), cst.parse_expression(
                f"({cst.Module([]).code_for_node(updated.test)})")))
        if self.operator == "drop_guard" and original.orelse is None and self._hit(original, "guard removed"):
            return cst.RemoveFromParent()
        return updated

    def leave_ComparisonTarget(self, original: cst.ComparisonTarget, updated: cst.ComparisonTarget) -> Any:
        if self.operator != "flip_comparison" or not self._active():
            return updated
        flips: dict[type[cst.BaseCompOp], Any] = {cst.LessThan: cst.LessThanEqual, cst.LessThanEqual: cst.LessThan,
                 cst.GreaterThan: cst.GreaterThanEqual, cst.GreaterThanEqual: cst.GreaterThan}
        kind = type(original.operator)
        if kind in flips and self._hit(original, f"comparison {kind.__name__} flipped"):
            return updated.with_changes(operator=flips[kind]())
        return updated

    def leave_Integer(self, original: cst.Integer, updated: cst.Integer) -> Any:
        if self.operator != "off_by_one" or not self._active():
            return updated
        if self._hit(original, f"constant {original.value} -> +1"):
            return cst.Integer(str(int(original.value.replace("_", ""), 0) + 1))
        return updated

    # writes ------------------------------------------------------------------------------
    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine) -> Any:
        if not self._active() or not _is_write(original):
            return updated
        small = original.body[0]
        if self.operator == "drop_write" and self._hit(original, "write removed"):
            return cst.SimpleStatementLine([cst.Pass()])
        if self.operator == "duplicate_write" and isinstance(small, cst.AugAssign) and \
                self._hit(original, "accumulating write duplicated"):
            return cst.FlattenSentinel([updated, updated])
        if self.operator == "swap_arithmetic" and isinstance(small, (cst.Assign, cst.AugAssign)):
            value = small.value
            if isinstance(small, cst.AugAssign) and isinstance(small.operator, (cst.AddAssign, cst.SubtractAssign)):
                if self._hit(original, "+= and -= swapped"):
                    swapped = cst.SubtractAssign() if isinstance(small.operator, cst.AddAssign) else cst.AddAssign()
                    return updated.with_changes(body=[small.with_changes(operator=swapped)])
            elif isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)):
                if self._hit(original, "+ and - swapped in a written value"):
                    flipped = cst.Subtract() if isinstance(value.operator, cst.Add) else cst.Add()
                    return updated.with_changes(body=[small.with_changes(value=value.with_changes(operator=flipped))])
        if self.operator == "wrong_field" and isinstance(small, cst.Assign) and \
                isinstance(small.targets[0].target, cst.Attribute):
            target = small.targets[0].target
            others = self._fields_of(target)
            if others and self._hit(original, f"writes {others[0]} instead of {target.attr.value}"):
                wrong = target.with_changes(attr=cst.Name(others[0]))
                return updated.with_changes(body=[small.with_changes(targets=[small.targets[0].with_changes(target=wrong)])])
        return updated

    def _fields_of(self, target: cst.Attribute) -> list[str]:
        """Other fields written on the same object in this function (candidates for a wrong write)."""
        owner = cst.Module([]).code_for_node(target.value)
        names: list[str] = []
        for node in _walk(self.function):
            if isinstance(node, cst.Assign) and isinstance(node.targets[0].target, cst.Attribute):
                other = node.targets[0].target
                if cst.Module([]).code_for_node(other.value) == owner and other.attr.value != target.attr.value:
                    if other.attr.value not in names:
                        names.append(other.attr.value)
        return names

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> Any:
        if self.operator == "swap_message" and self._active():
            messages = [m for n in _walk(original) if _is_guard(n) and (m := _message_arg(n)) is not None]
            pairs = [(a, b) for a, b in zip(messages, messages[1:], strict=False)
                     if cst.Module([]).code_for_node(a) != cst.Module([]).code_for_node(b)]
            if pairs and self._hit(original, f"error messages of two guards swapped in {original.name.value}"):
                first, second = pairs[0]
                swapped: cst.CSTNode = updated.deep_replace(_find_same(updated, first), _Placeholder.make())
                swapped = swapped.deep_replace(_find_same(swapped, second), first)
                return swapped.deep_replace(_find_placeholder(swapped), second)
        self.function = None
        return updated


class _Placeholder:
    @staticmethod
    def make() -> cst.Name:
        return cst.Name("__envforge_placeholder__")


def _find_same(tree: cst.CSTNode, wanted: cst.CSTNode) -> cst.CSTNode:
    code = cst.Module([]).code_for_node(wanted)
    for node in _walk(tree):
        if type(node) is type(wanted) and cst.Module([]).code_for_node(node) == code:
            return node
    raise LookupError(code)


def _find_placeholder(tree: cst.CSTNode) -> cst.CSTNode:
    for node in _walk(tree):
        if isinstance(node, cst.Name) and node.value == "__envforge_placeholder__":
            return node
    raise LookupError("placeholder")


def _walk(node: cst.CSTNode | None) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    if node is None:
        return out
    stack = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(reversed(list(current.children)))
    return out


def mutants_of(handle: EnvHandle) -> list[Mutant]:
    """Every single-change mutant of an env's code, operator by operator."""
    source = handle.source()
    # One wrapper for every mutant: positions are resolved once (a codegen of the whole module),
    # not once per site; visiting never changes the wrapped module.
    wrapper = cst.metadata.MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    found: list[Mutant] = []
    for operator in OPERATORS:
        site = 0
        while True:
            mutator = _Mutator(operator, site, handle.manifest.entry)
            mutated = wrapper.visit(mutator)
            if mutator.applied is None:
                break
            line, description = mutator.applied
            if mutated.code != source:
                found.append(Mutant(handle.id, operator, site, line, description, mutated.code))
            site += 1
    return found


def select_mutants(handles: list[EnvHandle], count: int, seed: int = 0) -> list[Mutant]:
    """Up to `count` mutants spread over envs and operators (round-robin, seeded)."""
    rng = random.Random(seed)
    buckets: dict[tuple[str, str], list[Mutant]] = {}
    for handle in handles:
        for mutant in mutants_of(handle):
            buckets.setdefault((mutant.env_id, mutant.operator), []).append(mutant)
    for bucket in buckets.values():
        rng.shuffle(bucket)
    keys = sorted(buckets)
    chosen: list[Mutant] = []
    while len(chosen) < count and any(buckets[k] for k in keys):
        for key in keys:
            if buckets[key] and len(chosen) < count:
                chosen.append(buckets[key].pop())
    return chosen


class MutationReport(JsonModel):
    """The gate's mutation score on planted bugs, its false alarms on the clean envs, and the survivors.

    `model_dump(mode="json")` is what `verify mutants --json` prints.
    """

    model_config = ConfigDict(frozen=True)

    mutants: int
    killed: int
    survived: int
    mutation_score: float
    false_alarms: int
    false_alarm_envs: list[str]
    by_operator: dict[str, dict[str, int]]  # operator -> {"mutants": n, "killed": k}
    first_failed_check: dict[str, int]  # the check that killed each killed mutant first, by count
    survivors: list[dict[str, Any]]  # env, operator, line, change


# A unit of a mutation run: a clean env to gate (its folder), or a mutant (its index, env folder, source).
Unit = tuple[str, int, str, str]


class _MutantWorker:
    """What a worker keeps between units: one sandbox pool and a scratch folder for the mutants' env folders."""

    def __init__(self, recipe: MutantWorkers, pool: SandboxPool | None = None) -> None:
        self.recipe = recipe
        self.owned = pool is None
        self.pool = pool if pool is not None else SandboxPool(1, timeout=recipe.timeout)
        self.scratch = Path(tempfile.mkdtemp(prefix="envforge-mutants-"))

    def run(self, unit: Unit) -> tuple[bool, list[str]]:
        """(passed, failing checks) of the unit's env; a mutant's run stops at its first critical failure."""
        kind, index, env_dir, source = unit
        r = self.recipe
        if kind == "clean":
            report = verify_env(read_env(Path(env_dir)), self.pool, examples=r.examples, seed=r.seed,
                                effort=MUTATION.effort)
            return report.passed, report.failing
        folder = self.scratch / f"{index:04d}" / Path(env_dir).name
        shutil.copytree(env_dir, folder)
        (folder / "env.py").write_text(source, encoding="utf-8")
        try:
            report = verify_env(read_env(folder), self.pool, examples=r.examples, seed=r.seed,
                                effort=MUTATION.effort, stop_early=True)
        finally:
            shutil.rmtree(folder.parent, ignore_errors=True)
        return report.passed, report.failing

    def close(self) -> None:
        if self.owned:
            self.pool.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


@dataclass(frozen=True)
class MutantWorkers(Recipe[Unit, tuple[bool, list[str]]]):
    """The recipe of a mutation run's worker process: the gate's settings (units carry their env folders)."""

    examples: int = MUTATION.examples
    seed: int = 0
    timeout: float = DEFAULT_TIMEOUT

    def open(self) -> _MutantWorker:
        return _MutantWorker(self)


def mutation_test(handles: list[EnvHandle], count: int, pool: SandboxPool | None = None, *, seed: int = 0,
                  examples: int = MUTATION.examples, workers: int = 1,
                  timeout: float = DEFAULT_TIMEOUT) -> MutationReport:
    """Run the gate on `count` mutants of known-good envs and on the clean envs themselves.

    With `workers` > 1 the envs are gated side by side in that many local processes (each with
    its own sandbox pool); each env's verdict is its own, so the report is the same. Otherwise
    they run here, on `pool` (a fresh one-worker pool if None).
    """
    mutants = select_mutants(handles, count, seed)
    folders = {h.id: str(h.path) for h in handles}
    units: list[Unit] = [("clean", -1, str(h.path), "") for h in handles]
    units += [("mutant", index, folders[m.env_id], m.source) for index, m in enumerate(mutants)]
    recipe = MutantWorkers(examples=examples, seed=seed, timeout=timeout)
    if workers > 1:
        with open_pool(LOCAL, recipe, min(workers, len(units)), name="mutants") as gates:
            verdicts = [f.result() for f in [gates.submit(unit) for unit in units]]
    else:
        worker = _MutantWorker(recipe, pool)
        try:
            verdicts = [worker.run(unit) for unit in units]
        finally:
            worker.close()
    false_alarms = [h.id for h, (passed, _) in zip(handles, verdicts, strict=False) if not passed]
    results = [(mutant, not passed, failing)
               for mutant, (passed, failing) in zip(mutants, verdicts[len(handles):], strict=True)]
    killed = [r for r in results if r[1]]
    survivors = [{"env": m.env_id, "operator": m.operator, "line": m.line, "change": m.description}
                 for m, was_killed, _ in results if not was_killed]
    by_operator: dict[str, dict[str, int]] = {}
    for mutant, was_killed, _ in results:
        entry = by_operator.setdefault(mutant.operator, {"mutants": 0, "killed": 0})
        entry["mutants"] += 1
        entry["killed"] += int(was_killed)
    killed_by = Counter(killers[0] for _, was_killed, killers in results if was_killed and killers)
    return MutationReport(
        mutants=len(results), killed=len(killed), survived=len(survivors),
        mutation_score=round(len(killed) / len(results), 4) if results else 0.0,
        false_alarms=len(false_alarms), false_alarm_envs=false_alarms,
        by_operator=by_operator, first_failed_check=dict(killed_by.most_common()), survivors=survivors)


def render_mutation_report(report: MutationReport) -> str:
    """The report as `verify mutants` prints it: the score, per operator, then each survivor."""
    lines = [f"mutants {report.mutants}: killed {report.killed}, survived {report.survived}, "
             f"mutation score {100 * report.mutation_score:.1f}%, false alarms {report.false_alarms}"]
    lines += [f"  {operator:<16} {counts['killed']:>3}/{counts['mutants']:<3}"
              for operator, counts in report.by_operator.items()]
    lines += [f"  survived: {s['env']} line {s['line']}: {s['change']} ({s['operator']})" for s in report.survivors]
    return "\n".join(lines)

"""An adversarial corpus for the spec-only simulator: random small class envs as Python source.

`env_cases()` is a hypothesis strategy for an `EnvCase`: the source of one env class (tools
built from blocks that use what makes Python values differ from JSON: int- and str-keyed
dicts, numeric-looking str keys, lists, sets, tuples, Decimal and float mixing, early returns,
helper methods, try/except/finally, loops with break, comprehensions and lazy generators,
aliasing, hidden attributes, RNG and clock use, error dicts, error strings and raised
failures), a random initial state in the state encoding, and call sequences, well-typed and
ill-typed. `run_corpus` executes every case for real in the sandbox (the code is untrusted:
it never runs in this process) and compares the spec-only simulator with execution by the
rules of `constraints --completeness`. `import_corpus` makes the cases catalog envs as a user
imports them (`strict_args: false`), and `audit_exported` exports their samples and audits the
spec-only simulator on them, as `bench export` and `audit-sim --model spec` do. Test and bench
code, not product code.
"""

from __future__ import annotations

import functools
import json
import random
import re
import tempfile
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from catalog.bench.items import BenchItem
from catalog.importing.importer import import_env
from catalog.state import codec
from catalog.state.delta import Delta
from catalog.state.jsonable import json_equal
from catalog.store import Catalog
from constraints.extract import extract_spec
from constraints.simulate import SpecSimulator
from sandbox.loadcheck import sandbox_load_check
from sandbox.pool import Job, SandboxPool
from verifier.audit.results import is_missed, is_verified, load_results
from verifier.audit.run import run_audit
from verifier.samples.compositions import Composition
from verifier.samples.export import export_samples

__all__ = ["EnvCase", "env_cases", "run_corpus", "Tally", "draw_cases", "import_corpus", "audit_exported",
           "wrong_answers"]

FAILURES = ["ValueError"]


@dataclass
class EnvCase:
    """One generated env: its source, entry class, initial state (encoded) and call sequences."""

    source: str
    entry: str
    state: dict[str, Any]
    sequences: list[list[dict[str, Any]]]

    def show(self) -> str:
        return f"{self.source}\n# state: {self.state}\n# calls: {self.sequences}"


# --- tool blocks ----------------------------------------------------------------------------
# Each block: (needs, provides, params, code). `needs`/`provides` are local names ("order",
# "user", "total"); params are the tool parameters the code uses.
# `names` is a list: the argument generators of completeness and export give it ill-typed values
# (a string, a number), which imported envs run as Python would (strict_args false).
PARAMS = {"oid": "int", "uid": "str", "qty": "int", "amount": "float", "tag": "str", "price": "str",
          "names": "list[str]"}

ORDER_GUARDS = [
    """
    if oid not in self.orders:
        return {"error": f"Order {oid} not found"}
    order = self.orders[oid]
    """,
    """
    order = self.orders.get(oid)
    if order is None:
        return "Error: no order " + str(oid)
    """,
    """
    try:
        order = self.orders[oid]
    except KeyError:
        return {"success": False, "error": "unknown order"}
    """,
    """
    if oid not in self.orders:
        raise ValueError(f"no order {oid}")
    order = self.orders[oid]
    """,
    """
    order = self._find(oid)
    if order is None:
        return {"error": "missing"}
    """,
    """
    key = str(oid)
    if key in self.orders:
        return {"error": "string key"}
    order = self.orders.get(oid * 1.0)
    if not order:
        return {"error": f"no {oid!r}"}
    """,
]
USER_GUARDS = [
    """
    if uid not in self.users:
        return {"error": f"User {uid} not found"}
    user = self.users[uid]
    """,
    """
    user = self.users.get(uid)
    if user is None:
        raise ValueError("unknown user " + uid)
    """,
    """
    if not self._known(uid):
        return "Error: unknown user"
    user = self.users[uid]
    """,
    """
    matches = [u for k, u in self.users.items() if k == uid]
    if not matches:
        return {"success": False, "error": "no match"}
    user = matches[0]
    """,
]
QTY_GUARDS = [
    """
    if qty <= 0:
        return {"error": "quantity must be positive"}
    """,
    """
    if qty > 100:
        raise ValueError("too many")
    """,
    """
    if qty % 2 == 1 and qty > 3:
        return "Error: odd quantity"
    """,
]
ORDER_EFFECTS = [
    'order["qty"] += qty',
    'order["price"] = order["price"] * qty',
    'order["status"] = "closed"',
    'self.log.append(f"{oid}:{order[\'price\']}")',
    'order["qty"] = order["qty"] + self._random.randint(1, 6)',
    'self._cache[oid] = order["qty"]',
    'order["price"] = Decimal(str(order["price"])).quantize(Decimal("0.01"))',
    'order["price"] = order["price"] + self.rate',
    """
    if order["status"] != "open":
        return {"error": f"order is {order['status']}"}
    """,
    """
    snapshot = order
    snapshot["qty"] = snapshot["qty"] - 1
    """,
    """
    copy_of = dict(order)
    copy_of["qty"] = 0
    self.log.append(str(copy_of["qty"] + order["qty"]))
    """,
    """
    if order["qty"] == amount:
        order["status"] = "exact"
    """,
    'order["tags"] = order.get("tags", []) + [tag]',
    """
    del self.orders[oid]
    """,
    'order["qty"] = round(order["qty"] / 3, 2)',
    'order["ratio"] = f"{order[\'qty\'] / 7:.3f}"',
]
USER_EFFECTS = [
    'user["balance"] = round(user["balance"] - amount, 2)',
    'user["balance"] += qty',
    'self.current = user',
    'user["visits"] = user.get("visits", 0) + 1',
    'user["roles"].add(tag)',
    'user["roles"] = user["roles"] | {tag}',
    'self.log.append(user["name"].upper())',
    """
    if user["balance"] < amount:
        return {"error": f"balance {user['balance']} is below {amount}"}
    """,
]
FREE_EFFECTS = [
    'self.tags.add(tag)',
    'self.tags.discard(tag)',
    'self.counter += qty',
    'self.counter = self.counter // qty',
    'self.counter = -self.counter % (qty or 7)',
    'self.point = (self.point[0] + qty, self.point[1])',
    'self.point += (qty,)',
    'self.log.extend(sorted(self.tags))',
    'self.log.append(str(len(self.tags)))',
    'self.log.extend(names)',
    'self.counter += len(names)',
    'self.tags.update(names)',
    """
    new_id = max(self.orders) + 1 if self.orders else 1
    self.orders[new_id] = {"item": tag, "qty": qty, "price": Decimal(price), "status": "open"}
    """,
    """
    new_id = self._next
    self._next += 1
    self.orders[new_id] = {"item": tag, "qty": qty, "price": amount, "status": "open"}
    """,
    """
    for k in list(self.orders):
        if self.orders[k]["qty"] > qty:
            break
        self.orders[k]["status"] = "checked"
    """,
    """
    total = sum(o["price"] for o in self.orders.values())
    self.log.append(f"total={total}")
    """,
    """
    try:
        if qty > 3:
            return {"early": qty}
    finally:
        self.counter += 1
    """,
    """
    open_items = [o["item"] for o in self.orders.values() if o["status"] == "open"]
    self.log.append(", ".join(open_items))
    """,
    """
    for t in self.tags:
        self.log.append(t)
    """,
    """
    labels = {1: "one", 1.0: "uno", True: "yes"}
    self.log.append(labels[1] + str(len(labels)))
    """,
    """
    ratio = qty / 3
    self.log.append(f"{ratio:.2f}|{ratio}|{-qty // 4}|{-qty % 3}|{round(qty / 2)}")
    """,
    'self.counter += int(tag)',
    """
    if any(o["qty"] > qty for o in self.orders.values()):
        self.counter += 1
    """,
    """
    if tag < qty:
        self.counter -= 1
    """,
    """
    n = qty
    while n > 0:
        n -= 3
    self.counter = n
    """,
    'self.log.append(datetime.now().isoformat())',
    'self.counter += random.randint(1, 3)',
    'self.stamp = self._random.random()',
    """
    found = self._find(qty)
    self.log.append("found" if found else "none")
    """,
    """
    by_item = {o["item"]: k for k, o in self.orders.items()}
    self.log.append(str(sorted(by_item.items())))
    """,
    'self.counter = self._bump(self.counter, qty)',
    """
    try:
        value = int(tag) * qty
    except ValueError as exc:
        return {"error": str(exc)}
    self.counter = value
    """,
    'self.log.append(tag * 2 if tag else "empty")',
    'self.seen = sorted(self.tags) + [tag]',
    'self.box = Box(qty)',
    'self.rate = self.rate * 2',
    'SEEN.append(qty)\nself.counter = len(SEEN)',
    'self.counter = LIMITS["max"] + qty',
    'LIMITS["max"] = qty',
    'self.log.append(self.PREFIX + tag)',
    'self.HISTORY.append(tag)\nself.log.append(str(len(self.HISTORY)))',
    'self.counter = self._double(qty)',
    'self.counter = self.doubled_counter',
    'self.log = self._collect(tag)',
    'getcontext().prec = 3\nself.rate = Decimal(1) / Decimal(7)',
    'self.rate = Decimal(1) / Decimal(7)',
    """
    later = (self.counter + k for k in range(2))
    self.counter = 100
    self.log.append(str(list(later)))
    """,
    'self.log.append("%s" % (self.tags,))',
    'self.log.append(str(self.tags))',
    'self.seen = sorted(self.tags, key=len)',
    """
    try:
        first, second = qty
    except TypeError as exc:
        return {"error": str(exc)}
    """,
    """
    try:
        value = self.orders[qty]["qty"] / (qty - 1)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    self.counter = value
    """,
    """
    try:
        first, second = self.point
    except ValueError as exc:
        return {"error": str(exc)}
    self.point = (second, first)
    """,
    """
    if tag is "a":
        self.counter += 1
    """,
    """
    for k in self.orders:
        if k == qty:
            self.log.append("hit")
            break
    else:
        self.log.append("miss")
    """,
    """
    try:
        self.log.append(self.users[tag]["name"])
    except LookupError:
        self.log.append("nobody")
    """,
    """
    if qty > 1:
        label = "big"
    self.log.append(label)
    """,
    'self.counter = len({True: "t", 1: "one", 1.0: "f"})',
    'self.tags = self.tags | {qty}',
    'self.log.append(str(sum(self.tags_of(qty))))',
    """
    for k, o in self.orders.items():
        self.orders[k + 100] = o
    """,
    'self.log.append(str(max(self.orders, default=-1)) + str(min(self.tags, default="")))',
    """
    copy_list = self.log
    copy_list += [tag]
    """,
    """
    copy_list = self.log
    copy_list = copy_list + [tag]
    self.counter = len(copy_list)
    """,
    'self.point = tuple(sorted(self.point))',
    'self.log.append(str(round(2.675, 2)) + str(round(Decimal("2.675"), 2)) + str(0.1 + 0.2))',
    'self.counter = int(str(self.counter)[::-1].lstrip("-") or 0)',
    """
    for k, o in self.orders.items():
        if o["qty"] < 0:
            self.orders.pop(k)
    """,
]
RETURNS = [
    'return {"ok": True}',
    'return {"success": True, "order": order}',
    'return order["qty"]',
    'return f"Done: {order[\'price\']}"',
    'return (oid, order["status"])',
    'return self.tags',
    'return sorted(self.tags)',
    'return self.orders',
    'return None',
    'return "Error: nothing to do"',
    'return {"user": user}',
    'return user["balance"]',
    'return {"count": len(self.orders), "log": self.log[-2:]}',
    'return self.point',
    'return {k: o["qty"] for k, o in self.orders.items()}',
    'return [k for k in self.orders if k > 1]',
    'return self.counter',
]

# Helpers and class attributes, each included when a tool uses its name (a smaller module
# parses faster).
HELPERS = {
    "PREFIX": '    PREFIX = "#"',
    "HISTORY": '    HISTORY = []',
    "_double": '    @staticmethod\n    def _double(value):\n        return value * 2',
    "doubled_counter": '    @property\n    def doubled_counter(self):\n        return self.counter * 2',
    "_collect": '    def _collect(self, tag, into=[]):\n        into.append(tag)\n        return list(into)',
    "tags_of": '    def tags_of(self, qty: int, /):\n        return [qty, qty]',
    "_find": '    def _find(self, oid):\n        for k, o in self.orders.items():\n            if k == oid:\n'
             '                return o\n        return None',
    "_known": '    def _known(self, uid):\n        return uid in self.users',
    "_bump": '    def _bump(self, value, step=1):\n        if step < 0:\n            return value\n        return value + step',
}



# Blocks whose result Python decides from something outside the state (the clock, the module RNG,
# a set's order, module or class attributes, the decimal context, identity, unbound names): the
# simulator must abstain on them. They are drawn a third as often as the others, as in real code.
QUIRKS = ("datetime.now", "random.randint", "while ", "Box(", "for t in self.tags", "tag < qty", "getcontext",
          "SEEN", "LIMITS", "HISTORY", "_collect", "% (self.tags", "str(self.tags)", "key=len", 'is "a"',
          "first, second = qty", "label", "self.tags_of")


def _quirky(block: str) -> bool:
    return any(marker in block for marker in QUIRKS)


def _uses(code: str, name: str) -> bool:
    return re.search(rf"(?<![\w.\"']){name}\b", code) is not None


@st.composite
def tool_body(draw: st.DrawFn) -> tuple[list[str], str]:
    """(parameters, body) of one tool."""
    parts: list[str] = []
    have: set[str] = set()
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(ORDER_GUARDS)))
        have.add("order")
    if draw(st.integers(0, 3)) == 3:  # hypothesis favours 0: rare branches test for another value
        parts.append(draw(st.sampled_from(USER_GUARDS)))
        have.add("user")
    if draw(st.integers(0, 3)) == 3:
        parts.append(draw(st.sampled_from(QTY_GUARDS)))
    pool = [b for b in FREE_EFFECTS if not _quirky(b)] * 3 + [b for b in FREE_EFFECTS if _quirky(b)]
    if "order" in have:
        pool += ORDER_EFFECTS * 2
    if "user" in have:
        pool += USER_EFFECTS * 2
    parts += draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
    returns = [r for r in RETURNS if ("order" in have or "order" not in r.replace("self.orders", ""))
               and ("user" in have or "user" not in r)]
    parts.append(draw(st.sampled_from(returns)))
    body = "\n".join(textwrap.dedent(p).strip("\n") for p in parts)
    params = [p for p in PARAMS if _uses(body, p) and p not in ("order", "user")]
    return params, body


@st.composite
def records(draw: st.DrawFn, decimal_prices: bool) -> dict[str, Any]:
    price: Any = draw(st.sampled_from([Decimal("1.10"), Decimal("2.5"), Decimal("0.333"), Decimal("10")])) \
        if decimal_prices else draw(st.sampled_from([1.1, 2.5, 0.1, 10.0, 3]))
    return {"item": draw(st.sampled_from(["pen", "ink", "cap", ""])), "qty": draw(st.integers(-2, 8)),
            "price": price, "status": draw(st.sampled_from(["open", "open", "closed"]))}


@st.composite
def env_cases(draw: st.DrawFn) -> EnvCase:
    """A random env class, an initial state and call sequences."""
    index = draw(st.integers(0, 10**6))
    entry = f"Env{index}"
    tools = draw(st.lists(tool_body(), min_size=1, max_size=4))
    methods = []
    for number, (params, body) in enumerate(tools):
        signature = ", ".join(["self", *[f"{p}: {PARAMS[p]}" for p in params]])
        methods.append(f"    def tool_{number}({signature}):\n" + textwrap.indent(body, " " * 8))
    decimal_rate = draw(st.booleans())
    with_positional_only = draw(st.integers(0, 15)) == 9
    source = "\n".join([
        "import random",
        "from datetime import datetime",
        "from decimal import Decimal, getcontext",
        "",
        'LIMITS = {"max": 5}',
        "SEEN = []",
        "",
        "",
        *(["class Box:", "    def __init__(self, size):", "        self.size = size", "", ""]
          if any("Box" in b for _, b in tools) else []),
        f"class {entry}:",
        "    def __init__(self):",
        "        self.orders = {}",
        "        self.users = {}",
        "        self.log = []",
        "        self.tags = set()",
        "        self.point = (0, 0)",
        "        self.counter = 0",
        "        self.rate = " + ('Decimal("1.10")' if decimal_rate else "1.1"),
        "        self._random = random.Random(7)",
        "        self._cache = {}",
        "        self._next = 1",
        *[f"\n{code}" for name, code in HELPERS.items() if name in "".join(b for _, b in tools)
          or name == "tags_of" and with_positional_only],
        "",
        *methods,
        "",
    ])
    decimal_prices = draw(st.booleans())
    orders = draw(st.dictionaries(st.integers(-1, 6), records(decimal_prices), max_size=4))
    user_keys = st.sampled_from(["u1", "u2", "7", "3", "ann"])
    users = draw(st.dictionaries(user_keys, st.fixed_dictionaries({
        "name": st.sampled_from(["ann", "bo", "Çe"]), "balance": st.sampled_from([0, 5, 12.5, 100, 0.1]),
        "roles": st.sets(st.sampled_from(["admin", "guest", "1"]), max_size=2)}), max_size=3))
    rng = random.Random(draw(st.integers(0, 1000)))
    rng.random()
    state: dict[str, Any] = {
        "orders": orders, "users": users, "log": draw(st.lists(st.sampled_from(["a", "b"]), max_size=2)),
        "tags": draw(st.sets(st.sampled_from(["x", "y", "12", "b"]), max_size=3)),
        "point": (draw(st.integers(-3, 3)), 0), "counter": draw(st.integers(-5, 20)),
        "rate": Decimal("1.10") if decimal_rate else 1.1,
        "_random": rng, "_cache": {}, "_next": draw(st.integers(1, 9)),
    }
    if not orders and draw(st.booleans()):
        state["orders"] = {}
    encoded = {name: codec.encode(value) for name, value in state.items()}
    tool_params = {f"tool_{n}": params for n, (params, _) in enumerate(tools)}
    calls = call(tool_params, list(orders), list(users))
    sequences = draw(st.lists(st.lists(calls, min_size=1, max_size=3), min_size=1, max_size=2))
    if with_positional_only:  # a positional-only parameter passed by name does not bind
        sequences[0].append({"name": "tags_of", "arguments": {"qty": draw(st.sampled_from([1, "1"]))}})
    return EnvCase(source, entry, encoded, sequences)


ARGUMENTS: dict[str, list[Any]] = {
    "oid": [0, 9, 1, -1], "uid": ["zz", "7", "u1"], "qty": [-1, 0, 1, 2, 5, 101], "amount": [0.5, 1.0, 2.25, 10.0, 3],
    "tag": ["a", "b", "x", "12", ""], "price": ["1.10", "2.5", "abc", "0.333"], "names": [["a"], [], ["x", "12"]],
}
ILL_TYPED: list[Any] = ["1", 1.5, None, True, [1]]
_INDEX = st.integers(0, 10**6)


@st.composite
def call(draw: st.DrawFn, tool_params: dict[str, list[str]], order_keys: list[int], user_keys: list[str]) -> dict[str, Any]:
    """One call: a tool and its arguments, from the state's keys or boundary values; one in ten ill-typed."""
    names = sorted(tool_params)
    name = names[draw(_INDEX) % len(names)]
    arguments = {}
    for param in tool_params[name]:
        pick = draw(_INDEX)
        if pick % 10 == 7:
            arguments[param] = ILL_TYPED[pick // 10 % len(ILL_TYPED)]
            continue
        options = ARGUMENTS[param] + (order_keys if param == "oid" else user_keys if param == "uid" else []) * 2
        arguments[param] = options[pick // 10 % len(options)]
    return {"name": name, "arguments": arguments}


# --- running the corpus ---------------------------------------------------------------------
@dataclass
class Tally:
    """How the simulator did; `wrong_cases` keeps the first few disagreements in full."""

    envs: int = 0
    calls: int = 0
    exact: int = 0
    abstained: int = 0
    wrong: int = 0
    skipped: int = 0  # sandbox events (timeouts...) and envs the runtime rejected
    reasons: Counter[str] = field(default_factory=Counter)
    wrong_cases: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"envs": self.envs, "calls": self.calls, "exact": self.exact, "abstained": self.abstained,
                "wrong": self.wrong}


def run_corpus(cases: list[EnvCase], pool: SandboxPool, tally: Tally | None = None, *, strict_args: bool = True) -> Tally:
    """Execute every case in the sandbox and score the spec-only simulator against it.

    `strict_args=False` runs both as imported envs run: ill-typed calls execute as Python would."""
    tally = tally or Tally()
    with tempfile.TemporaryDirectory(prefix="envforge-adversarial-") as root:
        jobs: list[tuple[int, Job]] = []
        for number, case in enumerate(cases):
            folder = Path(root) / f"env{number}"
            folder.mkdir()
            (folder / "env.py").write_text(case.source)
            for sequence in case.sequences:
                jobs.append((number, Job(str(folder), "class", sequence, entry=case.entry, failure_exceptions=FAILURES,
                                         state=case.state, snapshot=True, hidden=True, strict_args=strict_args)))
        results = pool.run_many([job for _, job in jobs])
    simulators: dict[int, SpecSimulator] = {}
    for (number, job), result in zip(jobs, results, strict=True):
        case = cases[number]
        if number not in simulators:
            tally.envs += 1
            simulators[number] = SpecSimulator(extract_spec(case.source, "class", case.entry,
                                                            failure_exceptions=FAILURES), strict_args=strict_args)
        if result.initial_state is None:
            tally.skipped += 1
            tally.reasons[f"not run: {result.event}"] += 1
            continue
        before = result.initial_state
        for action, executed in zip(job.actions, result.calls, strict=False):
            if executed.event not in (None, "crash") or (executed.state is None and executed.outcome != "invalid"):
                tally.skipped += 1
                break
            prediction = simulators[number].predict(before, action)
            tally.calls += 1
            observed = executed.delta
            if prediction.abstained:
                tally.abstained += 1
                tally.reasons[(prediction.reason or "?")[:70]] += 1
            elif json_equal(prediction.observation, executed.observation) and prediction.delta == observed:
                tally.exact += 1
            else:
                tally.wrong += 1
                if len(tally.wrong_cases) < 200:
                    tally.wrong_cases.append({
                        "source": case.source, "state": before, "action": action,
                        "predicted": prediction.observation, "observed": executed.observation,
                        "predicted_delta": Delta.dump_python(prediction.delta, mode="json"), "observed_delta": Delta.dump_python(executed.delta, mode="json")})
            before = executed.state if executed.state is not None else before  # an invalid call runs nothing
    return tally


def draw_cases(count: int, seed: int) -> list[EnvCase]:
    """`count` cases drawn deterministically for a seed (hypothesis's generation, no shrinking)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    cases: list[EnvCase] = []

    @hypothesis_seed(seed)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(env_cases())
    def collect(case: EnvCase) -> None:
        cases.append(case)

    collect()
    return cases[:count]


# --- the corpus as imported catalog envs ------------------------------------------------------
def import_corpus(cases: list[EnvCase], catalog: Catalog, pool: SandboxPool, folder: Path) -> list[str]:
    """Import every case into `catalog` as a user imports an env (`import`, load check in the sandbox).

    Each case's module and initial state are written under `folder` first; the envs get
    `strict_args: false` from the importer, as every imported env does. Returns their ids.
    """
    ids = []
    for number, case in enumerate(cases):
        source = folder / f"case{number}"
        source.mkdir(parents=True)
        (source / "env.py").write_text(case.source)
        (source / "state.json").write_text(json.dumps(case.state))
        report = import_env(source / "env.py", catalog, class_name=case.entry, configs=[source / "state.json"],
                            env_id=f"adversarial-{number}", failure_exceptions=FAILURES,
                            check=functools.partial(sandbox_load_check, pool=pool))
        ids.append(report.handle.id)
    return ids


def small_envs_composition(samples: int) -> Composition:
    """`samples` spread over the buckets small generated envs fill (a tool writes 1-4 values); the rest optional."""
    weights = {"failure": 2, "no_change_args1": 2, "simple_1": 3, "simple_2": 2, "medium_3": 1, "medium_4": 1}
    total = sum(weights.values())
    counts = {name: samples * weight // total for name, weight in weights.items()}
    counts["simple_1"] += samples - sum(counts.values())
    return Composition("small-envs", counts, optional=frozenset({"medium_3", "medium_4"}))


def audit_exported(catalog: Catalog, env_ids: list[str], samples: int, out: Path, *, seed: int = 0,
                   workers: int = 2) -> tuple[list[BenchItem], list[dict[str, Any]]]:
    """`bench export` of `env_ids` (`small_envs_composition(samples)`), then `audit-sim --model spec` on them.

    Returns the exported items and the audit's records.
    """
    composition = small_envs_composition(samples)
    items = export_samples(catalog, composition, seed=seed, workers=workers, env_ids=env_ids).items
    run_audit(items, SpecSimulator(), out, workers=workers, plots=False)
    return items, list(load_results(out).values())


def wrong_answers(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The audit's answered records that are not verified: what `audit-sim` counts as wrong."""
    return [r for r in records if not is_missed(r) and not is_verified(r)]

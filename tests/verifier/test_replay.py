"""Replay: a call file runs in order from one state, and each step is what the env's own code does."""

import copy
import importlib.util
import json

import pytest

from catalog.calls import Call, CallFileError, parse_calls, read_calls
from catalog.importing.importer import import_class_env
from catalog.state.codec import encode
from catalog.store import Catalog, CatalogError, EnvHandle
from sandbox.loadcheck import sandbox_load_check
from verifier.replay import ReplayError, replay

# A help-desk env in the EnvScaler style (state in attributes, error dicts and error strings, a
# private counter that is not public state, one tool that raises on an unknown id).
DESK = '''
from typing import Dict, List, Optional


class HelpDesk:
    """Tickets with priorities, agents that take them, tags."""

    def __init__(self):
        self.tickets: Dict[str, dict] = {}
        self.agents: List[str] = []
        self.next_id: int = 1
        self._calls = 0

    def open_ticket(self, title: str, priority: int = 2) -> dict:
        """Open a ticket."""
        self._calls += 1
        if not title:
            return {"success": False, "error": "title is empty"}
        ticket_id = f"T{self.next_id}"
        self.next_id += 1
        self.tickets[ticket_id] = {"title": title, "priority": priority, "status": "open", "agent": None, "tags": []}
        return {"success": True, "ticket_id": ticket_id}

    def assign(self, ticket_id: str, agent: str) -> dict:
        """Give a ticket to an agent."""
        self._calls += 1
        if ticket_id not in self.tickets:
            return {"success": False, "error": f"no ticket {ticket_id}"}
        if agent not in self.agents:
            return {"success": False, "error": f"no agent {agent}"}
        self.tickets[ticket_id]["agent"] = agent
        return {"success": True}

    def tag(self, ticket_id: str, tags: List[str]) -> dict:
        """Add tags, keeping them unique and in order."""
        ticket = self.tickets.get(ticket_id)
        if ticket is None:
            return {"success": False, "error": f"no ticket {ticket_id}"}
        for tag in tags:
            if tag not in ticket["tags"]:
                ticket["tags"].append(tag)
        return {"success": True, "tags": list(ticket["tags"])}

    def close(self, ticket_id: str) -> str:
        """Close a ticket; errors come back as text."""
        if ticket_id not in self.tickets:
            return f"Error: no ticket {ticket_id}"
        self.tickets[ticket_id]["status"] = "closed"
        return f"closed {ticket_id}"

    def escalate(self, ticket_id: str) -> dict:
        """Raise the priority (raises KeyError on an unknown id: a crash)."""
        ticket = self.tickets[ticket_id]
        ticket["priority"] = max(0, ticket["priority"] - 1)
        return {"success": True, "priority": ticket["priority"]}

    def queue(self, agent: Optional[str] = None) -> List[str]:
        """Open tickets by priority, then id."""
        open_ = [(t["priority"], i) for i, t in self.tickets.items()
                 if t["status"] == "open" and (agent is None or t["agent"] == agent)]
        return [i for _, i in sorted(open_)]
'''

CONFIG = {"tickets": {"T1": {"title": "printer jams", "priority": 1, "status": "open", "agent": None, "tags": []}},
          "agents": ["ana", "bo"], "next_id": 2}

SCRIPT = [
    {"name": "queue", "arguments": {}},
    {"name": "open_ticket", "arguments": {"title": "vpn down", "priority": 0}},
    {"name": "assign", "arguments": {"ticket_id": "T2", "agent": "ana"}},
    {"name": "assign", "arguments": {"ticket_id": "T2", "agent": "zed"}},
    {"name": "tag", "arguments": {"ticket_id": "T1", "tags": ["hw", "floor-2", "hw"]}},
    {"name": "escalate", "arguments": {"ticket_id": "T9"}},
    {"name": "escalate", "arguments": {"ticket_id": "T1"}},
    {"name": "close", "arguments": {"ticket_id": "T7"}},
    {"name": "close", "arguments": {"ticket_id": "T2"}},
    {"name": "reopen", "arguments": {"ticket_id": "T2"}},
    {"name": "open_ticket", "arguments": {}},
    {"name": "queue", "arguments": {"agent": "ana"}},
    {"name": "queue", "arguments": {}},
]


def as_trajectory(calls):
    """The same calls as an OpenAI-messages trajectory: two calls in one assistant turn, tool replies between."""
    messages = [{"role": "system", "content": "You run the help desk."}, {"role": "user", "content": "Tidy up."}]
    for start in range(0, len(calls), 2):
        batch = calls[start:start + 2]
        ids = [f"call_{start + k}" for k in range(len(batch))]
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
            for i, c in zip(ids, batch, strict=True)]})
        messages += [{"role": "tool", "tool_call_id": i, "content": "(recorded)"} for i in ids]
    messages.append({"role": "assistant", "content": "Done."})
    return messages


def direct_run(module_path, calls):
    """Run the fixture class itself in this process (the project wrote it): the observations and states."""
    spec = importlib.util.spec_from_file_location("helpdesk_direct", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    desk = module.HelpDesk()
    for key, value in copy.deepcopy(CONFIG).items():
        setattr(desk, key, value)
    results = []
    for call in calls:
        method = getattr(desk, call["name"], None)
        before = copy.deepcopy(public(desk))
        try:
            observation = encode(method(**call["arguments"])) if method else None
            raised = method is None
        except Exception:  # the call did not complete; the env's state must be as before it
            observation, raised = None, True
        if raised:  # the runtimes roll a call that raised back: do the same here
            for key, value in before.items():
                setattr(desk, key, value)
        results.append((raised, observation, copy.deepcopy(public(desk))))
    return results


def public(instance):
    return {k: encode(v) for k, v in sorted(vars(instance).items()) if not k.startswith("_")}


@pytest.fixture(scope="module")
def desk(tmp_path_factory):
    folder = tmp_path_factory.mktemp("desk")
    module = folder / "help_desk.py"
    module.write_text(DESK)
    (folder / "monday.json").write_text(json.dumps(CONFIG))
    catalog = Catalog(folder / "catalog")
    import_class_env(module, catalog, configs=[folder / "monday.json"], check=sandbox_load_check)
    return catalog.get("help-desk"), module, folder


def check_against_direct(result, module):
    expected = direct_run(module, SCRIPT)
    assert [s.call.name for s in result.steps] == [c["name"] for c in SCRIPT]
    for step, (raised, observation, state) in zip(result.steps, expected, strict=True):
        assert step.result.state == state, step.index
        if raised:
            assert step.result.outcome.value in ("crash", "invalid", "failure") and step.result.delta == []
        else:
            assert step.result.observation == observation, step.index
            assert step.result.outcome.value in ("success", "failure")
    outcomes = [s.result.outcome.value for s in result.steps]
    assert outcomes[5] == "crash" and outcomes[9] == "invalid" and outcomes[10] == "invalid"
    assert result.final_state == expected[-1][2]


def test_replay_of_jsonl_matches_the_class_run_directly(desk):
    handle, module, folder = desk
    script = folder / "script.jsonl"
    script.write_text("".join(json.dumps(c) + "\n" for c in SCRIPT))
    result = replay(handle, "monday", read_calls(script), states=True, final_state=True)  # in the sandbox
    assert result.env == "help-desk" and result.state == "monday"
    check_against_direct(result, module)
    assert result.steps[1].result.delta[0].path == ("next_id",)


@pytest.mark.parametrize("layout", ["list", "jsonl", "record"])
def test_replay_of_an_openai_trajectory_matches_the_class_run_directly(desk, layout):
    handle, module, folder = desk
    messages = as_trajectory(SCRIPT)
    path = folder / f"trajectory-{layout}.json"
    path.write_text({"list": json.dumps(messages, indent=1),
                     "jsonl": "\n".join(json.dumps(m) for m in messages),
                     "record": json.dumps({"messages": messages, "tools": []})}[layout])
    calls = read_calls(path)
    assert [(c.name, c.arguments) for c in calls] == [(c["name"], c["arguments"]) for c in SCRIPT]
    assert calls[2].source == ("line 6.tool_calls[0].function" if layout == "jsonl" else
                               "messages[5].tool_calls[0].function")
    if layout == "list":
        check_against_direct(replay(handle, None, calls, states=True, final_state=True), module)


def test_replay_on_a_reference_env_in_the_sandbox_matches_its_in_process_run(reference):
    handle = reference.get("store")
    calls = [{"name": t.name, "arguments": {}} for t in handle.manifest.tools[:3]]
    calls += [{"name": "ship_order", "arguments": {"order_id": "O-404", "carrier": "UPS"}}]
    as_untrusted = EnvHandle(handle.path, handle.manifest, reference=False)  # the same code, run as imported code is
    sandboxed = replay(as_untrusted, "spring_sale", calls, states=True)
    runtime = handle.runtime()
    runtime.reset(handle.state("spring_sale"))
    for step, call in zip(sandboxed.steps, calls, strict=True):
        direct = runtime.call(call, snapshot=True)
        direct.state = direct.state or runtime.snapshot()  # invalid calls return before their snapshot
        assert (step.result.outcome, step.result.observation, step.result.delta, step.result.state) == \
               (direct.outcome, direct.observation, direct.delta, direct.state)


def test_replay_on_a_sql_reference_env_from_a_state_file(reference, tmp_path):
    handle = reference.get("library")
    state = handle.state("quiet")
    path = tmp_path / "quiet-copy.json"
    path.write_text(json.dumps(state))
    calls = [Call("borrow_book", {"member_id": "M002", "book_id": "B002"}),
             Call("borrow_book", {"member_id": "M002", "book_id": "B002"}),
             Call("return_book", {"loan_id": "no-such-loan"})]
    sandboxed = EnvHandle(handle.path, handle.manifest, reference=False)
    by_file = replay(sandboxed, str(path), calls, states=True, final_state=True)
    by_name = replay(handle, "quiet", calls, trusted=True, states=True, final_state=True)
    assert by_file.state == str(path) and by_name.state == "quiet"
    assert [s.model_dump(mode="json") for s in by_file.steps] == [s.model_dump(mode="json") for s in by_name.steps]
    assert [s.result.outcome.value for s in by_file.steps] == ["success", "failure", "failure"]
    assert by_file.final_state == by_name.final_state != state


def test_bad_state_names_what_exists(reference, tmp_path):
    with pytest.raises(CatalogError, match="Available: default, overdue, quiet"):
        replay(reference.get("library"), "nope", [], trusted=True)
    (tmp_path / "list.json").write_text("[1]")
    with pytest.raises(CatalogError, match="must hold a JSON object"):
        replay(reference.get("library"), str(tmp_path / "list.json"), [], trusted=True)
    with pytest.raises(ReplayError, match="cannot start from state"):
        replay(reference.get("library"), {"books": 5}, [], trusted=True)


def test_unreadable_arguments_are_an_invalid_step_not_an_abort(reference):
    calls = parse_calls('{"name": "get_member", "arguments": "{oops"}\n{"name": "get_member", "arguments": [1]}\n'
                        '{"name": "get_member", "arguments": "{\\"member_id\\": \\"M001\\"}"}\n')
    assert calls[0].problem.startswith("arguments are not valid JSON") and calls[0].shown_arguments() == "{oops"
    assert calls[1].problem == "arguments must be a JSON object, got list"
    result = replay(reference.get("library"), None, calls, trusted=True)
    assert [s.result.outcome.value for s in result.steps] == ["invalid", "invalid", "success"]
    assert result.state == "default" and result.steps[0].model_dump(mode="json")["arguments"] == "{oops"


def test_call_file_formats():
    jsonl = '{"name": "a", "arguments": {"x": 1}}\n\n{"name": "b"}\n'
    assert [(c.name, c.arguments, c.source) for c in parse_calls(jsonl)] == [("a", {"x": 1}, "line 1"),
                                                                             ("b", {}, "line 3")]
    assert [c.name for c in parse_calls('[{"name": "a"}, {"name": "b", "arguments": ""}]')] == ["a", "b"]
    assert parse_calls('{"name": "a", "arguments": {}}')[0].source == "line 1"
    legacy = [{"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": '{"k": "v"}'}}]
    assert [(c.name, c.arguments) for c in parse_calls(json.dumps(legacy))] == [("f", {"k": "v"})]


@pytest.mark.parametrize("text, message", [
    ("", "the file is empty"),
    ('{"name": "a"}\n{"name": "b", "arguments": {}\n', "line 2: not valid JSON"),
    ('{"name": "a"}\n{"tool": "b"}\n', 'line 2: the call has no "name" (keys: tool)'),
    ('{"name": "a"}\n{"name": "b", "args": {}}\n', "line 2: unexpected keys args"),
    ('{"name": "a"}\n[1]\n', "line 2: expected an object"),
    ('{"name": 3}', 'line 1: "name" must be a non-empty string, got 3'),
    ('{"name": "a"}\n{"role": "user", "content": "hi"}\n', "line 2: a message among calls"),
    ('[{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [{"type": "function"}]}]',
     "messages[1].tool_calls[0]: expected"),
    ('[{"role": "user"}, {"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}]',
     'messages[1].tool_calls[0].function: "name" must be a non-empty string'),
    ('[{"role": "user"}, {"content": "no role"}]', 'messages[1]: the message has no "role"'),
    ('{"role": "user", "content": "x"}\n{"role": "assistant", "tool_calls": {}}\n', 'line 2: "tool_calls" must be a list'),
    ('[{"role": "user", "content": "x"}, {"role": "assistant", "content": "no tools"}]', "no tool calls"),
    ('{"messages": [{"role": "assistant", "tool_calls": []}]}\n{"messages": []}\n', "line 2: a second trajectory"),
    ('[\n {"role": "user"},\n {"role": "assistant" "tool_calls": []}\n]', "line 3: not valid JSON"),
])
def test_malformed_call_files_give_one_clear_line(text, message):
    with pytest.raises(CallFileError) as caught:
        parse_calls(text)
    assert message in str(caught.value) and "\n" not in str(caught.value)

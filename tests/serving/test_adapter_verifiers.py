"""The verifiers adapter driven by verifiers' own rollout (`evaluate_sync`) against the scripted OpenAI server.

The real library (verifiers 0.1.14, its `StatefulToolEnv`) and the real openai client over HTTP;
the envs are the reference library env in this process and sandboxed. verifiers (~7 s to import) is
imported by the tests, not at collection, so only the worker that runs them pays for it.
"""

import json

import pytest
from openai import AsyncOpenAI

from catalog.store import CatalogError
from serving.adapters.verifiers import TASK_KEY, load_environment
from serving.gym import ServingError
from tests.llm_server import Reply, ScriptedServer
from tests.serving.test_serving_gym import REFUSE_LOAN

TASK = "library-borrow-calvino"
SEARCH = ("search_books", {"query": "calvino", "available_only": True})
BORROW = ("borrow_book", {"member_id": "M002", "book_id": "B010"})


def _solver(request):
    """Search first, then borrow: keyed on the conversation, so concurrent rollouts each get their turn."""
    last = request["body"]["messages"][-1]
    return Reply(tool_calls=[SEARCH] if last["role"] == "user" else [BORROW])


@pytest.fixture(scope="module")
def server():
    with ScriptedServer() as scripted:
        yield scripted


def _client(server):
    import verifiers as vf

    return vf.clients.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.base_url, api_key="test-key"))


def _run(env, server, script, rollouts=1):
    server.script(script)
    client = _client(server)
    return env.evaluate_sync(client, model="test-model", num_examples=1, rollouts_per_example=rollouts,
                             state_columns=["envforge"])["outputs"]


@pytest.mark.parametrize("trusted", [None, False], ids=["in-process", "sandboxed"])
def test_rollouts_solve_the_task_each_on_its_own_instance(reference, server, trusted):
    env = load_environment("library", tasks=[TASK], catalog=reference, trusted=trusted, max_turns=5)
    before = len(server.chat_requests)
    outputs = _run(env, server, _solver, rollouts=2)
    assert [o["reward"] for o in outputs] == [1.0, 1.0]
    for output in outputs:
        assert output["stop_condition"] == "has_final_env_response" and output["error"] is None
        assert [m["role"] for m in output["completion"]] == ["assistant", "tool", "assistant", "tool"]
        assert json.loads(output["completion"][-1]["content"])["data"]["loan_id"] == "loan-8"
        assert output["metrics"]["borrow_book_calls"] == 1.0 and output["info"] == {TASK_KEY: TASK}
    # both borrowed the one copy as the same first loan: each rollout had its own instance
    requests = server.chat_requests[before:]
    assert len(requests) == 4
    served = reference.get("library").manifest.tools
    assert requests[0]["tools"] == [t.openai_schema() for t in served]
    assert not env._episodes  # every instance closed


def test_unsolved_and_cut_off_episodes_score_zero(reference, server):
    env = load_environment("library", tasks=[TASK], catalog=reference, max_turns=2)
    answered = _run(env, server, lambda request: "All done, enjoy the book!")[0]
    assert answered["reward"] == 0.0 and answered["envforge"]["check"] is False
    assert answered["envforge"]["cut_off"] is False  # the agent ended it with an answer
    # search, then borrow on the last turn: verifiers' max_turns stops the rollout before that call runs (cut off)
    cut = _run(env, server, _solver)[0]
    assert cut["reward"] == 0.0 and cut["stop_condition"] == "max_turns_reached" and cut["envforge"]["cut_off"]
    # solved on the first turn: the solving call ends the rollout, which is not a cut-off
    solved = _run(env, server, lambda request: Reply(tool_calls=[BORROW]))[0]
    assert solved["reward"] == 1.0 and solved["stop_condition"] == "has_final_env_response"
    assert solved["envforge"] == {"reward": 1.0, "task": TASK, "passed": True, "error": None, "check": True,
                                  "cut_off": False, "refusal": False}


def test_a_refusal_is_earned_by_the_final_message(reference, server):
    env = load_environment("library", tasks=[REFUSE_LOAN], catalog=reference, max_turns=3)
    declined = _run(env, server, lambda request: "Sorry, I can't lend it: our policy does not allow loans this week.")
    assert declined[0]["reward"] == 1.0 and declined[0]["envforge"]["refusal"] is True
    silent = _run(env, server, lambda request: "Done.")  # nothing done, nothing declined: no reward
    assert silent[0]["reward"] == 0.0 and silent[0]["envforge"]["check"] is True


def test_hostile_calls_and_inputs(reference, server):
    env = load_environment("library", tasks=[TASK], catalog=reference, max_turns=2)
    calls = [("borrow_book", "[1, 2]"), ("no_such_tool", {}), ("borrow_book", "{not json")]
    outputs = _run(env, server, lambda request: Reply(tool_calls=calls) if len(request["body"]["messages"]) < 3
                   else "I could not do it.")
    replies = [m["content"] for m in outputs[0]["completion"] if m["role"] == "tool"]
    assert len(replies) == 3 and "Expected tool arguments to be a dict" in replies[0]
    assert "no_such_tool" in replies[1] and outputs[0]["reward"] == 0.0
    assert not env._episodes
    rogue = {"prompt": [{"role": "user", "content": "hi"}], "answer": "", "example_id": 0,
             "info": {TASK_KEY: "../../etc/passwd"}}
    client = _client(server)
    with pytest.raises(ServingError, match="needs info"):
        env.generate_sync([rogue], client=client, model="test-model")
    with pytest.raises(CatalogError, match="has no task"):
        load_environment("library", tasks=["nope"], catalog=reference)

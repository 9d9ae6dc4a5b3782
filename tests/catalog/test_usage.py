"""One Usage: summed with + and sum(), a call counted once, dumped with the precision the files keep."""

from __future__ import annotations

import pickle
from dataclasses import dataclass

from catalog.usage import Usage


@dataclass
class Call:
    tokens_in: int = 10
    tokens_out: int = 5
    cost_usd: float = 0.1
    seconds: float = 0.5


def test_a_call_is_counted_once_and_its_error_noted() -> None:
    call = Call()
    usage = Usage.of(call).add(call, "timed out")
    assert (usage.calls, usage.tokens_in, usage.tokens_out, usage.errors) == (1, 10, 5, ["timed out"])
    assert usage == Usage(calls=1, tokens_in=10, tokens_out=5, cost_usd=0.1, seconds=0.5, errors=["timed out"])


def test_usages_add_and_sum() -> None:
    a, b = Usage.of(Call()), Usage.of(Call(tokens_in=1, cost_usd=0.2), "x")
    both = a + b
    assert (both.calls, both.tokens_in, both.tokens_out, both.errors) == (2, 11, 10, ["x"])
    assert sum([a, b]) == both and sum([], Usage()) == Usage()


def test_the_dump_rounds_like_the_files_and_reads_back() -> None:
    usage = Usage(calls=1, tokens_in=3, cost_usd=0.1 + 0.2, seconds=1 / 3)
    data = usage.model_dump()
    assert data == {"calls": 1, "tokens_in": 3, "tokens_out": 0, "cost_usd": 0.3, "seconds": 0.333333, "errors": []}
    assert Usage.model_validate({**data, "attempts": 4}).tokens_in == 3  # neighbouring keys of a file are ignored
    assert pickle.loads(pickle.dumps(usage)) == usage

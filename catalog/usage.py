"""Usage: what some model calls cost, summed (calls, tokens in and out, USD, seconds, errors), defined once.

A pipeline stage's answer, one simulated step, a judge's probes, a trajectory's agent or its
simulator, an audit's answers: each counts the same things, so each holds a `Usage` and sums
them with `+` (and `sum()`). It is a pydantic model, so it crosses files and processes as
`model_dump()` / `model_validate()`: costs are rounded to 8 decimals and seconds to 6 when
dumped, the precision every file of envforge already keeps. A writer that never stored a field
leaves it out with `model_dump(exclude=...)`, so the files keep their keys. It sits in catalog/,
the bottom of the stack, because a bench item's prediction already carries these counts.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import ConfigDict, Field, PrivateAttr, field_serializer

from catalog.jsonmodel import JsonModel

__all__ = ["Metered", "Usage"]


class Metered(Protocol):
    """One call's counts (synth.llm.CallRecord, a simulated step's check): what `Usage.add` sums."""

    @property
    def tokens_in(self) -> int: ...

    @property
    def tokens_out(self) -> int: ...

    @property
    def cost_usd(self) -> float: ...

    @property
    def seconds(self) -> float: ...


class Usage(JsonModel):
    """Calls, tokens, cost and time of some model calls, and the errors they ended in.

    `add` counts a call once even if handed it twice (an error's record may already have been
    added); `a + b` is the usage of both (the dedup memory is not carried: sums are of disjoint
    parts). Unknown keys are ignored when read, so a file's neighbouring fields do not matter.
    """

    model_config = ConfigDict(extra="ignore")

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    errors: list[str] = Field(default_factory=list)
    _added: list[object] = PrivateAttr(default_factory=list)

    @classmethod
    def of(cls, record: Metered | None, error: str | None = None) -> Usage:
        """The usage of one model call (None: none was made), with the error it ended in, if any."""
        return cls().add(record, error)

    def add(self, record: Metered | None, error: str | None = None) -> Usage:
        """Count `record` (once) and note `error`; returns self."""
        if error:
            self.errors.append(error)
        if record is not None and all(r is not record for r in self._added):
            self._added.append(record)
            self.calls += 1
            self.tokens_in += record.tokens_in
            self.tokens_out += record.tokens_out
            self.cost_usd += record.cost_usd
            self.seconds += record.seconds
        return self

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(calls=self.calls + other.calls, tokens_in=self.tokens_in + other.tokens_in,
                     tokens_out=self.tokens_out + other.tokens_out, cost_usd=self.cost_usd + other.cost_usd,
                     seconds=self.seconds + other.seconds, errors=[*self.errors, *other.errors])

    def __radd__(self, other: object) -> Usage:
        """`sum(usages)` starts from 0."""
        if other == 0:
            return self + Usage()
        return NotImplemented

    def __eq__(self, other: object) -> bool:
        """Equal counts are equal usages (which calls were seen is bookkeeping, not part of the value)."""
        if not isinstance(other, Usage):
            return NotImplemented
        return dict(self) == dict(other)

    __hash__ = None  # type: ignore[assignment]  # mutable: no hash, as BaseModel

    @field_serializer("cost_usd")
    def _cost(self, value: float) -> float:
        return round(value, 8)

    @field_serializer("seconds")
    def _seconds(self, value: float) -> float:
        return round(value, 6)

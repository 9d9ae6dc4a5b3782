"""How an audit's predictions run: one item per unit on an executor's workers, fed by the driver.

`Predictions` is the workers' recipe: locally its units run on threads of this process sharing
the caller's simulator (predictions wait on a model server); on Ray each actor gets the
simulator pickled (an LLM simulator pickles as its recipe: the same model at the same endpoint)
and asks it. `PoolFeed` hands the driver (`verifier.audit.run`) triples on a queue, (item,
answer or the exception the simulator raised, seconds). A simulator's exceptions travel back as
values, and an exception of the pool itself (a worker that cannot build its simulator, or keeps
dying) is fatal: it is no sample's miss.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import pickle
import queue
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from catalog.bench.items import BenchItem, Simulator
from executors import Recipe, WorkerPool

__all__ = ["Answer", "PoolFeed", "Predictions", "UnitError", "is_fatal", "timed_predict"]


def is_fatal(exc: BaseException) -> bool:
    """An error that ends the whole run (an unreachable endpoint, or `fatal = True`), not just one answer."""
    return getattr(exc, "fatal", False) is True or any(c.__name__ == "EndpointUnreachable" for c in type(exc).__mro__)


def timed_predict(simulator: Simulator, item: BenchItem) -> tuple[Any, float]:
    """(answer or the exception it raised, seconds): the caller decides what an exception means."""
    started = time.perf_counter()
    try:
        answer: Any = simulator.predict(item)
    except BaseException as exc:  # noqa: BLE001 - handed to the driver, which decides what it means
        answer = exc
    return answer, time.perf_counter() - started


class UnitError(RuntimeError):
    """A worker's exception that could not travel back as itself (not picklable); keeps its text and fatality."""

    def __init__(self, message: str, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal

    def __reduce__(self) -> tuple[Any, ...]:
        return (UnitError, (str(self), self.fatal))


def _travelling(answer: Any) -> Any:
    """`answer` as it can cross to the driver: a simulator's exception that does not pickle goes as its text."""
    if not isinstance(answer, BaseException):
        return answer
    try:
        pickle.dumps(answer)
    except Exception:  # noqa: BLE001 - any pickling failure: send its text instead
        answer = UnitError(f"{type(answer).__name__}: {answer}", fatal=is_fatal(answer))
    if not isinstance(answer, Exception):  # KeyboardInterrupt/SystemExit in a worker process: the unit failed
        answer = UnitError(f"{type(answer).__name__} in the worker")
    return answer


@dataclass(frozen=True)
class Answer:
    """A unit's result: the simulator's answer (or the exception it raised) and the seconds it took.

    On a thread it reaches the driver as it is (a KeyboardInterrupt the simulator raised stops the
    audit as the caller's own would); from a worker process it travels pickled, as `_travelling` says.
    """

    value: Any
    seconds: float

    def __reduce__(self) -> tuple[Any, ...]:
        return (Answer, (_travelling(self.value), self.seconds))


class _Predictor:
    """A worker's simulator, answering one item per unit."""

    def __init__(self, simulator: Simulator) -> None:
        self.simulator = simulator

    def run(self, item: BenchItem) -> Answer:
        return Answer(*timed_predict(self.simulator, item))


@dataclass(frozen=True)
class Predictions(Recipe[BenchItem, Answer]):
    """The recipe of an audit's workers: the simulator to ask (on Ray it must pickle)."""

    simulator: Simulator
    threads = True  # a prediction waits on a model server

    def open(self) -> _Predictor:
        return _Predictor(self.simulator)


def one_line(error: BaseException) -> str:
    """A pool's failure in one line: Ray's messages carry the remote traceback, whose last line is the cause."""
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;]*m", "", str(error)).splitlines() if line.strip()]
    return f"a worker failed ({type(error).__name__}): {lines[-1] if lines else 'no message'}"


class PoolFeed:
    """Feeds items to a worker pool, `window` at a time, and puts (item, answer, seconds) on `results`.

    The window (the pool's size) is what lets a fatal answer stop the audit promptly: only the
    items already in flight still land, as with the threads.
    """

    def __init__(self, pool: WorkerPool[BenchItem, Answer], todo: list[BenchItem], results: queue.Queue[tuple[Any, ...]],
                 stop: threading.Event, window: int) -> None:
        self.pool, self.results, self.stop = pool, results, stop
        self.pending = collections.deque(todo)
        self.lock = threading.Lock()
        self.outstanding = 0
        for _ in range(max(1, window)):
            self._next()

    def _next(self) -> None:
        with self.lock:
            if self.stop.is_set() or not self.pending:
                return
            item = self.pending.popleft()
            self.outstanding += 1
        future = self.pool.submit(item)
        future.add_done_callback(lambda done: self._land(item, done))

    def _land(self, item: BenchItem, done: cf.Future[Answer]) -> None:
        try:
            if done.cancelled():
                return
            error = done.exception()
            # The unit returns the simulator's own exceptions; one it raised is the pool's (a worker that
            # kept dying, or could not build its simulator): not this sample's miss, so the audit stops.
            landed = Answer(UnitError(one_line(error), fatal=True), 0.0) if error is not None else done.result()
            answer, seconds = landed.value, landed.seconds
            self.results.put((item, answer, seconds))
            if isinstance(answer, BaseException) and (is_fatal(answer) or not isinstance(answer, Exception)):
                self.stop.set()
            self._next()  # before the count drops, so the driver never sees an idle feed mid-handover
        finally:
            with self.lock:
                self.outstanding -= 1

    def alive(self) -> bool:
        with self.lock:
            return self.outstanding > 0

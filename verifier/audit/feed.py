"""Where an audit's predictions run: threads of this process, or an executor's workers fed by the driver.

Both hand the driver (`verifier.audit.run`) the same triples on a queue, (item, answer or the
exception the simulator raised, seconds), so the driver's loop, its file and its resume are one.
On a worker pool (Ray) a unit is one item's prediction by the worker's own simulator, built once
from a picklable recipe (`open_worker`); a simulator's exceptions travel back as values, and an
exception of the pool itself (a worker that cannot build its simulator, or keeps dying) is fatal:
it is no sample's miss.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import pickle
import queue
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from catalog.bench.items import BenchItem, Simulator
from executors import WorkerPool

__all__ = ["PoolFeed", "UnitError", "is_fatal", "open_worker", "predict_unit", "thread_worker", "timed_predict"]


def is_fatal(exc: BaseException) -> bool:
    """An error that ends the whole run (an unreachable endpoint, or `fatal = True`), not just one answer."""
    return getattr(exc, "fatal", False) is True or any(c.__name__ == "EndpointUnreachable" for c in type(exc).__mro__)


def thread_worker(simulator: Simulator, jobs: queue.Queue[BenchItem], results: queue.Queue[tuple[Any, ...]],
                  stop: threading.Event) -> None:
    """A thread's loop: answer items until none is left, a stop is asked, or a fatal error."""
    while not stop.is_set():
        try:
            item = jobs.get_nowait()
        except queue.Empty:
            return
        answer, seconds = timed_predict(simulator, item)
        results.put((item, answer, seconds))
        if isinstance(answer, BaseException) and (is_fatal(answer) or not isinstance(answer, Exception)):
            return


def timed_predict(simulator: Simulator, item: BenchItem) -> tuple[Any, float]:
    """(answer or the exception it raised, seconds): the caller decides what an exception means."""
    started = time.perf_counter()
    try:
        answer: Any = simulator.predict(item)
    except BaseException as exc:  # noqa: BLE001 - handed to the driver, which decides what it means
        answer = exc
    return answer, time.perf_counter() - started


_WORKER: dict[str, Simulator] = {}  # a Ray worker's simulator, built once by open_worker


def open_worker(recipe: Callable[[], Simulator]) -> None:
    """A pool worker's initializer: build its simulator once."""
    _WORKER["simulator"] = recipe()


class UnitError(RuntimeError):
    """A worker's exception that could not travel back as itself (not picklable); keeps its text and fatality."""

    def __init__(self, message: str, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal

    def __reduce__(self) -> tuple[Any, ...]:
        return (UnitError, (str(self), self.fatal))


def predict_unit(item: BenchItem) -> tuple[Any, float]:
    """One Ray unit: this worker's simulator on one item."""
    answer, seconds = timed_predict(_WORKER["simulator"], item)
    if isinstance(answer, BaseException):
        try:
            pickle.dumps(answer)
        except Exception:  # noqa: BLE001 - any pickling failure: send its text instead
            answer = UnitError(f"{type(answer).__name__}: {answer}", fatal=is_fatal(answer))
        if not isinstance(answer, Exception):  # KeyboardInterrupt/SystemExit in a worker: the unit failed
            answer = UnitError(f"{type(answer).__name__} in the worker")
    return answer, seconds


def one_line(error: BaseException) -> str:
    """A pool's failure in one line: Ray's messages carry the remote traceback, whose last line is the cause."""
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;]*m", "", str(error)).splitlines() if line.strip()]
    return f"a Ray worker failed ({type(error).__name__}): {lines[-1] if lines else 'no message'}"


class PoolFeed:
    """Feeds items to a worker pool, `window` at a time, and puts (item, answer, seconds) on `results`.

    The window (the pool's size) is what lets a fatal answer stop the audit promptly: only the
    items already in flight still land, as with the threads.
    """

    def __init__(self, pool: WorkerPool, todo: list[BenchItem], results: queue.Queue[tuple[Any, ...]],
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
        future = self.pool.submit(predict_unit, item)
        future.add_done_callback(lambda done: self._land(item, done))

    def _land(self, item: BenchItem, done: cf.Future[tuple[Any, float]]) -> None:
        try:
            if done.cancelled():
                return
            error = done.exception()
            # The unit returns the simulator's own exceptions; one it raised is the pool's (a worker that
            # kept dying, or could not build its simulator): not this sample's miss, so the audit stops.
            answer, seconds = (UnitError(one_line(error), fatal=True), 0.0) if error is not None else done.result()
            self.results.put((item, answer, seconds))
            if isinstance(answer, BaseException) and is_fatal(answer):
                self.stop.set()
            self._next()  # before the count drops, so the driver never sees an idle feed mid-handover
        finally:
            with self.lock:
                self.outstanding -= 1

    def alive(self) -> bool:
        with self.lock:
            return self.outstanding > 0

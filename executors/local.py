"""The local executor: spawned worker processes, or threads of this process, on this machine.

Which one is the recipe's `threads`. A process opens the recipe once, when it starts; a thread
opens it once too (its own worker: a unit never sees another thread's state, as on Ray). Threads
are daemons, so a driver stopped by Ctrl-C exits without waiting for a unit still in flight (a
model call, say): such a unit is run again on resume.

A worker process that dies mid-unit (killed, out of memory) breaks a `ProcessPoolExecutor` and
fails every unit in flight with `BrokenProcessPool`. The pool here starts a fresh executor and
runs those units again, up to `RETRIES` times each, so a local run survives a killed worker as a
Ray run does; a unit that keeps killing its worker ends in `WorkerLost`.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import queue
import threading
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Generic, TypeVar

from executors.base import Recipe, Worker, WorkerLost, start_worker
from sandbox.isolation import Isolation, default_isolation

U = TypeVar("U")
R = TypeVar("R")
RETRIES = 3


class _ThisProcess:
    """The worker a pool process opened from its recipe (a process pool's initializer cannot return it)."""

    worker: Worker[Any, Any] | None = None


def _open_process(isolation: Isolation, recipe: Recipe[Any, Any]) -> None:
    _ThisProcess.worker = start_worker(isolation, recipe)


def _run_in_process(unit: Any) -> Any:
    assert _ThisProcess.worker is not None, "a pool process runs units only after opening its recipe"
    return _ThisProcess.worker.run(unit)


def open_local(recipe: Recipe[U, R], workers: int, *, per_worker: int = 1) -> ProcessPool[U, R] | ThreadPool[U, R]:
    """`workers` processes, or `workers * per_worker` threads when the recipe's units wait rather than compute."""
    if recipe.threads:
        return ThreadPool(recipe, max(1, workers) * max(1, per_worker))
    return ProcessPool(recipe, workers)


class ThreadPool(Generic[U, R]):
    """Daemon threads of this process, each with its own worker opened from the recipe."""

    kind = "local"
    threads = True

    def __init__(self, recipe: Recipe[U, R], size: int) -> None:
        self.workers = max(1, size)
        self._recipe = recipe
        self._queue: queue.Queue[tuple[cf.Future[R], U] | None] = queue.Queue()
        self._closed = False
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._serve, name=f"envforge-unit-{k}", daemon=True)
                         for k in range(self.workers)]
        for thread in self._threads:
            thread.start()

    def _serve(self) -> None:
        try:
            worker: Worker[U, R] | None = self._recipe.open()
            failure: BaseException | None = None
        except Exception as exc:  # noqa: BLE001 - a worker that cannot start fails the units it takes
            worker, failure = None, exc
        try:
            while (task := self._queue.get()) is not None:
                future, unit = task
                if not future.set_running_or_notify_cancel():
                    continue
                if worker is None:
                    future.set_exception(WorkerLost(f"the worker could not start: {type(failure).__name__}: {failure}"))
                    continue
                try:
                    future.set_result(worker.run(unit))
                except BaseException as exc:  # noqa: BLE001 - the unit's own failure, handed to its future
                    future.set_exception(exc)
        finally:
            close = getattr(worker, "close", None)
            if close is not None:
                close()

    def submit(self, unit: U) -> cf.Future[R]:
        future: cf.Future[R] = cf.Future()
        with self._lock:
            if self._closed:
                future.cancel()
                return future
            self._queue.put((future, unit))
        return future

    def close(self, *, cancel: bool = False) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if cancel:  # drop what is queued; units still running finish on their daemon threads, unwaited
                while True:
                    try:
                        task = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if task is not None:
                        task[0].cancel()
            for _ in self._threads:
                self._queue.put(None)
        if not cancel:
            for thread in self._threads:
                thread.join()

    def __enter__(self) -> ThreadPool[U, R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(cancel=exc[0] is not None)


class ProcessPool(Generic[U, R]):
    """`workers` spawned processes, each opening the recipe once; a lost process's units run again."""

    kind = "local"
    threads = False

    def __init__(self, recipe: Recipe[U, R], workers: int) -> None:
        self.workers = max(1, workers)
        self._recipe = recipe
        self._isolation = default_isolation()  # the driver's, as it is now: handed to every worker it starts
        self._lock = threading.Lock()
        self._closed = False
        self._outer: set[cf.Future[Any]] = set()
        self._pool = self._processes()

    def _processes(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                      initializer=_open_process, initargs=(self._isolation, self._recipe))

    def submit(self, unit: U) -> cf.Future[R]:
        outer: cf.Future[R] = cf.Future()
        with self._lock:
            self._outer.add(outer)
        self._run(outer, unit, RETRIES)
        return outer

    def _run(self, outer: cf.Future[R], unit: U, retries: int) -> None:
        with self._lock:
            if self._closed:
                outer.cancel()
                return
            pool = self._pool
            try:
                inner = pool.submit(_run_in_process, unit)
            except BrokenProcessPool:  # broken between units: replace it, then submit
                self._replace(pool)
                inner = self._pool.submit(_run_in_process, unit)

        def relay(done: cf.Future[R]) -> None:
            if done.cancelled():
                outer.cancel()
                return
            error = done.exception()
            if isinstance(error, BrokenProcessPool) and not self._closed:
                if retries <= 0:
                    outer.set_exception(WorkerLost(f"the worker running a unit of {type(self._recipe).__name__} "
                                                   f"died {RETRIES + 1} times"))
                    with self._lock:
                        self._outer.discard(outer)
                    return
                with self._lock:
                    self._replace(pool)
                threading.Thread(target=self._run, args=(outer, unit, retries - 1), daemon=True).start()
                return
            if outer.set_running_or_notify_cancel():
                if error is not None:
                    outer.set_exception(error)
                else:
                    outer.set_result(done.result())
            with self._lock:
                self._outer.discard(outer)

        inner.add_done_callback(relay)

    def _replace(self, broken: cf.Executor) -> None:
        """A fresh process pool instead of `broken` (once, however many units saw it break). Caller holds the lock."""
        if self._pool is broken and not self._closed:
            broken.shutdown(wait=False, cancel_futures=True)
            self._pool = self._processes()

    def close(self, *, cancel: bool = False) -> None:
        with self._lock:
            self._closed = True
            pool = self._pool
            outer = list(self._outer)
        if cancel:
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                process.terminate()
            for future in outer:
                future.cancel()
        pool.shutdown(wait=not cancel, cancel_futures=cancel)

    def __enter__(self) -> ProcessPool[U, R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(cancel=exc[0] is not None)

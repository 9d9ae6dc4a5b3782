"""The local executor: a process pool (spawned workers) or a thread pool, on this machine.

A worker process that dies mid-unit (killed, out of memory) breaks a `ProcessPoolExecutor` and
fails every unit in flight with `BrokenProcessPool`. The pool here starts a fresh executor and
runs those units again, up to `RETRIES` times each, so a local run survives a killed worker as a
Ray run does; a unit that keeps killing its worker ends in `WorkerLost`.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from executors.base import WorkerLost, start_worker
from sandbox.isolation import default_isolation

R = TypeVar("R")
RETRIES = 3


class LocalPool:
    """`workers` spawned processes (or threads), each initialised once; see `executors.open_pool`."""

    kind = "local"

    def __init__(self, workers: int, initializer: Callable[..., None] | None, initargs: tuple[Any, ...], *,
                 threads: bool = False, per_worker: int = 1) -> None:
        self.workers, self.threads = max(1, workers), threads
        self._initializer, self._initargs = initializer, initargs
        self._isolation = default_isolation()  # the driver's, as it is now: handed to every worker it starts
        self._lock = threading.Lock()
        self._closed = False
        self._outer: set[cf.Future[Any]] = set()
        if threads:
            if initializer is not None:
                initializer(*initargs)
            self._pool: cf.Executor = cf.ThreadPoolExecutor(max_workers=self.workers * max(1, per_worker),
                                                            thread_name_prefix="envforge-unit")
        else:
            self._pool = self._processes()

    def _processes(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                      initializer=start_worker,
                                      initargs=(self._isolation, self._initializer, self._initargs))

    def submit(self, fn: Callable[..., R], *args: Any) -> cf.Future[R]:
        outer: cf.Future[R] = cf.Future()
        with self._lock:
            self._outer.add(outer)
        self._run(outer, fn, args, RETRIES)
        return outer

    def _run(self, outer: cf.Future[R], fn: Callable[..., R], args: tuple[Any, ...], retries: int) -> None:
        with self._lock:
            if self._closed:
                outer.cancel()
                return
            pool = self._pool
            try:
                inner = pool.submit(fn, *args)
            except BrokenProcessPool:  # broken between units: replace it, then submit
                self._replace(pool)
                inner = self._pool.submit(fn, *args)

        def relay(done: cf.Future[R]) -> None:
            if done.cancelled():
                outer.cancel()
                return
            error = done.exception()
            if isinstance(error, BrokenProcessPool) and not self._closed:
                if retries <= 0:
                    outer.set_exception(WorkerLost(f"the worker running {getattr(fn, '__name__', fn)} died "
                                                   f"{RETRIES + 1} times"))
                    return
                with self._lock:
                    self._replace(pool)
                threading.Thread(target=self._run, args=(outer, fn, args, retries - 1), daemon=True).start()
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

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(cancel=exc[0] is not None)

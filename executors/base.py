"""What every executor shares: which one to use, what a worker is, the pool interface and its errors."""

from __future__ import annotations

import atexit
import concurrent.futures as cf
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from catalog.errors import EnvforgeError
from sandbox.isolation import Isolation, set_default_isolation

EXECUTORS = ("local", "ray")
U = TypeVar("U")  # a unit of work
R = TypeVar("R")  # its result
U_contra = TypeVar("U_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)


class ExecutorError(RuntimeError, EnvforgeError):
    """The executor cannot start as asked (ray not installed, cluster unreachable, bad address)."""


class WorkerLost(RuntimeError):
    """A unit's worker died more often than the retries allow (the unit itself may be what kills it)."""


@dataclass(frozen=True)
class ExecutorSpec:
    """Which executor runs a command's units.

    `address` (ray only): None starts a local Ray instance, or joins the cluster `RAY_ADDRESS`
    names; "auto" joins the cluster running on this node; "HOST:PORT" (or "ray://HOST:PORT")
    joins that one. A test that already called `ray.init` is joined as it is.
    """

    kind: Literal["local", "ray"] = "local"
    address: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in EXECUTORS:
            raise ExecutorError(f"unknown executor {self.kind!r}: choose one of {', '.join(EXECUTORS)}")
        if self.address is not None and self.kind != "ray":
            raise ExecutorError("--ray-address needs --executor ray")


class Worker(Protocol[U_contra, R_co]):
    """What a recipe opens, once per worker: the worker's state (a catalog, a sandbox pool, a simulator).

    A worker may also have `close()`, called when its pool stops (or its process exits).
    """

    def run(self, unit: U_contra) -> R_co:
        """One unit's result; an exception it raises fails that unit's future only."""


class Recipe(Generic[U, R]):
    """How to build a worker: plain, picklable data, opened once in each worker (process, thread or actor).

    `threads` says what the units need locally: False (CPU-bound units: slots, envs) runs them in
    spawned processes, True (units that wait: model calls, sandbox jobs) on threads of the
    driver's process. On Ray every worker is an actor process either way.
    """

    threads: bool = False

    def open(self) -> Worker[U, R]:
        raise NotImplementedError


class WorkerPool(Protocol[U, R]):
    """Runs units on workers opened from one recipe; results come back to the driver as futures."""

    kind: str
    workers: int

    def submit(self, unit: U) -> cf.Future[R]:
        """Queue one unit; its future holds the result, or the exception the unit raised."""

    def close(self, *, cancel: bool = False) -> None:
        """Stop the workers; `cancel` drops queued units and stops running ones now (Ctrl-C)."""

    def __enter__(self) -> WorkerPool[U, R]:
        ...

    def __exit__(self, *exc: object) -> None:
        ...


def start_worker(isolation: Isolation, recipe: Recipe[Any, Any]) -> Worker[Any, Any]:
    """What every worker process runs first, local or Ray: the driver's ways, then its recipe, opened.

    A worker does not inherit what the driver set at run time: its sandbox isolation
    (`--unsafe-no-isolation`) is handed over here, and Ctrl-C is left to the driver, which closes
    the pool (a worker that died of the signal would look like a lost worker and be rerun).
    """
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_default_isolation(isolation)
    worker = recipe.open()
    close = getattr(worker, "close", None)
    if close is not None:
        atexit.register(close)
    return worker

"""What every executor shares: which one to use, the pool interface and its errors."""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from catalog.errors import EnvforgeError
from sandbox.isolation import Isolation, set_default_isolation

EXECUTORS = ("local", "ray")
R = TypeVar("R")


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

    @property
    def is_local(self) -> bool:
        return self.kind == "local"


class WorkerPool(Protocol):
    """Runs `fn(*args)` on a worker; results come back to the driver as futures."""

    kind: str
    workers: int

    def submit(self, fn: Callable[..., R], *args: Any) -> cf.Future[R]:
        """Queue one unit; its future holds the result, or the exception the unit raised."""

    def close(self, *, cancel: bool = False) -> None:
        """Stop the workers; `cancel` drops queued units and stops running ones now (Ctrl-C)."""

    def __enter__(self) -> WorkerPool:
        ...

    def __exit__(self, *exc: object) -> None:
        ...


def start_worker(isolation: Isolation, initializer: Callable[..., None] | None, initargs: Sequence[Any]) -> None:
    """What every worker process runs first, local or Ray: the driver's ways, then the command's initializer.

    A worker does not inherit what the driver set at run time: its sandbox isolation
    (`--unsafe-no-isolation`) is handed over here, and Ctrl-C is left to the driver, which closes
    the pool (a worker that died of the signal would look like a lost worker and be rerun).
    """
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_default_isolation(isolation)
    if initializer is not None:
        initializer(*initargs)

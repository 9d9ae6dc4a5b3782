"""The Ray executor: one actor per worker, spread over the cluster, fed one unit at a time.

Why actors and not plain tasks: a worker's state (an opened pipeline, a sandbox pool, a
simulator) is built once per worker, not once per unit. Why the driver feeds them itself instead
of queueing calls on actors: a long unit would hold back the units queued behind it while other
actors sit idle. A dispatcher thread hands a unit to an actor with a free lane, waits on the
running refs with `ray.wait`, and completes each unit's `concurrent.futures.Future`.

A killed worker process or a lost node: Ray restarts the actor (`max_restarts`) and runs the
calls it had again (`max_task_retries`); past those, the unit's future fails with `WorkerLost`.
Actors ask for one CPU each, or an equal share when more workers are asked for than the cluster
has CPUs, so every actor is placed.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import logging
import os
import secrets
import socket
import threading
import uuid
from typing import Any, Generic, TypeVar

from executors.base import ExecutorError, Recipe, WorkerLost, start_worker
from sandbox.isolation import Isolation, default_isolation

U = TypeVar("U")
R = TypeVar("R")
RESTARTS = 3  # per actor
RETRIES = 3  # per unit, on an actor that died under it


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ExecutorError("--executor ray needs Ray: pip install -e \".[ray]\"") from exc
    return ray


AUTH_MODE, AUTH_TOKEN, AUTH_TOKEN_PATH = "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"
PROBE_SECONDS = 3.0  # how long an explicit --ray-address may take to accept a TCP connection


def connect(address: str | None, **init: Any) -> Any:
    """The `ray` module, connected: to the running instance, to `address`, or to a new local one.

    A new local cluster is started with Ray's token authentication on and a fresh token of this
    process (`local_cluster_auth`): Ray 2.60's gRPC servers listen on every interface (it has no
    option to bind them to loopback), so the token is what keeps other hosts out. An explicit
    `HOST:PORT` is probed first, so an address nothing answers at is one line, not a hang.
    `init` adds `ray.init` options (e.g. `num_cpus` for tests and the performance scripts in bench/).
    """
    ray = _ray()
    if ray.is_initialized():
        return ray
    where = address or os.environ.get("RAY_ADDRESS") or None
    if where is None:
        local_cluster_auth()
    else:
        probe(where)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR,
                 configure_logging=True, runtime_env=_runtime_env(), **init)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise ExecutorError(f"cannot start or join the Ray cluster at {where or 'a new local instance'}: {exc}") from exc
    return ray


def local_cluster_auth() -> None:
    """Turn on Ray's token auth for a local cluster this process starts, with a fresh token.

    The token lives in this process's environment (its children, Ray's processes, inherit it), not
    in Ray's default `~/.ray/auth_token`, which Ray writes world-readable. A token the user set
    (`RAY_AUTH_TOKEN` / `RAY_AUTH_TOKEN_PATH`) is kept; `RAY_AUTH_MODE=disabled` is refused.
    """
    mode = os.environ.get(AUTH_MODE, "token").strip().lower()
    if mode != "token":
        raise ExecutorError(f"{AUTH_MODE}={mode}: envforge starts local Ray clusters only with token auth "
                            f"(Ray listens on every interface); unset {AUTH_MODE}, or start the cluster "
                            "yourself and pass --ray-address")
    os.environ[AUTH_MODE] = "token"
    if not os.environ.get(AUTH_TOKEN) and not os.environ.get(AUTH_TOKEN_PATH):
        os.environ[AUTH_TOKEN] = secrets.token_hex(32)
    # Ray read its config (auth mode included) and may have cached a token when it was imported:
    # make this process see what its children will (what Ray's own `_enable_token_auth` does).
    import ray._raylet as raylet

    raylet.Config.initialize("")  # type: ignore[attr-defined]  # the Cython module has no stubs
    raylet.AuthenticationTokenLoader.instance().reset_cache()  # type: ignore[attr-defined]


def probe(address: str) -> None:
    """Refuse, in one line, a `HOST:PORT` (or `ray://HOST:PORT`) that accepts no TCP connection within seconds."""
    if address == "auto":
        return  # Ray finds the local cluster itself and says so when there is none
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise ExecutorError(f"--ray-address {address!r} is not auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_SECONDS).close()
    except OSError as exc:
        raise ExecutorError(f"nothing answers at Ray address {address} ({exc.strerror or exc}); "
                            "is the cluster up (ray start --head) and the address right?") from None


def _runtime_env() -> dict[str, Any]:
    """What workers need to import envforge from this checkout (an installed package needs nothing)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [root, *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != root)]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join(paths)}}


class _Worker:
    """The actor: starts as every worker does (`start_worker`), opening its recipe once, then runs units.

    The recipe comes pickled and is unpickled here, so a worker that cannot rebuild it (a missing
    dependency, an endpoint it cannot reach) fails as a worker that cannot open it does.
    """

    def __init__(self, isolation: Isolation, recipe: bytes) -> None:
        from ray import cloudpickle

        self.worker = start_worker(isolation, cloudpickle.loads(recipe))

    def run(self, unit: Any) -> Any:
        return self.worker.run(unit)

    def pid(self) -> int:
        return os.getpid()


class RayPool(Generic[U, R]):
    """`workers` Ray actors, each opening the recipe once; see `executors.open_pool`."""

    kind = "ray"

    def __init__(self, recipe: Recipe[U, R], workers: int, *, address: str | None = None, per_worker: int = 1,
                 name: str = "envforge") -> None:
        self.ray = ray = connect(address)
        self.workers, self.per_worker = max(1, workers), max(1, per_worker)
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        share = min(1.0, cpus / self.workers)
        self.name = f"{name}-{uuid.uuid4().hex[:8]}"
        actor = ray.remote(_Worker)
        pickled = ray.cloudpickle.dumps(recipe)
        self.actors = [actor.options(num_cpus=share, max_restarts=RESTARTS, max_task_retries=RETRIES,
                                     max_concurrency=self.per_worker, scheduling_strategy="SPREAD",
                                     name=f"{self.name}-{k}").remote(default_isolation(), pickled)
                       for k in range(self.workers)]
        self._free = collections.deque(a for a in self.actors for _ in range(self.per_worker))
        self._queue: collections.deque[tuple[cf.Future[Any], Any]] = collections.deque()
        self._running: dict[Any, tuple[Any, cf.Future[Any]]] = {}
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._dispatch, name=f"{self.name}-dispatch", daemon=True)
        self._thread.start()

    def submit(self, unit: U) -> cf.Future[R]:
        future: cf.Future[R] = cf.Future()
        with self._wake:
            if self._closed:
                future.cancel()
                return future
            self._queue.append((future, unit))
            self._wake.notify()
        return future

    def _dispatch(self) -> None:
        ray = self.ray
        while True:
            with self._wake:
                while not self._closed and not self._running and not (self._queue and self._free):
                    self._wake.wait(0.5)
                if self._closed:
                    return
                while self._queue and self._free:
                    future, unit = self._queue.popleft()
                    if not future.set_running_or_notify_cancel():
                        continue
                    actor = self._free.popleft()
                    try:
                        self._running[actor.run.remote(unit)] = (actor, future)
                    except Exception as exc:  # noqa: BLE001 - Ray refused the call (e.g. the actor is gone for good)
                        self._free.append(actor)
                        future.set_exception(WorkerLost(f"the Ray worker could not take this unit: {exc}"))
                refs = list(self._running)
            if not refs:
                continue
            ready, _ = ray.wait(refs, num_returns=1, timeout=0.05)
            for ref in ready:
                with self._wake:
                    actor, future = self._running.pop(ref)
                    self._free.append(actor)
                self._settle(ref, future)

    def _settle(self, ref: Any, future: cf.Future[Any]) -> None:
        ray = self.ray
        try:
            future.set_result(ray.get(ref))
        except ray.exceptions.RayTaskError as exc:  # the unit raised: hand its own exception on
            cause = exc.as_instanceof_cause()
            future.set_exception(getattr(cause, "cause", None) or cause)
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
                ray.exceptions.ObjectLostError) as exc:
            future.set_exception(WorkerLost(f"the Ray worker died {RETRIES + 1} times running this unit: {exc}"))
        except Exception as exc:  # noqa: BLE001 - anything else Ray raises belongs to this unit
            future.set_exception(exc)

    def worker_pids(self) -> list[int]:
        """The actors' process ids (what a test kills to show a lost worker loses no work)."""
        return list(self.ray.get([a.pid.remote() for a in self.actors]))

    def close(self, *, cancel: bool = False) -> None:
        with self._wake:
            if self._closed:
                return
            self._closed = True
            pending = [f for f, _unit in self._queue]
            self._queue.clear()
            self._wake.notify_all()
        self._thread.join()
        running = dict(self._running)  # after the join: a unit the dispatcher settled meanwhile is not in it
        for future in pending:
            future.cancel()
        for ref, (_actor, future) in running.items():
            if cancel:  # Ctrl-C: the actors are killed below; their units are resumed by the next run
                future.set_exception(cf.CancelledError("the pool was closed while this unit ran"))
            else:  # let the running units finish and hand their results over
                self._settle(ref, future)
        for actor in self.actors:
            self.ray.kill(actor, no_restart=True)

    def __enter__(self) -> RayPool[U, R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(cancel=exc[0] is not None)


def driver_actor(cls: type, *args: Any, address: str | None = None, max_concurrency: int = 16) -> Any:
    """An actor of `cls(*args)` pinned to this (the driver's) node, restarted if it dies; returns its handle.

    For what workers on any node must reach but only this node may hold (e.g. a SQLite file in WAL
    mode, which works on one host only). It asks for no CPU, so it never takes a worker's place.
    """
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    ray = connect(address)
    here = ray.get_runtime_context().get_node_id()
    actor = ray.remote(cls).options(
        num_cpus=0, max_concurrency=max_concurrency, max_restarts=RESTARTS, max_task_retries=RETRIES,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=here, soft=False))
    return actor.remote(*args)

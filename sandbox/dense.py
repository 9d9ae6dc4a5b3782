"""Dense sandboxed instances: many instances of one env version share one sandbox worker.

A worker per instance costs a fork server and a worker (~60 MB, ~0.5 s) each; serving 1,024
episodes of synthesized envs needs them packed. `DensePool` keeps one fork server and, per env
version, as many workers as its instances need: an instance is a `Lease` (its worker slot and
an id the pool drew at random), placed round-robin over the version's workers that have room
(`per_worker` instances each), a new worker when all are full; a worker left with no instance
is closed after `idle_seconds` (and the sandbox with the last one: it starts again on demand). In the worker each instance is its own runtime (its own SQLite
database or object), reset from the worker's shared templates (sandbox/_worker.py); one env
version per worker stays the rule.

Instances of one worker share its interpreter, so an env whose calls change module-level state
(sandbox/globalstate.py's fingerprint, taken around every call) would leak it between them. The
first call that changes it marks the version `isolated` (the reason is `isolated(lease)`): every
shared worker of that version is closed before another instance runs a call, each instance moves
to a worker of its own, and the sessions replay their calls there (sandbox/session.py), so no
instance ever ran a call on state another one changed.

Only the lease a pool handed out runs jobs for its instance: a job naming any other instance is
refused here, the worker answers only for the job's instance, and a frame tagged with another
instance ends the job (`protocol: a frame for another instance`, sandbox/pool.py).
"""

from __future__ import annotations

import collections
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sandbox.isolation import Isolation
from sandbox.pool import DEFAULT_TIMEOUT, Job, JobResult, SandboxPool, job_version

__all__ = ["DensePool", "Lease", "shared_pool", "DEFAULT_PER_WORKER"]

DEFAULT_PER_WORKER = 64  # instances one worker holds before the version gets another worker
IDLE_SECONDS = 5.0  # how long a worker with no instance stays up for the next one


@dataclass(eq=False)
class _Slot:
    """One worker of one env version, and the instances placed on it."""

    index: int  # into the pool's worker slots
    version: Any
    lock: threading.Lock = field(default_factory=threading.Lock)  # one job at a time on the worker
    instances: dict[int, Lease] = field(default_factory=dict)  # id -> its lease
    forget: list[int] = field(default_factory=list)  # released instances the worker drops with its next job
    empty_since: float | None = None
    closed: bool = False


@dataclass(eq=False)
class _Group:
    """The workers of one env version."""

    slots: list[_Slot] = field(default_factory=list)
    isolated: str | None = None  # why each instance needs a worker of its own, once known
    turn: int = 0  # round-robin position


@dataclass(eq=False)
class Lease:
    """One instance's place in a `DensePool`: only its pool runs jobs for it, only for this instance."""

    pool: DensePool
    version: Any
    slot: _Slot
    instance: int
    released: bool = False


class DensePool(SandboxPool):
    """Sandbox workers shared by the instances of one env version each; see the module docstring."""

    def __init__(self, *, per_worker: int = DEFAULT_PER_WORKER, idle_seconds: float = IDLE_SECONDS,
                 timeout: float = DEFAULT_TIMEOUT, memory_mb: int = 1024, isolation: Isolation | None = None) -> None:
        # workers are recycled for leftovers and events, never for a job count: that would replay every co-tenant
        super().__init__(1, timeout=timeout, memory_mb=memory_mb, max_jobs=2**62, isolation=isolation)
        self._slots.clear()
        self._idle.clear()
        self.per_worker, self.idle_seconds = max(1, per_worker), idle_seconds
        self._groups: dict[Any, _Group] = {}
        self._lock = threading.Lock()
        self._free: list[int] = []  # slot indexes of closed workers, reused
        # (lease, when it was released), appended without the lock (finalizers)
        self._released: collections.deque[tuple[Lease, float]] = collections.deque()
        self._reaper: threading.Timer | None = None  # closes idle workers when nothing else comes by
        self._reaper_lock = threading.Lock()

    def __enter__(self) -> DensePool:
        return self

    # --- placement --------------------------------------------------------------------------------
    def open(self, job: Job) -> Lease:
        """A new instance of `job`'s env version, placed on a worker with room (or a new one)."""
        version = job_version(job)
        with self._lock:
            self._settle()
            group = self._groups.setdefault(version, _Group())
            cap = 1 if group.isolated else self.per_worker
            roomy = [s for s in group.slots if len(s.instances) < cap]
            if roomy:
                slot = roomy[group.turn % len(roomy)]
                group.turn += 1
            else:
                slot = self._new_slot(version)
                group.slots.append(slot)
            instance = secrets.randbits(62)  # drawn, not counted: nothing can name another instance by guessing
            while any(instance in s.instances for s in group.slots):
                instance = secrets.randbits(62)
            lease = slot.instances[instance] = Lease(self, version, slot, instance)
            slot.empty_since = None
            return lease

    def _new_slot(self, version: Any) -> _Slot:
        if self._free:
            index = self._free.pop()
        else:
            index = len(self._slots)
            self._slots.append(None)
        return _Slot(index, version)

    def release(self, lease: Lease) -> None:
        """The instance is done: the worker drops its state with its next job (safe from a finalizer)."""
        if not lease.released:
            lease.released = True
            self._released.append((lease, time.monotonic()))
            self._arm_reaper()

    def _arm_reaper(self) -> None:
        with self._reaper_lock:
            if self._reaper is None:
                self._reaper = threading.Timer(self.idle_seconds + 0.1, self._reap)
                self._reaper.daemon = True
                self._reaper.start()

    def _reap(self) -> None:
        """(The reaper's thread.) Settle; again later while a worker waits out its idle time."""
        with self._reaper_lock:
            self._reaper = None
        with self._lock:
            self._settle()
            waiting = any(s.empty_since is not None for g in self._groups.values() for s in g.slots)
        if waiting:
            self._arm_reaper()

    def _settle(self) -> None:
        """(Under the lock.) Take in released leases; close workers idle longer than `idle_seconds`."""
        now = time.monotonic()
        while self._released:
            lease, when = self._released.popleft()
            slot = lease.slot
            slot.instances.pop(lease.instance, None)
            slot.forget.append(lease.instance)
            if not slot.instances:
                slot.empty_since = when  # idle since its last instance went, not since it was noticed
        for version, group in list(self._groups.items()):
            for slot in list(group.slots):
                if slot.instances or slot.empty_since is None or now - slot.empty_since < self.idle_seconds:
                    continue
                if not slot.lock.acquire(blocking=False):
                    continue  # a job is finishing on it: next time
                try:
                    self._close_slot(slot)
                    group.slots.remove(slot)
                finally:
                    slot.lock.release()
            if not group.slots and group.isolated is None:
                del self._groups[version]
        if not any(g.slots for g in self._groups.values()):  # no instance anywhere: the sandbox goes too
            with self._server_lock:
                while self._servers:
                    self._servers.pop().close()

    def _close_slot(self, slot: _Slot) -> None:
        """(Under the lock and the slot's lock.) Close its worker and free its index."""
        self._retire(slot.index)
        slot.closed = True
        self._free.append(slot.index)

    def isolated(self, lease: Lease) -> str | None:
        """Why `lease`'s env version gets a worker per instance (module-level state its calls change), or None."""
        group = self._groups.get(lease.version)
        return group.isolated if group is not None else None

    def workers(self) -> int:
        """Workers this pool has placed instances on (alive or about to start), idle ones closed first."""
        with self._lock:
            self._settle()
            return sum(len(g.slots) for g in self._groups.values())

    # --- running ----------------------------------------------------------------------------------
    def run_for(self, lease: Lease, job: Job) -> JobResult:
        """Run `job` on `lease`'s instance; ValueError for a lease or a job that is not that instance's."""
        if lease.pool is not self or lease.released:
            raise ValueError("not a live instance of this pool")
        if job.instance is not None and job.instance != lease.instance:
            raise ValueError("refused: the job names another instance")
        if job.env_dir != lease.version[0][0]:
            raise ValueError("refused: the job is for another env than its instance")
        job.instance = lease.instance
        while True:
            slot = lease.slot
            with slot.lock:
                if lease.slot is not slot or slot.closed:
                    continue  # moved (its version was isolated) while waiting: run where it lives now
                with self._lock:
                    if self._released:
                        self._settle()
                    job.forget, slot.forget = slot.forget, []
                result = self._run_on(slot.index, job, lease.version)
            break
        moved = next((c.info["global_change"] for c in result.calls if c.info.get("global_change")), None)
        if moved:
            self._isolate(lease.version, f"a call changed module-level state: {', '.join(map(str, moved[:3]))}")
        return result

    def _isolate(self, version: Any, reason: str) -> None:
        """Give every instance of `version` a worker of its own; close the shared ones (their sessions replay)."""
        with self._lock:
            group = self._groups.get(version)
            if group is None or group.isolated is not None:
                return
            group.isolated = reason
            shared = [s for s in group.slots if len(s.instances) > 1]
        for slot in shared:
            with slot.lock, self._lock:
                self._retire(slot.index)  # what the change leaked goes with the worker
                for lease in list(slot.instances.values())[1:]:
                    own = self._new_slot(version)
                    del slot.instances[lease.instance]
                    own.instances[lease.instance] = lease
                    group.slots.append(own)
                    lease.slot = own

    def close(self) -> None:
        with self._reaper_lock:
            if self._reaper is not None:
                self._reaper.cancel()
                self._reaper = None
        with self._lock:
            for group in self._groups.values():
                for slot in group.slots:
                    slot.closed = True
            self._groups.clear()
        super().close()


_SHARED: dict[tuple[float, int], DensePool] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(timeout: float = DEFAULT_TIMEOUT, memory_mb: int = 1024) -> DensePool:
    """The dense pool of this process for these limits (every sandboxed session of the process shares it)."""
    with _SHARED_LOCK:
        key = (float(timeout), int(memory_mb))
        if key not in _SHARED:
            _SHARED[key] = DensePool(timeout=timeout, memory_mb=memory_mb)
        return _SHARED[key]

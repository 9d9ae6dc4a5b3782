"""Slot checkpoints for workers on other nodes: one SQLite file, opened on the driver's node only.

A run's `checkpoints.sqlite` is in WAL mode, and WAL works only when every process using the
database is on one host (readers and writers share its `-shm` index through memory); over a
network filesystem it breaks. So on a Ray cluster no worker opens the file: an actor pinned to the
driver's node holds the run's one `SqliteSaver`, and each worker's graph checkpoints through a
`RemoteCheckpoints` saver that forwards LangGraph's checkpointer calls to it. The file, what it
holds and resume are then exactly what a local run has, and a node that dies takes no checkpoint
with it: its slots continue, on another worker, from the last node they finished.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.sqlite import SqliteSaver

from executors import ExecutorSpec, on_driver_node

__all__ = ["CheckpointHost", "RemoteCheckpoints", "host_checkpoints"]


def open_saver(path: Path | str) -> tuple[SqliteSaver, sqlite3.Connection]:
    """The run's checkpointer over its SQLite file (WAL: the driver and this node's workers read and write it)."""
    connection = sqlite3.connect(path, timeout=60, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    return SqliteSaver(connection), connection


class CheckpointHost:
    """The actor on the driver's node: the one process on the cluster that writes checkpoints for workers."""

    def __init__(self, path: str) -> None:
        self.saver, self.connection = open_saver(path)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.saver.get_tuple(config)

    def list(self, config: RunnableConfig | None, filter: dict[str, Any] | None, before: RunnableConfig | None,
             limit: int | None) -> list[CheckpointTuple]:
        return list(self.saver.list(config, filter=filter, before=before, limit=limit))

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> dict[str, Any]:
        return dict(self.saver.put(config, checkpoint, metadata, new_versions))

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str) -> None:
        self.saver.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        self.saver.delete_thread(thread_id)


class RemoteCheckpoints(BaseCheckpointSaver[str]):
    """A worker's checkpointer: every call goes to the `CheckpointHost` actor (synchronous graphs only)."""

    _has_task_path = True

    def __init__(self, host: Any) -> None:
        super().__init__()
        self.host = host

    def _call(self, method: str, *args: Any) -> Any:
        import ray

        return ray.get(getattr(self.host, method).remote(*args))

    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        return self._call("get_tuple", config)

    def list(self, config: Any, *, filter: dict[str, Any] | None = None, before: Any = None,
             limit: int | None = None) -> Iterator[CheckpointTuple]:
        return iter(self._call("list", config, filter, before, limit))

    def put(self, config: Any, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> Any:
        return self._call("put", config, checkpoint, metadata, new_versions)

    def put_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        self._call("put_writes", config, list(writes), task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        self._call("delete_thread", thread_id)

    def get_next_version(self, current: str | None, channel: None) -> str:
        # SqliteSaver's version scheme, borrowed unbound: it reads nothing of `self`, so the file stays one scheme
        return SqliteSaver.get_next_version(self, current, channel)  # type: ignore[arg-type]


def host_checkpoints(path: Path, executor: ExecutorSpec) -> Any | None:
    """The `CheckpointHost` actor for `path` on this (the driver's) node, if `executor`'s workers may be elsewhere."""
    return on_driver_node(executor, CheckpointHost, str(path))


def stop_host(host: Any) -> None:
    """Stop the host actor (at the end of the run: every worker has stopped)."""
    import ray

    ray.kill(host, no_restart=True)

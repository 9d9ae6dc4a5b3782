"""SQLite plumbing of SQL-state envs: codecs, loading, snapshots, templates, change tracking.

Change tracking uses SQLite triggers, so it sees every write (ORM flushes, bulk statements, raw
SQL) and costs work in proportion to the rows a call touched, never to the size of the state:
the first time a call touches a row, a TEMP trigger copies the row's old values (or notes that
it did not exist) into a TEMP shadow table; after the call only those rows are compared.
TEMP objects live on the connection, outside the main database, so restoring the main
database from a template (SQLite's backup API) keeps them.
"""

from __future__ import annotations

import base64
import datetime as dt
import enum
import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.pool import NullPool, StaticPool

from catalog.errors import EnvforgeError
from catalog.state.delta import MISSING, DeltaOp, diff_at
from catalog.state.jsonable import canonical_json, to_jsonable

Codec = Callable[[Any], Any]


class StateError(ValueError, EnvforgeError):
    """A state does not fit the environment's schema."""


_DIALECT = sqlite_dialect.dialect()


def _identity(value: Any) -> Any:
    return value


def _column_codecs(column: sa.Column[Any]) -> tuple[Codec, Codec]:
    """Return (stored SQLite value -> canonical JSON, JSON -> Python value to bind) for a column.

    Reading reuses SQLAlchemy's own result processing (type decorators included), so a value
    in a snapshot is exactly the JSON form of what the ORM hands to tool code.
    """
    column_type = column.type
    process = column_type.dialect_impl(_DIALECT).result_processor(_DIALECT, None)
    to_json: Codec = (lambda v: to_jsonable(process(v))) if process else to_jsonable
    base = column_type.impl_instance if isinstance(column_type, sa.types.TypeDecorator) else column_type
    try:
        python_type = base.python_type
    except NotImplementedError:
        return to_json, _identity
    return to_json, _from_json_for(python_type, bool(getattr(base, "timezone", False)))


def _from_json_for(python_type: type, timezone: bool) -> Codec:
    if issubclass(python_type, dt.datetime):
        def to_datetime(v: Any) -> Any:
            if not isinstance(v, str):
                return v
            parsed = dt.datetime.fromisoformat(v)
            return parsed.replace(tzinfo=dt.UTC) if timezone and parsed.tzinfo is None else parsed
        return to_datetime
    if issubclass(python_type, dt.date):
        return lambda v: dt.date.fromisoformat(v) if isinstance(v, str) else v
    if issubclass(python_type, dt.time):
        return lambda v: dt.time.fromisoformat(v) if isinstance(v, str) else v
    if issubclass(python_type, Decimal):
        return lambda v: None if v is None else Decimal(str(v))
    if issubclass(python_type, enum.Enum):
        return lambda v: None if v is None else python_type(v)
    if issubclass(python_type, uuid.UUID):
        return lambda v: uuid.UUID(v) if isinstance(v, str) else v
    if issubclass(python_type, bytes):
        return lambda v: base64.b64decode(v) if isinstance(v, str) else v
    return _identity


def quote(name: str) -> str:
    """Quote an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


@dataclass
class TableCodec:
    """How one table maps to one state collection `{key: record}`."""

    name: str
    table: sa.Table
    columns: list[str]
    pk: list[str]
    to_json: list[Codec]
    from_json: dict[str, Codec]

    @classmethod
    def of(cls, table: sa.Table) -> TableCodec:
        pk = [c.name for c in table.primary_key.columns]
        if not pk:
            raise StateError(f"Table {table.name!r} has no primary key; every state table needs one")
        codecs = [_column_codecs(c) for c in table.columns]
        return cls(
            name=table.name,
            table=table,
            columns=[c.name for c in table.columns],
            pk=pk,
            to_json=[c[0] for c in codecs],
            from_json={c.name: codec[1] for c, codec in zip(table.columns, codecs, strict=True)},
        )

    def key_of(self, record: dict[str, Any]) -> str:
        """The collection key of a record: its primary key as text (JSON list if composite)."""
        if len(self.pk) == 1:
            value = record.get(self.pk[0])
            return value if isinstance(value, str) else json.dumps(value)
        return canonical_json([record.get(c) for c in self.pk])

    def record(self, row: Iterable[Any]) -> dict[str, Any]:
        """Turn a raw SQLite row (columns in table order) into a JSON record."""
        return {name: codec(value) for name, codec, value in zip(self.columns, self.to_json, row, strict=True)}

    def select_sql(self, where_pk: bool = False) -> str:
        cols = ", ".join(quote(c) for c in self.columns)
        sql = f"SELECT {cols} FROM main.{quote(self.name)}"
        if where_pk:
            sql += " WHERE " + " AND ".join(f"{quote(c)} IS ?" for c in self.pk)
        return sql + " ORDER BY " + ", ".join(quote(c) for c in self.pk)


def memory_engine(connection: sqlite3.Connection | None = None) -> tuple[sa.Engine, sqlite3.Connection]:
    """Return an engine bound to exactly one in-memory SQLite connection, and that connection."""
    raw = connection or sqlite3.connect(":memory:", check_same_thread=False)
    engine = sa.create_engine("sqlite://", creator=lambda: raw, poolclass=StaticPool)
    return engine, raw


def database_engine() -> sa.Engine:
    """An engine whose every connection is a new, empty in-memory database.

    SQLAlchemy caches compiled statements per engine (and dialect), so runtimes of one env that
    each take a connection of one such engine compile the env's statements once between them
    instead of once each (a first write costs ~10 ms to compile, a compiled one ~0.1 ms).
    """
    return sa.create_engine("sqlite://", creator=lambda: sqlite3.connect(":memory:", check_same_thread=False),
                            poolclass=NullPool)


def load_rows(engine: sa.Engine, codecs: dict[str, TableCodec], state: dict[str, Any]) -> None:
    """Insert a canonical state into an empty database with the env's schema."""
    if not isinstance(state, dict):
        raise StateError(f"A state must be an object of collections, got {type(state).__name__}")
    unknown = sorted(set(state) - set(codecs))
    if unknown:
        raise StateError(f"State has collections {unknown} that the env has no table for. Tables: {sorted(codecs)}")
    with engine.begin() as conn:
        for name, collection in state.items():
            codec = codecs[name]
            if not isinstance(collection, dict):
                raise StateError(f"Collection {name!r} must map keys to records, got {type(collection).__name__}")
            rows = []
            for key, record in collection.items():
                if not isinstance(record, dict):
                    raise StateError(f"Record {name}/{key} must be an object, got {type(record).__name__}")
                extra = sorted(set(record) - set(codec.columns))
                if extra:
                    raise StateError(f"Record {name}/{key} has unknown fields {extra}. Columns: {codec.columns}")
                if codec.key_of(record) != key:
                    raise StateError(f"Record {name}/{key} has primary key {codec.key_of(record)!r}, not {key!r}")
                rows.append({c: codec.from_json[c](v) for c, v in record.items()})
            if rows:
                try:
                    conn.execute(sa.insert(codec.table), rows)
                except sa.exc.SQLAlchemyError as exc:
                    raise StateError(f"Collection {name!r} does not fit its table: {getattr(exc, 'orig', None) or exc}") from exc


def snapshot(raw: sqlite3.Connection, codecs: dict[str, TableCodec],
             known: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Read the whole database as a canonical state (every table, empty ones included).

    `known` holds collections already read and unchanged since (ChangeTracker says which tables
    a call touched): they are reused as they are, and the ones read now are added to it.
    """
    state: dict[str, Any] = {}
    for name in sorted(codecs):
        if known is not None and name in known:
            state[name] = known[name]
            continue
        codec = codecs[name]
        collection: dict[str, Any] = {}
        for row in raw.execute(codec.select_sql()):
            record = codec.record(row)
            collection[codec.key_of(record)] = record
        state[name] = collection
        if known is not None:
            known[name] = collection
    return state


class ChangeTracker:
    """Shadow tables and TEMP triggers that record each touched row's pre-call values."""

    TOUCHED = "_ef_touched"

    def __init__(self, raw: sqlite3.Connection, codecs: dict[str, TableCodec]) -> None:
        self.raw = raw
        self.codecs = codecs
        raw.execute(f"CREATE TEMP TABLE IF NOT EXISTS {self.TOUCHED} (tbl TEXT PRIMARY KEY)")
        self._touched_sql = f"SELECT tbl FROM {self.TOUCHED}"
        self._sql: dict[str, tuple[str, str, str]] = {}
        for codec in codecs.values():
            self._install(codec)
            shadow = self.shadow(codec)
            cols = ", ".join(quote(c) for c in codec.columns)
            self._sql[codec.name] = (f"SELECT _ef_existed, {cols} FROM {shadow}", codec.select_sql(where_pk=True),
                                     f"DELETE FROM {shadow}")
        self.touched: list[str] = []  # the tables the last collect found touched
        raw.commit()
        self._schema = self._temp_schema()

    def _temp_schema(self) -> int:
        """The temp schema's version: any CREATE or DROP there (of a tracking trigger, say) changes it."""
        return int(self.raw.execute("PRAGMA temp.schema_version").fetchone()[0])

    def intact(self) -> bool:
        """Whether the tracking triggers are as installed (no DDL in the temp schema since)."""
        return self._temp_schema() == self._schema

    def pending(self) -> list[str]:
        """Tables touched since the last collect (after a rollback: what the code committed itself)."""
        return [name for (name,) in self.raw.execute(self._touched_sql).fetchall()]

    @staticmethod
    def shadow(codec: TableCodec) -> str:
        return quote(f"_ef_before_{codec.name}")

    def _install(self, codec: TableCodec) -> None:
        shadow = self.shadow(codec)
        cols = ", ".join(quote(c) for c in codec.columns)
        pk = ", ".join(quote(c) for c in codec.pk)
        old_values = ", ".join(f"OLD.{quote(c)}" for c in codec.columns)
        new_pk = ", ".join(f"NEW.{quote(c)}" for c in codec.pk)
        table = f"main.{quote(codec.name)}"
        touch = f"INSERT OR IGNORE INTO {self.TOUCHED} VALUES ({_sql_str(codec.name)});"
        keep_old = f"INSERT OR IGNORE INTO {shadow} (_ef_existed, {cols}) VALUES (1, {old_values});"
        note_new = f"INSERT OR IGNORE INTO {shadow} (_ef_existed, {pk}) VALUES (0, {new_pk});"
        trigger = lambda event: quote(f"_ef_{event}_{codec.name}")  # noqa: E731
        self.raw.executescript(
            f"""
            CREATE TEMP TABLE IF NOT EXISTS {shadow} (_ef_existed INTEGER NOT NULL, {cols}, PRIMARY KEY ({pk}));
            CREATE TEMP TRIGGER IF NOT EXISTS {trigger('ins')} AFTER INSERT ON {table} BEGIN {touch} {note_new} END;
            CREATE TEMP TRIGGER IF NOT EXISTS {trigger('upd')} AFTER UPDATE ON {table} BEGIN {touch} {keep_old} {note_new} END;
            CREATE TEMP TRIGGER IF NOT EXISTS {trigger('del')} AFTER DELETE ON {table} BEGIN {touch} {keep_old} END;
            """
        )

    def collect(self) -> list[DeltaOp]:
        """Return the delta of the rows touched since the last collect, and forget them.

        Must run in the same transaction as the writes (before commit), so a rollback also
        discards what was recorded.
        """
        touched = self.raw.execute(self._touched_sql).fetchall()
        self.touched = [name for (name,) in touched]
        if not touched:
            return []
        ops: list[DeltaOp] = []
        for (name,) in touched:
            codec = self.codecs[name]
            read_shadow, read_current, clear_shadow = self._sql[name]
            pk_index = [codec.columns.index(c) for c in codec.pk]
            for existed, *row in self.raw.execute(read_shadow).fetchall():
                recorded = codec.record(row)
                now = self.raw.execute(read_current, [row[i] for i in pk_index]).fetchone()
                before = recorded if existed else MISSING
                after = codec.record(now) if now is not None else MISSING
                ops.extend(diff_at((name, codec.key_of(recorded)), before, after))
            self.raw.execute(clear_shadow)
        self.raw.execute(f"DELETE FROM {self.TOUCHED}")
        ops.sort(key=lambda op: op.path)
        return ops


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"

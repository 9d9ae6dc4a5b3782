"""What an environment module imports: the `Env` base class, `@tool`, `ok`/`fail`, `ToolError`.

This is the authoring convention of docs/design.md for SQL-state environments:

    Table = table_base()

    class Book(Table, table=True):
        id: str = Field(primary_key=True, description="Book id, such as 'B001'.")
        status: str = Field("available", description="available | on_loan | lost")

    class LibraryEnv(Env):
        tables = (Book,)

        @tool(kind="write")
        def withdraw_book(self, book_id: str) -> dict:
            '''Withdraw a book from circulation.

            Args:
                book_id: The book, such as 'B001'.
            '''
            book = self.get(Book, book_id)
            if book is None:
                return fail(f"Book {book_id} not found")
            book.status = "withdrawn"
            return ok(message=f"Book {book_id} withdrawn")

State is reached only through the env's session; time and new ids come from `self.now()` and
`self.new_id(prefix)`, which read and advance values kept in the state (table `env_meta`), so
the same call on the same state always gives the same result.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal, TypeVar

from sqlalchemy import Column
from sqlalchemy.orm import registry
from sqlmodel import JSON, Field, Session, SQLModel, select

from catalog.models import ToolKind

__all__ = ["Env", "EnvMeta", "ToolError", "tool", "ok", "fail", "table_base", "DEFAULT_CLOCK", "META_TABLE"]

DEFAULT_CLOCK = dt.datetime(2026, 1, 5, 9, 0, 0, tzinfo=dt.UTC)
META_TABLE = "env_meta"
_TOOL_MARK = "__envforge_tool__"
F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=SQLModel)


class ToolError(Exception):
    """Raise inside a tool to refuse the call; equivalent to `return fail(message)`.

    The call's changes are rolled back, as for any exception.
    """


def ok(data: Any = None, message: str | None = None) -> dict[str, Any]:
    """Return a success result: `{"success": True, "data": ..., "message": ...}` (None parts omitted)."""
    result: dict[str, Any] = {"success": True}
    if data is not None:
        result["data"] = data
    if message is not None:
        result["message"] = message
    return result


def fail(message: str) -> dict[str, Any]:
    """Return a failure result `{"success": False, "error": message}`: a rule refused the call."""
    return {"success": False, "error": message}


def tool(kind: Literal["read", "write"] | ToolKind) -> Callable[[F], F]:
    """Mark a method of an `Env` subclass as a tool; its name is the tool name."""
    tool_kind = ToolKind(kind)

    def mark(function: F) -> F:
        setattr(function, _TOOL_MARK, tool_kind)
        return function

    return mark


def table_base() -> type[SQLModel]:
    """Return a fresh SQLModel base with its own metadata.

    Each env module defines its tables on its own base, so several environments with tables of
    the same name can be loaded in one process.
    """

    class EnvTable(SQLModel, registry=registry()):
        pass

    return EnvTable


_MetaBase = table_base()


class EnvMeta(_MetaBase, table=True):  # type: ignore[call-arg,misc,valid-type]
    """Env-level values kept in the state: the clock and the id counters."""

    __tablename__ = META_TABLE
    key: str = Field(primary_key=True, description="'clock' or 'next_id:<prefix>'.")
    value: Any = Field(sa_column=Column(JSON), description="ISO time for the clock, an int for counters.")


class Env:
    """Base class of SQL-state environments; subclasses list `tables` and define `@tool` methods."""

    tables: ClassVar[Sequence[type[SQLModel]]] = ()
    __tools__: ClassVar[dict[str, ToolKind]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, ToolKind] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                kind = getattr(member, _TOOL_MARK, None)
                if kind is not None:
                    found[name] = kind
        cls.__tools__ = found

    def __init__(self, session: Session) -> None:
        self.session = session

    # --- state access -------------------------------------------------------------------
    def get(self, model: type[M], key: Any) -> M | None:
        """Return the row of `model` with primary key `key`, or None."""
        return self.session.get(model, key)

    def select(self, model: type[M], *where: Any, order_by: Any = None) -> list[M]:
        """Return the rows of `model` matching all `where` clauses, in primary-key order by default."""
        statement = select(model)
        if where:
            statement = statement.where(*where)
        if order_by is None:
            order_by = list(model.__table__.primary_key.columns)  # type: ignore[attr-defined]
        statement = statement.order_by(*(order_by if isinstance(order_by, (list, tuple)) else [order_by]))
        return list(self.session.exec(statement).all())

    def add(self, row: SQLModel) -> None:
        """Insert `row` (written when the call ends)."""
        self.session.add(row)

    def delete(self, row: SQLModel) -> None:
        """Delete `row`."""
        self.session.delete(row)

    # --- deterministic time and ids -------------------------------------------------------
    def now(self) -> dt.datetime:
        """Return the env clock kept in the state, in UTC (DEFAULT_CLOCK if the state sets none)."""
        row = self.session.get(EnvMeta, "clock")
        if row is None:
            return DEFAULT_CLOCK
        clock = dt.datetime.fromisoformat(row.value)
        return clock if clock.tzinfo is not None else clock.replace(tzinfo=dt.UTC)

    def new_id(self, prefix: str) -> str:
        """Return the next id for `prefix` ('loan' -> 'loan-7') and advance its counter in the state."""
        key = f"next_id:{prefix}"
        row = self.session.get(EnvMeta, key)
        if row is None:
            number = 1
            self.session.add(EnvMeta(key=key, value=2))
        else:
            number = int(row.value)
            row.value = number + 1
        return f"{prefix}-{number}"

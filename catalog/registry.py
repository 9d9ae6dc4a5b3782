"""One generic name -> entry table: the generator backends, the named simulators and agents, the models.

Every table the CLI takes a choice from is a `Registry[T]`: entries are added once (twice is a
bug), by a call or a decorator, kept in registration order (the first is the default), and
`choices()` is what the parser offers. Looking up an unknown name raises `UnknownName` (a
KeyError and an EnvforgeError: one line on the CLI) that lists the choices, so every table says
the same thing the same way. Tables are module globals built at import: workers rebuild them by
importing, so a Registry never has to cross a process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

from catalog.errors import EnvforgeError

__all__ = ["Registry", "UnknownName"]

T = TypeVar("T")
F = TypeVar("F")


class UnknownName(KeyError, EnvforgeError):
    """A name no entry of the table has; the message lists the ones it has."""

    def __str__(self) -> str:  # KeyError's str() is the repr of its argument: keep the message readable
        return str(self.args[0]) if self.args else ""


class Registry(Mapping[str, T], Generic[T]):
    """Entries of one kind by name, in registration order.

    `kind` names an entry in messages ("backend", "model"); `hint` ends the unknown-name message
    (where to add one); `error` is the exception an unknown name raises (a subclass of
    UnknownName's bases, e.g. the LLM layer's UnknownModel).
    """

    def __init__(self, kind: str, *, hint: str = "", error: Callable[[str], Exception] = UnknownName,
                 entries: Mapping[str, T] | None = None) -> None:
        self.kind = kind
        self.hint = hint
        self.error = error
        self._entries: dict[str, T] = {}
        for name, entry in (entries or {}).items():
            self.add(name, entry)

    def add(self, name: str, entry: T) -> T:
        """Register `entry` under `name`; a name registered twice is a ValueError (two tables would disagree)."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        return entry

    def register(self, name: str, make: Callable[[F], T] | None = None) -> Callable[[F], F]:
        """A decorator registering what it decorates (or `make(it)`, e.g. a factory wrapped with its help line)."""
        def decorate(obj: F) -> F:
            self.add(name, make(obj) if make is not None else obj)  # type: ignore[arg-type]
            return obj
        return decorate

    def choices(self) -> list[str]:
        """The registered names, in registration order (the first is the default)."""
        return list(self._entries)

    def unknown(self, name: str) -> Exception:
        """The error for a name this table has not: it names the choices (and where to add one)."""
        known = ", ".join(self._entries) or "(none)"
        hint = f" ({self.hint})" if self.hint else ""
        return self.error(f"unknown {self.kind} {name!r}; {self.kind}s: {known}{hint}")

    def copy(self) -> Registry[T]:
        """A table with the same entries, to add to without changing this one (tests register throwaway entries)."""
        return Registry(self.kind, hint=self.hint, error=self.error, entries=self._entries)

    def __getitem__(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            raise self.unknown(name) from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str, default: T | None = None) -> T | None:  # type: ignore[override]
        return self._entries.get(name, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.choices()})"

"""Resetting a class env to a state it was reset to before, at the cost of what the calls since wrote.

A sandbox worker resets to the same named state for every job (each hypothesis example, each
generated call of completeness), and a reset rebuilds the instance: decode the init config, run
the constructor, encode the whole state. On a state of megabytes that is most of a job. When
every call since the reset was tracked (catalog/state/_tracking.py `tracked_encode`: the tool is
proven to write only under some paths, and the values are plain JSON with no shared structure),
those paths are the only places that differ from the reset's state, so putting the reset's
values back there gives the state a fresh reset would. `ClassTemplate` keeps the reset's
encoding; `put_back` writes it into the live instance, path by path.

A rewind is refused (the runtime rebuilds) unless it is provably the same as a rebuild: two
builds from the template gave the same encoding (a constructor that draws nothing random),
every restored container keeps its keys in the reset's order, and the encoding after the rewind
equals the reset's. `ClassRuntime.reset` decides; `bench/bigstate.py` measures both.
"""

from __future__ import annotations

import json
import marshal
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ClassTemplate", "put_back", "same_encoding", "same_order"]


@dataclass(eq=False)
class ClassTemplate:
    """An init config reset to again and again, with the encoding its first build gave.

    `public` / `hidden`: that encoding (the template's own copies: never handed out or changed);
    `texts`: each attribute's JSON text in it. `stable`: None after one build, True once a second
    build gave the same encoding, False for good once one did not (then every reset rebuilds).
    """

    config: dict[str, Any]
    public: dict[str, Any] | None = None
    hidden: dict[str, Any] | None = None
    texts: dict[str, str] = field(default_factory=dict)
    stable: bool | None = None

    def built(self, public: dict[str, Any], hidden: dict[str, Any]) -> None:
        """Record one build's encoding: the first is kept; a later one decides `stable`."""
        if self.public is None or self.hidden is None:
            self.public, self.hidden = _copy(public), _copy(hidden)
            self.texts = {name: _text(value) for name, value in {**self.public, **self.hidden}.items()}
            return
        if self.stable is not False:
            self.stable = same_encoding(public, hidden, self)

    def text(self, name: str) -> str | None:
        return self.texts.get(name)


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # as catalog/state/_tracking.py Encoded.text writes it


def _copy(value: Any) -> Any:
    """A copy of an encoding (JSON values): marshal copies them ~3x faster than a JSON round trip."""
    return marshal.loads(marshal.dumps(value))


def same_encoding(public: dict[str, Any], hidden: dict[str, Any], template: ClassTemplate) -> bool:
    """The encoding is the template's, key order and number types included (compared as JSON text)."""
    if list(public) != list(template.public or {}) or list(hidden) != list(template.hidden or {}):
        return False
    return all(_text(value) == template.texts.get(name) for name, value in {**public, **hidden}.items())


def put_back(attributes: dict[str, Any], template: ClassTemplate, path: tuple[Any, ...],
             touched: list[tuple[dict[str, Any], dict[str, Any]]]) -> bool:
    """Write the template's value at `path` into the instance's `attributes` (its `vars`); False if it cannot be exact.

    Walks down while both sides are plain dicts holding the key, then copies the template's
    value there (an assignment to a key a dict holds keeps its place), or drops a key the
    template does not have. A key the template has and the instance lost cannot go back in its
    place: False. The (live, template) dicts written are added to `touched`: once every path is
    back, `same_order` must hold for each.
    """
    assert template.public is not None and template.hidden is not None
    name = path[0] if path else None
    if not isinstance(name, str):
        return False
    pristine = template.public if name in template.public else template.hidden
    if name not in pristine or name not in attributes:
        return False
    live_parent: dict[str, Any] = attributes
    old_parent: dict[str, Any] = pristine
    key: Any = name
    for step in path[1:]:
        live, old = live_parent[key], old_parent[key]
        if type(live) is not dict or type(old) is not dict or type(step) is not str:
            break
        if step not in old:
            if step in live:  # added by a call: dropping it leaves the others in their order
                del live[step]
            touched.append((live, old))
            return True
        if step not in live:
            return False  # removed by a call: it cannot be put back in its place
        live_parent, old_parent, key = live, old, step
    live_parent[key] = _copy(old_parent[key])
    if live_parent is not attributes:
        touched.append((live_parent, old_parent))
    return True


def same_order(touched: list[tuple[dict[str, Any], dict[str, Any]]]) -> bool:
    """Every dict written holds the template's keys in the template's order."""
    return all(list(live) == list(old) for live, old in touched)

"""Inside a sandbox worker: the stand-ins of the modules env code may import but not use.

A real file often imports `subprocess` or `socket` at its top for a helper the tools never call.
Refusing the import refuses the whole env; so the worker puts, in its module cache, a stand-in for
each module of `sandbox.allowlist.STUBBED_IMPORTS`, before the audit hook is armed. Importing one
binds the stand-in; any use of one of its names (a call, an attribute, iterating, subclassing)
raises `SandboxRefusal`, one line naming the module, the name and what it would do. The stand-in
is our code and holds nothing of the real module, so it gives env code nothing to reach further;
seccomp and the audit hook stop the same operations underneath, whatever env code finds instead.

`SandboxRefusal` is a `PermissionError`, as the kernel's refusal of the same operation would be,
so code that guards a process or a socket with `except OSError` takes its error path. Names of
exception classes (`CalledProcessError`, `socket.timeout`) are real, never-raised exception
classes, so an `except subprocess.CalledProcessError:` clause still evaluates.
"""

from __future__ import annotations

import re
import types
from typing import Any, NoReturn

from catalog.errors import EnvforgeError

__all__ = ["SandboxRefusal", "stub_module"]

_EXCEPTION_NAME = re.compile(r"[A-Z]\w*(Error|Exception|Expired|Exit)|error|herror|gaierror|timeout")


class SandboxRefusal(EnvforgeError, PermissionError):
    """Env code used a module the sandbox lets it import but not use."""


class _Refused:
    """One name of a stubbed module: every use of it raises SandboxRefusal."""

    __slots__ = ("_message",)

    def __init__(self, message: str) -> None:
        object.__setattr__(self, "_message", message)

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise SandboxRefusal(object.__getattribute__(self, "_message"))

    __call__ = __iter__ = __enter__ = __getitem__ = __mro_entries__ = _refuse

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):  # introspection (inspect, typing) sees a plain object
            raise AttributeError(name)
        self._refuse()

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        self._refuse()

    def __repr__(self) -> str:
        return f"<refused in the sandbox: {object.__getattribute__(self, '_message').split(' ', 1)[0]}>"


def stub_module(name: str, does: str) -> types.ModuleType:
    """The stand-in of module `name`, whose use would `does` (e.g. "start processes")."""
    module = types.ModuleType(name, f"envforge sandbox stand-in for {name}: it may be imported, not used.")
    names: dict[str, Any] = {}

    def __getattr__(attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        if attribute not in names:
            if _EXCEPTION_NAME.fullmatch(attribute):
                names[attribute] = type(attribute, (Exception,), {"__module__": name})
            else:
                names[attribute] = _Refused(f"{name}.{attribute} is refused in the sandbox: env code may import "
                                            f"{name}, not use it to {does}")
        return names[attribute]

    module.__dict__["__getattr__"] = __getattr__  # PEP 562: the module's own attribute hook
    return module

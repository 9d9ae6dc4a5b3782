"""Vector index, near-duplicate detection and k-means over sentence embeddings (faiss).

Vectors are L2-normalized on the way in, so inner product is cosine similarity. An index maps
string ids to rows of an exact `faiss.IndexFlatIP`: results are exact and, for the same
inputs, the same in every run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import faiss
import numpy as np

from catalog.search.embeddings import Embedder, default_embedder, normalize_rows

__all__ = ["DEDUP_THRESHOLD", "Decision", "DedupFilter", "Match", "VectorIndex", "kmeans", "near_duplicates"]

DEDUP_THRESHOLD = 0.85
"""Topics at or above this cosine to an accepted one are duplicates (Agent World Model's value)."""


def _as_matrix(vectors: np.ndarray | Sequence[Sequence[float]], dim: int | None = None) -> np.ndarray:
    matrix = normalize_rows(np.asarray(vectors, dtype=np.float32))
    if dim is not None and matrix.shape[1] != dim:
        raise ValueError(f"expected {dim}-d vectors, got {matrix.shape[1]}-d")
    return matrix


class VectorIndex:
    """String ids -> unit vectors, exact cosine search.

    >>> index = VectorIndex(2)
    >>> index.add(["north", "east"], [[0.0, 1.0], [1.0, 0.0]])
    >>> ids, scores = index.search([[0.6, 0.8]], k=2)
    >>> ids, [round(float(s), 2) for s in scores[0]]
    ([['north', 'east']], [0.8, 0.6])
    >>> index.nearest([1.0, 0.1])[0], len(index)
    ('east', 2)
    """

    def __init__(self, dim: int) -> None:
        if dim < 1:
            raise ValueError("dim must be positive")
        self._index = faiss.IndexFlatIP(dim)
        self._ids: list[str] = []
        self._positions: dict[str, int] = {}

    @property
    def dim(self) -> int:
        return int(self._index.d)

    @property
    def ids(self) -> list[str]:
        return list(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, item: object) -> bool:
        return item in self._positions

    def add(self, ids: Iterable[str], vectors: np.ndarray | Sequence[Sequence[float]]) -> None:
        """Add one row per id (normalized here). Raises ValueError on a repeated id or a shape mismatch."""
        self._append([str(i) for i in ids], _as_matrix(vectors, self.dim))

    def _append(self, ids: list[str], matrix: np.ndarray) -> None:
        """Add rows that are already unit (or zero) float32 vectors of the right width."""
        if len(ids) != matrix.shape[0]:
            raise ValueError(f"{len(ids)} ids for {matrix.shape[0]} vectors")
        clash = sorted({i for i in ids if i in self._positions} | {i for i, n in Counter(ids).items() if n > 1})
        if clash:
            raise ValueError(f"ids already in the index: {clash[:5]}")
        if not ids:
            return
        self._index.add(matrix)
        for i in ids:
            self._positions[i] = len(self._ids)
            self._ids.append(i)

    def search(self, vectors: np.ndarray | Sequence[Sequence[float]], k: int = 5) -> tuple[list[list[str]], np.ndarray]:
        """The k nearest ids per query row (best first) and their cosines, shape (n, min(k, len))."""
        matrix = _as_matrix(vectors, self.dim)
        k = min(int(k), len(self._ids))
        if k <= 0:
            return [[] for _ in range(matrix.shape[0])], np.zeros((matrix.shape[0], 0), dtype=np.float32)
        scores, labels = self._index.search(matrix, k)
        return [[self._ids[j] for j in row] for row in labels], scores

    def range_search(self, vectors: np.ndarray | Sequence[Sequence[float]],
                     threshold: float) -> list[list[tuple[str, float]]]:
        """Per query row, every (id, cosine) with cosine >= threshold, best first (ties by insertion order)."""
        matrix = _as_matrix(vectors, self.dim)
        if not self._ids or not matrix.shape[0]:
            return [[] for _ in range(matrix.shape[0])]
        # faiss keeps inner products strictly above the radius: widen it a hair, then filter exactly.
        lims, scores, labels = self._index.range_search(matrix, float(threshold) - 1e-6)
        results = []
        for row in range(matrix.shape[0]):
            found = [(int(labels[n]), float(scores[n])) for n in range(lims[row], lims[row + 1])
                     if scores[n] >= threshold]
            results.append([(self._ids[j], score) for j, score in sorted(found, key=lambda f: (-f[1], f[0]))])
        return results

    def nearest(self, vector: np.ndarray | Sequence[float]) -> tuple[str | None, float]:
        """The nearest id and its cosine; (None, -1.0) for an empty index."""
        ids, scores = self.search(np.asarray(vector, dtype=np.float32).reshape(1, -1), 1)
        return (ids[0][0], float(scores[0, 0])) if ids[0] else (None, -1.0)

    def max_similarity(self, vector: np.ndarray | Sequence[float]) -> float:
        """The highest cosine between `vector` and any indexed vector (-1.0 when empty)."""
        return self.nearest(vector)[1]

    def vector(self, item: str) -> np.ndarray:
        """The stored (normalized) vector of id `item`; KeyError if absent."""
        return np.asarray(self._index.reconstruct(self._positions[item]))  # faiss types it a Tensor when torch is installed

    def vectors(self) -> np.ndarray:
        """All stored vectors in insertion order, shape (len, dim)."""
        if not self._ids:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._index.reconstruct_n(0, len(self._ids))

    def copy(self) -> VectorIndex:
        clone = VectorIndex(self.dim)
        clone._append(self.ids, self.vectors())
        return clone

    def to_bytes(self) -> bytes:
        """The faiss index serialized (ids are kept by the caller)."""
        return faiss.serialize_index(self._index).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes, ids: Sequence[str]) -> VectorIndex:
        """Rebuild from `to_bytes()` output and its ids; ValueError if they do not fit together."""
        try:
            raw = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))
        except Exception as exc:  # faiss raises RuntimeError on garbage
            raise ValueError(f"not a faiss index: {exc}") from exc
        if not isinstance(raw, faiss.IndexFlatIP) or raw.ntotal != len(ids):
            raise ValueError(f"index holds {raw.ntotal} vectors of the wrong kind or count for {len(ids)} ids")
        index = cls(raw.d)
        index._append([str(i) for i in ids], raw.reconstruct_n(0, raw.ntotal) if raw.ntotal
                      else np.zeros((0, raw.d), dtype=np.float32))
        return index


class Match(NamedTuple):
    """An item (by position) whose nearest indexed id is at least the threshold away in cosine."""

    position: int
    nearest_id: str
    similarity: float


def _embed_items(items: Sequence[str] | np.ndarray, embedder: Embedder | None) -> np.ndarray:
    if isinstance(items, np.ndarray):
        return _as_matrix(items)
    items = list(items)
    if items and not all(isinstance(i, str) for i in items):
        return _as_matrix(np.asarray(items, dtype=np.float32))
    return (embedder or default_embedder()).embed(items)


def near_duplicates(items: Sequence[str] | np.ndarray, against: VectorIndex, threshold: float = DEDUP_THRESHOLD,
                    *, embedder: Embedder | None = None) -> list[Match]:
    """The items (texts, embedded with `embedder` or the default, or vectors) with cosine >= threshold to `against`."""
    matrix = _embed_items(items, embedder)
    if not len(against) or not matrix.shape[0]:
        return []
    ids, scores = against.search(matrix, 1)
    return [Match(p, ids[p][0], float(scores[p, 0])) for p in range(matrix.shape[0]) if scores[p, 0] >= threshold]


class Decision(NamedTuple):
    """`DedupFilter.accept`'s answer; unpacks as `(accepted, nearest_id, similarity)`."""

    accepted: bool
    nearest_id: str | None
    similarity: float


class DedupFilter:
    """Keeps the accepted topics (catalog + batch) and rejects near-duplicates of them.

    A topic whose cosine to anything already accepted is >= `threshold` is rejected; an accepted
    one is added, so later topics are compared with it too. Offering an id that is already
    accepted compares it with everything else and does not add it twice (a resumed run may
    offer the same topic again). `catalog.search.index.catalog_dedup_filter` builds one seeded with a
    catalog's topics.

    >>> from catalog.search.embeddings import HashingEmbedder
    >>> dedup = DedupFilter(HashingEmbedder(), threshold=0.85)
    >>> dedup.accept("a", "members borrow and return library books").accepted
    True
    >>> accepted, nearest, similarity = dedup.accept("b", "Members borrow and return library books.")
    >>> accepted, nearest, round(similarity, 3)
    (False, 'a', 1.0)
    >>> dedup.accept("c", "patients book appointments with doctors").accepted, dedup.ids
    (True, ['a', 'c'])
    """

    def __init__(self, embedder: Embedder | None = None, threshold: float = DEDUP_THRESHOLD, *,
                 index: VectorIndex | None = None) -> None:
        self.embedder = embedder or default_embedder()
        self.threshold = float(threshold)
        if index is not None and index.dim != self.embedder.dim:
            raise ValueError(f"index is {index.dim}-d but the embedder {self.embedder.name} gives {self.embedder.dim}-d")
        self.index = index if index is not None else VectorIndex(self.embedder.dim)
        self.accepted = 0
        self.rejected = 0

    @property
    def ids(self) -> list[str]:
        return self.index.ids

    def add(self, ids: Sequence[str], items: Sequence[str] | np.ndarray) -> None:
        """Accept without checking (e.g. what is already registered)."""
        self.index.add(ids, _embed_items(items, self.embedder))

    def _vector(self, item: str | np.ndarray) -> np.ndarray:
        vector = self.embedder.embed([item])[0] if isinstance(item, str) else _as_matrix(item, self.index.dim)[0]
        return vector

    def check(self, item: str | np.ndarray, *, exclude: str | None = None) -> tuple[str | None, float]:
        """The nearest accepted id (other than `exclude`) and its cosine, without adding anything."""
        vector = self._vector(item)
        k = 2 if exclude is not None and exclude in self.index else 1
        ids, scores = self.index.search(vector[None, :], k)
        for found, score in zip(ids[0], scores[0], strict=True):
            if found != exclude:
                return found, float(score)
        return None, -1.0

    def accept(self, item_id: str, item: str | np.ndarray) -> Decision:
        """Accept `item` (a text, or its vector) under `item_id` unless it is a near-duplicate."""
        vector = self._vector(item)
        nearest, similarity = self.check(vector, exclude=item_id)
        if nearest is not None and similarity >= self.threshold:
            self.rejected += 1
            return Decision(False, nearest, similarity)
        if item_id not in self.index:
            self.index.add([item_id], vector[None, :])
        self.accepted += 1
        return Decision(True, nearest, similarity)

    def accept_many(self, items: Sequence[tuple[str, str]]) -> list[Decision]:
        """`accept` each `(id, text)` in order, embedding all texts in one call."""
        if not items:
            return []
        vectors = self.embedder.embed([text for _, text in items])
        return [self.accept(item_id, vectors[i]) for i, (item_id, _) in enumerate(items)]


def kmeans(vectors: np.ndarray | Sequence[Sequence[float]], k: int, seed: int = 0, *, niter: int = 25,
           spherical: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Cluster rows into k groups with `faiss.Kmeans` (cosine when `spherical`); same seed, same answer.

    Returns `(assignments, centroids)`: int64 cluster per row, float32 centroids of shape (k, dim).

    >>> points = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]]
    >>> assignments, centroids = kmeans(points, 2, seed=3)
    >>> bool(assignments[0] == assignments[1] != assignments[2] == assignments[3]), centroids.shape
    (True, (2, 2))
    """
    matrix = np.asarray(vectors, dtype=np.float32)
    if spherical:
        matrix = normalize_rows(matrix)
    matrix = np.ascontiguousarray(matrix)
    n = matrix.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of vectors ({n}), got {k}")
    model = faiss.Kmeans(matrix.shape[1], int(k), niter=niter, seed=int(seed), spherical=spherical, nredo=1,
                         min_points_per_centroid=1, verbose=False)
    model.train(matrix)
    _, labels = model.index.search(matrix, 1)
    return labels[:, 0].astype(np.int64), np.asarray(model.centroids, dtype=np.float32)

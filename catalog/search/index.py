"""Search over the catalog: a faiss index of every env's "name. topic. description", fused with BM25.

An env's score for a query is `(1 - w) * cosine + w * bm25 / best bm25` (w = `LEXICAL_WEIGHT`):
the embedding finds envs by meaning ("charge my electric car"), BM25 over names, topics,
descriptions and tool names (`catalog.search.lexical`) finds the env a word names ("hotel"),
which a 64-d static embedding alone ranks below unrelated envs. With no query word in any env
the score is the cosine's share alone.

The index is cached beside the catalog's `index.sqlite`:

    <root>/vectors.faiss   the faiss IndexFlatIP (one unit vector per env)
    <root>/vectors.json    {"version", "embedder", "dim", "ids", "stamps", "index_sha256"}

An env's stamp is its manifest `content_hash` (code, states, tasks, plan) plus a hash of the
embedded text (name, topic and description live in env.json, which the content hash leaves
out), so an env is re-embedded when either changes; unchanged envs reuse their cached vector.
The cache is only a cache: a missing, stale, foreign (other embedder) or corrupt one is rebuilt
with a logged warning, never an error, and a catalog folder that does not exist (reference envs
only) or cannot be written is served from memory.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from catalog.models import EnvManifest
from catalog.runs.files import atomic_write
from catalog.search.embeddings import Embedder, default_embedder
from catalog.search.lexical import LexicalIndex, lexical_text
from catalog.search.vectors import DEDUP_THRESHOLD, DedupFilter, VectorIndex
from catalog.store import Catalog, CatalogError

__all__ = ["CACHE_INDEX", "CACHE_META", "LEXICAL_WEIGHT", "CatalogSearch", "catalog_dedup_filter", "env_text",
           "search_catalog"]

CACHE_INDEX = "vectors.faiss"
CACHE_META = "vectors.json"
CACHE_VERSION = 1
LEXICAL_WEIGHT = 0.4
"""BM25's share of a search score (tuned on bench/search_queries.json: see bench/search.py)."""

log = logging.getLogger(__name__)


def env_text(manifest: EnvManifest) -> str:
    """What is embedded for an env: "name. topic. description" (topic path separators as spaces).

    >>> env_text(EnvManifest(id="x", name="Lending library", kind="sql", entry="E", topic="education/libraries",
    ...                      description="Members borrow books."))
    'Lending library. education libraries. Members borrow books.'
    """
    topic = manifest.topic.replace("/", " ").replace("_", " ").replace("-", " ")
    return ". ".join(part.strip().rstrip(".") for part in (manifest.name, topic, manifest.description)
                     if part.strip()) + "."


@dataclass(frozen=True)
class _Entry:
    id: str
    name: str
    topic: str
    description: str
    reference: bool
    stamp: str
    text: str
    lexical: str


@dataclass
class RefreshStats:
    """What the last refresh did: how many envs were embedded vs reused, and the cache's fate."""

    embedded: int = 0
    reused: int = 0
    cache: str = "none"  # none | hit | updated | rebuilt | corrupt | unwritable
    problems: list[str] = field(default_factory=list)


class CatalogSearch:
    """Nearest catalog envs to a query, and near-duplicate pairs among them.

    The index is built (or loaded from the cache) on first use and kept for the life of the
    object; call `refresh()` to pick up envs written since.
    """

    def __init__(self, catalog: Catalog, embedder: Embedder | None = None, *, cache: bool = True) -> None:
        self.catalog = catalog
        self.embedder = embedder or default_embedder()
        self.cache = cache
        self.stats = RefreshStats()
        self._index: VectorIndex | None = None
        self._lexical: LexicalIndex | None = None
        self._entries: dict[str, _Entry] = {}

    # --- building ---------------------------------------------------------------------------
    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            self.refresh()
        assert self._index is not None
        return self._index

    def _collect(self, stats: RefreshStats) -> list[_Entry]:
        summaries, problems = self.catalog.list()
        stats.problems.extend(f"{p.path}: {p.reason}" for p in problems)
        entries = []
        for summary in summaries:
            try:
                manifest = self.catalog.get(summary.id).manifest
            except CatalogError as exc:  # broken between list() and get(): skip it, as list() does
                stats.problems.append(str(exc))
                continue
            text = env_text(manifest)
            text_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
            entries.append(_Entry(manifest.id, manifest.name, manifest.topic, manifest.description, summary.reference,
                                  f"{manifest.content_hash}|{text_hash}", text, lexical_text(manifest)))
        return entries

    def _cache_dir(self) -> Path | None:
        root = self.catalog.root
        return root if self.cache and root.is_dir() else None

    def _load_cache(self, folder: Path, stats: RefreshStats) -> tuple[VectorIndex, list[str]] | None:
        meta_path, index_path = folder / CACHE_META, folder / CACHE_INDEX
        if not meta_path.exists() and not index_path.exists():
            return None
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if meta.get("version") != CACHE_VERSION or meta.get("embedder") != self.embedder.name:
                stats.cache = "rebuilt"
                return None
            data = index_path.read_bytes()
            if hashlib.sha256(data).hexdigest() != meta["index_sha256"]:
                raise ValueError("vectors.faiss does not match vectors.json")
            ids, stamps = list(meta["ids"]), list(meta["stamps"])
            if len(ids) != len(stamps):
                raise ValueError("ids and stamps differ in length")
            index = VectorIndex.from_bytes(data, ids)
            if index.dim != self.embedder.dim:
                raise ValueError(f"cached vectors are {index.dim}-d, the embedder gives {self.embedder.dim}-d")
            return index, stamps
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("catalog vector cache in %s is unusable (%s); rebuilding it", folder, exc)
            stats.cache = "corrupt"
            return None

    def _save_cache(self, folder: Path, index: VectorIndex, stamps: list[str], stats: RefreshStats) -> None:
        data = index.to_bytes()
        meta = {"version": CACHE_VERSION, "embedder": self.embedder.name, "dim": index.dim, "ids": index.ids,
                "stamps": stamps, "index_sha256": hashlib.sha256(data).hexdigest()}
        try:
            # Index first, then the metadata that vouches for it (its hash); each by temp + rename.
            atomic_write(folder / CACHE_INDEX, data)
            atomic_write(folder / CACHE_META, (json.dumps(meta, indent=1) + "\n").encode("utf-8"))
        except OSError as exc:
            log.warning("cannot write the catalog vector cache in %s: %s", folder, exc)
            stats.cache = "unwritable"

    def refresh(self) -> RefreshStats:
        """Re-read the catalog and bring the index (and its cache) in line; returns what it did."""
        stats = RefreshStats()
        entries = self._collect(stats)
        folder = self._cache_dir()
        cached = self._load_cache(folder, stats) if folder is not None else None
        stamps = [e.stamp for e in entries]
        if cached is not None and cached[0].ids == [e.id for e in entries] and cached[1] == stamps:
            index = cached[0]
            stats.reused, stats.cache = len(entries), "hit"
        else:
            known: dict[str, tuple[str, np.ndarray]] = {}
            if cached is not None:
                old_index, old_stamps = cached
                vectors = old_index.vectors()
                known = {i: (s, vectors[n]) for n, (i, s) in enumerate(zip(old_index.ids, old_stamps, strict=True))}
            todo = [e for e in entries if e.id not in known or known[e.id][0] != e.stamp]
            fresh = dict(zip([e.id for e in todo], self.embedder.embed([e.text for e in todo]), strict=True))
            index = VectorIndex(self.embedder.dim)
            if entries:
                index.add([e.id for e in entries], np.stack([fresh[e.id] if e.id in fresh else known[e.id][1]
                                                             for e in entries]))
            stats.embedded, stats.reused = len(todo), len(entries) - len(todo)
            if folder is not None:
                if stats.cache == "none":
                    stats.cache = "updated" if cached is not None else "rebuilt"
                self._save_cache(folder, index, stamps, stats)
        self._lexical = LexicalIndex([e.id for e in entries], [e.lexical for e in entries])
        self._index, self._entries, self.stats = index, {e.id: e for e in entries}, stats
        return stats

    # --- querying ---------------------------------------------------------------------------
    def search(self, query: str, k: int = 5, *, lexical_weight: float = LEXICAL_WEIGHT) -> list[dict[str, Any]]:
        """The k envs that best match `query`, best first: {id, name, score, semantic, lexical, topic, ...}.

        Each hit also has its description and whether it is a reference env. `semantic` is the
        cosine in [-1, 1], `lexical` the BM25 score over the best one's in [0, 1], `score` their
        blend by `lexical_weight` (0: the embedding alone, 1: BM25 alone), all rounded to 4 places;
        ties go by id. A blank query finds nothing.
        """
        index = self.index
        if not query.strip() or k <= 0 or not len(index):
            return []
        if not 0.0 <= lexical_weight <= 1.0:
            raise ValueError(f"lexical_weight must be between 0 and 1, got {lexical_weight}")
        ids = index.ids
        found, cosines = index.search(self.embedder.embed([query]), len(ids))
        semantic = dict(zip(found[0], (float(c) for c in cosines[0]), strict=True))
        assert self._lexical is not None and self._lexical.ids == ids
        bm25 = self._lexical.scores(query)
        best = float(bm25.max())
        lexical = dict(zip(ids, (float(b) / best if best > 0 else 0.0 for b in bm25), strict=True))
        blended = {env_id: (1.0 - lexical_weight) * semantic[env_id] + lexical_weight * lexical[env_id] for env_id in ids}
        results = []
        for env_id in sorted(ids, key=lambda i: (-blended[i], i))[:k]:
            entry = self._entries[env_id]
            results.append({"id": env_id, "name": entry.name, "score": round(blended[env_id], 4),
                            "semantic": round(semantic[env_id], 4), "lexical": round(lexical[env_id], 4),
                            "topic": entry.topic, "description": entry.description, "reference": entry.reference})
        return results

    def similar_pairs(self, threshold: float = DEDUP_THRESHOLD) -> list[tuple[str, str, float]]:
        """Every pair of envs with cosine >= threshold, as (id_a, id_b, score), most similar first."""
        index = self.index
        ids = index.ids
        position = {env_id: n for n, env_id in enumerate(ids)}
        pairs = [(ids[i], other, round(score, 4))
                 for i, neighbours in enumerate(index.range_search(index.vectors(), threshold))
                 for other, score in neighbours if position[other] > i]
        return sorted(pairs, key=lambda p: (-p[2], p[0], p[1]))


def search_catalog(catalog: Catalog, query: str, k: int = 5, *, embedder: Embedder | None = None) -> list[dict[str, Any]]:
    """`catalog search`: the k best envs for `query` (see `CatalogSearch.search` for the fields)."""
    return CatalogSearch(catalog, embedder).search(query, k)


def catalog_dedup_filter(catalog: Catalog, taken: Iterable[tuple[str, str]] = (), *,
                         embedder: Embedder | None = None, threshold: float = DEDUP_THRESHOLD) -> DedupFilter:
    """A DedupFilter holding every topic already taken: each catalog env's, then `taken`'s.

    Synthesis offers a proposed topic to the filter, so the filter holds topics too (an env's
    `topic`, its name when it has none), not the search text (name, topic and description): like
    is compared with like. `taken` are `(env_id, topic)` pairs accepted but perhaps not registered
    yet (a resumed run's slots); an id in `taken` replaces the catalog's entry of that id.

    >>> from catalog.search.embeddings import HashingEmbedder
    >>> dedup = catalog_dedup_filter(Catalog("/nonexistent"), [("hotel", "hotels and guests")],
    ...                              embedder=HashingEmbedder())
    >>> dedup.ids
    ['bank', 'clinic', 'library', 'store', 'hotel']
    >>> dedup.accept("inn", "Hotels and guests.").accepted
    False
    """
    taken = list(taken)
    ours = {env_id for env_id, _ in taken}
    summaries, _ = catalog.list()
    seeds = [(s.id, s.topic or s.name) for s in summaries if s.id not in ours] + taken
    dedup = DedupFilter(embedder, threshold)
    if seeds:
        dedup.add([env_id for env_id, _ in seeds], [text for _, text in seeds])
    return dedup



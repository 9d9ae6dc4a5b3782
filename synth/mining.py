"""Topic mining from the task corpus (synth/data/task_corpus.jsonl).

Procedural path: embed the corpus's task statements offline, cluster them with faiss k-means,
and map each cluster to the ontology domain nearest its centroid; domains are then proposed in
order of how much of the corpus asks for them (the demand), so a small run covers the most
requested domains first. The LLM path (synth/llm/generator.py) instead asks the model whether a
statement implies a stateful environment and what that environment is.
"""

from __future__ import annotations

import json
import random
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from catalog.search.embeddings import default_embedder
from catalog.search.vectors import kmeans
from synth.procedural.ontology import load_domains

__all__ = ["load_corpus", "domain_order", "cluster_report"]


@cache
def load_corpus() -> tuple[dict[str, Any], ...]:
    """The shipped task statements ({id, text, domain, sector, stateful})."""
    text = resources.files("synth").joinpath("data/task_corpus.jsonl").read_text(encoding="utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


def cluster_report(seed: int = 0, k: int | None = None) -> list[dict[str, Any]]:
    """Clusters of the stateful statements, each with its size, nearest domain and similarity."""
    statements = [s for s in load_corpus() if s.get("stateful", True)]
    domains = load_domains()
    embedder = default_embedder()
    vectors = embedder.embed([s["text"] for s in statements])
    k = k or min(len(domains), len(statements))
    assignments, centroids = kmeans(vectors, k, seed=seed)
    domain_vectors = embedder.embed([f"{d.title}. {d.description}" for d in domains])
    norms = np.linalg.norm(centroids, axis=1, keepdims=True)
    scores = (centroids / np.where(norms == 0, 1, norms)) @ domain_vectors.T
    clusters = []
    for c in range(k):
        members = [statements[i] for i in np.flatnonzero(assignments == c)]
        best = int(np.argmax(scores[c]))
        clusters.append({"cluster": c, "size": len(members), "domain": domains[best].id,
                         "similarity": round(float(scores[c, best]), 4),
                         "examples": [m["text"] for m in members[:2]]})
    return clusters


def domain_order(seed: int = 0) -> list[str]:
    """Every domain id, most demanded by the corpus first (ties and the rest in a seeded shuffle)."""
    demand: dict[str, int] = {}
    for cluster in cluster_report(seed):
        demand[cluster["domain"]] = demand.get(cluster["domain"], 0) + cluster["size"]
    ids = [d.id for d in load_domains()]
    random.Random(seed).shuffle(ids)
    return sorted(ids, key=lambda d: -demand.get(d, 0))

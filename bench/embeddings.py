"""Embedding throughput and faiss costs for topic dedup and catalog search.

    python bench/embeddings.py [--n 20000] [--repeat 3]

Prints the static model's first-call load time and its sentences/s by batch size, the hashing
fallback's sentences/s, then the cost of the faiss
steps that synthesis runs: dedup of n topics one by one, a k-means of n vectors, and a catalog
search over n envs' worth of vectors. Sentences are synthetic, environment-description-like
texts of 15-30 words, fixed by a seed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.search.embeddings import HashingEmbedder, StaticModelEmbedder  # noqa: E402
from catalog.search.vectors import DedupFilter, VectorIndex, kmeans  # noqa: E402

ROLES = ["customers", "members", "patients", "students", "drivers", "guests", "employees", "residents", "tenants"]
VERBS = ["book", "borrow", "renew", "cancel", "order", "transfer", "schedule", "register", "return", "approve", "ship"]
THINGS = ["rooms", "books", "appointments", "courses", "parcels", "accounts", "vehicles", "permits", "tickets", "shifts"]
PLACES = ["front desk", "back office", "service counter", "online portal", "dispatch centre", "help desk"]
RULES = ["daily limits", "capacity rules", "opening hours", "late fees", "quotas", "notice periods", "balances"]


def sentences(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        out.append(f"The {rng.choice(PLACES)} of a {rng.choice(['city', 'regional', 'small', 'national'])} "
                   f"{rng.choice(['agency', 'company', 'service', 'office'])}: {rng.choice(ROLES)} "
                   f"{', '.join(rng.sample(VERBS, 3))} {rng.choice(THINGS)} under {rng.choice(RULES)} and "
                   f"{rng.choice(RULES)}; {rng.choice(ROLES)} {rng.choice(VERBS)} {rng.choice(THINGS)}.")
    return out


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    texts = sentences(args.n)
    start = time.perf_counter()
    static = StaticModelEmbedder()
    static.embed(["warm up"])
    print(f"{static.name}: {static.dim}-d, first call (loads the model) {time.perf_counter() - start:.2f} s")
    for batch in (1, 16, 256, 4096):
        count = min(args.n, max(batch * 20, 200)) if batch < 256 else args.n
        subset = texts[:count]

        def run(subset: list[str] = subset, batch: int = batch) -> None:
            for i in range(0, len(subset), batch):
                static.embed(subset[i:i + batch])

        seconds = best_of(args.repeat, run)
        print(f"  static, batches of {batch:>4}: {count / seconds:>10,.0f} sentences/s ({count} sentences)")
    hashing = HashingEmbedder()
    count = min(args.n, 5000)
    seconds = best_of(args.repeat, lambda: hashing.embed(texts[:count]))
    print(f"{hashing.name}: {count / seconds:,.0f} sentences/s ({count} sentences)")

    vectors = static.embed(texts)
    dedup = DedupFilter(static)
    start = time.perf_counter()
    decisions = [dedup.accept(f"t{i}", vectors[i]) for i in range(len(texts))]
    seconds = time.perf_counter() - start
    kept = sum(d.accepted for d in decisions)
    print(f"dedup one by one at 0.85 over {len(texts)} precomputed vectors: {seconds:.2f} s "
          f"({len(texts) / seconds:,.0f}/s), {kept} kept (the synthetic texts share one template)")
    k = max(2, min(50, len(texts) // 40))
    seconds = best_of(args.repeat, lambda: kmeans(vectors, k, seed=0))
    print(f"faiss k-means, k={k}, {len(texts)} vectors: {seconds:.2f} s")
    index = VectorIndex(static.dim)
    index.add([f"e{i}" for i in range(len(texts))], vectors)
    seconds = best_of(args.repeat, lambda: index.search(static.embed(["members borrow books"]), 10))
    print(f"one query (embed + search top 10 of {len(texts)}): {seconds * 1000:.1f} ms")


if __name__ == "__main__":
    main()

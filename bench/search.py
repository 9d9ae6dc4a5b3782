"""Catalog search benchmark: recall@k of a labelled query set, embedding alone vs BM25 alone vs both.

    python cli.py synthesize --n 200 --catalog DIR      # once: a 200-env procedural catalog
    python bench/search.py --catalog DIR [--k 5] [--queries bench/search_queries.json] [--json]

Each query of the set names the env families a user would count as right (an env's family is its
id without the synthesized 6-hex suffix; a reference env is its own family). Per query,
recall@k = relevant envs in the top k / min(k, relevant envs in the catalog); a query none of
whose families is in the catalog is skipped and counted. The three rankings are
`CatalogSearch.search` at lexical weight 0 (the embedding alone, what search was before), 1
(BM25 alone) and the shipped `LEXICAL_WEIGHT`, measured side by side in one run on one index; a
sweep over `--weights` shows where the shipped weight sits. Also prints hit@1 (a relevant env
ranked first), MRR, the queries the shipped ranking misses, and query latency. The catalog is
only read (the vector cache is kept in memory).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from catalog.search.index import LEXICAL_WEIGHT, CatalogSearch  # noqa: E402
from catalog.store import Catalog  # noqa: E402

QUERIES = Path(__file__).with_name("search_queries.json")
_SUFFIX = re.compile(r"-[0-9a-f]{6}$")


def family(env_id: str) -> str:
    """An env's family: its id without the synthesized 6-hex suffix ("hotel-09f9f8" -> "hotel")."""
    return _SUFFIX.sub("", env_id)


def measure(search: CatalogSearch, queries: list[dict[str, Any]], k: int, weight: float,
            members: dict[str, list[str]]) -> dict[str, Any]:
    recalls, hits, ranks, misses, seconds = [], [], [], [], []
    for item in queries:
        relevant = {env_id for fam in item["relevant"] for env_id in members.get(fam, [])}
        started = time.perf_counter()
        ranked = [hit["id"] for hit in search.search(item["query"], len(search.index), lexical_weight=weight)]
        seconds.append(time.perf_counter() - started)
        top = ranked[:k]
        recall = len(relevant & set(top)) / min(k, len(relevant))
        first = next(n for n, env_id in enumerate(ranked, 1) if env_id in relevant)
        recalls.append(recall)
        hits.append(top[0] in relevant)
        ranks.append(1.0 / first)
        if recall < 1.0:
            misses.append({"query": item["query"], "recall": round(recall, 3), "first_relevant_rank": first,
                           "top": top})
    return {"lexical_weight": weight, f"recall_at_{k}": round(statistics.fmean(recalls), 4),
            "hit_at_1": round(statistics.fmean(hits), 4), "mrr": round(statistics.fmean(ranks), 4),
            "query_ms_p50": round(1000 * statistics.median(seconds), 2), "misses": misses}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", required=True, help="the catalog to search (e.g. one of synthesize --n 200)")
    parser.add_argument("--queries", default=str(QUERIES), help="the labelled query set (JSON)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--weights", default="0,0.2,0.3,0.4,0.5,0.6,0.7,0.8,1",
                        help="lexical weights of the sweep (comma-separated)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    catalog = Catalog(args.catalog)
    started = time.perf_counter()
    search = CatalogSearch(catalog, cache=False)
    envs = search.index.ids
    build_s = time.perf_counter() - started
    members: dict[str, list[str]] = {}
    for env_id in envs:
        members.setdefault(family(env_id), []).append(env_id)
    labelled = json.loads(Path(args.queries).read_text(encoding="utf-8"))["queries"]
    queries = [q for q in labelled if any(fam in members for fam in q["relevant"])]
    rankings = {"semantic": 0.0, "lexical": 1.0, "hybrid": LEXICAL_WEIGHT}
    results = {name: measure(search, queries, args.k, weight, members) for name, weight in rankings.items()}
    sweep = {str(w): measure(search, queries, args.k, w, members)[f"recall_at_{args.k}"]
             for w in (float(x) for x in args.weights.split(","))}
    key = f"recall_at_{args.k}"
    report = {
        "catalog": str(args.catalog), "envs": len(envs), "embedder": search.embedder.name,
        "queries": len(queries), "skipped_queries": len(labelled) - len(queries), "k": args.k,
        "index_build_s": round(build_s, 2),
        **{name: {m: v for m, v in r.items() if m != "misses"} for name, r in results.items()},
        "hybrid_over_semantic_recall": round(results["hybrid"][key] / max(results["semantic"][key], 1e-9), 3),
        f"{key}_by_lexical_weight": sweep,
        "hybrid_misses": results["hybrid"]["misses"],
        "semantic_misses": results["semantic"]["misses"],
    }
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{len(envs)} envs, {len(queries)} queries ({report['skipped_queries']} skipped), embedder {report['embedder']}")
    for name in rankings:
        r = results[name]
        print(f"{name:>8} (w={r['lexical_weight']:.2f}): {key} {r[key]:.3f}  hit@1 {r['hit_at_1']:.3f}  "
              f"MRR {r['mrr']:.3f}  {r['query_ms_p50']:.1f} ms/query")
    print(f"hybrid / semantic {key}: {report['hybrid_over_semantic_recall']}x;  sweep: {sweep}")
    for miss in results["hybrid"]["misses"]:
        print(f"  hybrid misses {miss['query']!r}: recall {miss['recall']}, first relevant at {miss['first_relevant_rank']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Why a run registered fewer envs than asked: what limited it, and how many distinct topics remain.

A run proposes slots until N envs are registered or it has made `max_proposals` proposals
(`synthesize --max-proposals`, default max(10 N, N + 100)). When it stops short, the slots say
why: topics too close to envs the catalog already had (an exhausted topic space: the same seed
run again, or the same topics at another size), topics too close to this run's own, ids taken,
or candidates the gate rejected. `topics_left` counts how many of the next proposals would pass
topic dedup (the generator asked, the dedup filter copied, nothing registered): 0 means a higher
cap cannot help in this catalog.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from catalog.jsonmodel import JsonModel
from catalog.search.vectors import DedupFilter

__all__ = ["Shortfall", "default_max_proposals", "probe_topics", "shortfall"]

PROBE = 1000  # proposals a short run looks ahead to count the distinct topics left (design only: ~10 ms each)
_NEAREST = re.compile(r"topic too close to (\S+) ")


def default_max_proposals(n: int) -> int:
    """The proposal cap of a run of `n` envs when `--max-proposals` is not given."""
    return max(10 * n, n + 100)


class Shortfall(JsonModel):
    """The report's `shortfall`: why `registered < requested`, in counts and one line."""

    limit: str  # "proposal_cap": the only way a run that is not interrupted ends short
    max_proposals: int
    proposed: int
    duplicates_of_catalog: int  # topics too close to an env the catalog had before this run
    duplicates_of_run: int  # topics too close to one this run accepted earlier
    existing_ids: int
    rejected: int
    failed: int
    top_failing_checks: dict[str, int]
    probed: int  # proposals after the last one the look-ahead tried (0: not probed)
    topics_left: int | None  # how many of those would pass dedup (None: not probed)
    reason: str


def probe_topics(generator: Any, dedup: DedupFilter, first_slot: int, seed: int, count: int) -> int:
    """How many of slots `first_slot ..` (`count` of them) would pass dedup, against a copy of `dedup`."""
    scratch = DedupFilter(dedup.embedder, dedup.threshold, index=dedup.index.copy())
    found = 0
    for slot in range(first_slot, first_slot + count):
        topic, _ = generator.topic(slot, seed)
        if topic["env_id"] in scratch.index:
            continue
        found += scratch.accept(topic["env_id"], topic["topic"]).accepted
    return found


def shortfall(summaries: Iterable[dict[str, Any]], *, requested: int, max_proposals: int, run_ids: set[str],
              probed: int = 0, topics_left: int | None = None) -> Shortfall | None:
    """Why a run's `summaries` registered fewer than `requested` (None if it did not).

    `run_ids` are the env ids this run's slots accepted past dedup: a duplicate of one of them is
    the run's own, any other nearest id was in the catalog before the run.
    """
    rows = list(summaries)
    by_status = Counter(s["status"] for s in rows)
    registered = by_status.get("registered", 0)
    if registered >= requested:
        return None
    own = catalog = 0
    for s in rows:
        if s["status"] != "deduplicated":
            continue
        found = _NEAREST.search(s.get("reason") or "")
        if found and found.group(1) in run_ids:
            own += 1
        elif found:
            catalog += 1
        else:  # an id an earlier slot of this run claimed
            own += 1
    failing = Counter(c for s in rows if s["status"] == "rejected" for c in s.get("failing_checks") or [])
    proposed = len(rows)
    parts = [f"{n} {what}" for n, what in ((catalog, "topics too close to envs the catalog already had"),
                                           (own, "too close to this run's own"),
                                           (by_status.get("existing", 0), "ids the catalog had"),
                                           (by_status.get("rejected", 0), "rejected by the gate"),
                                           (by_status.get("failed", 0), "failed")) if n]
    head = f"registered {registered}/{requested}: the proposal cap was reached ({proposed} of --max-proposals {max_proposals})"
    why = f"; of the {proposed} proposals: " + ", ".join(parts) if parts else ""
    if failing:
        why += " (failing: " + ", ".join(f"{k} x{v}" for k, v in failing.most_common(3)) + ")"
    if topics_left is None:
        left = ""
    elif topics_left == 0:
        left = (f"; none of the next {probed} proposals has a new topic: topic dedup is exhausted against this "
                f"catalog, a higher --max-proposals cannot help (synthesize into another --catalog)")
    else:
        left = (f"; {topics_left} distinct topics remain in the next {probed} proposals "
                f"(raise --max-proposals to reach them)")
    return Shortfall(limit="proposal_cap", max_proposals=max_proposals,
                     proposed=proposed, duplicates_of_catalog=catalog, duplicates_of_run=own,
                     existing_ids=by_status.get("existing", 0), rejected=by_status.get("rejected", 0),
                     failed=by_status.get("failed", 0), top_failing_checks=dict(failing.most_common(5)),
                     probed=probed, topics_left=topics_left, reason=head + why + left)

"""`bench sft`'s sets: SFT examples selected to a mixture per env-disjoint split, and the folder they are written to.

The pools come in already split by env (train envs, test envs: `catalog.bench.envsimbench`'s
split); every sample of a pool is made an example (`sft.example`) or dropped with its reason, and
one over `max_tokens` is dropped too, before the quotas are filled, so a dropped sample never
leaves a quota short that the pool could fill. Quotas are filled round-robin over envs (the
envs in a seeded order, each env's samples in pool order), so a stratum spreads over as many envs
as it can; optional rungs short of samples give their share to their group (`Composition.redistribute`).
Added samples (counterexamples of an audit) join the split their env belongs to, never train if
their env is held out. The lines of each file are shuffled by the seed (no stratum-ordered curriculum).

The folder holds train.jsonl, test.jsonl (OpenAI messages, or ShareGPT), the verified samples of
each line in train_samples.jsonl and test_samples.jsonl (envforge JSONL, line for line: what
`audit-sim --bench` measures a trained simulator on), dataset_info.json (LLaMA-Factory's dataset
registry, its documented fields) and report.json, each written
atomically, report.json last; nothing in it depends on the clock, so the same inputs give the same
bytes. A folder holding anything else is refused, never overwritten.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from catalog.bench.envsimbench import write_jsonl
from catalog.bench.items import BenchItem
from catalog.bench.strata import RUNG_NAMES, rung
from catalog.errors import EnvforgeError
from catalog.runs.files import atomic_write
from synth.simulation.sft import Example, TokenCounter, example
from verifier.samples.compositions import BALANCE2_GROUPS, Composition

__all__ = ["FILES", "Format", "SftError", "SftSettings", "SftSet", "build_split", "check_out_dir", "dataset_info",
           "write_set"]

Format = Literal["openai", "sharegpt"]
SPLITS = ("train", "test")
FILES = ("train.jsonl", "test.jsonl", "train_samples.jsonl", "test_samples.jsonl", "dataset_info.json", "report.json")
MARK = "envforge bench sft"


class SftError(EnvforgeError):
    """An SFT set that cannot be written as asked (an occupied folder, a train set on held-out envs)."""


@dataclass(frozen=True)
class SftSettings:
    """What the set is asked to be (all of it goes in report.json)."""

    mixture: str
    n: int
    mode: str
    test_share: float
    seed: int
    fmt: Format = "openai"
    max_tokens: int | None = None
    source: str = "export"


@dataclass
class Split:
    """One side of the set: its examples and how they filled (or missed) the quotas."""

    examples: list[Example]
    wanted: dict[str, int]
    quotas: dict[str, int]  # wanted, after optional rungs' shortfalls went to their groups
    moved: dict[str, int]
    added: set[str]  # ids of the added samples (the rest fill the mixture)
    dropped: Counter[str] = field(default_factory=Counter)


@dataclass
class SftSet:
    """Both splits, with the settings and the token counter they were built with."""

    settings: SftSettings
    splits: dict[str, Split]
    counter: str
    held_out: set[str] = field(default_factory=set)


def _group_of(composition: Composition, name: str) -> str:
    if composition.name == "balance2":
        return next(g for g, rungs in BALANCE2_GROUPS.items() if name in rungs)
    return rung(name).group


def _examples(items: Iterable[BenchItem], mode: str, counter: TokenCounter, max_tokens: int | None,
              dropped: Counter[str]) -> list[Example]:
    kept = []
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            continue
        seen.add(item.id)
        made = example(item, mode, counter)
        if isinstance(made, str):
            dropped[made] += 1
        elif max_tokens is not None and made.tokens > max_tokens:
            dropped["over --max-tokens"] += 1
        else:
            kept.append(made)
    return kept


def _fill(pool: Sequence[Example], quota: int, rng: random.Random) -> list[Example]:
    """Up to `quota` examples, round-robin over their envs (seeded env order, pool order within an env)."""
    by_env: dict[str, list[Example]] = {}
    for made in pool:
        by_env.setdefault(made.item.env_id, []).append(made)
    envs = sorted(by_env)
    rng.shuffle(envs)
    picks: list[Example] = []
    depth = 0
    while len(picks) < quota and any(depth < len(by_env[e]) for e in envs):
        for env in envs:
            if len(picks) < quota and depth < len(by_env[env]):
                picks.append(by_env[env][depth])
        depth += 1
    return picks


def build_split(pool: Iterable[BenchItem], composition: Composition, mode: str, counter: TokenCounter, *,
                seed: int, max_tokens: int | None = None, added: Iterable[BenchItem] = ()) -> Split:
    """The examples of one split: `composition`'s quotas filled from `pool`, then the `added` samples."""
    dropped: Counter[str] = Counter()
    made = _examples(pool, mode, counter, max_tokens, dropped)
    by_rung: dict[str, list[Example]] = {}
    for one in made:
        by_rung.setdefault(one.stratum, []).append(one)
    filled, moved = composition.redistribute({b: len(by_rung.get(b, [])) for b in composition.counts})
    rng = random.Random(seed)
    chosen = [one for b in filled.counts for one in _fill(by_rung.get(b, []), filled.counts[b], rng)]
    ids = {one.item.id for one in chosen}
    extra = [one for one in _examples(added, mode, counter, max_tokens, dropped) if one.item.id not in ids]
    examples = chosen + extra
    random.Random(seed).shuffle(examples)
    return Split(examples, dict(composition.counts), dict(filled.counts), moved, {one.item.id for one in extra}, dropped)


# --- the files ------------------------------------------------------------------------------------
def _record(one: Example, fmt: Format, mode: str, source: str) -> dict[str, Any]:
    meta = {"env": one.item.env_id, "stratum": one.stratum, "id": one.item.id, "mode": mode, "tokens": one.tokens,
            "source": source}
    if fmt == "openai":
        return {"messages": one.messages, **meta}
    roles = {"user": "human", "assistant": "gpt"}
    system = "".join(m["content"] for m in one.messages if m["role"] == "system")
    turns = [{"from": roles[m["role"]], "value": m["content"]} for m in one.messages if m["role"] != "system"]
    return {"conversations": turns, "system": system, **meta}


def dataset_info(settings: SftSettings) -> dict[str, Any]:
    """LLaMA-Factory's dataset_info.json entries of both files (its data/README's fields for the format)."""
    name = f"envforge_sim_{settings.mode}"
    entries = {}
    for split in SPLITS:
        if settings.fmt == "openai":  # "OpenAI Format": a special case of sharegpt, with these tags
            entry: dict[str, Any] = {
                "file_name": f"{split}.jsonl", "formatting": "sharegpt", "columns": {"messages": "messages"},
                "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user",
                         "assistant_tag": "assistant", "system_tag": "system"}}
        else:  # "Sharegpt Format": conversations of from/value (the default tags), the system prompt a column
            entry = {"file_name": f"{split}.jsonl", "formatting": "sharegpt",
                     "columns": {"messages": "conversations", "system": "system"}}
        entries[f"{name}_{split}"] = entry
    return entries


def _report(built: SftSet, composition_of: dict[str, Composition]) -> dict[str, Any]:
    settings = built.settings
    splits: dict[str, Any] = {}
    envs: dict[str, set[str]] = {}
    for name, split in built.splits.items():
        composition = composition_of[name]
        counts = Counter(one.stratum for one in split.examples if one.item.id not in split.added)
        envs[name] = {one.item.env_id for one in split.examples}
        strata = {}
        for b in RUNG_NAMES:
            wanted, quota = split.wanted.get(b, 0), split.quotas.get(b, 0)
            if wanted or quota or counts[b]:
                strata[b] = {"wanted": wanted, "quota": quota, "written": counts[b]}
        groups: dict[str, dict[str, int]] = {}
        for b, counts_b in strata.items():
            group = groups.setdefault(_group_of(composition, b), {"wanted": 0, "written": 0})
            group["wanted"] += counts_b["wanted"]
            group["written"] += counts_b["written"]
        tokens = [one.tokens for one in split.examples]
        splits[name] = {
            "samples": len(split.examples), "envs": len(envs[name]), "added_from_audit": len(split.added),
            "strata": strata, "groups": groups,
            "short": {b: s["quota"] - s["written"] for b, s in strata.items() if s["written"] < s["quota"]},
            "optional_moved_to_group": split.moved,
            "dropped": dict(sorted(split.dropped.items())),
            "tokens": {"total": sum(tokens), "max": max(tokens, default=0),
                       "mean": round(sum(tokens) / len(tokens), 1) if tokens else 0},
        }
    return {
        "made_by": MARK, "mixture": settings.mixture, "n": settings.n, "mode": settings.mode,
        "test_share": settings.test_share, "seed": settings.seed, "format": settings.fmt,
        "max_tokens": settings.max_tokens, "token_counter": built.counter, "source": settings.source,
        "env_disjoint": not (envs.get("train", set()) & envs.get("test", set())),
        "held_out_envs": len(built.held_out), "splits": splits,
    }


def check_out_dir(out: Path) -> None:
    """Refuse a folder that holds anything but an earlier `bench sft` set (whose files a re-run replaces)."""
    if out.exists() and not out.is_dir():
        raise SftError(f"--out {out} is a file, not a folder")
    if not out.is_dir():
        return
    others = sorted(p.name for p in out.iterdir() if p.name not in FILES
                    and not (p.name.startswith(".") and p.name.endswith(".tmp")))  # an interrupted write's temporary
    if others:
        raise SftError(f"--out {out} holds other files ({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}): "
                       "give an empty or new folder")
    present = [name for name in FILES if (out / name).exists()]
    if not present:
        return
    try:
        mark = json.loads((out / "report.json").read_text(encoding="utf-8")).get("made_by")
    except (OSError, ValueError, AttributeError):
        mark = None
    if mark != MARK:
        raise SftError(f"--out {out} holds {', '.join(present)} not written by bench sft: give an empty or new folder")


def write_set(out: Path, built: SftSet, composition_of: dict[str, Composition]) -> dict[str, Any]:
    """Write the four files (report.json last) and return the report; refuses a train set on held-out envs."""
    check_out_dir(out)
    train_envs = {one.item.env_id for one in built.splits["train"].examples}
    overlap = sorted(train_envs & built.held_out)
    if overlap:
        raise SftError(f"refusing to write a train set on {len(overlap)} env(s) of the held-out benches "
                       f"(--exclude-envs-of), e.g. {overlap[0]}")
    settings = built.settings
    out.mkdir(parents=True, exist_ok=True)
    for name, split in built.splits.items():
        lines = [json.dumps(_record(one, settings.fmt, settings.mode,
                                    "audit" if one.item.id in split.added else "mixture"), ensure_ascii=False)
                 for one in split.examples]
        atomic_write(out / f"{name}.jsonl", "".join(line + "\n" for line in lines), fsync=True)
        write_jsonl([one.item for one in split.examples], out / f"{name}_samples.jsonl")  # for audit-sim --bench
    atomic_write(out / "dataset_info.json", json.dumps(dataset_info(settings), indent=2) + "\n", fsync=True)
    report = _report(built, composition_of)
    atomic_write(out / "report.json", json.dumps(report, indent=2, ensure_ascii=False) + "\n", fsync=True)
    return report

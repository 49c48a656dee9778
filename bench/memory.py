#!/usr/bin/env python3
"""Recall latency and write throughput of the SQLite memory plugin (toolang-memory-sqlite).

A deterministic corpus of varied, realistic entries (notes and turn exchanges about
people, places, projects, dates and numbers, content words drawn with a
Zipf-Mandelbrot law from a vocabulary of 12,000 words) is written into a fresh database, then:

    recall        p50 / p95 / max of ``recall`` for natural-language queries (3 to 14 words,
                  some naming things that exist, some not) with the runtime's default
                  limits (8 items, 4,000 characters), at each size
    raw-fts       the same queries as a bare FTS5 ``MATCH … ORDER BY rank LIMIT 8`` on
                  the same file: the floor the plugin's scoping, recency blend and item
                  reads are measured against (ratio printed)
    write-batch   entries/s writing batches of 200 (how the corpus is loaded)
    write-single  entries/s writing one entry per call (as ``memory_agent_save`` does)
    write-capped  the same, new entries, with ``max_entries`` set to the entries held:
                  each write deletes the longest unused one (a cap's cost at a write should
                  not grow with the entries: it read and sorted them all, 20 ms a write
                  at 50,000)

Worst case for scoping: one agent owns every entry (a recall's matches are all in
scope). Goal: recall p95 < 10 ms at 100,000 entries. Before the timed recalls of each size
the bench warms up with 60 recalls (their use counts committed once: the database thread
that commits them is started) and freezes its heap (``gc.freeze``) as ``toolang run``
does once started: a full collection of what start-up and the load built is not counted
as a recall's time.

    python3 bench/memory.py [--sizes 10000 100000] [--queries 300] [--single 2000]

The last line is JSON.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins/toolang-memory-sqlite"))

from toolang_core.memory import MemoryEntry, MemoryRecallRequest, MemoryWriteBatch
from toolang_memory_sqlite import MemorySQLiteSettings
from toolang_memory_sqlite.memory import SQLiteMemory
from toolang_memory_sqlite.text import match_expression, query_terms


def words(text: str) -> list[str]:
    """The space-separated words of ``text`` (long word lists read best as prose)."""
    return text.split()


GOAL_P95_MS = 10.0
WARM_UP = 60
"""Recalls before the timed ones (each counts up to 8 uses; 256 pending are committed)."""
AGENT = "operator"
BATCH = 200

PEOPLE = words(
    "Maya Ada Tomas Priya Jonas Wen Leila Omar Sofia Mateo Ines Kenji Amara Dmitri Chloe "
    "Rafael Hana Felix Noor Luca Yara Emil Zara Arjun Greta Malik Nina Oscar Tariq Vera"
)
PLACES = words(
    "Berlin Lisbon Nairobi Osaka Toronto Lagos Krakow Lima Seoul Dublin Austin Oslo Pune "
    "Porto Tbilisi Hanoi Quito Bergen Leeds Cusco Gdansk Mumbai Recife Tallinn Zagreb"
)
PROJECTS = words(
    "payments billing search onboarding checkout inventory ledger reporting gateway "
    "scheduler mobile analytics identity notifications pricing warehouse catalog support"
)
COMMON = words(
    "deploy release meeting review budget invoice contract server database backup outage "
    "customer vendor ticket sprint roadmap migration test staging production incident "
    "design draft report launch deadline quarter forecast hiring interview laptop office "
    "travel flight hotel dinner lunch coffee password token account access permission "
    "config setting cache queue latency memory disk network certificate domain email "
    "slack calendar note reminder birthday gift recipe garden bike train ticket doctor "
    "appointment school parcel delivery refund discount order shipment contract lawyer "
    "rent lease insurance tax receipt bank transfer loan pension salary bonus holiday"
)
VERBS = words(
    "moved fixed broke approved rejected scheduled cancelled asked promised shipped "
    "renewed paid booked forgot changed delayed merged reverted finished started planned"
)
DAYS = words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
FILLER = words(
    "the a to of and in for on with at by from about after before because so but then "
    "it we they she he that this which was is will should"
)
SYLLABLES = words(
    "ka ro mi tu sel var den lo bra qui mon ter fal ni sto gur pel zan tov rix ma dor lin ques hap"
)


def vocabulary(rng: random.Random, size: int) -> list[str]:
    """Invented words that make the tail of a Zipf vocabulary (names of things, jargon)."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Corpus:
    """Deterministic entries and queries drawn from one vocabulary."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.tail = vocabulary(self.rng, 12_000)
        self.content = COMMON + PROJECTS + self.tail
        # Zipf-Mandelbrot weights, 1 / (rank + 50): the shape of word frequencies in
        # real text once the ~50 commonest (function) words, drawn apart, are set aside.
        self.cumulative = list(
            itertools.accumulate(1.0 / (rank + 50) for rank in range(len(self.content)))
        )

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.content, cum_weights=self.cumulative, k=n)

    def sentence(self) -> str:
        rng = self.rng
        who, other = rng.sample(PEOPLE, 2)
        place, project = rng.choice(PLACES), rng.choice(PROJECTS)
        a, b, c = self.words(3)
        shapes = (
            f"{who} {rng.choice(VERBS)} the {project} {a} to {rng.choice(DAYS)}",
            f"{who} said the {place} {a} {rng.choice(VERBS)} because {b} {c} kept failing",
            f"Remember: {who} prefers {a} over {b} for the {project} {c}",
            f"The {project} {a} in {place} costs {rng.randint(2, 9000)} EUR per {b}",
            f"{who} and {other} {rng.choice(VERBS)} the {a} {b} on {rng.choice(DAYS)}",
            f"Ticket {rng.randint(100, 99999)}: {a} {b} in {project} after the {c} change",
        )
        filler = " ".join(rng.choice(FILLER) + " " + w for w in self.words(rng.randint(0, 6)))
        return f"{rng.choice(shapes)} {filler}".strip() + "."

    def entry(self) -> str:
        """A note (1 or 2 sentences) or a turn exchange (user line + answer, 3 to 6 sentences)."""
        if self.rng.random() < 0.6:
            return " ".join(self.sentence() for _ in range(self.rng.randint(1, 2)))
        user = self.sentence()
        answer = " ".join(self.sentence() for _ in range(self.rng.randint(2, 5)))
        return f"user: {user}\nassistant: {answer}"

    def query(self) -> str:
        rng = self.rng
        shapes = (
            f"what did {rng.choice(PEOPLE)} say about the {rng.choice(PROJECTS)} "
            f"{self.words(1)[0]}",
            f"when is the {self.words(1)[0]} in {rng.choice(PLACES)}",
            " ".join(self.words(rng.randint(3, 6))),
            f"remind me about {' '.join(self.words(2))} for {rng.choice(PEOPLE)}",
            f"{rng.choice(PEOPLE)} {rng.choice(PLACES)} {rng.choice(PROJECTS)} status?",
            f"can you find the note on {' and '.join(self.words(3))} from last week please",
        )
        return rng.choice(shapes)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def load(memory: SQLiteMemory, corpus: Corpus, count: int) -> float:
    """Write ``count`` entries in batches of ``BATCH``; return entries per second
    (the texts are made before the clock starts)."""
    batches = []
    for first in range(0, count, BATCH):
        n = min(BATCH, count - first)
        batches.append(
            MemoryWriteBatch(
                agent_uri=f"toolang:agent/{AGENT}",
                agent_id=AGENT,
                thread_id=f"chat:{first // 1000}",
                entries=tuple(MemoryEntry(text=corpus.entry()) for _ in range(n)),
            )
        )
    started = time.perf_counter()
    for batch in batches:
        memory.remember_now(batch)
    return count / (time.perf_counter() - started)


def time_recalls(memory: SQLiteMemory, queries: list[str], modes: Counter[str]) -> list[float]:
    """Milliseconds per recall; ``modes`` counts how each recall found its candidates."""
    times = []
    for query in queries:
        request = MemoryRecallRequest(
            agent_uri=f"toolang:agent/{AGENT}", agent_id=AGENT, query_text=query
        )
        started = time.perf_counter()
        result = memory.recall_now(request)
        times.append((time.perf_counter() - started) * 1000)
        modes[str(result.diagnostics.get("mode", "none"))] += 1
    return times


def time_raw(path: Path, queries: list[str]) -> list[float]:
    conn = sqlite3.connect(path)
    times = []
    for query in queries:
        expression = match_expression(query_terms(query, 32))
        started = time.perf_counter()
        if expression:
            conn.execute(
                "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT 8",
                (expression,),
            ).fetchall()
        times.append((time.perf_counter() - started) * 1000)
    conn.close()
    return times


def time_single_writes(memory: SQLiteMemory, corpus: Corpus, count: int) -> float:
    """One entry per call, every call its own transaction (half of them upserts by key)."""
    batches = [
        MemoryWriteBatch(
            agent_uri=f"toolang:agent/{AGENT}",
            agent_id=AGENT,
            thread_id="chat:single",
            entries=(MemoryEntry(text=corpus.entry(), key=f"single-{n % (count // 2 or 1)}"),),
        )
        for n in range(count)
    ]
    started = time.perf_counter()
    for batch in batches:
        memory.remember_now(batch)
    return count / (time.perf_counter() - started)


def time_capped_writes(path: Path, corpus: Corpus, count: int) -> tuple[int, float]:
    """New entries written one per call into the file at its cap (``max_entries``: the
    entries it holds); the cap and entries per second."""
    with sqlite3.connect(path) as conn:
        (held,) = conn.execute("SELECT count(*) FROM memory_entries").fetchone()
    memory = SQLiteMemory(path, MemorySQLiteSettings(max_entries=held))
    batches = [
        MemoryWriteBatch(
            agent_uri=f"toolang:agent/{AGENT}",
            agent_id=AGENT,
            thread_id="chat:capped",
            entries=(MemoryEntry(text=corpus.entry()),),
        )
        for _ in range(count)
    ]
    started = time.perf_counter()
    for batch in batches:
        memory.remember_now(batch)
    rate = count / (time.perf_counter() - started)
    with sqlite3.connect(path) as conn:
        (after,) = conn.execute("SELECT count(*) FROM memory_entries").fetchone()
    memory.close()
    assert after == held, (after, held)
    return held, rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--single", type=int, default=2000)
    args = parser.parse_args()

    corpus = Corpus()
    queries = [corpus.query() for _ in range(args.queries)]
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory.db"
        memory = SQLiteMemory(path, MemorySQLiteSettings())
        stored = 0
        batch_rates = []
        for size in sorted(args.sizes):
            batch_rates.append(load(memory, corpus, size - stored))
            stored = size
            # Warm the cache and statements, with enough recalls that their uses are
            # committed once (``pending_uses``): the plugin's database thread and its
            # connection are started, as in a runtime that has served a few turns.
            time_recalls(memory, queries[:WARM_UP], Counter())
            # As `toolang run` does once started (freeze_heap): what start-up (and the
            # bench's load) built stays out of the collections timed below.
            gc.collect()
            gc.freeze()
            modes: Counter[str] = Counter()
            recall = time_recalls(memory, queries, modes)
            raw = time_raw(path, queries)
            row = {
                "recall_p50_ms": round(statistics.median(recall), 3),
                "recall_p95_ms": round(percentile(recall, 95), 3),
                "recall_max_ms": round(max(recall), 3),
                "raw_fts_p50_ms": round(statistics.median(raw), 3),
                "raw_fts_p95_ms": round(percentile(raw, 95), 3),
                "file_mb": round(path.stat().st_size / 1e6, 1),
                "modes": dict(sorted(modes.items())),
            }
            row["p95_ratio_to_raw"] = round(
                row["recall_p95_ms"] / max(row["raw_fts_p95_ms"], 1e-6), 2
            )
            results[str(size)] = row
            print(
                f"{size:>7} entries  recall p50 {row['recall_p50_ms']:6.2f} ms  "
                f"p95 {row['recall_p95_ms']:6.2f} ms  max {row['recall_max_ms']:6.2f} ms  "
                f"| raw FTS p50 {row['raw_fts_p50_ms']:5.2f} p95 {row['raw_fts_p95_ms']:5.2f} ms "
                f"(x{row['p95_ratio_to_raw']})  file {row['file_mb']} MB  {row['modes']}"
            )
        single_rate = time_single_writes(memory, corpus, args.single)
        memory.close()
        cap, capped_rate = time_capped_writes(path, corpus, args.single)
    batch_rate = statistics.median(batch_rates)
    print(
        f"write  batched ({BATCH}/call) {batch_rate:,.0f} entries/s   "
        f"single {single_rate:,.0f} entries/s   single at a cap of {cap:,} entries "
        f"{capped_rate:,.0f} entries/s"
    )
    largest = str(max(args.sizes))
    p95 = results[largest]["recall_p95_ms"]
    verdict = "met" if p95 < GOAL_P95_MS else "MISSED"
    print(
        f"goal: recall p95 < {GOAL_P95_MS:g} ms at {int(largest):,} entries: {verdict} ({p95} ms)"
    )
    print(
        json.dumps(
            {
                "bench": "memory",
                "sizes": results,
                "write_batched_per_s": round(batch_rate),
                "write_single_per_s": round(single_rate),
                "write_capped_per_s": round(capped_rate),
                "write_capped_at": cap,
                "goal_p95_ms": GOAL_P95_MS,
                "goal_met": p95 < GOAL_P95_MS,
            }
        )
    )


if __name__ == "__main__":
    main()

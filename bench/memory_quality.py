#!/usr/bin/env python3
"""Recall quality of the memory plugins on a labelled set: recall@5 and MRR.

The set is generated here, deterministically, from facts about fictional people and
towns written for this bench (public domain): 60 people with five facts each (home
town, work, pet, favourite food, birthday) and two facts for each of 20 towns, every
fact in one of several phrasings — 340 memories of one agent. 90 questions are asked
the way a person would ask them, each labelled with the ids of the memories that
answer it:

    named       names the person or town and asks one fact ("What is Orla Vance's
                favourite dish?"), whether or not the answer uses the question's words
    paraphrase  asks in other words ("What does Orla do for a living?")
    reverse     many answers ("Who lives in Port Aster?"; recall@5 counts up to 5)

Twenty first names are shared by two people each, and every person has five memories that
all name them, so a name alone does not find the answer.

    recall@5  the share of a question's answers among the first 5 items (at most 5 count)
    MRR       the mean of 1 / rank of the first answer (0 when none is returned)

    python3 bench/memory_quality.py [--distractors 0] [--dump set.json]
        [--backend sqlite|postgres|both] [--dsn postgresql://…] [--language english]

``--backend postgres`` measures toolang-memory-postgres (on ``--dsn``, ``$TOOLANG_PG_DSN``
or a throwaway server started for the run, in a schema of its own dropped afterwards);
``both`` measures the two plugins on the same set and prints the differences.

``--distractors N`` adds N unrelated entries (bench/memory.py's corpus) to the same
agent, to see quality where the plugin bounds its work. No goal yet. The last line is JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import sys
import tempfile
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins/toolang-memory-sqlite"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins/toolang-memory-postgres"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins/toolang-store-postgres"))

from toolang_core.memory import MemoryEntry, MemoryRecallRequest, MemoryWriteBatch
from toolang_memory_sqlite import MemorySQLiteSettings
from toolang_memory_sqlite.memory import SQLiteMemory

ROOT = Path(__file__).resolve().parent.parent


def words(text: str) -> list[str]:
    """The space-separated words of ``text`` (long word lists read best as prose)."""
    return text.split()


AGENT = "librarian"
K = 5

FIRST = words(
    "Orla Bram Ilse Tavi Mirela Casimir Juno Odile Pavo Rhea Soren Talia Umar Vesna Wim Xanthe "
    "Yorick Zelda Anouk Benedek Cato Dagny Elio Fenna Gideon Hester Ivo Jessamy Kit Linnea "
    "Marek Nell Osric Perpetua Quill Rosalind Sigge Thea Ulla Viggo"
)
SHARED_FIRST = words(
    "Orla Bram Juno Casimir Rhea Wim Thea Marek Nell Ivo Kit Dagny Elio Fenna Quill Ulla "
    "Sigge Cato Talia Soren"
)
LAST = words(
    "Vance Okafor Lindqvist Marchetti Brannock Sato Delacroix Nwosu Halloran Petrescu Quint "
    "Abernathy Castellan Drummond Eskildsen Fairweather Gallo Hartigan Iwasaki Jolliffe Kestrel "
    "Lomax Moreau Nakagawa Ostrander Pryce Quaresma Rutherford Sandoval Thorne Underhill Varga "
    "Whitlock Yelland Zamora Ashdown Blackwood Corrigan Dunmore Ellery Farrow Greaves Holloway "
    "Ingram Jessop Kilbride Larkspur Merriweather Northcott Oakes Penhallow Quarles Ravenscroft "
    "Strickland Tremaine Upcott Vickery Wainwright Yardley Zouch"
)
TOWNS = (
    "Port Aster",
    "Caldermoor",
    "Little Wexcombe",
    "Fennick Bay",
    "Saltmarrow",
    "Upper Hollin",
    "Brindle Cross",
    "Osterlea",
    "Quayford",
    "Ravensholt",
    "Tillbury Marsh",
    "Greymantle",
    "Elderwick",
    "Harrowgate End",
    "Mossley Vale",
    "Kingsmere",
    "Dunhollow",
    "Ashcombe",
    "Vellamy",
    "Skerrow",
)
JOBS = (
    "lighthouse keeper",
    "cartographer",
    "beekeeper",
    "glassblower",
    "tram driver",
    "veterinary surgeon",
    "bookbinder",
    "marine biologist",
    "clockmaker",
    "pastry chef",
    "harbour pilot",
    "violin teacher",
    "stonemason",
    "archivist",
    "radio engineer",
)
PETS = (
    ("tortoise", "Biscuit"),
    ("ferret", "Pudding"),
    ("parrot", "Admiral"),
    ("greyhound", "Comet"),
    ("cat", "Marmalade"),
    ("rabbit", "Thistle"),
    ("goldfish", "Sparky"),
    ("hedgehog", "Bramble"),
    ("tabby cat", "Ottoline"),
    ("spaniel", "Waffles"),
    ("iguana", "Gerald"),
    ("canary", "Pip"),
    ("terrier", "Nutmeg"),
    ("guinea pig", "Dumpling"),
    ("cockatiel", "Sherbet"),
)
FOODS = (
    "mushroom risotto",
    "lamb tagine",
    "smoked mackerel",
    "beetroot soup",
    "pad thai",
    "cheese souffle",
    "jollof rice",
    "pierogi",
    "fish tacos",
    "aubergine parmigiana",
    "chicken katsu curry",
    "lentil dal",
    "paella",
    "gooseberry crumble",
    "ramen",
)
MONTHS = words(
    "January February March April May June July August September October November December"
)
WEEKDAYS = words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
LANDMARKS = (
    "old windmill",
    "stone bridge",
    "clock tower",
    "salt works",
    "ruined abbey",
    "tide mill",
    "iron pier",
    "round barrow",
    "chalk horse",
    "signal station",
)


@attrs.frozen
class Memory:
    id: str
    text: str


@attrs.frozen
class Question:
    text: str
    kind: str
    relevant: frozenset[str]


@attrs.frozen
class LabelledSet:
    memories: tuple[Memory, ...]
    questions: tuple[Question, ...]


def build_set(seed: int = 1887) -> LabelledSet:
    """Generate the memories and the labelled questions (same seed, same set)."""
    rng = random.Random(seed)
    firsts = FIRST[: 60 - len(SHARED_FIRST)] + SHARED_FIRST  # 20 first names used twice
    lasts = rng.sample(LAST, 60)
    people = [f"{first} {last}" for first, last in zip(firsts, lasts, strict=True)]
    memories: list[Memory] = []
    facts: dict[tuple[str, str], str] = {}  # (person or town, fact) -> memory id
    by_town: dict[str, list[str]] = defaultdict(list)
    by_job: dict[str, list[str]] = defaultdict(list)
    details: dict[str, dict[str, object]] = {}

    def remember(key: tuple[str, str], text: str) -> None:
        memory_id = f"m{len(memories) + 1:03d}"
        memories.append(Memory(memory_id, text))
        facts[key] = memory_id

    for person in people:
        first = person.split()[0]
        town, job = rng.choice(TOWNS), rng.choice(JOBS)
        species, pet = rng.choice(PETS)
        food = rng.choice(FOODS)
        month, day = rng.choice(MONTHS), rng.randint(1, 28)
        details[person] = {"town": town, "job": job, "species": species, "pet": pet}
        remember(
            (person, "town"),
            rng.choice(
                (
                    f"{person} lives in {town}.",
                    f"{person} moved to {town} in {rng.randint(1998, 2023)} and never left.",
                    f"Home for {person} is a flat above the bakery in {town}.",
                )
            ),
        )
        by_town[town].append(facts[(person, "town")])
        remember(
            (person, "job"),
            rng.choice(
                (
                    f"{person} works as a {job}.",
                    f"{first} has been a {job} for {rng.randint(2, 30)} years.",
                    f"{person} trained as a {job} after leaving school.",
                )
            ),
        )
        by_job[job].append(facts[(person, "job")])
        remember(
            (person, "pet"),
            rng.choice(
                (
                    f"{person} has a {species} named {pet}.",
                    f"{person}'s {species} is called {pet}.",
                    f"{pet}, a {species}, lives with {person}.",
                )
            ),
        )
        remember(
            (person, "food"),
            rng.choice(
                (
                    f"{person}'s favourite dish is {food}.",
                    f"{first} {person.split()[1]} always orders the {food}.",
                    f"Cook {food} if {person} comes to dinner; it is their favourite.",
                )
            ),
        )
        remember(
            (person, "birthday"),
            rng.choice(
                (
                    f"{person} was born on {day} {month}.",
                    f"{person}'s birthday is {month} {day}.",
                    f"Send {person} a card on the {day}th of {month}, their birthday.",
                )
            ),
        )
    for town in TOWNS:
        weekday, landmark = rng.choice(WEEKDAYS), rng.choice(LANDMARKS)
        remember((town, "market"), f"The market in {town} is held every {weekday} morning.")
        remember((town, "landmark"), f"{town} is known for its {landmark}.")

    questions: list[Question] = []

    def ask(kind: str, text: str, *relevant: str) -> None:
        questions.append(Question(text, kind, frozenset(relevant)))

    asked = rng.sample(people, 30)
    for person in asked[:10]:
        d = details[person]
        ask("named", f"What is the name of {person}'s {d['species']}?", facts[(person, "pet")])
        ask("named", f"Which town does {person} live in?", facts[(person, "town")])
    for person in asked[10:20]:
        ask("named", f"When is {person}'s birthday?", facts[(person, "birthday")])
        ask("named", f"What is {person}'s favourite dish?", facts[(person, "food")])
    for person in asked[20:30]:
        first = person.split()[0]
        ask("paraphrase", f"What does {first} do for a living?", facts[(person, "job")])
        ask("paraphrase", f"Does {person} have any animals at home?", facts[(person, "pet")])
    for person in asked[:10]:
        ask("paraphrase", f"What should I cook when {person} visits?", facts[(person, "food")])
    for town in rng.sample([t for t in TOWNS if by_town[t]], 8):
        ask("reverse", f"Who lives in {town}?", *by_town[town])
    for job in rng.sample([j for j in JOBS if by_job[j]], 6):
        ask("reverse", f"Which of my contacts is a {job}?", *by_job[job])
    for town in rng.sample(TOWNS, 6):
        ask("named", f"On which day is the market in {town}?", facts[(town, "market")])
    return LabelledSet(tuple(memories), tuple(questions))


@contextmanager
def postgres_memory(dsn: str | None, language: str) -> Iterator[Any]:
    """toolang-memory-postgres on a schema of its own (dropped afterwards), on ``dsn``,
    ``$TOOLANG_PG_DSN`` or a throwaway server."""
    import psycopg

    from toolang_memory_postgres import NAME, MemoryPostgresSettings
    from toolang_memory_postgres.memory import PostgresMemory
    from toolang_memory_postgres.schema import MIGRATIONS
    from toolang_store_postgres.cluster import ENV_DSN, ThrowawayCluster
    from toolang_store_postgres.plugin_tables import PostgresPluginDatabases, plugin_schema

    cluster = None
    dsn = dsn or os.environ.get(ENV_DSN)
    if not dsn:
        cluster = ThrowawayCluster()
        dsn = cluster.start()
    store_schema = f"bench_{uuid.uuid4().hex[:12]}"
    databases = PostgresPluginDatabases(dsn, store_schema=store_schema)
    memory = PostgresMemory(
        lambda: databases.open(NAME, MIGRATIONS), MemoryPostgresSettings(language=language)
    )
    try:
        yield memory
    finally:
        memory.close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{plugin_schema(store_schema, NAME)}" CASCADE')
        if cluster is not None:
            cluster.stop()


@contextmanager
def open_memory(backend: str, dsn: str | None, language: str) -> Iterator[Any]:
    """The plugin of ``backend`` on an empty database of its own."""
    if backend == "postgres":
        with postgres_memory(dsn, language) as memory:
            yield memory
        return
    with tempfile.TemporaryDirectory() as tmp:
        memory = SQLiteMemory(Path(tmp) / "memory.db", MemorySQLiteSettings())
        try:
            yield memory
        finally:
            memory.close()


def load_distractors(memory: Any, count: int) -> None:
    """``count`` unrelated entries from bench/memory.py's corpus (written first: older)."""
    spec = importlib.util.spec_from_file_location("memory_bench", ROOT / "bench" / "memory.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    corpus = module.Corpus(seed=11)
    for start in range(0, count, 500):
        texts = [corpus.entry() for _ in range(min(500, count - start))]
        memory.remember_now(
            MemoryWriteBatch(
                agent_uri=f"toolang:agent/{AGENT}",
                agent_id=AGENT,
                entries=tuple(
                    MemoryEntry(text=t, key=f"d{start + n}") for n, t in enumerate(texts)
                ),
            )
        )


def evaluate(
    labelled: LabelledSet,
    distractors: int,
    backend: str = "sqlite",
    dsn: str | None = None,
    language: str = "english",
) -> dict[str, dict[str, float]]:
    with open_memory(backend, dsn, language) as memory:
        load_distractors(memory, distractors)
        memory.remember_now(
            MemoryWriteBatch(
                agent_uri=f"toolang:agent/{AGENT}",
                agent_id=AGENT,
                entries=tuple(MemoryEntry(text=m.text, key=m.id) for m in labelled.memories),
            )
        )
        scores: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for question in labelled.questions:
            result = memory.recall_now(
                MemoryRecallRequest(
                    agent_uri=f"toolang:agent/{AGENT}",
                    agent_id=AGENT,
                    query_text=question.text,
                    execution_strategy="search",
                )
            )
            ranked = [item.key for item in result.items]
            found = len(question.relevant.intersection(ranked[:K]))
            recall_at_k = found / min(len(question.relevant), K)
            first = next((n for n, key in enumerate(ranked, 1) if key in question.relevant), None)
            reciprocal = 1.0 / first if first else 0.0
            scores[question.kind].append((recall_at_k, reciprocal))
            scores["all"].append((recall_at_k, reciprocal))
    return {
        kind: {
            "questions": len(pairs),
            "recall_at_5": round(statistics.fmean(r for r, _ in pairs), 3),
            "mrr": round(statistics.fmean(m for _, m in pairs), 3),
        }
        for kind, pairs in scores.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--distractors", type=int, default=0)
    parser.add_argument("--dump", type=Path, help="write the labelled set to this JSON file")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--dsn", help="PostgreSQL server (default: $TOOLANG_PG_DSN or a throwaway)")
    parser.add_argument("--language", default="english", help="memory-postgres's language")
    args = parser.parse_args()
    labelled = build_set()
    if args.dump:
        args.dump.write_text(
            json.dumps(
                {
                    "memories": [attrs.asdict(m) for m in labelled.memories],
                    "questions": [
                        {**attrs.asdict(q), "relevant": sorted(q.relevant)}
                        for q in labelled.questions
                    ],
                },
                indent=1,
                ensure_ascii=False,
            )
        )
    print(
        f"{len(labelled.memories)} memories, {len(labelled.questions)} questions, "
        f"{args.distractors} distractors"
    )
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    measured = {}
    for backend in backends:
        results = measured[backend] = evaluate(
            labelled, args.distractors, backend, args.dsn, args.language
        )
        print(f"memory-{backend}")
        for kind in ("named", "paraphrase", "reverse", "all"):
            row = results[kind]
            print(
                f"{kind:>10}  {row['questions']:3d} questions  recall@5 "
                f"{row['recall_at_5']:.3f}  MRR {row['mrr']:.3f}"
            )
    summary: dict[str, Any] = {"bench": "memory_quality", "distractors": args.distractors}
    if len(backends) == 1:
        summary.update(backend=backends[0], **measured[backends[0]])
    else:
        summary.update(measured)
        difference = {
            key: round(measured["postgres"]["all"][key] - measured["sqlite"]["all"][key], 3)
            for key in ("recall_at_5", "mrr")
        }
        print(
            f"postgres - sqlite: recall@5 {difference['recall_at_5']:+.3f}  "
            f"MRR {difference['mrr']:+.3f} (goal: recall@5 within 0.02)"
        )
        summary["postgres_minus_sqlite"] = difference
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

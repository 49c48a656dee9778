#!/usr/bin/env python3
"""The ontologist's ``ontology_query`` at 100,000 facts: p50 and p95 per kind of query,
next to the bare SQL of a lookup by subject (the floor) in the same run.

The ontology: 100 companies and ``--people`` people (default 17,000), each person with
a name, an age, two tags, an employer and an acquaintance — six facts a person, about
100,000 in all — loaded through ``ontology_ingest`` (CSV). Then ``--queries`` calls of
each kind, on random entities:

subject      every fact of one person
pred+object  who works for one company (up to ``limit`` = 100 facts)
depth 2      one person's facts, the facts of its employer and acquaintance, and theirs
conflicts    one person's conflicts
raw SQL      ``SELECT … FROM facts WHERE owner = ? AND subject = ?`` on its own
             connection — what the lookup costs without the tool

Each call is the tool's function with a call context (the owner's database lock, the
lookups, the answer as JSON-able values); the tool-call chain's own cost is measured by
``bench/tool_chain.py``. Goal: p95 < 10 ms for every kind. Each
call's CPU time (this thread's) is shown beside its wall time: on a shared machine the
wall also counts waiting for a CPU. The heap is frozen after loading, as ``toolang run``
freezes it once started.

    python3 bench/ontology.py [--people 16667] [--queries 2000]

The last line is a JSON object with the figures (milliseconds).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import toolang_tools_ontologist
from toolang_core.cli.cmd_run import freeze_heap
from toolang_core.testing.runtimes import make_runtime, tool_call_context
from toolang_tools_ontologist.tools import TOOLS

TOOL = {t.name: t.function for t in TOOLS}
OWNER = types.SimpleNamespace(owner="bench")


def call(runtime, tool, **params):
    context = tool_call_context(runtime, tool, params, turn=OWNER)
    return TOOL[tool](**params, context=context)


def load(runtime, people: int) -> int:
    call(
        runtime,
        "ontology_define_type",
        name="Company",
        attributes={"properties": {"name": {"type": "string"}}},
    )
    call(runtime, "ontology_define_type", name="Person",
         attributes={"properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                                    "tags": {"type": "array", "items": {"type": "string"}}},
                     "required": ["name"]},
         relations={"works_for": {"target": "Company"},
                    "knows": {"target": "Person", "many": True}})  # fmt: skip
    companies = "id,name\n" + "".join(f"c{n},Company {n}\n" for n in range(100))
    call(runtime, "ontology_ingest", content=companies,
         mapping={"type": "Company", "key": "id", "attributes": {"name": "name"}})  # fmt: skip
    rng = random.Random(7)
    rows = ["id,name,age,tags,company"]
    rows += [f"p{n},Person {n},{20 + n % 50},t{n % 7};t{n % 11},c{rng.randrange(100)}"
             for n in range(people)]  # fmt: skip
    mapping = {"type": "Person", "key": "id", "attributes": {"name": "name", "age": "age",
               "tags": "tags"}, "relations": {"works_for": "company"}}  # fmt: skip
    call(runtime, "ontology_ingest", content="\n".join(rows) + "\n", mapping=mapping)
    knows = "id,knows\n" + "".join(f"p{n},p{rng.randrange(people)}\n" for n in range(people))
    call(runtime, "ontology_ingest", content=knows,
         mapping={"type": "Person", "key": "id", "relations": {"knows": "knows"}})  # fmt: skip
    db = Path(runtime.config.home) / "plugins" / "tools-ontologist.db"
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0])
    finally:
        conn.close()


def timed(fn, queries: int) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of each call (CPU: this thread's own time, what the
    call costs when the machine is shared and the wall also counts waiting for a CPU)."""
    wall, cpu = [], []
    for n in range(queries):
        start, start_cpu = time.perf_counter(), time.thread_time()
        fn(n)
        cpu.append((time.thread_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
    return wall, cpu


def p(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return round(ordered[max(0, int(len(ordered) * q) - 1)], 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=17_000)
    parser.add_argument("--queries", type=int, default=2_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runtime = make_runtime(Path(tmp), plugins=[("tools-ontologist", toolang_tools_ontologist)])
        started = time.perf_counter()
        facts = load(runtime, args.people)
        loaded = time.perf_counter() - started
        freeze_heap()  # what `toolang run` does once started
        rng = random.Random(1)
        person = [f"p{rng.randrange(args.people)}" for _ in range(args.queries)]
        company = [f"c{rng.randrange(100)}" for _ in range(args.queries)]
        conn = sqlite3.connect(Path(runtime.config.home) / "plugins" / "tools-ontologist.db")
        figures = {
            "subject": timed(lambda n: call(runtime, "ontology_query", subject=person[n]),
                             args.queries),
            "pred+object": timed(lambda n: call(runtime, "ontology_query", predicate="works_for",
                                                object=company[n]), args.queries),
            "depth 2": timed(lambda n: call(runtime, "ontology_query", subject=person[n],
                                            depth=2), args.queries),
            "conflicts": timed(lambda n: call(runtime, "ontology_conflicts", subject=person[n]),
                               args.queries),
            "raw SQL": timed(lambda n: conn.execute(
                "SELECT id, subject, predicate, object, object_kind, source, confidence, "
                "observed_at, status FROM facts WHERE owner = ? AND subject = ? "
                "AND status = 'active'", ["bench", person[n]]).fetchall(), args.queries),
        }  # fmt: skip
        conn.close()
    result: dict[str, object] = {"facts": facts, "load_seconds": round(loaded, 1)}
    print(f"{facts} facts loaded in {loaded:.1f} s; {args.queries} queries of each kind (ms):")
    for kind, (wall, cpu) in figures.items():
        shown = {"p50": p(wall, 0.5), "p95": p(wall, 0.95), "cpu_p95": p(cpu, 0.95)}
        result[kind] = shown
        print(
            f"  {kind:12} p50 {shown['p50']:7.3f}   p95 {shown['p95']:7.3f}   "
            f"cpu p95 {shown['cpu_p95']:7.3f}"
        )
    tool_kinds = [k for k in figures if k != "raw SQL"]
    result["worst_p95"] = max(result[k]["p95"] for k in tool_kinds)  # type: ignore[index]
    result["worst_cpu_p95"] = max(result[k]["cpu_p95"] for k in tool_kinds)  # type: ignore[index]
    result["goal_p95_ms"] = 10
    print(json.dumps(result))


if __name__ == "__main__":
    main()

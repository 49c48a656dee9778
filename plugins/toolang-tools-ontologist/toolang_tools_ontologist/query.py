"""``ontology_query``: facts by subject, predicate and object, and the facts about the
entities they link, hop by hop, up to a depth.

Depth 0 answers the facts matching the pattern. Each further hop adds the facts about
every entity the previous hop's facts touch (their subjects and, for relations, their
objects) that no earlier hop reached, so a cycle ends and each fact appears once with
the hop that found it (``depth``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolang_tools_ontologist.common import OntologyError
from toolang_tools_ontologist.facts import FACT_COLUMNS, shown_fact
from toolang_tools_ontologist.typedefs import canonical

if TYPE_CHECKING:
    from sqlite_utils import Database

CHUNK = 400
"""Entities looked up per statement (under SQLite's bound-parameter limit)."""


def query(
    db: Database,
    owner: str,
    *,
    subject: str | None,
    predicate: str | None,
    obj: Any,
    depth: int,
    include_superseded: bool,
    limit: int,
) -> dict[str, Any]:
    """The answer of ``ontology_query`` (see the module). ``obj`` is ``None`` for any
    object; a string matches an entity's key or the same string value.

    :raises OntologyError: when no subject, predicate or object is given.
    """
    if subject is None and predicate is None and obj is None:
        raise OntologyError("give a subject, a predicate or an object to match (or several)")
    where = ["owner = ?"]
    params: list[Any] = [owner]
    if subject is not None:
        where.append("subject = ?")
        params.append(subject)
    if predicate is not None:
        where.append("predicate = ?")
        params.append(predicate)
    if obj is not None:
        forms = [canonical(obj)] + ([obj] if isinstance(obj, str) else [])
        where.append(f"object IN ({', '.join('?' for _ in forms)})")
        params.extend(forms)
    status = "" if include_superseded else " AND status = 'active'"
    rows = db.execute(
        f"SELECT {FACT_COLUMNS} FROM facts WHERE {' AND '.join(where)}{status} ORDER BY id LIMIT ?",
        [*params, limit + 1],
    ).fetchall()
    facts = [{**shown_fact(r), "depth": 0} for r in rows[:limit]]
    truncated = len(rows) > limit
    seen_facts = {f["id"] for f in facts}
    reached: set[str] = set()
    frontier = _touched(facts) | ({subject} if subject is not None else set())
    for hop in range(1, depth + 1):
        frontier -= reached
        reached |= frontier
        if not frontier or truncated:
            break
        found: list[dict[str, Any]] = []
        keys = sorted(frontier)
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start : start + CHUNK]
            found += [
                {**shown_fact(r), "depth": hop}
                for r in db.execute(
                    f"SELECT {FACT_COLUMNS} FROM facts WHERE owner = ? AND subject IN "
                    f"({', '.join('?' for _ in chunk)}){status} ORDER BY id",
                    [owner, *chunk],
                ).fetchall()
                if r[0] not in seen_facts
            ]
        room = limit - len(facts)
        truncated = len(found) > room
        found = found[:room]
        facts += found
        seen_facts |= {f["id"] for f in found}
        frontier = _touched(found)
    return {"facts": facts, "entities": _entities(db, owner, facts), "truncated": truncated}


def _touched(facts: list[dict[str, Any]]) -> set[str]:
    keys = {f["subject"] for f in facts}
    keys |= {f["object"] for f in facts if f["kind"] == "entity"}
    return keys


def _entities(db: Database, owner: str, facts: list[dict[str, Any]]) -> dict[str, Any]:
    """Type and label of every entity the answer names."""
    keys = sorted(_touched(facts))
    out: dict[str, Any] = {}
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        for key, type_name, label in db.execute(
            f"SELECT key, type, label FROM entities WHERE owner = ? AND key IN "
            f"({', '.join('?' for _ in chunk)})",
            [owner, *chunk],
        ).fetchall():
            out[key] = {"type": type_name, "label": label}
    return out

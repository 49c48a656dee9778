"""Entities and facts as stored: checking one fact against its subject's type, writing
it once, and showing it.

A fact is ``(subject, predicate, object)`` with a ``source``, a ``confidence`` (0 to 1)
and a time (when it was observed; default when it was recorded). Its object is a value
checked against the attribute's schema, or — for a relation — the key of an entity of
the relation's target type. The same active fact (subject, predicate, object and
source) is kept once.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from toolang_tools_ontologist.common import OntologyError
from toolang_tools_ontologist.typedefs import ENTITY_KEY, TypeDef, canonical, load_type

if TYPE_CHECKING:
    from sqlite_utils import Database

FACT_COLUMNS = (
    "id, subject, predicate, object, object_kind, source, confidence, observed_at, status"
)


@attrs.frozen
class NewFact:
    """A fact checked against its subject's type, ready to be written."""

    subject: str
    predicate: str
    object: str
    object_kind: str
    single: bool
    source: str
    confidence: float
    observed_at: float


def parse_time(at: str | None, now: float, where: str = "at") -> float:
    """``at`` (ISO 8601: ``2024-05-01`` or ``2024-05-01T10:00:00Z``) as epoch seconds;
    ``now`` when not given. A time without a zone is UTC.

    :raises OntologyError: naming ``where`` and the expected form.
    """
    if at is None or not at.strip():
        return now
    try:
        when = dt.datetime.fromisoformat(at.strip())
    except ValueError:
        raise OntologyError(
            f"{where}: {at!r} is not a time; expected ISO 8601, e.g. 2024-05-01 or "
            "2024-05-01T10:00:00Z"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


@functools.lru_cache(maxsize=4096)  # facts loaded together share their time
def shown_time(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat().replace("+00:00", "Z")


def check_key(key: str, where: str = "key") -> str:
    if not re.fullmatch(ENTITY_KEY, key):
        raise OntologyError(
            f"{where}: {key!r} is not an entity key; expected letters, digits and "
            "_ . : @ / + - (at most 200, starting with a letter or digit)"
        )
    return key


def entity_type(db: Database, owner: str, key: str) -> str | None:
    row = db.execute(
        "SELECT type FROM entities WHERE owner = ? AND key = ?", [owner, key]
    ).fetchone()
    return None if row is None else str(row[0])


def subject_type(db: Database, owner: str, key: str) -> TypeDef:
    """The type of the owner's entity ``key``.

    :raises OntologyError: when there is no such entity.
    """
    name = entity_type(db, owner, key)
    if name is None:
        raise OntologyError(
            f"subject {key!r} is not an entity; add it first with ontology_add_entity"
        )
    return load_type(db, owner, name)


def checked_fact(
    db: Database,
    owner: str,
    typedef: TypeDef,
    *,
    subject: str,
    predicate: str,
    obj: Any,
    source: str,
    confidence: float,
    observed_at: float,
    targets: Mapping[str, str] | None = None,
) -> NewFact:
    """The fact ``subject predicate obj`` checked against ``typedef`` (the subject's
    type). ``targets``: entity keys not written yet (an ingest's rows) and their types.

    :raises OntologyError: an unknown predicate, a value its schema refuses, or a
        relation's object that is not an entity of the target type — each naming what
        was expected.
    """
    typedef.expect(predicate)
    if not 0.0 <= confidence <= 1.0:
        raise OntologyError(f"confidence: expected 0 to 1, got {confidence}")
    relation = typedef.relations.get(predicate)
    if relation is None:
        problem = typedef.value_problem(predicate, obj)
        if problem is not None:
            raise OntologyError(f"object of {predicate!r} (type {typedef.name!r}): {problem}")
        stored, kind = canonical(obj), "value"
    else:
        where = f"object of relation {predicate!r} (type {typedef.name!r})"
        if not isinstance(obj, str):
            raise OntologyError(f"{where}: expected the key of a {relation.target!r} entity")
        found = (targets or {}).get(obj) or entity_type(db, owner, obj)
        if found != relation.target:
            what = "no entity" if found is None else f"a {found!r}"
            raise OntologyError(
                f"{where}: {obj!r} is {what}; expected the key of a {relation.target!r} entity"
            )
        stored, kind = obj, "entity"
    return NewFact(
        subject,
        predicate,
        stored,
        kind,
        typedef.is_single(predicate),
        source,
        confidence,
        observed_at,
    )


def write_fact(db: Database, owner: str, fact: NewFact, now: float) -> tuple[int, bool]:
    """Write ``fact`` unless the same active fact is kept already; ``(its id, whether it
    was written now)``. Run it inside the caller's transaction."""
    existing = db.execute(
        "SELECT id FROM facts WHERE owner = ? AND subject = ? AND predicate = ? AND object = ? "
        "AND object_kind = ? AND source = ? AND status = 'active'",
        [owner, fact.subject, fact.predicate, fact.object, fact.object_kind, fact.source],
    ).fetchone()
    if existing is not None:
        return int(existing[0]), False
    cursor = db.execute(
        "INSERT INTO facts (owner, subject, predicate, object, object_kind, single, source, "
        "confidence, observed_at, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            owner,
            fact.subject,
            fact.predicate,
            fact.object,
            fact.object_kind,
            int(fact.single),
            fact.source,
            fact.confidence,
            fact.observed_at,
            now,
        ],
    )
    return int(cursor.lastrowid or 0), True


def shown_fact(row: Any) -> dict[str, Any]:
    """A facts row (``FACT_COLUMNS``) as the tools answer it."""
    fact_id, subject, predicate, obj, kind, source, confidence, observed_at, status = row
    return {
        "id": fact_id,
        "subject": subject,
        "predicate": predicate,
        "object": obj if kind == "entity" else json.loads(obj),
        "kind": kind,
        "source": source,
        "confidence": confidence,
        "at": shown_time(observed_at),
        "status": status,
    }

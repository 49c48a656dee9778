"""The ontologist's tools with their JSON Schemas.

Every tool works on the ontology of the calling turn's owner. Writing tools change
nothing when they fail, and record their answer under the call's idempotency key: the
same call made again (a turn resumed after a crash) gets the same answer and writes
nothing — so every tool here is declared idempotent.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from toolang_core import OutsideRoot, ToolCallContext, open_beneath, regular_file
from toolang_tools_ontologist import (
    conflicts as conflict_rules,
    defining,
    ingest as ingesting,
    query as querying,
)
from toolang_tools_ontologist.common import (
    OntologyError,
    constrained,
    once,
    own_database,
    owner_of,
    runtime_of,
    settings_of,
)
from toolang_tools_ontologist.facts import (
    check_key,
    checked_fact,
    entity_type,
    parse_time,
    subject_type,
    write_fact,
)
from toolang_tools_ontologist.reading import format_of, read_table
from toolang_tools_ontologist.typedefs import ENTITY_KEY, PREDICATE, TYPE_NAME, load_type


def ontology_define_type(
    *,
    name: str,
    attributes: dict[str, Any],
    relations: dict[str, Any] | None = None,
    description: str = "",
    replace: bool = False,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Define a type: its attributes as a JSON Schema object, its relations to types.

    An attribute whose schema is an array holds many values; any other holds one, and
    two different values for it are a conflict. Defining the same type again is a
    no-op; a different definition needs replace=true, and every entity must still fit.

    :param name: the type's name, e.g. "Person"
    :param attributes: a JSON Schema object, e.g. {"type": "object", "properties":
        {"age": {"type": "integer"}}, "required": ["age"]}
    :param relations: relations to entities, e.g. {"works_for": {"target": "Company",
        "many": false}}
    :param description: what the type stands for
    :param replace: redefine an existing type
    """
    runtime, owner = runtime_of(context), owner_of(context)
    assert context is not None
    with own_database(runtime) as db, db.atomic():
        return once(
            context,
            "ontology_define_type",
            db,
            owner,
            lambda: defining.define(
                db, owner, name=name, attributes=attributes, relations=relations or {},
                description=description, replace=replace, now=runtime.clock(),
            ),
        )  # fmt: skip


def ontology_add_entity(
    *,
    type: str,
    key: str,
    attributes: dict[str, Any] | None = None,
    label: str = "",
    source: str = "",
    confidence: float = 1.0,
    at: str | None = None,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Add an entity of a type, its attributes checked against the type's schema and
    kept as facts. Adding it again with the same attributes changes nothing; other
    values for an existing entity are added as facts (see ontology_conflicts).

    :param type: the entity's type (defined with ontology_define_type)
    :param key: the entity's unique key, e.g. "person:ada"
    :param attributes: attribute values, e.g. {"name": "Ada", "age": 36}
    :param label: a readable name (default: the key)
    :param source: where the attributes come from, e.g. "hr-export-2024"
    :param confidence: how sure the source is, 0 to 1
    :param at: when the attributes were true (ISO 8601; default now)
    """
    runtime, owner = runtime_of(context), owner_of(context)
    assert context is not None
    check_key(key)
    values = attributes or {}

    def add() -> dict[str, Any]:
        typedef = load_type(db, owner, type)
        existing = entity_type(db, owner, key)
        if existing is not None and existing != type:
            raise OntologyError(f"key: entity {key!r} exists as a {existing!r}, not a {type!r}")
        problem = typedef.attributes_problem(values, new=existing is None)
        if problem is not None:
            raise OntologyError(f"attributes of {key!r} (type {type!r}): {problem}")
        now = runtime.clock()
        when = parse_time(at, now)
        if existing is None:
            db.execute(
                "INSERT INTO entities (owner, key, type, label, created_at) VALUES (?, ?, ?, ?, ?)",
                [owner, key, type, label.strip() or key, now],
            )
        added = [
            write_fact(
                db,
                owner,
                checked_fact(
                    db, owner, typedef, subject=key, predicate=p, obj=v,
                    source=source.strip(), confidence=confidence, observed_at=when,
                ),
                now,
            )
            for p, v in typedef.facts_of(values)
        ]  # fmt: skip
        return {
            "key": key,
            "type": type,
            "created": existing is None,
            "facts": [fact_id for fact_id, _ in added],
            "facts_added": sum(1 for _, new in added if new),
        }

    with own_database(runtime) as db, db.atomic():
        return once(context, "ontology_add_entity", db, owner, add)


def ontology_assert_fact(
    *,
    subject: str,
    predicate: str,
    object: Any,
    source: str = "",
    confidence: float = 1.0,
    at: str | None = None,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Assert a fact about an entity: an attribute value (checked against the type's
    schema) or a relation to another entity (its key). The same fact from the same
    source is kept once.

    :param subject: the entity's key
    :param predicate: an attribute or relation of the subject's type
    :param object: the value, or for a relation the target entity's key
    :param source: where the fact comes from
    :param confidence: how sure the source is, 0 to 1
    :param at: when the fact was true (ISO 8601; default now)
    """
    runtime, owner = runtime_of(context), owner_of(context)
    assert context is not None

    def assert_() -> dict[str, Any]:
        typedef = subject_type(db, owner, subject)
        now = runtime.clock()
        fact = checked_fact(
            db, owner, typedef, subject=subject, predicate=predicate, obj=object,
            source=source.strip(), confidence=confidence, observed_at=parse_time(at, now),
        )  # fmt: skip
        fact_id, new = write_fact(db, owner, fact, now)
        disagree = 0
        if fact.single:
            disagree = db.execute(
                "SELECT COUNT(*) FROM facts WHERE owner = ? AND subject = ? AND predicate = ? "
                "AND status = 'active' AND object != ?",
                [owner, subject, predicate, fact.object],
            ).fetchone()[0]
        return {"id": fact_id, "added": new, "conflicts_with": disagree}

    with own_database(runtime) as db, db.atomic():
        return once(context, "ontology_assert_fact", db, owner, assert_)


def ontology_query(
    *,
    subject: str | None = None,
    predicate: str | None = None,
    object: str | float | bool | None = None,
    depth: int = 0,
    include_superseded: bool = False,
    limit: int = 100,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Find facts by subject, predicate and object (any of them), and with depth > 0
    the facts about the entities they link, hop by hop (each fact says its depth).

    :param subject: an entity's key
    :param predicate: an attribute or relation name
    :param object: a value, or an entity's key
    :param depth: relation hops to follow from the matched facts (0: none)
    :param include_superseded: also facts a resolution superseded
    :param limit: at most this many facts (the answer says truncated)
    """
    runtime, owner = runtime_of(context), owner_of(context)
    top = settings_of(runtime).max_depth
    if depth > top:
        raise OntologyError(f"depth: expected at most {top} ([plugins.tools-ontologist] max_depth)")
    with own_database(runtime) as db:
        return querying.query(
            db, owner, subject=subject, predicate=predicate, obj=object, depth=depth,
            include_superseded=include_superseded, limit=limit,
        )  # fmt: skip


def ontology_conflicts(
    *,
    subject: str | None = None,
    predicate: str | None = None,
    limit: int = 50,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """List contradicting facts: one subject, a single-valued predicate, active facts
    with different objects — each conflict with its facts (source, confidence, time).

    :param subject: only this entity's conflicts
    :param predicate: only this predicate's conflicts
    :param limit: at most this many conflicts
    """
    runtime, owner = runtime_of(context), owner_of(context)
    with own_database(runtime) as db:
        return conflict_rules.conflicts(
            db, owner, subject=subject, predicate=predicate, limit=limit
        )


def ontology_resolve(
    *,
    subject: str,
    predicate: str,
    keep: int | None = None,
    strategy: Literal["newest", "most_confident"] | None = None,
    reason: str = "",
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Resolve a conflict: keep one fact — by id, or the newest, or the most confident —
    and supersede the facts that disagree with it (they stay in the history).

    :param subject: the conflict's subject
    :param predicate: the conflict's predicate
    :param keep: the id of the fact to keep
    :param strategy: instead of keep: "newest" (by time) or "most_confident"
    :param reason: why, kept with the resolution
    """
    runtime, owner = runtime_of(context), owner_of(context)
    assert context is not None
    with own_database(runtime) as db, db.atomic():
        return once(
            context,
            "ontology_resolve",
            db,
            owner,
            lambda: conflict_rules.resolve(
                db, owner, subject=subject, predicate=predicate, keep=keep,
                strategy=strategy, reason=reason, now=runtime.clock(),
            ),
        )  # fmt: skip


def ontology_ingest(
    *,
    mapping: dict[str, Any],
    path: str | None = None,
    content: str | None = None,
    format: Literal["csv", "json", "jsonl"] | None = None,
    dry_run: bool = False,
    context: ToolCallContext | None = None,
) -> dict[str, Any]:
    """Ingest CSV or JSON rows as entities of one type, by a mapping spec; rows that do
    not fit are rejected and listed with their line, the others written together.

    :param mapping: {"type": "Person", "key": "<column>", "label": "<column>",
        "attributes": {"<attribute>": "<column>"}, "relations": {"<relation>":
        "<column>"}, "source": "...", "confidence": 1.0, "at": "<column>",
        "separator": ";"}
    :param path: a file under the ingest root ([plugins.tools-ontologist] ingest_root)
    :param content: the rows inline, instead of path
    :param format: csv, json (an array of objects) or jsonl (default: from the file's name)
    :param dry_run: check and report, write nothing
    """
    runtime, owner = runtime_of(context), owner_of(context)
    assert context is not None
    settings = settings_of(runtime)
    if (path is None) == (content is None):
        raise OntologyError("give path (a file under the ingest root) or content, not both")
    if content is not None:
        if len(content.encode()) > settings.max_ingest_bytes:
            raise OntologyError(f"content: expected at most {settings.max_ingest_bytes} bytes")
        text, fmt = content, format or "csv"
    else:
        assert path is not None
        text, fmt = _read_file(context, path), format_of(path, format)
    table = read_table(text, fmt)
    if len(table.rows) > settings.max_ingest_rows:
        raise OntologyError(
            f"the data has {len(table.rows)} rows; expected at most {settings.max_ingest_rows} "
            "([plugins.tools-ontologist] max_ingest_rows)"
        )

    def run() -> dict[str, Any]:
        return ingesting.ingest(
            db, owner, load_type(db, owner, mapping["type"]), mapping, table,
            source=ingesting.source_of(mapping, path), now=runtime.clock(),
            dry_run=dry_run, shown=settings.max_rejected_shown,
        )  # fmt: skip

    with own_database(runtime) as db, db.atomic():
        return run() if dry_run else once(context, "ontology_ingest", db, owner, run)


def _read_file(context: ToolCallContext, path: str) -> str:
    """The text of ``path`` inside the ingest root.

    :raises OntologyError: a path outside the root, a missing, too large or non-UTF-8 file.
    """
    runtime = runtime_of(context)
    settings = settings_of(runtime)
    configured = settings.ingest_root
    root = Path(configured) if configured is not None else Path(runtime.config.home) / "ingest"
    if not root.is_absolute():
        root = Path(runtime.config.base_dir) / root
    configured, root = Path(os.path.normpath(root)), root.resolve()
    if configured.resolve() != root:  # its words lead elsewhere ("data/.." past a link)
        configured = root
    try:  # opened beneath the root: no link swapped in meanwhile leads out of it
        fd = open_beneath(
            root,
            path,
            os.O_RDONLY | os.O_NONBLOCK,
            what="the ingest root",
            configured=configured,  # an absolute path through a link to the root
        )
    except OutsideRoot:
        raise OntologyError(
            f"path: {path!r} is outside the ingest root {root}; expected a file under it"
        ) from None
    except OSError:
        raise OntologyError(f"path: {path!r} is not a file under the ingest root {root}") from None
    try:
        regular_file(fd, path)
    except OSError:
        os.close(fd)
        raise OntologyError(f"path: {path!r} is not a file under the ingest root {root}") from None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(settings.max_ingest_bytes + 1)
    if len(data) > settings.max_ingest_bytes:
        raise OntologyError(f"path: {path!r} is over {settings.max_ingest_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise OntologyError(f"path: {path!r} is not UTF-8 text") from None


KEY = {"pattern": ENTITY_KEY}
PRED = {"pattern": PREDICATE}
TEXT = {"maxLength": 500}

TOOLS = (
    constrained(
        ontology_define_type,
        idempotent=True,
        name={"pattern": TYPE_NAME},
        attributes={"additionalProperties": True},
        description={"maxLength": 2_000},
    ),
    constrained(
        ontology_add_entity,
        idempotent=True,
        type={"pattern": TYPE_NAME},
        key=KEY,
        label={"maxLength": 200},
        source=TEXT,
        confidence={"minimum": 0, "maximum": 1},
        at={"maxLength": 64},
    ),
    constrained(
        ontology_assert_fact,
        idempotent=True,
        subject=KEY,
        predicate=PRED,
        source=TEXT,
        confidence={"minimum": 0, "maximum": 1},
        at={"maxLength": 64},
    ),
    constrained(
        ontology_query,
        idempotent=True,
        subject=KEY,
        predicate=PRED,
        depth={"minimum": 0, "maximum": 10},
        limit={"minimum": 1, "maximum": 1_000},
    ),
    constrained(
        ontology_conflicts,
        idempotent=True,
        subject=KEY,
        predicate=PRED,
        limit={"minimum": 1, "maximum": 500},
    ),
    constrained(
        ontology_resolve,
        idempotent=True,
        subject=KEY,
        predicate=PRED,
        keep={"minimum": 1},
        reason={"maxLength": 2_000},
    ),
    constrained(
        ontology_ingest,
        idempotent=True,
        mapping=ingesting.MAPPING_SCHEMA,
        path={"minLength": 1, "maxLength": 1_000},
        content={"minLength": 1},
    ),
)

"""``ontology_conflicts`` and ``ontology_resolve``.

A conflict: one subject, a single-valued predicate, and active facts with different
objects. Resolving keeps one fact — chosen by id, or the newest (by its time), or the
most confident — and supersedes the active facts that disagree with it (facts that
agree stay active). Superseded facts are kept, with the resolution that superseded
them, and ``ontology_query`` shows them with ``include_superseded``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from toolang_tools_ontologist.common import OntologyError
from toolang_tools_ontologist.facts import FACT_COLUMNS, shown_fact

if TYPE_CHECKING:
    from sqlite_utils import Database

Strategy = Literal["newest", "most_confident"]


def conflicts(
    db: Database, owner: str, *, subject: str | None, predicate: str | None, limit: int
) -> dict[str, Any]:
    """The owner's conflicts (by subject, then predicate), each with its active facts."""
    where = ["owner = ?", "single = 1", "status = 'active'"]
    params: list[Any] = [owner]
    if subject is not None:
        where.append("subject = ?")
        params.append(subject)
    if predicate is not None:
        where.append("predicate = ?")
        params.append(predicate)
    pairs = db.execute(
        f"SELECT subject, predicate FROM facts WHERE {' AND '.join(where)} "
        "GROUP BY subject, predicate HAVING COUNT(DISTINCT object) > 1 "
        "ORDER BY subject, predicate LIMIT ?",
        [*params, limit + 1],
    ).fetchall()
    return {
        "conflicts": [
            {"subject": s, "predicate": p, "facts": _active(db, owner, s, p)}
            for s, p in pairs[:limit]
        ],
        "truncated": len(pairs) > limit,
    }


def _active(db: Database, owner: str, subject: str, predicate: str) -> list[dict[str, Any]]:
    found = db.execute(
        f"SELECT {FACT_COLUMNS} FROM facts WHERE owner = ? AND subject = ? AND predicate = ? "
        "AND status = 'active' ORDER BY id",
        [owner, subject, predicate],
    )
    return [shown_fact(r) for r in found.fetchall()]


def resolve(
    db: Database,
    owner: str,
    *,
    subject: str,
    predicate: str,
    keep: int | None,
    strategy: Strategy | None,
    reason: str,
    now: float,
) -> dict[str, Any]:
    """Resolve the conflict of ``subject``/``predicate``; run inside a transaction.

    :raises OntologyError: no conflict there, neither or both of ``keep`` and
        ``strategy``, or ``keep`` not one of the conflict's active facts.
    """
    if (keep is None) == (strategy is None):
        raise OntologyError("give keep (a fact id) or strategy (newest, most_confident), not both")
    rows = db.execute(
        "SELECT id, object, confidence, observed_at FROM facts WHERE owner = ? AND subject = ? "
        "AND predicate = ? AND status = 'active' AND single = 1 ORDER BY id",
        [owner, subject, predicate],
    ).fetchall()
    if len({r[1] for r in rows}) < 2:
        raise OntologyError(
            f"subject {subject!r}, predicate {predicate!r}: no conflict to resolve (see "
            "ontology_conflicts)"
        )
    if keep is not None:
        kept = next((r for r in rows if r[0] == keep), None)
        if kept is None:
            raise OntologyError(
                f"keep: fact {keep} is not one of the conflict's active facts; expected one "
                f"of {[r[0] for r in rows]}"
            )
    elif strategy == "newest":
        kept = max(rows, key=lambda r: (r[3], r[0]))
    else:
        kept = max(rows, key=lambda r: (r[2], r[3], r[0]))
    superseded = [r[0] for r in rows if r[1] != kept[1]]
    cursor = db.execute(
        "INSERT INTO resolutions (owner, subject, predicate, kept, superseded, strategy, reason, "
        "resolved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [owner, subject, predicate, kept[0], json.dumps(superseded), strategy or "keep",
         reason.strip(), now],
    )  # fmt: skip
    resolution = int(cursor.lastrowid or 0)
    db.execute(
        f"UPDATE facts SET status = 'superseded', resolution_id = ? WHERE owner = ? AND id IN "
        f"({', '.join('?' for _ in superseded)})",
        [resolution, owner, *superseded],
    )
    kept_row = db.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ?", [kept[0]]).fetchone()
    return {
        "resolution": resolution,
        "kept": shown_fact(kept_row),
        "superseded": superseded,
        "strategy": strategy or "keep",
    }

"""Semantic recall (``semantic = true``): each entry's embedding in a pgvector column,
nearest entries by cosine similarity, blended with the full-text rank.

**Setting up.** The first time the plugin opens its database with semantic recall on,
:func:`prepare` finds the ``vector`` extension (creating it in schema ``public`` when
the role may) and adds ``memory_entries.embedding vector(N)`` — ``N`` the embedding
model's dimensions — under a transaction-scoped advisory lock, so nodes starting
together add it once. A column of another size is refused (:class:`SemanticError`
naming both sizes), never written with vectors of the wrong size. The session's
``search_path`` is the plugin's schema only, so the type and the ``<=>`` operator are
named with the extension's schema.

**Ranking: a weighted sum.** ``relevance = (1 - semantic_weight) * text +
semantic_weight * similarity``, where ``text`` is the entry's full-text rank over the
best one's (0 to 1, 0 when its words do not match) and ``similarity`` its cosine
similarity to the query (below 0 counted as 0); then recency and uses as without
semantic recall. A weighted sum rather than reciprocal-rank fusion: a cosine similarity
is an absolute measure (0.9 is a near paraphrase in every recall), and RRF keeps only
ranks — it would score a barely similar entry that ranks first among few as high as a
paraphrase, and give scores that mean nothing across recalls; the weighted sum keeps
scores between 0 and 1, as the memory contract's are. Entries found only by similarity
must reach ``min_similarity``, so a recall with nothing related returns nothing.

**Older entries.** Entries written while semantic recall was off have no embedding:
each write also embeds up to ``backfill_batch`` of them from its own scope (the newest
first), in the same ``embed`` call, and stores them in its transaction.

**Bounded work.** Nearest entries are searched exactly (no approximate index: an HNSW
index filtered by agent and owner may miss the owner's entries) among the scope's
newest ``semantic_scan`` entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import attrs

from toolang_core import PluginDatabase
from toolang_core.models import EmbeddingModel
from toolang_memory_postgres.errors import PostgresMemoryError
from toolang_memory_postgres.ranking import Candidate
from toolang_memory_postgres.schema import ENTRIES
from toolang_memory_postgres.settings import NAME, MemoryPostgresSettings
from toolang_memory_postgres.statements import LIVE, SCOPE, live_in

LOCK_KEY: Final = 0x7E_C7_0B
"""The second key of the advisory lock adding the column (the first: the schema's hash)."""
_EXTENSION: Final = (
    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
    "WHERE e.extname = 'vector'"
)


class SemanticError(PostgresMemoryError):
    """Semantic recall cannot work here: no pgvector, a column of another size, an
    embedding model that failed. The message names the setting or what to install."""


@attrs.frozen
class Vectors:
    """Where the embeddings live: the extension's schema and the column's size."""

    schema: str
    dimensions: int

    @property
    def type(self) -> str:
        return f'"{self.schema}".vector'

    @property
    def distance(self) -> str:
        """The cosine distance operator, named with its schema."""
        return f'OPERATOR("{self.schema}".<=>)'


def literal(vector: Sequence[float]) -> str:
    """``vector`` as pgvector's text form, ``[0.1,0.2]``."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def prepare(
    db: PluginDatabase, model: EmbeddingModel, model_name: str, *, lock_timeout_ms: int
) -> Vectors:
    """The extension found (or created) and the ``embedding`` column of the model's size
    (waiting at most ``lock_timeout_ms`` for the table's lock to add it).

    :raises SemanticError: no pgvector in the database (naming it and what to install),
        or a column of another size (naming both sizes and what to do).
    """
    dimensions = int(model.dimensions)
    schema = _extension(db)
    with db.transaction():
        db.execute("SELECT set_config('lock_timeout', ?, true)", [f"{lock_timeout_ms}ms"])
        db.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema()), ?::int)", [LOCK_KEY])
        found = db.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = ?::regclass "
            "AND attname = 'embedding' AND NOT attisdropped",
            [ENTRIES],
        ).fetchone()
        if found is None:
            db.execute(
                f'ALTER TABLE {ENTRIES} ADD COLUMN embedding "{schema}".vector({dimensions})'
            )
            # What writes fill in (fill()): entries without an embedding, per scope.
            db.execute(
                f"CREATE INDEX {ENTRIES}_unembedded ON {ENTRIES} "
                "(agent_id, coalesce(owner, ''), updated_at) WHERE embedding IS NULL"
            )
        elif int(found[0]) != dimensions:
            raise SemanticError(
                f"{NAME}: the stored embeddings ({ENTRIES}.embedding on {db.where}) have "
                f"{found[0]} dimensions, but embedding model {model_name!r} ([plugins.{NAME}] "
                f"embedding_model) gives {dimensions}; configure the model they were made "
                f"with, or drop them to start over (ALTER TABLE {ENTRIES} DROP COLUMN "
                "embedding: older entries are then recalled by their words until rewritten)"
            )
    return Vectors(schema, dimensions)


def _extension(db: PluginDatabase) -> str:
    """The schema the ``vector`` extension is in, created in ``public`` when missing."""
    found = db.execute(_EXTENSION).fetchone()
    if found is not None:
        return str(found[0])
    database = db.execute("SELECT current_database()").fetchone()[0]
    try:
        db.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    except Exception as exc:
        raise SemanticError(
            f"{NAME}: semantic = true needs the pgvector extension in database "
            f"{database!r} ({db.where}), and CREATE EXTENSION vector failed: "
            f"{str(exc).strip()}. Install pgvector on the server (Debian: postgresql-<major>"
            f"-pgvector; https://github.com/pgvector/pgvector) and run CREATE EXTENSION "
            f"vector in {database!r} as a role allowed to, or set [plugins.{NAME}] semantic "
            "= false"
        ) from None
    found = db.execute(_EXTENSION).fetchone()
    return str(found[0])


def embed(model: EmbeddingModel, name: str, texts: Sequence[str], dimensions: int) -> list[str]:
    """``texts`` embedded, as pgvector literals.

    :raises SemanticError: the model failed, or gave vectors of another size.
    """
    try:
        vectors = model.embed(list(texts))
    except Exception as exc:
        raise SemanticError(
            f"{NAME}: embedding model {name!r} ([plugins.{NAME}] embedding_model) failed: "
            f"{type(exc).__name__}: {str(exc).strip()[:300]}"
        ) from exc
    if len(vectors) != len(texts) or any(len(v) != dimensions for v in vectors):
        sizes = sorted({len(v) for v in vectors})
        raise SemanticError(
            f"{NAME}: embedding model {name!r} gave {len(vectors)} vectors of {sizes} "
            f"dimensions for {len(texts)} texts; expected {dimensions} dimensions each"
        )
    return [literal(v) for v in vectors]


def unembedded(
    db: PluginDatabase, scope: tuple[str, str | None], now: float, limit: int
) -> list[tuple[int, str, float]]:
    """Up to ``limit`` live entries of the scope ``(agent, owner)`` without an embedding
    (written while semantic recall was off), newest first: ``(id, text, updated_at)``."""
    if limit <= 0:
        return []
    agent_id, owner = scope
    rows = db.execute(
        f"SELECT id, text, updated_at FROM {ENTRIES} WHERE {SCOPE} AND {LIVE} "
        "AND embedding IS NULL ORDER BY updated_at DESC LIMIT ?",
        [agent_id, owner, owner, now, limit],
    ).fetchall()
    return [(int(r[0]), str(r[1]), float(r[2])) for r in rows]


def fill(
    db: PluginDatabase,
    vectors: Vectors,
    entries: Sequence[tuple[int, str, float]],
    embedded: Sequence[str],
) -> None:
    """Store the embeddings of ``entries`` (from :func:`unembedded`), unless an entry
    was rewritten since it was read (its text may differ) or was filled already."""
    if entries:
        db.executemany(
            f"UPDATE {ENTRIES} SET embedding = ?::{vectors.type} "
            "WHERE id = ? AND updated_at = ? AND embedding IS NULL",
            [
                (vector, id_, updated)
                for (id_, _, updated), vector in zip(entries, embedded, strict=True)
            ],
        )


def nearest(
    db: PluginDatabase,
    vectors: Vectors,
    request_scope: tuple[str, str | None, str | None],
    query: str,
    *,
    also: Sequence[int],
    now: float,
    settings: MemoryPostgresSettings,
) -> dict[int, tuple[float, float, int]]:
    """The scope's live entries nearest ``query`` (a pgvector literal) that reach
    ``min_similarity`` — the best ``semantic_candidates`` of its newest ``semantic_scan``
    — and the entries ``also`` (the full-text candidates), whatever their similarity:
    ``{id: (similarity, updated_at, chars)}``."""
    where, scope = live_in(request_scope, now)
    distance = f"embedding {vectors.distance} q.v"
    rows = db.execute(
        f"WITH q AS (SELECT ?::{vectors.type} AS v), "
        f"s AS (SELECT id, updated_at, length(text) AS chars, embedding FROM {ENTRIES} "
        f"WHERE {where} AND embedding IS NOT NULL ORDER BY updated_at DESC LIMIT ?), "
        f"n AS (SELECT s.id, s.updated_at, s.chars, 1 - ({distance}) AS similarity FROM s, q "
        f"ORDER BY {distance} LIMIT ?) "
        f"SELECT id, updated_at, chars, similarity FROM n WHERE similarity >= ? "
        f"UNION SELECT e.id, e.updated_at, length(e.text), "
        f"coalesce(1 - (e.embedding {vectors.distance} q.v), 0) FROM {ENTRIES} e, q "
        f"WHERE e.id = ANY(?)",
        [
            query,
            *scope,
            settings.semantic_scan,
            settings.semantic_candidates,
            settings.min_similarity,
            list(also),
        ],
    ).fetchall()
    return {int(r[0]): (float(r[3]), float(r[1]), int(r[2])) for r in rows}


def hybrid(
    found: Sequence[Candidate], near: dict[int, tuple[float, float, int]], weight: float
) -> list[Candidate]:
    """The full-text candidates and the nearest entries as candidates whose (negated)
    rank is ``(1 - weight) * text + weight * similarity`` (module docstring)."""
    best = -min([c[1] for c in found], default=0.0)
    text = {c[0]: (-c[1] / best if best > 0 else 1.0) for c in found}
    merged: list[Candidate] = []
    for id_, (similarity, updated_at, chars) in near.items():
        score = (1.0 - weight) * text.get(id_, 0.0) + weight * max(0.0, similarity)
        merged.append((id_, -score, updated_at, chars))
    seen = set(near)
    merged.extend(
        (c[0], -(1.0 - weight) * text[c[0]], c[2], c[3]) for c in found if c[0] not in seen
    )
    return [c for c in merged if c[1] < 0.0]

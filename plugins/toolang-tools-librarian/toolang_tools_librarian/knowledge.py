"""``search_knowledge`` and ``save_knowledge``.

A search looks through two shelves: what the KnowledgeSaver kept from tool results
(its documented table ``knowledge``, read only, on the store's backend:
``<home>/plugins/hook-knowledge-saver.db`` or its PostgreSQL schema) and what agents
saved on purpose with ``save_knowledge`` (this plugin's table). Both are limited to
the calling turn's owner: a kept entry counts only when the turn it came from belongs
to the same owner.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from toolang_core import ToolCallContext, is_own
from toolang_tools_librarian.common import (
    LibrarianError,
    TurnOwners,
    documented_table,
    insert_once,
    own_database,
    owner_of,
    rows,
    runtime_of,
    settings_of,
    sql_for,
)
from toolang_tools_librarian.settings import KNOWLEDGE_SAVER

SHOWN_CHARS = 1_000


def terms_of(query: str) -> list[str]:
    """The distinct words of ``query``, lowercased, in order.

    :raises LibrarianError: when it has no word to look for.
    """
    words = list(dict.fromkeys(re.findall(r"\w+", query.lower())))
    if not words:
        raise LibrarianError(f"query {query!r} has no word to search for")
    return words[:20]


def _matched(text: str, words: list[str]) -> int:
    lowered = text.lower()
    return sum(1 for w in words if w in lowered)


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + " …"


def _kept(context: ToolCallContext, words: list[str], agent: str | None) -> list[dict[str, Any]]:
    runtime = runtime_of(context)
    kept = documented_table(runtime, KNOWLEDGE_SAVER)
    if kept is None:
        return []
    owner = owner_of(context)
    owners = TurnOwners(runtime)
    where = " OR ".join(sql_for(kept).contains("content") for _ in words)
    params: list[Any] = list(words)
    if agent is not None:
        where = f"agent = ? AND ({where})"
        params.insert(0, agent)
    found = rows(
        kept,
        "knowledge",
        "SELECT id, agent, tool, params, content, turn_id, thread_id, last_seen_at "
        f"FROM knowledge WHERE id IN (SELECT id FROM knowledge ORDER BY id DESC LIMIT ?) "
        f"AND ({where})",
        [settings_of(runtime).knowledge_scan, *params],
    )
    return [
        {
            "source": "kept",
            "id": entry_id,
            "agent": who,
            "tool": tool,
            "params": call_params,
            "content": _cut(content),
            "thread_id": thread_id,
            "at": at,
            "matched": _matched(content, words),
        }
        for entry_id, who, tool, call_params, content, turn_id, thread_id, at in found
        if is_own(owners.of(turn_id), owner)
    ]


def _saved(context: ToolCallContext, words: list[str], agent: str | None) -> list[dict[str, Any]]:
    db = own_database(runtime_of(context))
    sql, params = sql_for(db).saved_search(words, owner_of(context), agent)
    found = db.execute(sql, params)
    return [
        {
            "source": "saved",
            "id": entry_id,
            "agent": who,
            "topic": topic,
            "content": _cut(content),
            "thread_id": thread_id,
            "at": at,
            "matched": _matched(f"{topic} {content}", words),
        }
        for entry_id, who, topic, content, thread_id, at in found.fetchall()
    ]


def search_knowledge(
    query: str,
    limit: int = 5,
    agent: str | None = None,
    context: ToolCallContext | None = None,
) -> list[dict[str, Any]]:
    """Search the knowledge kept from earlier tool results and saved on purpose.

    Best matches first (most query words found, then newest). Each hit says where it
    came from: ``kept`` (a tool result the KnowledgeSaver kept: agent, tool, params) or
    ``saved`` (save_knowledge: topic).

    :param query: words to look for
    :param limit: at most this many hits (1 to 50)
    :param agent: only what this agent kept or saved
    """
    assert context is not None
    words = terms_of(query)
    hits = _kept(context, words, agent) + _saved(context, words, agent)
    hits.sort(key=lambda h: (-h["matched"], -h["at"]))
    return hits[:limit]


def save_knowledge(
    content: str, topic: str = "", context: ToolCallContext | None = None
) -> dict[str, Any]:
    """Save a piece of knowledge for later searches (the same text is kept once).

    :param content: what to keep, written so it stands on its own
    :param topic: a few words it is about, e.g. "deploy procedure"
    """
    assert context is not None
    if not content.strip():
        raise LibrarianError("content is empty: write the knowledge to save")
    owner = owner_of(context)
    digest = hashlib.sha256(content.strip().encode()).hexdigest()
    db = own_database(runtime_of(context))
    with db.transaction():
        entry_id, inserted = insert_once(
            db,
            "saved_knowledge",
            "content_hash",
            {
                "owner": owner,
                "agent": context.agent,
                "topic": topic.strip(),
                "content": content.strip(),
                "content_hash": digest,
                "thread_id": context.thread_id,
                "turn_id": context.turn_id,
                "call_id": context.call_id,
                "created_at": runtime_of(context).clock(),
            },
        )
        if not inserted:
            return {"id": entry_id, "saved": False, "reason": "already saved"}
        sql_for(db).saved_indexed(db, entry_id, topic.strip(), content.strip())
    return {"id": entry_id, "saved": True}

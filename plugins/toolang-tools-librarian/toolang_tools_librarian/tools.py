"""The librarian's tools with their JSON Schemas.

Schemas come from the functions' hints and docstrings, tightened here (lengths,
ranges, name patterns) so bad parameters are refused before any hook runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolang_core import Tool
from toolang_tools_librarian import knowledge, learning, rag

TOOL_NAME = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
AGENT_NAME = r"^[a-z][a-z0-9_-]{0,63}$"
QUERY = {"minLength": 1, "maxLength": 500, "pattern": r"\w"}
TEXT = {"minLength": 1, "maxLength": 20_000, "pattern": r"\S"}


def constrained(function: Callable[..., Any], **properties: Mapping[str, Any]) -> Tool:
    """``Tool.from_function(function)`` with extra JSON Schema keywords per parameter."""
    return Tool.from_function(function).constrain(**properties)


TOOLS = (
    constrained(
        knowledge.search_knowledge,
        query=QUERY,
        limit={"minimum": 1, "maximum": 50},
        agent={"pattern": AGENT_NAME},
    ),
    constrained(knowledge.save_knowledge, content=TEXT, topic={"maxLength": 200}),
    constrained(
        learning.save_learning,
        lesson={**TEXT, "maxLength": 4_000},
        tool={"pattern": TOOL_NAME},
    ),
    constrained(
        learning.learning_stats,
        tool={"pattern": TOOL_NAME},
        agent={"pattern": AGENT_NAME},
        since_hours={"exclusiveMinimum": 0, "maximum": 24 * 365},
    ),
    constrained(
        learning.learning_failures,
        tool={"pattern": TOOL_NAME},
        limit={"minimum": 1, "maximum": 100},
        since_hours={"exclusiveMinimum": 0, "maximum": 24 * 365},
    ),
    constrained(
        rag.rag_index,
        directory={"minLength": 1, "maxLength": 1_000},
        index={"pattern": rag.INDEX_NAME},
    ),
    constrained(
        rag.rag_query,
        query=QUERY,
        index={"pattern": rag.INDEX_NAME},
        limit={"minimum": 1, "maximum": 50},
    ),
)

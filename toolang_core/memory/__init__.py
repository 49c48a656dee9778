"""Memory: the contract between the runtime and the one configured memory plugin.

Memory plugins import these types from here (a public namespace, like
``toolang_core.models``); see ``docs/hooks/memory.md``.
"""

from toolang_core.memory.types import (
    MemoryEntry,
    MemoryFact,
    MemoryForget,
    MemoryForgetResult,
    MemoryHealth,
    MemoryItem,
    MemoryLimits,
    MemoryListRequest,
    MemoryPlugin,
    MemoryRecallRequest,
    MemoryRecallResult,
    MemorySummary,
    MemoryWriteBatch,
    MemoryWriteResult,
    Provenance,
)

__all__ = [
    "MemoryEntry",
    "MemoryFact",
    "MemoryForget",
    "MemoryForgetResult",
    "MemoryHealth",
    "MemoryItem",
    "MemoryLimits",
    "MemoryListRequest",
    "MemoryPlugin",
    "MemoryRecallRequest",
    "MemoryRecallResult",
    "MemorySummary",
    "MemoryWriteBatch",
    "MemoryWriteResult",
    "Provenance",
]

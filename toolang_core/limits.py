"""Bounds on what toolang accepts from people and files, in one place.

Every value here is checked at the door (the inbox, the configuration, the agent
registry) so that nothing a store or a prompt cannot hold gets in: SQLite stores
integers in 64 bits, a thread id ends up in logs and file names, an instruction in
every prompt of its agent.
"""

from __future__ import annotations

from typing import Final

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

PRIORITY_LIMIT: Final = 1_000_000
"""A priority is an integer in ``[-PRIORITY_LIMIT, PRIORITY_LIMIT]`` (defaults are 0-40)."""

THREAD_ID_MAX: Final = 256
"""Characters in a thread id at most."""

AGENT_MD_MAX_CHARS: Final = 256 * 1024
"""An AGENT.md (front matter and instruction) at most; a bigger one is refused."""

"""The ``bump`` tool the agent-turn tests count calls with (tests/test_agent_turns.py,
test_model_retry.py, test_spend_limits.py): a side effect the tests can see."""

from __future__ import annotations

import pytest

from toolang_core import Tool, hookimpl

BUMPED: list[str] = []
"""The labels ``bump`` was called with, in order (cleared by ``clear_bumps``)."""


def bump(label: str) -> str:
    """Count a call (a side effect the tests can see)."""
    BUMPED.append(label)
    return f"bumped {label}"


class BumpTools:
    """A plugin registering ``bump`` (and ``extra`` tools besides)."""

    def __init__(self, *extra: Tool) -> None:
        self.extra = extra

    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(bump, blocking=False))
        for tool in self.extra:
            register(tool)


@pytest.fixture(autouse=True)
def clear_bumps():
    """Every test starts with no bumps (import it into a test module to use it)."""
    BUMPED.clear()

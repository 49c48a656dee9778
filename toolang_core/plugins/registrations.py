"""The records of what a plugin registered: a component, a tool, an agent source, a route.

Plain attrs records, kept apart from the code that collects them
(:mod:`toolang_core.plugins.components`, :mod:`toolang_core.plugins.routes`) so that
:mod:`toolang_core.runtime_view` can name them without importing the plugin host.
Both modules re-export them; import them from there or from ``toolang_core``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from toolang_core.plugins.registrars import Factory
from toolang_core.store.types import GroupPolicy
from toolang_core.tools.tool import Tool

if TYPE_CHECKING:
    from toolang_core.agents.types import AgentSource


@attrs.frozen
class Registration:
    """A named component offered by a plugin: its factory and where it came from."""

    kind: str
    name: str
    factory: Factory
    plugin: str
    description: str = ""
    admission: GroupPolicy | None = None
    """A turn source's thread-group defaults, when it declared them."""


@attrs.frozen
class ToolRegistration:
    tool: Tool
    plugin: str


@attrs.frozen
class AgentSourceRegistration:
    source: AgentSource
    plugin: str


@attrs.frozen
class RouteRegistration:
    """One route offered by a plugin."""

    path: str
    endpoint: Callable[..., Any]
    methods: tuple[str, ...]
    plugin: str
    name: str = ""
    summary: str = ""
    auth: bool = True

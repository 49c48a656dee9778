"""The ``register`` callables handed to ``toolang_register_*`` hooks.

A registration hook receives one of these and calls it zero or more times. The
host binds each callable to the plugin being asked, so every contribution knows
where it came from, and validates the arguments at once: a bad registration is
reported against the plugin and hook that made it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from toolang_core.plugins.context import PluginContext
    from toolang_core.store.types import GroupPolicy
    from toolang_core.tools.tool import Tool

T_co = TypeVar("T_co", covariant=True)

Factory = Callable[["PluginContext"], Any]
"""Builds a component when the runtime selects it; receives the plugin's context."""


class RegisterSettings(Protocol):
    """``register(settings_class)``: declare the plugin's ``[plugins.<name>]`` section.

    ``settings_class`` is an attrs class whose fields are the section's keys; ``<name>``
    is the plugin's own entry-point name. The host validates the section with the same
    rules and messages as the core configuration.
    """

    def __call__(self, settings_class: type[Any]) -> None: ...


class RegisterFactory(Protocol):
    """``register(name, factory, *, description="")``: offer a named component.

    Used by the store, model, memory and turn-source families. ``factory`` is called
    with a :class:`~toolang_core.plugins.context.PluginContext` only when the
    configuration selects ``name``, so registration stays cheap.
    """

    def __call__(self, name: str, factory: Factory, *, description: str = "") -> None: ...


class RegisterTurnSource(Protocol):
    """``register(name, factory, *, description="", admission=None)``: offer a turn
    source.

    Like :class:`RegisterFactory`; ``admission``, a
    :class:`~toolang_core.store.types.GroupPolicy`, declares the defaults of the thread
    group the source submits to (the group named like the source): its priority,
    busy-thread strategy, queue limit and running cap. ``[scheduler.groups.<name>]``
    overrides them; without either, the group gets the generic fallback.
    """

    def __call__(
        self,
        name: str,
        factory: Factory,
        *,
        description: str = "",
        admission: GroupPolicy | None = None,
    ) -> None: ...


class RegisterTool(Protocol):
    """``register(tool)``: offer a tool the agents may call — a
    :class:`~toolang_core.tools.Tool`, or a plain function whose type hints and docstring
    describe it (see ``Tool.from_function``)."""

    def __call__(self, tool: Tool | Callable[..., Any]) -> None: ...


class RegisterRoute(Protocol):
    """``register(path, endpoint, *, methods=("GET",), name="", summary="", auth=True)``:
    offer an HTTP route to the runtime's server.

    ``path`` is a Starlette path template (``/api/things/{thing_id}``); ``endpoint`` an
    async callable taking a Starlette request and returning a response; ``summary`` is
    the one line the OpenAPI document shows; ``auth=False`` leaves the route open to
    callers without the server's token (a health probe, a webhook checking its own
    signature).
    """

    def __call__(
        self,
        path: str,
        endpoint: Callable[..., Any],
        *,
        methods: tuple[str, ...] = ("GET",),
        name: str = "",
        summary: str = "",
        auth: bool = True,
    ) -> None: ...

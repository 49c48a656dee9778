"""What a hook or a tool may use of the runtime it runs in.

The contexts handed to hooks and tools (:class:`~toolang_core.tools.ToolCallContext`,
:class:`~toolang_core.execution.seam.TurnContext`) carry the runtime typed as
:class:`RuntimeView`, not as the concrete :class:`~toolang_core.runtime.Runtime`: a
plugin reads its settings, keeps per-runtime state and its own database, reads the
configuration, the clock, the execution store, memory, the agents and the task runs,
reads what the plugins registered (:class:`ComponentsReader`, :class:`PluginsReader`),
masks text with the runtime's redaction policy, and publishes events — and nothing of
the plugin host's, the scheduler's, the inbox's or the admission policy's internals: no
hook is called and nothing is registered through the view. The runtime implements it; a
test may hand a context any object that does (a real runtime is the usual one).

A leaf module: the types it names are imported for type checking only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

if TYPE_CHECKING:
    from sqlite_utils import Database, Migrations

    from toolang_core.agents.catalog import AgentCatalog
    from toolang_core.config.model import ToolangConfig
    from toolang_core.events import Event
    from toolang_core.hookspecs.rules import HookFailure
    from toolang_core.memory.service import MemoryService
    from toolang_core.plugins.records import PluginRecord
    from toolang_core.plugins.registrations import (
        AgentSourceRegistration,
        Registration,
        RouteRegistration,
        ToolRegistration,
    )
    from toolang_core.redaction import RedactionPolicy
    from toolang_core.store.plugin_tables import PluginDatabase, PluginMigrations
    from toolang_core.store.protocol import ExecutionStore
    from toolang_core.taskruns.port import TaskRuns

S = TypeVar("S")
T = TypeVar("T")


class ComponentsReader(Protocol):
    """What the active plugins registered, read-only (the runtime's is the host's)."""

    @property
    def tools(self) -> Mapping[str, ToolRegistration]:
        """Every tool a model may be offered, by name, with the plugin that registered it."""

    @property
    def withheld_tools(self) -> Mapping[str, str]:
        """Tools registered but not offered, by name, with why."""

    @property
    def agent_sources(self) -> Sequence[AgentSourceRegistration]:
        """The agent sources the plugins returned, in registration order."""

    def of_kind(self, kind: str) -> Mapping[str, Registration]:
        """The registrations of one kind (``"model"``, ``"turn source"``, ``"store"`` …)."""
        ...

    def provided_by(self, plugin: str) -> Mapping[str, list[str]]:
        """What ``plugin`` registered: kind → sorted names."""
        ...


class PluginsReader(Protocol):
    """The runtime's plugins as records and hook implementations, read-only."""

    @property
    def records(self) -> Sequence[PluginRecord]:
        """Every plugin the host knows of (active, disabled, failed), by name."""

    @property
    def active_names(self) -> Sequence[str]:
        """The names of the plugins whose hooks are called."""

    @property
    def failures(self) -> Sequence[PluginRecord]:
        """The plugins that failed to import or register."""

    def record(self, name: str) -> PluginRecord:
        """Plugin ``name``'s record (:raises KeyError: when there is none)."""
        ...

    def implementations(self, hook: str) -> list[str]:
        """Names of the plugins implementing ``hook``, in the order they are called."""
        ...

    def chain(self) -> list[tuple[str, str, list[str]]]:
        """The tool-call chain as registered: ``(stage, hook, plugins in call order)``."""
        ...


class RuntimeView(Protocol):
    """The runtime as hooks and tools see it."""

    @property
    def config(self) -> ToolangConfig:
        """The runtime's validated configuration (``config.home``, ``config.base_dir``)."""

    @property
    def clock(self) -> Callable[[], float]:
        """The runtime's clock (seconds since the epoch); tests may fix it."""

    @property
    def settings(self) -> Mapping[str, Any]:
        """Every plugin's validated settings section, by plugin name."""

    @property
    def components(self) -> ComponentsReader:
        """What the plugins registered: tools, models, turn sources, agent sources …"""

    @property
    def plugins(self) -> PluginsReader:
        """Which plugins there are, how they loaded, and who implements which hook."""

    @property
    def one_shot(self) -> bool:
        """Whether the runtime serves only its own given requests, then exits (a one-shot
        ``toolang chat``/``invoke``): a door for others stays closed for it."""

    @property
    def redaction(self) -> RedactionPolicy:
        """This runtime's redaction policy (the core's rules and its plugins' detectors):
        ``redaction.text(s)`` / ``redaction.value(v)`` mask with this runtime's detectors
        wherever the code runs — in a thread started by hand, or outside ``serve``,
        where ``toolang_core.redact`` / ``redact_text`` apply the core's rules alone."""

    @property
    def store(self) -> ExecutionStore | None:
        """The execution store while the runtime serves (``None`` before)."""

    @property
    def run_id(self) -> str | None:
        """This serving run's id (``None`` before it serves)."""

    @property
    def memory(self) -> MemoryService | None:
        """The configured memory service (``None``: memory is off)."""

    @property
    def agents(self) -> AgentCatalog:
        """The agents this runtime knows, their scopes and routing."""

    @property
    def task_runs(self) -> TaskRuns:
        """The task-run controller (:raises RuntimeError: while the runtime is not
        serving)."""

    def open_store(self, *, read_only: bool = False) -> ExecutionStore:
        """Open the configured execution store (the caller closes it) — e.g. a doctor
        check's, while the runtime does not serve."""
        ...

    def settings_for(self, name: str, cls: type[S]) -> S:
        """Plugin ``name``'s settings as ``cls`` (``cls()`` when it has none)."""
        ...

    def plugin_state(self, name: str, factory: Callable[[], T]) -> T:
        """Per-runtime state for a plugin, ``factory()`` called once on first use."""
        ...

    @overload
    def plugin_database(
        self, plugin_name: str, migrations: PluginMigrations, *, read_only: bool = False
    ) -> PluginDatabase: ...

    @overload
    def plugin_database(
        self, plugin_name: str, migrations: Migrations, *, read_only: bool = False
    ) -> Database: ...

    def plugin_database(
        self,
        plugin_name: str,
        migrations: PluginMigrations | Migrations,
        *,
        read_only: bool = False,
    ) -> PluginDatabase | Database:
        """The plugin's own tables, opened (and migrated) once per runtime: on the
        store's backend for :class:`~toolang_core.PluginMigrations` (a
        :class:`~toolang_core.PluginDatabase`), in an SQLite file for
        ``sqlite_utils.Migrations`` (a ``sqlite_utils.Database``)."""
        ...

    def read_plugin_database(self, plugin_name: str) -> PluginDatabase | None:
        """Another plugin's database on the store's backend, read only, for the tables
        that plugin documents; ``None`` until that plugin has created it."""
        ...

    def service_available(self, name: str) -> bool:
        """Whether the runtime service ``name`` (``"memory"``, ``"delegation"``) is up."""
        ...

    async def publish(self, event: Event) -> list[HookFailure]:
        """Publish ``event`` to every ``toolang_on_event`` subscriber."""
        ...

    def routes(self) -> tuple[list[RouteRegistration], list[HookFailure]]:
        """Every plugin's HTTP routes (``toolang_register_routes``) and the plugins whose
        registration failed — for the plugin that serves them."""
        ...

    def route_servers(self) -> list[tuple[str, str]]:
        """``(plugin, base URL)`` of every plugin serving the registered routes in this
        run (``toolang_serves_routes``), in call order."""
        ...

    def reported_turn_events(self) -> frozenset[str]:
        """The kinds of turn events the plugins publish on the bus in this run
        (``toolang_reports_turn_events``): a subscriber of turn events listens only
        when one it wants is among them."""
        ...

    def wake_source(self, name: str) -> bool:
        """Wake the running turn source ``name`` (it looks at its work now, not at its
        next poll); safe from any thread. ``False`` when it does not run or takes no
        wake-ups."""
        ...

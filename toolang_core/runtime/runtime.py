"""The long-lived runtime: one run, one inbox, one scheduler, one execution store, its
turn sources.

A runtime owns its plugin host (and so its plugin manager): two runtimes in one process
never share plugin state. What one serving run does, start to stop, is
:mod:`toolang_core.runtime.run`.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

import structlog

from toolang_core.config.model import ToolangConfig
from toolang_core.config.settings import validate_plugin_settings
from toolang_core.errors import ConfigError, describe_exception
from toolang_core.events import Event
from toolang_core.hookspecs.rules import HookFailure
from toolang_core.inbox.inbox import Inbox
from toolang_core.inbox.policy import AdmissionPolicy
from toolang_core.plugins.context import PluginContext
from toolang_core.plugins.host import PluginHost
from toolang_core.plugins.reader import HostReader
from toolang_core.redaction import use_policy
from toolang_core.runtime.executor import TurnExecutor, executor_for
from toolang_core.runtime.memory_plugin import build_memory
from toolang_core.runtime.open_store import open_store
from toolang_core.runtime.plugin_services import PluginServices
from toolang_core.runtime.redactors import build_redaction, known_secrets, operator_credential
from toolang_core.runtime.run import serve as serve_run
from toolang_core.runtime.scheduler import Scheduler
from toolang_core.runtime.sources import (
    RunningSources,
    TurnSource,
    build_turn_sources,
    group_defaults,
)
from toolang_core.store.protocol import ExecutionStore
from toolang_core.tools.task_exits import tool_tasks_contained
from toolang_core.tools.threads import ToolThreads

if TYPE_CHECKING:
    from sqlite_utils import Database, Migrations

    from toolang_core.agents.catalog import AgentCatalog
    from toolang_core.memory.service import MemoryService
    from toolang_core.models.embeddings import EmbeddingModels
    from toolang_core.plugins.components import Components
    from toolang_core.plugins.facade import Hooks
    from toolang_core.plugins.routes import RouteRegistration
    from toolang_core.runtime.upkeep_lease import UpkeepLease
    from toolang_core.store.plugin_tables import PluginDatabase, PluginDatabases, PluginMigrations
    from toolang_core.taskruns.controller import TaskRunController

log = structlog.get_logger("toolang.runtime")

T = TypeVar("T")
S = TypeVar("S")


class Runtime:
    """A configured runtime: its configuration, its plugins and their settings.

    Build one with :meth:`from_config`; :meth:`serve` runs it until stopped.
    """

    def __init__(
        self,
        config: ToolangConfig,
        host: PluginHost,
        *,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.host = host
        host.configure(config)  # [tools.providers], [plugins] required
        self.clock = clock
        self.settings: dict[str, Any] = validate_plugin_settings(config, host, env=env)
        self.policy = AdmissionPolicy(config.scheduler, group_defaults(host.components))
        self.run_id: str | None = None
        self.store: ExecutionStore | None = None
        self.inbox: Inbox | None = None
        self.scheduler: Scheduler | None = None
        self.admitting = False
        """Whether ``serve`` has started up and its scheduler admits turns (until it stops)."""
        self.one_shot = False
        """Whether ``serve`` runs only given requests (``only``: a one-shot ``toolang
        chat``/``invoke`` serving its own turn, then exiting). Plugins that open a door
        for others — an HTTP server, a listener — stay closed for a one-shot."""
        self._upkeeping = False
        self.stop_reason = "stop"
        """Why ``serve`` stops, for ``toolang_shutdown``: whoever sets its stop event may
        say ``"signal"`` first (``toolang run`` does on SIGINT/SIGTERM)."""
        self.tool_threads = ToolThreads()
        """Blocking tools' worker threads, counted: one that outlived its time limit may
        still use a plugin's database, which then stays open at shutdown."""
        self._sources = RunningSources()
        self._services = PluginServices(self)
        self.redaction = build_redaction(self.host.components, self.plugin_context)
        """This runtime's redaction policy: the core's rules and its plugins' detectors
        (see :mod:`toolang_core.redaction`; in effect while :meth:`serve` runs), and
        the secrets it holds: every ``Secret`` of its configuration and plugins'
        settings, and the operator's credential, masked wherever they turn up."""
        self.redaction.mask_values(
            [*known_secrets(config, self.settings), *operator_credential(config.credential_path)]
        )

    @classmethod
    def from_config(
        cls,
        config: ToolangConfig,
        *,
        env: Mapping[str, str] | None = None,
        strict: bool = False,
        builtins: Iterable[tuple[str, object]] | None = None,
        load_entrypoints: bool = True,
    ) -> Runtime:
        """Load the plugins ``config`` and the environment allow, then validate settings.

        :raises ConfigError: when the configuration or a plugin's section is invalid.
        :raises PluginError: in strict mode, when any plugin fails.
        """
        env = os.environ if env is None else env
        host = PluginHost.from_config(
            config, env, strict=strict, builtins=builtins, load_entry_points=load_entrypoints
        )
        return cls(config, host, env=env)

    @classmethod
    def with_plugins(
        cls,
        config: ToolangConfig,
        plugins: Iterable[tuple[str, object]] = (),
        *,
        env: Mapping[str, str] | None = None,
    ) -> Runtime:
        """A runtime with the built-in plugins and ``plugins`` only (no entry points):
        for tests and for embedding toolang in another program."""
        host = PluginHost.from_config(None, {}, load_entry_points=False)
        for name, plugin in plugins:
            host.register(plugin, name)
        return cls(config, host, env=env)

    # -- parts -------------------------------------------------------------------------

    @property
    def hooks(self) -> Hooks:
        """The typed facade the core calls hooks through (the host's)."""
        return self.host.hooks

    @property
    def components(self) -> Components:
        """What the plugins registered (read it; registering is the host's)."""
        return self.host.components

    @property
    def plugins(self) -> HostReader:
        """The plugin host, read-only: records, failures, hook implementations."""
        return HostReader(self.host)

    @property
    def agents(self) -> AgentCatalog:
        """This runtime's agents: registry, tool assignment and routing (read on first
        use; the agent executor and ``toolang agents`` share it)."""
        catalog: AgentCatalog | None = self._services.state.get("toolang:agents")
        if catalog is not None:  # asked several times a turn: no import statement then
            return catalog
        from toolang_core.agents.catalog import AgentCatalog

        return self.plugin_state("toolang:agents", lambda: AgentCatalog(self))

    @property
    def task_runs(self) -> TaskRunController:
        """The task-run controller over the store this runtime serves (the delegation
        tools and the executor use it). Outside :meth:`serve`, build a
        :class:`~toolang_core.TaskRunController` over a store you opened.

        :raises RuntimeError: when the runtime is not serving.
        """
        from toolang_core.taskruns.controller import TaskRunController

        store = self.store
        if store is None:
            raise RuntimeError(
                "task runs need a serving runtime (Runtime.serve); from elsewhere use "
                "TaskRunController(runtime.open_store(), runtime)"
            )
        current: TaskRunController | None = self._services.state.get("toolang:task_runs")
        if current is None or current.store is not store:
            current = TaskRunController(store, self)
            self._services.state["toolang:task_runs"] = current
        return current

    @property
    def memory(self) -> MemoryService | None:
        """The configured memory plugin behind its service (``None``: memory is off).

        Built on first use. An unknown ``[memory] plugin`` is a configuration error; a
        plugin whose factory raises leaves the service down (recalls degrade turns).

        :raises ConfigError: naming the plugin and the installed memory plugins.
        """
        return self._services.state_of("memory:service", lambda: build_memory(self))

    @property
    def embedding_models(self) -> EmbeddingModels:
        """The embedding models plugins registered (``toolang_register_embedding_models``),
        by name; a memory plugin's context offers it as the ``embedding_models`` service."""
        from toolang_core.models.embeddings import EmbeddingModels

        return self.plugin_state("toolang:embedding_models", lambda: EmbeddingModels(self))

    def service_available(self, name: str) -> bool:
        """Whether the runtime service ``name`` can be used now: ``"memory"`` (a memory
        plugin is configured and up), ``"delegation"`` (there is another agent to
        delegate to: two active agents or more)."""
        if name == "delegation":
            return len(self.agents.registry.active()) > 1
        if name == "memory":
            try:
                memory = self.memory
            except ConfigError:  # an unknown memory plugin: reported where it matters
                return False
            return memory is not None and memory.plugin is not None
        return False

    @property
    def redaction_detectors(self) -> tuple[str, ...]:
        """The detectors of this runtime's redaction policy, as ``plugin:name``."""
        return self.redaction.detector_names

    def routes(self) -> tuple[list[RouteRegistration], list[HookFailure]]:
        """Every plugin's HTTP routes and the plugins whose registration failed."""
        return self.host.hooks.register_routes()

    def route_servers(self) -> list[tuple[str, str]]:
        """``(plugin, base URL)`` of every plugin serving the registered routes."""
        return self.host.hooks.route_servers(self)

    def reported_turn_events(self) -> frozenset[str]:
        """The kinds of turn events the plugins publish on the bus in this run
        (``toolang_reports_turn_events``)."""
        return self.host.hooks.reported_turn_events(self)

    # -- plugins' state and databases (held by PluginServices) -------------------------

    def plugin_context(self, plugin_name: str, **services: Any) -> PluginContext:
        """The context handed to ``plugin_name``'s component factories. Every one has
        the service ``plugin_databases``: the store backend's offer (built on its first
        ``open``), where a component keeps its tables on the store's backend."""
        return self._services.context(plugin_name, **services)

    def settings_for(self, name: str, cls: type[S]) -> S:
        """Plugin ``name``'s validated settings section, as the ``cls`` it registered
        through ``toolang_register_settings``; ``cls()`` (its defaults) when the plugin
        has no section or registered no settings."""
        found = self.settings.get(name)
        return found if isinstance(found, cls) else cls()

    def plugin_state(self, name: str, factory: Callable[[], T]) -> T:
        """Per-runtime state for a plugin: ``factory()`` is called once, on first use.

        Use this instead of module globals: the same plugin module may serve several
        runtimes in one process (tests do this all the time).
        """
        return self._services.state_of(name, factory)

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
        """``plugin_name``'s own tables, opened (and migrated) once per runtime.

        With :class:`~toolang_core.PluginMigrations`, a
        :class:`~toolang_core.PluginDatabase` on the store's backend (an SQLite file
        ``<home>/plugins/<plugin_name>.db``, or what the store's plugin offers, e.g. a
        PostgreSQL schema); with ``sqlite_utils.Migrations``, the SQLite file as a
        ``sqlite_utils.Database`` whatever the store. Opening applies the pending
        ``migrations`` (never when ``read_only``); see
        :func:`toolang_core.open_plugin_database` for the errors it raises.
        """
        return self._services.databases.own(plugin_name, migrations, read_only=read_only)

    def read_plugin_database(self, plugin_name: str) -> PluginDatabase | None:
        """Another plugin's database on the store's backend, read only, for reading the
        tables that plugin documents (plugins never import each other; its README is
        the contract). Opened once per runtime; ``None`` until the owner has created it
        (asked again on the next call). Nothing is migrated or written through it.

        :raises StoreCorrupt: it is not a database.
        :raises StoreBusy: another connection keeps its file locked.
        :raises StoreUnavailable: its server cannot be reached.
        """
        return self._services.databases.other(plugin_name)

    @property
    def plugin_databases(self) -> PluginDatabases:
        """Where plugins' :class:`~toolang_core.PluginMigrations` tables live: the store
        backend's offer (``toolang_register_plugin_databases``), else SQLite files."""
        return self._services.databases.offer

    def close_plugin_databases(self) -> None:
        """Close every database :meth:`plugin_database` opened (they reopen on next use).

        Not while a tool function still runs in a worker thread (it outlived its time
        limit): it may be inside a statement on one of them, and closing a connection
        under a running statement crashes the process. They are left to the process's
        exit then, and the log says so."""
        self._services.databases.close()

    # -- what a run uses ---------------------------------------------------------------

    def open_store(self, *, read_only: bool = False) -> ExecutionStore:
        """Open the configured execution store (not the one :meth:`serve` uses)."""
        store = open_store(
            self.config, self.host, read_only=read_only, plugin_settings=self.settings
        )
        if not read_only:  # the first writable open makes the operator's credential
            self.redaction.mask_values(operator_credential(self.config.credential_path))
        return store

    def open_inbox(self) -> Inbox:
        """An inbox over a new connection to the store, usable from any process."""
        return Inbox(self.open_store(), self.policy, clock=self.clock, redaction=self.redaction)

    def make_executor(self) -> TurnExecutor:
        """The turn executor ``[runtime] executor`` names (:mod:`.executor`).

        :raises ConfigError: naming an unknown executor and the available ones.
        """
        return executor_for(self)

    def turn_sources(self, names: Collection[str] | None = None) -> dict[str, TurnSource]:
        """Build the enabled turn sources (``names``, else ``[runtime] sources``, else all).

        :raises ConfigError: naming a source no installed plugin offers.
        """
        return build_turn_sources(self.config, self.host.components, self.plugin_context, names)

    def wake_source(self, name: str) -> bool:
        """Wake the turn source ``name`` this runtime runs, so it looks at its work now
        rather than at its next poll — e.g. after a chore was added at run time. Safe
        from any thread; ``False`` when no such source runs or it takes no wake-ups
        (a ``wake()`` method, see :class:`~toolang_core.runtime.sources.TurnSource`)."""
        return self._sources.wake(name)

    def admit_spawned(self, store: ExecutionStore, parent_turn_id: str, turn_id: str) -> None:
        """A one-shot run (``only``) serving ``store`` also admits ``turn_id``, spawned by
        ``parent_turn_id`` which it admits; nothing happens otherwise."""
        scheduler = self.scheduler
        if scheduler is not None and scheduler.store is store:
            scheduler.admit_with(parent_turn_id, turn_id)

    # -- running -----------------------------------------------------------------------

    async def publish(self, event: Event) -> list[HookFailure]:
        """Deliver ``event`` to every ``toolang_on_event`` subscriber (isolated)."""
        return await self.host.hooks.on_event(event, self)

    async def serve(
        self,
        stop: asyncio.Event,
        *,
        sources: Collection[str] | None = None,
        only: Collection[str] | None = None,
        until_idle: bool = False,
        lock_wait_seconds: float = 0.0,
        on_started: Callable[[], None] | None = None,
        one_shot: bool | None = None,
    ) -> None:
        """Run until ``stop`` is set: recover, start sources, admit turns, shut down.

        ``on_started`` is called once the store is held and every plugin's
        ``toolang_startup`` has run, before the first turn is admitted (``toolang run``
        freezes the heap there; a library embedding the runtime keeps its own heap).

        ``only`` admits just those request ids (a one-shot ``invoke``); ``until_idle``
        returns once nothing is running or waiting. An exclusive store held by another
        runtime is waited for up to ``lock_wait_seconds``. ``one_shot`` (default: whether
        ``only`` is given) sets :attr:`one_shot` for the run: plugins that open a door for
        others keep it closed (``toolang eval`` serves its isolated store this way
        without ``only``, whose per-id admission costs a query per id and pass).

        The runtime's redaction policy is the one in effect for the whole run
        (:func:`toolang_core.redaction.use_policy`, undone when it returns): what runs
        inside it — turns, turn sources, plugins' hooks, the log processor — masks with
        this runtime's detectors, and only with them.

        :raises StoreBusy: when another runtime owns an exclusive store.
        """
        undo_redaction = use_policy(self.redaction)
        try:
            with tool_tasks_contained():  # a tool's task that exits does not end the run
                await serve_run(
                    self,
                    stop,
                    self._sources,
                    sources=sources,
                    only=only,
                    until_idle=until_idle,
                    lock_wait_seconds=lock_wait_seconds,
                    on_started=on_started,
                    one_shot=only is not None if one_shot is None else one_shot,
                )
        finally:
            undo_redaction()

    async def upkeep(self) -> None:
        """At start-up and after every heartbeat (:func:`.upkeep.upkeep`: task runs, approval
        requests, remote agents, then ``toolang_upkeep`` plugins; errors are logged, never
        raised). One at a time: a heartbeat's upkeep while one runs is skipped, and so
        is any upkeep while another runtime sharing the store holds the upkeep lease."""
        from toolang_core.runtime.upkeep import upkeep

        if self._upkeeping:
            return
        lease = self.upkeep_lease()
        if lease is not None:
            try:
                held = lease.take(self.clock())
            except Exception as exc:  # e.g. the server's connections cut: next heartbeat
                log.warning("upkeep.lease_failed", error=describe_exception(exc))
                return
            if not held:
                return  # another runtime sharing the store does it
        self._upkeeping = True
        try:
            await upkeep(self)
        finally:
            self._upkeeping = False

    def upkeep_lease(self) -> UpkeepLease | None:
        """This run's view of the upkeep lease (:mod:`.upkeep_lease`), once it serves."""
        if self.store is None or self.run_id is None:
            return None
        from toolang_core.runtime.upkeep_lease import UpkeepLease

        return UpkeepLease(self.store, self.run_id, self.config.runtime.lease_seconds)

    def _close_memory(self, memory: MemoryService) -> None:
        """The run ended: its memory service closed, built again on next use."""
        memory.close()
        self._services.state.pop("memory:service", None)

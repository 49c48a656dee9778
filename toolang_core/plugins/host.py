"""The plugin host: one plugin manager and the record of every plugin offered to it."""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING

import attrs
import pluggy
import structlog

from toolang_core.errors import PluginError, describe_exception
from toolang_core.markers import HOOK_PREFIX, PROJECT_NAME
from toolang_core.plugins.loader import (
    EntryPointInfo,
    LoadPolicy,
    find_duplicates,
    scan,
    scan_entry_points,
)
from toolang_core.plugins.manager import ToolangPluginManager, create_plugin_manager
from toolang_core.plugins.mistakes import (
    async_registration_hooks,
    hook_names,
    misnamed_hookimpl,
    unknown_hook,
    unmarked_hooks,
)
from toolang_core.plugins.records import PluginFailure, PluginRecord, PluginStatus
from toolang_core.plugins.required import RequiredProblem, required_names, required_problems

if TYPE_CHECKING:
    import click

    from toolang_core.config.model import ToolangConfig
    from toolang_core.plugins.components import Components
    from toolang_core.plugins.facade import Hooks

# describe_exception moved down into toolang_core.errors; re-exported for the older path.
__all__ = ["PluginHost", "describe_exception"]

log = structlog.get_logger("toolang.plugins")

_IMPL_ATTR = PROJECT_NAME + "_impl"


class PluginHost:
    """Owns one :class:`ToolangPluginManager` and knows how each plugin got there.

    Every runtime (and every CLI invocation) creates its own host; nothing is global.
    A plugin that fails — at import, at registration, in validation or in one of its
    registration hooks — is unregistered and recorded with its distribution, version,
    entry point, hook and error, and the host keeps working. With ``strict=True`` the
    first such failure raises :class:`~toolang_core.errors.PluginError` instead.
    """

    def __init__(self, *, strict: bool = False) -> None:
        self.pm: ToolangPluginManager = create_plugin_manager()
        self.strict = strict
        self._records: dict[str, PluginRecord] = {}
        self._shadowed: list[PluginRecord] = []
        self._components: Components | None = None
        self._hooks: Hooks | None = None
        self.warnings: list[str] = []
        """Problems that left every plugin working: an allow- or deny-list name that
        matches nothing, a tool refused for a name clash. Strict mode fails on them."""
        self.unknown_names: list[str] = []
        """The :attr:`warnings` about allow- or deny-list names that match no installed
        plugin (most often a typo that leaves a plugin on or off)."""
        self.errors: list[str] = []
        """Problems that withheld something while the plugins stayed loaded: a tool name
        several plugins register. Logged as errors; ``toolang doctor`` fails on them,
        strict mode raises."""
        self.tool_providers: Mapping[str, str] = {}
        """``[tools.providers]``: whose a contested tool name is (see :meth:`configure`)."""
        self.required: tuple[str, ...] = ()
        """``[plugins] required``: the plugins without which no tool runs (the bundled
        safety plugins are required besides, while installed and enabled)."""
        self._broken: dict[str, str] = {}
        self._required: tuple[list[RequiredProblem], frozenset[str]] | None = None
        self._deferred: list[str] | None = None

    # -- construction -------------------------------------------------------------

    @classmethod
    def from_entry_points(
        cls,
        policy: LoadPolicy,
        *,
        builtins: Iterable[tuple[str, object]] = (),
        entry_points: Iterable[EntryPointInfo] | None = None,
    ) -> PluginHost:
        """Create a host with ``builtins`` and every entry point ``policy`` allows."""
        host = cls(strict=policy.strict)
        for name, plugin in builtins:
            host.register(plugin, name, builtin=True)
        host.load_entry_points(
            policy, scan_entry_points() if entry_points is None else entry_points
        )
        return host

    @classmethod
    def from_config(
        cls,
        config: ToolangConfig | None,
        env: Mapping[str, str],
        *,
        strict: bool = False,
        lenient: bool = False,
        builtins: Iterable[tuple[str, object]] | None = None,
        entry_points: Iterable[EntryPointInfo] | None = None,
        load_entry_points: bool = True,
    ) -> PluginHost:
        """The composition root: the host a configuration and an environment ask for.

        Resolves the load policy (``[plugins]`` of ``config``, or none when there is no
        valid configuration, then the ``TOOLANG_*_PLUGINS`` variables of ``env`` and the
        ``strict`` flag), registers ``builtins`` (default: toolang's built-in plugins),
        then every entry point the policy allows (none with ``load_entry_points=False``).
        ``lenient`` never raises for a failing plugin (``toolang doctor`` reports them).

        :raises PluginError: in strict mode, when a plugin fails.
        """
        from toolang_core.builtins import builtin_plugins

        plugins = config.plugins if config is not None else None
        policy = LoadPolicy.resolve(
            env,
            config_load=plugins.load if plugins else None,
            config_disable=plugins.disable if plugins else (),
            config_strict=plugins.strict if plugins else False,
            strict_flag=strict,
        )
        if lenient:
            policy = attrs.evolve(policy, strict=False)
        host = cls(strict=policy.strict)
        if config is not None:
            host.configure(config)
        for name, plugin in builtin_plugins() if builtins is None else builtins:
            host.register(plugin, name, builtin=True)
        if load_entry_points:
            misdeclared: list[str] = []
            if entry_points is None:
                entry_points, misdeclared = scan()
            host.load_entry_points(policy, entry_points, misdeclared=misdeclared)
        return host

    def configure(self, config: ToolangConfig) -> None:
        """Take what the host decides from ``config``: ``[tools.providers]`` and
        ``[plugins] required`` (components are collected again when they change)."""
        providers = dict(config.tools.providers)
        if providers != self.tool_providers:
            self.tool_providers = providers
            self._components = None
        self.required = tuple(config.plugins.required)
        self._required = None

    # -- what is known --------------------------------------------------------------

    @property
    def records(self) -> list[PluginRecord]:
        """Every plugin offered to this host, sorted by name (shadowed duplicates too)."""
        return sorted([*self._records.values(), *self._shadowed], key=lambda r: r.name)

    def record(self, name: str) -> PluginRecord:
        return self._records[name]

    @property
    def active_names(self) -> list[str]:
        """Names of the plugins currently registered (loaded or built in)."""
        return [
            r.name
            for r in self.records
            if r.status in (PluginStatus.LOADED, PluginStatus.BUILTIN)
            and r in self._records.values()
        ]

    @property
    def failures(self) -> list[PluginRecord]:
        return [
            r for r in self.records if r.status in (PluginStatus.FAILED, PluginStatus.DUPLICATE)
        ]

    @property
    def hooks(self) -> Hooks:
        """The typed facade the core calls hooks through."""
        if self._hooks is None:
            from toolang_core.plugins.facade import Hooks

            self._hooks = Hooks(self)
        return self._hooks

    @property
    def components(self) -> Components:
        """Everything the plugins registered, collected on first use.

        Collecting calls every registration hook of every plugin; a plugin whose hook
        raises is failed and its contributions are dropped.
        """
        if self._components is None:
            from toolang_core.plugins.components import collect_components

            self._components = collect_components(self)
        return self._components

    # -- registration -------------------------------------------------------------

    def register(
        self,
        plugin: object,
        name: str,
        *,
        builtin: bool = False,
        info: EntryPointInfo | None = None,
    ) -> Callable[[], None]:
        """Register ``plugin`` under ``name`` after validating it; return an undo function.

        A plugin that pluggy refuses, or that implements a hook toolang does not define,
        is recorded as failed and left unregistered (or raises in strict mode). The undo
        function unregisters the plugin and forgets its record — handy in tests.
        """
        record = self._records.get(name)
        if record is None:
            record = PluginRecord(
                name=name, status=PluginStatus.BUILTIN if builtin else PluginStatus.LOADED
            )
            self._records[name] = record
        elif info is None or self.pm.has_plugin(name):
            raise ValueError(f"a plugin named {name!r} is already known to this host")
        self._components = None
        self._required = None
        try:
            hash(plugin)
        except TypeError:
            self.fail(
                name,
                "register",
                f"plugin object {type(plugin).__name__!r} is not hashable; register a module, "
                "a class, or an instance of a class that does not define __eq__",
            )
            return lambda: self._forget(name)
        misnamed = misnamed_hookimpl(plugin)
        if misnamed:
            self.fail(
                name,
                "validate",
                f"{misnamed!r} is marked @hookimpl but toolang hook names start with "
                f"{HOOK_PREFIX!r}",
                hook=misnamed,
            )
            return lambda: self._forget(name)
        try:
            self.pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            self.fail(name, "register", _first_line(exc), hook=_hook_in(exc))
            return lambda: self._forget(name)
        except Exception as exc:
            self.fail(name, "register", describe_exception(exc))
            return lambda: self._forget(name)
        unknown = unknown_hook(self.pm, plugin)
        if unknown:
            self.fail(name, "validate", unknown[1], hook=unknown[0])
            return lambda: self._forget(name)
        asynchronous = async_registration_hooks(self.pm, plugin)
        if asynchronous:
            message = (
                f"{asynchronous} is async: registration hooks run once while the host "
                "builds its components, where nothing awaits them — make it a plain def"
            )
            self.fail(name, "validate", message, hook=asynchronous)
            return lambda: self._forget(name)
        for message in unmarked_hooks(plugin, hook_names(self.pm)):
            self.warn(name, message, event="plugin.unmarked_hook")
        record.hooks = tuple(sorted(c.name for c in self.pm.get_hookcallers(plugin) or ()))
        return lambda: self._forget(name)

    def load_entry_points(
        self,
        policy: LoadPolicy,
        entry_points: Iterable[EntryPointInfo],
        *,
        misdeclared: Iterable[str] = (),
    ) -> None:
        """Import and register the entry points ``policy`` allows; warn of each
        ``misdeclared`` distribution (entry points in a misspelt group).

        Disabled entry points are recorded without being imported; duplicate names are
        detected among the allowed ones only (the first distribution in name order wins).
        Imports run in entry-point-name order. Registration runs in the reverse order,
        so that pluggy, which calls the most recently registered plugin first, calls
        plugins in name order.
        """
        entry_points = list(entry_points)
        self._required = None
        self._deferred = []  # strict mode reports every failure of the load, not the first
        try:
            self.unknown_names = policy.unmatched(entry_points)
            for message in self.unknown_names:
                self.warn(None, message, event="plugin.unknown_name")
            for message in misdeclared:
                self.warn(None, message, event="plugin.misdeclared_group")
            self._load(policy, entry_points)
            if self.strict:  # a tool-name clash or a missing required plugin is told too
                self.components  # noqa: B018 - collecting runs every registration hook
                for problem in self.required_problems():
                    if problem.message not in self._deferred:
                        self._strict_failure(problem.message)
        finally:
            deferred, self._deferred = self._deferred, None
        if deferred and self.strict:
            if len(deferred) == 1:
                raise PluginError(deferred[0])
            raise PluginError(
                f"{len(deferred)} plugin problems:\n" + "\n".join(f"  - {d}" for d in deferred)
            )

    def _load(self, policy: LoadPolicy, entry_points: list[EntryPointInfo]) -> None:
        allowed: list[EntryPointInfo] = []
        for info in entry_points:
            refusal = policy.refusal(info)
            if refusal is None:
                allowed.append(info)
            elif info.name in self._records:
                self._shadowed.append(self._record_for(info, PluginStatus.DISABLED, refusal))
            else:
                self._records[info.name] = self._record_for(info, PluginStatus.DISABLED, refusal)
        duplicates = find_duplicates(allowed)
        imported: list[tuple[EntryPointInfo, object]] = []
        for info in allowed:
            group = duplicates.get(info.name)
            if group and info is not group[0]:
                self._shadow(info, group[0])
                continue
            self._records[info.name] = self._record_for(info, PluginStatus.LOADED)
            try:
                plugin = info.load()
            except (Exception, SystemExit) as exc:
                self.fail(info.name, "import", exc)
                continue
            imported.append((info, plugin))
        for info, plugin in reversed(imported):
            self.register(plugin, info.name, info=info)

    def fail(
        self,
        name: str,
        stage: str,
        error: BaseException | str,
        *,
        hook: str | None = None,
    ) -> None:
        """Record that plugin ``name`` failed, unregister it, and raise if strict."""
        record = self._records[name]
        message = error if isinstance(error, str) else describe_exception(error)
        if isinstance(error, BaseException) and error.__traceback__ is not None:
            log.debug(  # with --log-level debug, where in the plugin's code it failed
                "plugin.traceback",
                plugin=name,
                stage=stage,
                traceback="".join(traceback.format_exception(error)),
            )
        record.status = PluginStatus.FAILED
        record.error = PluginFailure(stage=stage, message=message, hook=hook)
        record.hooks = ()
        if self.pm.has_plugin(name):
            self.pm.unregister(name=name)
        self._components = None
        self._required = None
        log.warning(
            "plugin.failed",
            plugin=name,
            distribution=record.distribution,
            version=record.version,
            entry_point=record.entry_point,
            stage=stage,
            hook=hook,
            error=message,
        )
        self._strict_failure(record.failure_message())

    def warn(self, name: str | None, message: str, *, event: str = "plugin.warning") -> None:
        """Record a problem that left plugin ``name`` (or, with ``None``, every plugin)
        working; log it, and raise :class:`PluginError` in strict mode."""
        text = f"{self._records[name].describe()}: {message}" if name else message
        if text in self.warnings:  # components are collected again after each change
            return
        self.warnings.append(text)
        if name is not None:
            self._records[name].warnings.append(message)
        if name is None:
            log.warning(event, problem=message)
        else:
            log.warning(event, plugin=name, problem=message)
        self._strict_failure(text)

    def report_error(self, message: str, *, plugins: Iterable[str] = (), event: str) -> None:
        """Record a problem that withheld something while ``plugins`` stayed loaded (a
        contested tool name): listed in :attr:`errors` and in each plugin's warnings,
        logged as an error, and raised in strict mode."""
        if message in self.errors:  # components are collected again after each change
            return
        self.errors.append(message)
        for name in plugins:
            self._records[name].warnings.append(message)
        log.error(event, problem=message)
        self._strict_failure(message)

    # -- required plugins ---------------------------------------------------------------

    def required_problems(self) -> list[RequiredProblem]:
        """Each required plugin (``[plugins] required``, and the bundled safety plugins
        while installed and enabled) that is missing, failed, or broke in a hook: while
        there is one, no tool runs. Asked before every tool call: a look at a cache
        kept until the plugins or their state change."""
        state = self._required
        return (self._required_state() if state is None else state)[0]

    def is_required(self, name: str) -> bool:
        """Whether plugin ``name`` is required (a raise in one of its tool-chain hooks
        withholds the call's result)."""
        return name in self._required_state()[1]

    def mark_broken(self, name: str, what: str) -> None:
        """Plugin ``name`` broke where it cannot be skipped (``what``, e.g. "raised in
        toolang_startup: …"); if it is required, no tool runs from now on."""
        self._broken[name] = what
        self._required = None

    def _required_state(self) -> tuple[list[RequiredProblem], frozenset[str]]:
        if self._required is None:  # asked for every tool call: made once per change
            records = self.records
            active = set(self.active_names)
            self._required = (
                required_problems(records, active, self.required, self._broken),
                required_names(records, self.required),
            )
        return self._required

    def _strict_failure(self, message: str) -> None:
        if not self.strict:
            return
        if self._deferred is not None:  # loading: raised together at its end
            self._deferred.append(message)
            return
        raise PluginError(message)

    def add_commands(
        self, cli: click.Group, *, only: Collection[str] | None = None, skip: Collection[str] = ()
    ) -> tuple[dict[str, str], bool]:
        """Let every plugin (those named in ``only`` when given, none in ``skip``) add its
        subcommands to ``cli`` (``toolang_register_commands``). Returns the plugin that
        added each command, and whether none of them failed."""
        from toolang_core.plugins.components import add_plugin_commands

        return add_plugin_commands(self, cli, only=only, skip=skip)

    # -- helpers ------------------------------------------------------------------

    def _record_for(
        self, info: EntryPointInfo, status: PluginStatus, reason: str | None = None
    ) -> PluginRecord:
        return PluginRecord(
            name=info.name,
            status=status,
            distribution=info.distribution,
            version=info.version,
            entry_point=info.value,
            reason=reason,
        )

    def _shadow(self, info: EntryPointInfo, winner: EntryPointInfo) -> None:
        record = self._record_for(
            info,
            PluginStatus.DUPLICATE,
            f"entry point name {info.name!r} is also declared by distribution "
            f"{winner.distribution} {winner.version}, which is used instead",
        )
        record.error = PluginFailure(stage="import", message=record.reason or "")
        self._shadowed.append(record)
        log.warning(
            "plugin.duplicate",
            plugin=info.name,
            distribution=info.distribution,
            version=info.version,
            entry_point=info.value,
            used=winner.distribution,
        )
        self._strict_failure(f"{record.describe()}: duplicate entry point name; {record.reason}")

    def _forget(self, name: str) -> None:
        if self.pm.has_plugin(name):
            self.pm.unregister(name=name)
        self._records.pop(name, None)
        self._components = None
        self._required = None


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return " ".join(lines) if lines else type(exc).__name__


def _hook_in(exc: BaseException) -> str | None:
    match = re.search(r"hook '(\w+)'", str(exc))
    return match.group(1) if match else None

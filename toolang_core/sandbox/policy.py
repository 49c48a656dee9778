"""What the sandbox of one tool call's program is: decided from the configuration, the
call's agent and tool, and whose work the call is.

The policy is decided here, outside the sandbox, once per program; :mod:`.bwrap` turns
it into bubblewrap's arguments and :mod:`.proxy` enforces its network part.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pwd
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

import attrs

from toolang_core.sandbox.hidden_files import hidden_by_plugins
from toolang_core.sandbox.rules import (
    DEFAULT_LIMITS,
    DEFAULT_MODE,
    DEFAULT_NETWORK,
    Hidden,
    HostRule,
    Network,
    ProcessLimits,
    SandboxMode,
    parse_host_rule,
    parse_local_target,
)

if TYPE_CHECKING:
    from toolang_core.agents.types import AgentDefinition
    from toolang_core.config.model import ToolangConfig, ToolsConfig
    from toolang_core.config.sandbox import SandboxOverride
    from toolang_core.tools.types import ToolCallContext

OWNERS_DIR: Final = "owners"
"""Under a working directory root: one directory per owner (``owners/<owner>``)."""

OPERATOR_SENDERS: Final = frozenset({"owner", "self", "http:local"})
"""Senders of the operator's own work — the command line sends as ``owner``, chores and
wills as ``self``, the HTTP API without tokens as ``http:local`` — and so the owners of
the task runs it spawns: their calls work in the root of the working directory. (Do
not give people these names: their work would share the operator's directory.)"""

SECRET_PLACES: Final = (
    ".ssh",
    ".gnupg",
    ".config",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".pypirc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".pgpass",
    ".my.cnf",
    ".password-store",
    ".local/share/keyrings",
    ".terraform.d",
    ".mozilla",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".sqlite_history",
)
"""In the runtime user's home: what is hidden from every sandboxed program."""

SYSTEM_SECRETS: Final = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/run",
    "/var/tmp",
)
"""System paths hidden as well: password hashes and host keys (readable to a runtime
that runs as root even without capabilities: it owns them), and ``/run``, where the
sockets of local services live (docker, D-Bus, PostgreSQL) — a read-only mount does
not stop a program connecting to a Unix socket."""


class SandboxError(RuntimeError):
    """A program cannot be started in a sandbox (none is available, or the policy is
    unusable); the message says what to do."""


_SAFE_OWNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$")


@attrs.frozen
class SandboxPolicy:
    """The sandbox of one program.

    ``workdir`` is the one writable directory it sees (besides a private ``/tmp``);
    ``hidden`` are the paths it must not see at all, of those that exist when it starts
    (the runtime's home, its config file and store, other owners' working directories,
    secrets in the user's home, …);
    ``network`` and ``allow_hosts`` what it may reach through the runtime's proxy
    (``local_targets``: this machine's ``(address, port)`` pairs let through anyway —
    ``[tools] unsafe_allow_local``, for tests).
    ``read_only`` and ``writable`` are more places it sees (resolved, existing; a
    private ``/tmp`` path shows the real one): read-only, or writable too. What is
    hidden inside them stays hidden; one inside a hidden path is refused
    (:func:`toolang_core.sandbox.launch.prepare`).
    """

    mode: SandboxMode
    workdir: Path
    hidden: tuple[Hidden, ...] = ()
    network: Network = "off"
    allow_hosts: tuple[HostRule, ...] = ()
    local_targets: tuple[tuple[str, int], ...] = ()
    limits: ProcessLimits = attrs.field(factory=ProcessLimits)
    read_only: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()

    @property
    def enabled(self) -> bool:
        return self.mode != "off"


def owner_key(context: ToolCallContext | None) -> str | None:
    """Whose work the call is, for its working directory: the turn's owner (else its
    sender); ``None`` for the operator's own work (:data:`OPERATOR_SENDERS`) and for a
    call outside a turn."""
    turn = getattr(context, "turn", None)
    request = getattr(turn, "request", None)
    if request is None:
        return None
    key = request.owner or request.sender
    return None if not key or key in OPERATOR_SENDERS else str(key)


def owner_dir_name(owner: str) -> str:
    """The directory name of ``owner``'s work: the name itself when it is a safe file
    name, else ``h-`` and a hash of it (never ``..``, a slash, or a hidden file)."""
    if _SAFE_OWNER.match(owner) and not owner.startswith("h-"):
        return owner
    return "h-" + hashlib.sha256(owner.encode()).hexdigest()[:32]


def _overrides(tools: ToolsConfig | None, context: ToolCallContext | None) -> list[SandboxOverride]:
    """The overrides that apply to the call, widest first: AGENT.md ``sandbox:``,
    ``[tools.agent.<agent>]``, ``[tools.tool.<tool>]``."""
    found: list[SandboxOverride] = []
    if context is None:
        return found
    definition = _definition(context)
    if definition is not None and definition.sandbox is not None:
        found.append(definition.sandbox)
    if tools is not None:
        agent, tool = getattr(context, "agent", None), getattr(context, "tool_name", None)
        for table in (tools.agent.get(agent or ""), tools.tool.get(tool or "")):
            if table is not None:
                found.append(table)
    return found


def _definition(context: ToolCallContext) -> AgentDefinition | None:
    agent = getattr(context, "agent", None)
    if not agent:
        return None
    try:
        return context.runtime.agents.registry.get(agent)
    except Exception:  # a runtime without agents (a bare test runtime): no AGENT.md
        return None


def _pick(key: str, default: object, overrides: list[SandboxOverride]) -> object:
    """The narrowest setting of ``key``: the last override that sets it, else ``default``."""
    value = default
    for override in overrides:
        chosen = getattr(override, key)
        if chosen is not None:
            value = chosen
    return value


def _limits(tools: ToolsConfig | None, overrides: list[SandboxOverride]) -> ProcessLimits:
    base = tools if tools is not None else DEFAULT_LIMITS
    values = {
        key: _pick(key, getattr(base, key), overrides)
        for key in ("cpu_seconds", "address_space_mb", "file_size_mb", "max_processes")
    }
    return ProcessLimits(**cast("dict[str, int]", values))


def workdir_root(context: ToolCallContext | None, default: Path | str | None = None) -> Path:
    """The working directory root of the call's agent and tool: ``[tools.tool.<tool>]``
    ``workdir``, else ``[tools.agent.<agent>]``'s, else its AGENT.md's, else
    ``default`` (a plugin's own setting), else ``[tools] workdir``, else ``workspace``
    beside toolang.toml (the current directory without a runtime)."""
    config = _config(context)
    for override in reversed(_overrides(config.tools if config else None, context)):
        if override.workdir is not None:
            return _real(override.workdir)
    if default is not None:
        return _real(Path(default))
    if config is not None and config.tools.workdir is not None:
        return _real(config.tools.workdir)
    base = config.base_dir if config is not None else Path.cwd()
    return _real(base / "workspace")


def tool_workdir(context: ToolCallContext | None, default: Path | str | None = None) -> Path:
    """The directory a tool call works in, created if missing: the root
    (:func:`workdir_root`) for the operator's own work, ``<root>/owners/<owner>`` for an
    owner's (:func:`owner_key`) — so one owner's programs never see another's files."""
    root = _usable(workdir_root(context, default))
    owner = owner_key(context)
    directory = root if owner is None else root / OWNERS_DIR / owner_dir_name(owner)
    directory.mkdir(parents=True, exist_ok=True)
    (root / OWNERS_DIR).mkdir(exist_ok=True)  # hidden from the root's own programs
    return directory


def _usable(workdir: Path) -> Path:
    if workdir == Path("/"):
        raise SandboxError(
            "the working directory of sandboxed programs is / — every file would be "
            "writable; set [tools] workdir (or the agent's or tool's workdir) to a directory"
        )
    return workdir


def policy_for(
    context: ToolCallContext | None, *, workdir: Path | str | None = None
) -> SandboxPolicy:
    """The sandbox policy of a program a tool starts for the call ``context``.

    ``workdir`` is the call's working directory when the tool chose it (a subdirectory
    of it is fine for the program's current directory); default :func:`tool_workdir`.

    :raises SandboxError: for a working directory that would make everything writable.
    """
    config = _config(context)
    tools = config.tools if config is not None else None
    overrides = _overrides(tools, context)
    chosen = _usable(_real(Path(workdir))) if workdir is not None else tool_workdir(context)
    network = _pick("network", tools.network if tools else DEFAULT_NETWORK, overrides)
    hosts = _pick("allow_hosts", tools.allow_hosts if tools else (), overrides)
    return SandboxPolicy(
        mode=tools.sandbox if tools is not None else DEFAULT_MODE,
        workdir=chosen,
        hidden=tuple(_hidden(config, context, chosen)),
        network=cast("Network", network),
        allow_hosts=tuple(parse_host_rule(h) for h in cast("tuple[str, ...]", hosts)),
        local_targets=tuple(
            parse_local_target(t) for t in (tools.unsafe_allow_local if tools else ())
        ),
        limits=_limits(tools, overrides),
    )


def _hidden(
    config: ToolangConfig | None, context: ToolCallContext | None, workdir: Path
) -> Iterator[Hidden]:
    """Every path the program must not see that exists now, resolved."""
    seen: set[Path] = set()
    for path, resolve in _hidden_candidates(config, context, workdir):
        entry = _existing(path, resolve=resolve)
        if entry is not None and entry.path != workdir and entry.path not in seen:
            seen.add(entry.path)
            yield entry


def _existing(path: Path, *, resolve: bool) -> Hidden | None:
    """``path`` (resolved when ``resolve`` or when it is a symbolic link) and its kind;
    ``None`` when there is nothing there. One ``lstat`` for a path whose directory is
    known to be resolved already — the long fixed lists cost little per program."""
    try:
        found = os.lstat(path)
        if resolve or stat.S_ISLNK(found.st_mode):
            path = Path(os.path.realpath(path))
            found = os.stat(path)
    except OSError:
        return None
    return Hidden(path, stat.S_ISDIR(found.st_mode))


def _hidden_candidates(
    config: ToolangConfig | None, context: ToolCallContext | None, workdir: Path
) -> Iterator[tuple[Path, bool]]:
    """``(path, resolve it)`` for every path to hide."""
    if config is not None:
        yield config.home, True
        # The approval key and the operator's credential live in the home by default,
        # but ``[approvals] key_file`` may put the key anywhere.
        yield config.approval_key_path, True
        yield config.credential_path, True
        if config.source is not None:
            yield config.source, True
        if config.store.backend == "sqlite":
            store = config.store_path
            for path in (store, Path(f"{store}-wal"), Path(f"{store}-shm")):
                yield path, True
        for path in config.tools.hide:
            yield path, True
    # Plugins' own files (databases, sinks, keys), wherever their settings put them.
    for path in hidden_by_plugins():
        yield path, True
    # Every working directory root (another owner's, another agent's): the program's own
    # directory is mounted again on top of them.
    for root in _workdir_roots(config, context, workdir):
        yield root, False
        yield root / OWNERS_DIR, False
    for path in _fixed_places():
        yield path, False


@functools.cache
def _fixed_places() -> tuple[Path, ...]:
    """The user's secrets and the system's, under directories resolved once."""
    places = [home / place for home in _user_homes() for place in SECRET_PLACES]
    places += [_real(Path(path)) for path in SYSTEM_SECRETS]
    return tuple(places)


def _workdir_roots(
    config: ToolangConfig | None, context: ToolCallContext | None, workdir: Path
) -> Iterable[Path]:
    roots = {workdir_root(context)}
    if workdir.parent.name == OWNERS_DIR:
        roots.add(workdir.parent.parent)
    else:
        roots.add(workdir)
    if config is not None:
        tables = [*config.tools.agent.values(), *config.tools.tool.values()]
        roots.update(_real(t.workdir) for t in tables if t.workdir is not None)
        roots.update(_real(d) for d in _agent_workdirs(context))
    return sorted(roots)


def _agent_workdirs(context: ToolCallContext | None) -> Iterator[Path]:
    try:
        definitions = context.runtime.agents.registry.all()  # type: ignore[union-attr]
    except Exception:  # no runtime, or one without agents
        return
    for definition in definitions:
        sandbox = definition.sandbox
        if sandbox is not None and sandbox.workdir is not None:
            yield sandbox.workdir


def _user_homes() -> list[Path]:
    homes = []
    for candidate in (os.environ.get("HOME"), _passwd_home()):
        if candidate and Path(candidate).is_absolute() and Path(candidate) != Path("/"):
            real = _real(Path(candidate))
            if real not in homes:
                homes.append(real)
    return homes


def _passwd_home() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return None


def _config(context: ToolCallContext | None) -> ToolangConfig | None:
    runtime = getattr(context, "runtime", None)
    config = getattr(runtime, "config", None)
    return config if hasattr(config, "tools") else None


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))

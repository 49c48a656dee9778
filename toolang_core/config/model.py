"""The shape of ``toolang.toml``: one attrs class per section.

Field names are the TOML keys. Every section has defaults, so an empty file (or no
file at all) is a valid configuration for the embedded default runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import attrs

from toolang_core.config.converter import KeyPath, KeyProblems
from toolang_core.config.sandbox import SandboxOverride, check_host_rules
from toolang_core.config.spend import LimitsConfig
from toolang_core.config.validators import (
    AtLeast,
    AtMost,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Priority,
)
from toolang_core.errors import TRANSIENT_KINDS
from toolang_core.sandbox.rules import (
    DEFAULT_LIMITS,
    DEFAULT_MODE,
    DEFAULT_NETWORK,
    Network,
    SandboxMode,
    parse_local_target,
)

DEFAULT_HISTORY_TURNS = 20
"""Earlier exchanges in a prompt when neither ``history_turns`` nor ``context_tokens``
is set."""

Overflow = Literal["reject", "drop_oldest", "replace_pending"]
Strategy = Literal["enqueue", "reject", "coalesce", "interrupt", "steer"]


@attrs.frozen
class LogConfig:
    """``[log]``: how the CLI writes structured logs (to stderr)."""

    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["auto", "console", "json"] = "auto"


@attrs.frozen
class PluginsConfig:
    """``[plugins]``: which plugins load, and each plugin's own ``[plugins.<name>]`` table.

    ``load`` is an allow-list (absent: every installed plugin; empty: none);
    ``disable`` a deny-list. ``required`` names plugins that must work for any tool to
    run (entry-point or distribution names): while one of them is missing, failed, or
    broke in a hook, every tool call is refused, saying why. The bundled SecurityFilter
    and ApprovalGate (``hook-security-filter``, ``hook-approval-gate``) are required
    whenever they are installed and not disabled. ``settings`` holds the per-plugin
    tables, validated by the plugin that owns them once it is loaded.
    """

    load: tuple[str, ...] | None = None
    disable: tuple[str, ...] = ()
    strict: bool = False
    required: tuple[str, ...] = ()
    settings: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)


@attrs.frozen
class StoreConfig:
    """``[store]``: the execution store. ``path`` and ``synchronous`` are the built-in
    SQLite backend's (``normal`` survives a crash of any process, ``full`` also a power
    loss at a quarter of the write rate)."""

    backend: str = "sqlite"
    path: Path | None = None
    synchronous: Literal["normal", "full"] = "normal"


@attrs.frozen
class RuntimeConfig:
    """``[runtime]``: what ``toolang run`` starts and how it keeps its turns.

    ``sources`` lists the turn sources to run (absent: every installed one).
    ``executor`` runs the turns: ``agent`` (the agent loop, the default) or ``echo``
    (answers with the input; for the engine's tests and benchmarks). A running turn holds a lease of
    ``lease_seconds``, renewed every third of it; after a crash a turn is retried up to
    ``max_attempts`` times in all. On SIGINT/SIGTERM running turns get
    ``shutdown_grace_seconds`` to finish before they are handed back to the queue.
    """

    sources: tuple[str, ...] | None = None
    executor: str = "agent"
    lease_seconds: PositiveFloat = 30.0
    max_attempts: PositiveInt = 3
    shutdown_grace_seconds: NonNegativeFloat = 10.0
    poll_seconds: PositiveFloat = 0.5


@attrs.frozen
class GroupConfig:
    """``[scheduler.groups.<group>]``: the budget of one thread group."""

    priority: Priority | None = None
    max_running: PositiveInt | None = None
    max_queued: NonNegativeInt | None = None
    overflow: Overflow | None = None
    strategy: Strategy | None = None


@attrs.frozen
class SchedulerConfig:
    """``[scheduler]``: global concurrency, aging, and per-group budgets."""

    max_running: PositiveInt = 8
    aging_seconds: NonNegativeFloat = 60.0
    groups: Mapping[str, GroupConfig] = attrs.field(factory=dict)


@attrs.frozen
class AgentsConfig:
    """``[agents]``: which agent answers by default, and the limits of every turn.

    ``default`` answers requests that name no agent (and routes them); if no agent
    source defines it, a general agent of that name with ``instruction`` is used, which
    may use every tool. ``dir`` is where user AGENT.md files live, one subdirectory per
    agent (read by toolang-agents-user; default ``agents`` beside the file).
    With agent sources installed, that general agent is made only when
    ``create_default`` is true: otherwise a ``default`` no source defines (most likely a
    typo) is an error, never a new agent allowed every tool.

    ``unmatched_tools`` is the rule for a tool no agent's prefix claims and whose
    plugin declared no (active) owner: ``"none"`` leaves it to agents granted it
    (``toolang doctor`` reports it), ``"default"`` gives it to the ``default`` agent.

    A prompt's thread history is the last ``history_turns`` exchanges (default 20)
    unless ``context_tokens`` is set: then it is chosen by that token budget, and the
    older turns of a thread that outgrows it are compacted into a running summary
    written by ``summary_model`` (default: the agent's own model); ``history_turns``,
    if set too, still bounds the exchanges kept word for word. See
    docs/long-conversations.md.
    """

    default: str = "assistant"
    create_default: bool = False
    unmatched_tools: Literal["none", "default"] = "none"
    instruction: str = "You are a helpful, careful assistant. Answer briefly."
    dir: Path | None = None
    history_turns: NonNegativeInt | None = None
    """Earlier exchanges in a prompt at most (``None``: 20 without ``context_tokens``,
    no count limit with it)."""
    context_tokens: PositiveInt | None = None
    """The token budget of a prompt as a turn starts (``None``: off, history by
    ``history_turns``); an agent's own ``context_tokens`` overrides it."""
    summary_model: str | None = None
    """The model that writes a compacted thread's summary (``None``: the agent's own)."""
    max_steps: PositiveInt = 20
    loop_repeats: PositiveInt = 3
    turn_timeout_seconds: PositiveFloat = 600.0
    max_delegation_rounds: NonNegativeInt = 10
    """``ask_agent`` and ``transfer_to_agent`` calls per turn at most (an agent's own
    ``max_delegation_rounds`` overrides it); one more is refused."""
    output_retries: NonNegativeInt = 2
    """How many times a typed answer that does not match its schema goes back to the
    model before the turn fails with ``invalid_output`` (an agent's own
    ``output_retries`` overrides it; see docs/typed-answers.md)."""

    def __attrs_post_init__(self) -> None:
        from toolang_core.models.spec import model_spec_problem

        if self.summary_model is not None and (problem := model_spec_problem(self.summary_model)):
            raise KeyProblems([(("summary_model",), problem)])


@attrs.frozen
class DelegationConfig:
    """``[delegation]``: the limits of task runs, teammates and agent-as-tool.

    A turn may start ``max_spawns_per_turn`` task runs (``start_task_run`` and
    ``agent_spawn`` together). A task run may itself spawn only with ``nested_spawns``,
    and never deeper than ``max_spawn_depth`` (a top-level turn's children are at depth
    1; ``ask_agent`` counts as a level too). ``agent_spawn`` runs get
    ``default_timeout_seconds`` unless they ask for another; ``ask_agent`` answers with
    ``agent_tool_response`` (every assistant message, or the final one) unless the
    call says otherwise. ``toolang tasks prune`` keeps finished runs for
    ``retention_days``.
    """

    nested_spawns: bool = False
    max_spawn_depth: PositiveInt = 3
    max_spawns_per_turn: PositiveInt = 8
    default_timeout_seconds: PositiveFloat = 300.0
    agent_tool_response: Literal["all_messages", "final_only"] = "all_messages"
    retention_days: PositiveFloat = 7.0


@attrs.frozen
class ModelRetryConfig:
    """``[models.retry]``: how a model call that failed for a passing reason (a kind in
    ``on``) is made again. Each model gets ``attempts`` calls in all; before the n-th
    again, the loop waits ``initial_wait_seconds * multiplier ** (n-1)`` (at most
    ``max_wait_seconds``, at least what the service asked for with ``Retry-After``),
    less a random part of up to ``jitter`` of it. See docs/hooks/models.md."""

    attempts: PositiveInt = 3
    initial_wait_seconds: NonNegativeFloat = 1.0
    max_wait_seconds: NonNegativeFloat = 30.0
    multiplier: Annotated[float, AtLeast(1)] = 2.0
    jitter: Annotated[float, AtLeast(0), AtMost(1)] = 0.5
    on: tuple[str, ...] = tuple(sorted(TRANSIENT_KINDS))

    def __attrs_post_init__(self) -> None:
        problems: list[tuple[KeyPath, str]] = [
            (("on", index), f"expected one of {', '.join(sorted(TRANSIENT_KINDS))}, found {kind!r}")
            for index, kind in enumerate(self.on)
            if kind not in TRANSIENT_KINDS
        ]
        if self.max_wait_seconds < self.initial_wait_seconds:
            problems.append(
                (
                    ("max_wait_seconds",),
                    f"expected a number >= initial_wait_seconds ({self.initial_wait_seconds:g}), "
                    f"found {self.max_wait_seconds:g}",
                )
            )
        if problems:
            raise KeyProblems(problems)


@attrs.frozen
class ModelsConfig:
    """``[models]``: ``default`` is used by agents that name no model
    (``"provider"`` or ``"provider/model id"``, e.g. ``"llm/gpt-4o-mini"``);
    ``fallback`` lists the models tried, in order, when an agent's model fails and the
    agent names no ``fallback`` of its own; ``retry`` says how a failed call is made
    again (:class:`ModelRetryConfig`)."""

    default: str = "demo"
    fallback: tuple[str, ...] = ()
    retry: ModelRetryConfig = ModelRetryConfig()

    def __attrs_post_init__(self) -> None:
        from toolang_core.models.spec import model_spec_problem

        problems: list[tuple[KeyPath, str]] = []
        if problem := model_spec_problem(self.default):
            problems.append((("default",), problem))
        for index, spec in enumerate(self.fallback):
            if problem := model_spec_problem(spec):
                problems.append((("fallback", index), problem))
        if problems:
            raise KeyProblems(problems)


@attrs.frozen
class ToolsConfig:
    """``[tools]``: limits of every tool call, what happens to a call *in doubt*, and the
    sandbox of every program a tool starts.

    A call *in doubt* started before a crash and recorded no result: a tool declared
    idempotent runs again; any other is not run again, and ``in_doubt`` says who is
    told — ``tell_model`` (the model gets a "may already have run" result) or
    ``ask_person`` (an approval request: approved, it runs again).

    ``sandbox`` (``required`` | ``off``) is whether programs tools start
    (:func:`~toolang_core.run_tool_process`) run in the OS sandbox
    (:mod:`toolang_core.sandbox`); ``required`` refuses to start them where no sandbox
    is available. ``workdir`` (default ``workspace`` beside the file) is the one
    writable directory a program sees (each owner gets its own under ``owners/``);
    ``network`` (``off`` | ``allow``) with ``allow_hosts`` is what it may reach through
    the runtime's proxy; ``hide`` lists more paths it must not see; the limits (``0``:
    none) bound each of its processes (CPU seconds, address space, file size) and the
    number of its processes. ``[tools.agent.<name>]`` and ``[tools.tool.<name>]`` change
    these for one agent or one tool (a tool's table wins). ``unsafe_allow_local`` lets
    the proxy reach the named ``address:port`` pairs on this machine — for tests only:
    it opens a door to local services the sandbox otherwise closes.

    ``providers`` settles a tool name that more than one plugin registers: tool name →
    the plugin (entry-point or distribution name) whose tool it is. Without an entry a
    name two plugins register is withheld from both, as an error naming both
    distributions; an entry also pins a name no one contests, so a plugin installed
    later cannot take it.
    """

    timeout_seconds: PositiveFloat = 60.0
    max_output_chars: PositiveInt = 20_000
    in_doubt: Literal["tell_model", "ask_person"] = "tell_model"
    providers: Mapping[str, str] = attrs.field(factory=dict)
    sandbox: SandboxMode = DEFAULT_MODE
    workdir: Path | None = None
    network: Network = DEFAULT_NETWORK
    allow_hosts: tuple[str, ...] = ()
    hide: tuple[Path, ...] = ()
    cpu_seconds: NonNegativeInt = DEFAULT_LIMITS.cpu_seconds
    address_space_mb: NonNegativeInt = DEFAULT_LIMITS.address_space_mb
    file_size_mb: NonNegativeInt = DEFAULT_LIMITS.file_size_mb
    max_processes: NonNegativeInt = DEFAULT_LIMITS.max_processes
    unsafe_allow_local: tuple[str, ...] = ()
    agent: Mapping[str, SandboxOverride] = attrs.field(factory=dict)
    tool: Mapping[str, SandboxOverride] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        check_host_rules("allow_hosts", self.allow_hosts)
        problems: list[tuple[KeyPath, str]] = []
        for index, target in enumerate(self.unsafe_allow_local):
            try:
                parse_local_target(target)
            except ValueError as exc:
                problems.append((("unsafe_allow_local", index), str(exc)))
        if problems:
            raise KeyProblems(problems)


@attrs.frozen
class MemoryConfig:
    """``[memory]``: the one memory plugin, and when the runtime uses it.

    ``plugin`` names a memory plugin registered through ``toolang_register_memory``
    (its own settings live in its ``[plugins.<entry point>]`` table); unset, memory is
    off. Before each agent turn the runtime recalls up to ``max_items`` items
    (``max_chars`` in all) for the turn's input within ``recall_timeout_seconds`` — a
    recall that fails or times out marks the turn degraded, never fails it. After a
    completed turn whose source is in ``save_turns`` it remembers the exchange (chores
    and the agent's own will are left out by default: they repeat); a write that
    fails is recorded, never fails the turn. ``thread_only`` restricts recall to the
    turn's own thread (default: everything the agent remembers).
    """

    plugin: str | None = None
    save_turns: tuple[str, ...] = ("chat", "invoke", "task")
    thread_only: bool = False
    max_items: PositiveInt = 8
    max_chars: PositiveInt = 4000
    recall_timeout_seconds: PositiveFloat = 2.0
    write_timeout_seconds: PositiveFloat = 10.0


DEFAULT_ATTACHMENT_TYPES: tuple[str, ...] = (
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
    "audio/wav",
    "audio/mpeg",
    "text/plain",
)


@attrs.frozen
class AttachmentsConfig:
    """``[attachments]``: files a request carries (docs/attachments.md).

    Each is stored once by its SHA-256 under ``dir`` (default ``<home>/attachments``);
    one larger than ``max_bytes`` is refused, and so is one whose type, sniffed from
    its bytes (never from its name), is not in ``types`` (``image/png``, ``image/*``).
    ``fetch_urls`` lets a person's door (``toolang chat -a URL``) fetch an attachment
    from an ``http(s)`` address; off by default. A model never fetches one."""

    max_bytes: PositiveInt = 20 * 1024 * 1024
    types: tuple[str, ...] = DEFAULT_ATTACHMENT_TYPES
    fetch_urls: bool = False
    dir: Path | None = None

    def __attrs_post_init__(self) -> None:
        problems: list[tuple[KeyPath, str]] = []
        for index, pattern in enumerate(self.types):
            major, slash, minor = pattern.partition("/")
            if not (slash and major and minor) and pattern != "*":
                problems.append(
                    (
                        (("types", index)),
                        f"expected a media type like 'image/png' or 'image/*', got {pattern!r}",
                    )
                )
        if problems:
            raise KeyProblems(problems)


@attrs.frozen
class ApprovalsConfig:
    """``[approvals]``: ``key_file`` is the secret that seals every approval decision
    (default ``<home>/approval.key``, made with mode 0600 on first use). Every runtime
    sharing one store (PostgreSQL across machines) must point at the same key: a
    runtime whose key is missing or differs from the store's refuses to start."""

    key_file: Path | None = None


@attrs.frozen
class QuestionsConfig:
    """``[questions]``: how long a question of the built-in ``ask_person`` tool waits for
    a person's answer before it expires (the model is then told nobody answered, and the
    turn goes on). Waiting for a person does not count against the turn's own time
    limit; ``timeout_seconds = 0`` is not allowed — leave the default, or set a longer
    one."""

    timeout_seconds: PositiveFloat = 86400.0


@attrs.frozen
class ToolangConfig:
    """A whole ``toolang.toml``.

    ``source`` is the file it was read from (``None`` when running on defaults);
    relative paths in the file are relative to ``base_dir``, the file's directory.
    ``home`` is the state directory (default ``.toolang`` beside the file).
    """

    base_dir: Path
    source: Path | None = None
    home: Path = Path(".toolang")
    log: LogConfig = LogConfig()
    plugins: PluginsConfig = PluginsConfig()
    store: StoreConfig = StoreConfig()
    scheduler: SchedulerConfig = SchedulerConfig()
    runtime: RuntimeConfig = RuntimeConfig()
    agents: AgentsConfig = AgentsConfig()
    limits: LimitsConfig = attrs.field(factory=LimitsConfig)
    delegation: DelegationConfig = DelegationConfig()
    models: ModelsConfig = ModelsConfig()
    tools: ToolsConfig = ToolsConfig()
    memory: MemoryConfig = MemoryConfig()
    approvals: ApprovalsConfig = ApprovalsConfig()
    attachments: AttachmentsConfig = AttachmentsConfig()
    questions: QuestionsConfig = QuestionsConfig()

    @property
    def approval_key_path(self) -> Path:
        """The approval key file (``[approvals] key_file``, default
        ``<home>/approval.key``): a secret, hidden from tool programs like the home."""
        key_file = self.approvals.key_file
        return key_file if key_file is not None else self.home / "approval.key"

    @property
    def credential_path(self) -> Path:
        """The operator's credential (``<home>/credential``): whoever reads it acts as
        the person who runs this runtime (CLI decisions, console sign-in links)."""
        return self.home / "credential"

    @property
    def store_path(self) -> Path:
        """The SQLite execution store file (``[store] path``, default ``<home>/toolang.db``)."""
        return self.store.path if self.store.path is not None else self.home / "toolang.db"

    @property
    def attachments_dir(self) -> Path:
        """Where attachments' bytes are kept (``[attachments] dir``, default
        ``<home>/attachments``)."""
        folder = self.attachments.dir
        return folder if folder is not None else self.home / "attachments"

    @property
    def agents_dir(self) -> Path:
        """Where user AGENT.md files live (``[agents] dir``, default ``<base_dir>/agents``)."""
        return self.agents.dir if self.agents.dir is not None else self.base_dir / "agents"

    @property
    def display_name(self) -> str:
        return str(self.source) if self.source else "<defaults>"


NOT_FROM_FILE = frozenset({"base_dir", "source"})
"""Fields of :class:`ToolangConfig` that the loader sets; a file may not."""

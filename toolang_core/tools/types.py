"""Values that travel through the tool-call hook chain.

A model asks for a :class:`ToolCall`; each hook stage sees it together with a
:class:`ToolCallContext`; execution produces a :class:`ToolResult`. The pre-execution
stages answer with verdicts (:data:`FilterVerdict`) and decisions
(:data:`ApprovalDecision`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

import attrs

from toolang_core.events import Event

# Tool, the JSON alias and AskApproval (which a Tool may carry) live in
# toolang_core.tools.tool, a leaf the plugin registration records name without the view
# (ToolCallContext.runtime); re-exported here, their documented path.
from toolang_core.tools.tool import (
    JSON as JSON,  # noqa: PLC0414
    AskApproval as AskApproval,  # noqa: PLC0414
    Tool as Tool,  # noqa: PLC0414
)

if TYPE_CHECKING:
    # Only for annotations: toolang_core.attachments loads the store (and structlog),
    # which the pytest plugin's load must not (tests/test_pytest_plugin.py).
    from toolang_core.attachments.types import AttachmentRef
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.tools.turn_handle import TurnHandle


@attrs.frozen
class ToolCall:
    """One invocation of a tool requested by a model inside a turn."""

    call_id: str
    name: str
    params: Mapping[str, JSON] = attrs.field(factory=dict)


@attrs.frozen
class Refusal:
    """Why the chain did not run a call.

    ``stage`` is where it stopped: ``lookup`` (no such tool), ``scope`` (not the agent's
    tool), ``validate`` (bad parameters), ``SecurityFilter``, ``ApprovalGate``, or
    ``limit`` (a delegation past the turn's round limit, refused by the agent loop);
    ``verdict`` what that stage said (``refused``, ``block``, ``denied``); ``plugin``
    the plugin that decided (``None`` for the core's own checks); ``reason`` the reason,
    masked by the redaction policy.
    """

    stage: str
    verdict: str
    reason: str
    plugin: str | None = None


@attrs.frozen
class ToolFile:
    """A file a tool gives back with its result: its bytes and a name for people (the
    type is sniffed from the bytes, never taken from the name)."""

    data: bytes = attrs.field(repr=lambda data: f"<{len(data)} bytes>")
    name: str


def _files(files: Iterable[ToolFile]) -> tuple[ToolFile, ...]:
    return tuple(files)


@attrs.frozen
class ToolOutput:
    """What a tool function returns to give files with its result: ``output`` (a JSON
    value, what a plain return would be) and ``files``.

    The core keeps each file in the attachment store — once the chain has accepted the
    result: a withheld result keeps none — by hash and owned by the turn's owner, under
    the same rules as a request's attachments (``[attachments] max_bytes``
    and ``types``: a file they refuse fails the call, naming the tool and the file); the
    result references them (:attr:`ToolResult.attachments`) and the next model call gets
    them with the tool's answer when the model takes their type — a text reference
    (name, type, size, hash) when it does not. See docs/attachments.md."""

    output: JSON = None
    files: tuple[ToolFile, ...] = attrs.field(default=(), converter=_files)


@attrs.frozen
class ToolResult:
    """What a tool call produced: an output, or an error the model will be shown.

    ``refusal`` is set when the call never ran because a stage of the chain refused it
    (then ``ok`` is false and ``error_type`` is ``unknown_tool``, ``not_allowed``,
    ``invalid_params``, ``blocked``, ``denied`` or ``limit``). ``attachments`` are the
    files the tool gave back (:class:`ToolOutput`), as kept in the attachment store."""

    ok: bool
    output: JSON = None
    error: str | None = None
    error_type: str | None = None
    duration_ms: float = 0.0
    refusal: Refusal | None = None
    attachments: tuple[AttachmentRef, ...] = ()


@attrs.frozen
class ToolCallContext:
    """Where a tool call happens: the turn, thread, run and agent, and their limits.

    ``allowed_tools`` is the agent's effective tool scope for this call: its share of
    the tool assignment, narrowed by spawn-time ``allowed_tools`` (``None`` only for a
    call made outside an agent turn, e.g. by hand in a test); ``spawn_depth`` is 0 in a
    top-level turn and grows by one in each delegated run. ``runtime`` is
    the runtime the call runs in, as hooks and tools may use it
    (:class:`~toolang_core.runtime_view.RuntimeView`): their plugin settings,
    per-runtime state (``runtime.plugin_state``), the store, memory. ``turn`` is the running
    turn the call belongs to — what the delegation tools act on (spawn its task runs,
    count its delegation rounds, ask another agent inside it); ``None`` outside a turn.
    ``idempotency_key`` names this call for the outside world: the same for every
    attempt of the turn (``<turn id>:tool:<call id>``), so a tool run again after a
    crash can hand it to a service that deduplicates (``None`` outside a turn).

    Leaving ``runtime=`` out is deprecated since 0.2 and an error from 0.3: such a
    context warns (:class:`DeprecationWarning`) and its ``runtime`` is ``None``, as 0.1's
    was — the core always passes it; a plugin test builds a context with the
    ``toolang_call_context`` fixture.
    """

    call: ToolCall
    turn_id: str
    thread_id: str
    run_id: str
    agent: str
    spawn_depth: int = 0
    allowed_tools: frozenset[str] | None = None
    # Typed as always present — the core always passes it; None only for a 0.1-style
    # context built without it (deprecated, see above).
    runtime: RuntimeView = attrs.field(
        kw_only=True, default=cast("RuntimeView", None), eq=False, repr=False
    )
    turn: TurnHandle | None = attrs.field(default=None, eq=False, repr=False)
    idempotency_key: str | None = None
    approvals_asked: tuple[AskApproval, ...] = ()
    """What the SecurityFilter stage asked a person to approve (:class:`AskApproval`
    verdicts, in order): the ApprovalGate must ask, whatever its policy says."""

    def __attrs_post_init__(self) -> None:
        runtime: object = self.runtime  # not cast(): a call on every tool call's context
        if runtime is None:
            warn_missing_runtime("ToolCallContext", stacklevel=3)

    @property
    def tool_name(self) -> str:
        return self.call.name

    @property
    def params(self) -> Mapping[str, JSON]:
        return self.call.params

    @property
    def call_id(self) -> str:
        return self.call.call_id

    def event(self, kind: str, data: Mapping[str, JSON] | None = None) -> Event:
        """The bus event ``kind`` of this call, to publish with ``runtime.publish``:
        its data the call's ``tool`` (name) and ``call_id``, then ``data``; its
        ``run_id``, ``thread_id`` and ``turn_id`` the call's. Every event about one tool
        call is built here, so that a subscriber finds the call and its turn the same
        way in each (``tool.progress``, ``tool.completed`` …).

        ``data`` must be JSON-able and is published as given: mask what may hold a
        secret first (``runtime.redaction``).
        """
        return Event(
            kind,
            {"tool": self.call.name, "call_id": self.call.call_id, **(data or {})},
            run_id=self.run_id,
            thread_id=self.thread_id,
            turn_id=self.turn_id,
        )


def warn_missing_runtime(what: str, *, stacklevel: int) -> None:
    """The :class:`DeprecationWarning` of a hook context made without ``runtime=``."""
    warnings.warn(
        f"{what}(...) without runtime= is deprecated since toolang-core 0.2 and an error "
        "from 0.3: pass the runtime the call runs in (in a plugin's tests, build the "
        "context with the toolang_call_context fixture); its runtime is None until then",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


@attrs.frozen
class Block:
    """SecurityFilter verdict: do not run the call; the model is told ``reason``."""

    reason: str


@attrs.frozen
class Modify:
    """SecurityFilter verdict: run the call with ``params`` instead (e.g. redacted)."""

    params: Mapping[str, JSON]
    reason: str = ""


@attrs.frozen
class Observe:
    """SecurityFilter verdict: let the call through but record ``message`` as a warning."""

    message: str


FilterVerdict = Block | Modify | Observe | AskApproval


@attrs.frozen
class Granted:
    """ApprovalGate decision: the call may run."""

    reason: str = ""


@attrs.frozen
class Denied:
    """ApprovalGate decision: the call may not run; the model is told ``message``."""

    message: str


@attrs.frozen
class Pending:
    """ApprovalGate decision: a person must decide; the turn parks until they do.

    ``approval_id`` names the durable approval request the gate created.
    """

    approval_id: str
    prompt: str = ""


ApprovalDecision = Granted | Denied | Pending


class ToolOffer(Protocol):
    """What a plugin's ``toolang_offer_tools`` gets: its tools for this run.

    Keep it for the run: :meth:`add` and :meth:`remove` may be called at any time until
    the run ends (from any thread), after which they raise
    :class:`~toolang_core.OfferClosed`. Each change goes through the same name rules as
    registered tools; the next turn sees it."""

    def add(self, tool: Tool | Callable[..., Any]) -> None:
        """Offer ``tool`` (a :class:`Tool` or a plain function); offering a name this
        plugin already offers replaces that tool.

        :raises ToolClash: when another plugin has the name or ``[tools.providers]``
            gives it to another plugin (the standing tool stays).
        :raises RegistrationError: for an invalid tool or name.
        """
        ...

    def remove(self, name: str, why: str = "") -> bool:
        """Withdraw this plugin's offered tool ``name``; later calls to it fail with an
        error naming the plugin (and ``why``). ``False`` when it offers no such tool."""
        ...

    @property
    def names(self) -> frozenset[str]:
        """The names of the tools this plugin offers now."""
        ...

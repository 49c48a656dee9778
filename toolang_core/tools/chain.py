"""Run one tool call through the fixed hook chain.

    validate → SecurityFilter → ApprovalGate → execute → SecurityFilter (result)
             → LearningObserver → KnowledgeSaver → EventPublisher

Every call — in a top-level turn or a delegated run at any depth — goes through
:meth:`ToolChain.run`. Invalid parameters, unknown or out-of-scope tools, blocks,
denials and tool errors all come back as a :class:`ToolResult` the model can read; none
of them fails the turn. Each stage's verdict is recorded for the trace. A refused call
(lookup, scope, parameters, a block, a denial) still reaches the LearningObservers and
EventPublishers, masked, with its :class:`Refusal`: what was refused can be audited.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.errors import describe_exception
from toolang_core.hookspecs import TOOL_CHAIN_STAGES
from toolang_core.redaction import RedactionPolicy, current
from toolang_core.tools.stages import ChainStages
from toolang_core.tools.task_exits import running
from toolang_core.tools.threads import ToolThreads
from toolang_core.tools.time_limit import armed
from toolang_core.tools.types import (
    AskApproval,
    Block,
    Denied,
    Granted,
    Modify,
    Observe,
    Pending,
    Refusal,
    Tool,
    ToolCall,
    ToolCallContext,
    ToolOutput,
    ToolResult,
)
from toolang_core.tools.validate import ParamsValidator

if TYPE_CHECKING:
    from toolang_core.plugins.components import ToolRegistration
    from toolang_core.plugins.facade import Hooks
    from toolang_core.tools.files import CheckedFiles

ApprovalWaiter = Callable[[Pending, ToolCall, ToolCallContext], Awaitable[Granted | Denied]]
BeforeExecute = Callable[[ToolCall, ToolCallContext], None]
"""Called once the filter and the gate let a call through, just before the tool runs:
the agent loop records the call's intent there (what may raise stops the call)."""


@attrs.frozen
class StageRecord:
    """What one stage (or one plugin in it) decided about a call."""

    stage: str
    verdict: str
    plugin: str | None = None
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "verdict": self.verdict,
            "plugin": self.plugin,
            "detail": self.detail,
        }


_plain_record: Final = functools.cache(StageRecord)
"""A verdict without detail is the same value on every call: made once (frozen, so
shared safely) rather than built for every tool call."""


@attrs.frozen
class ChainResult:
    """The result the model will see, the call as it ran, and every stage's verdict."""

    result: ToolResult
    call: ToolCall
    stages: tuple[StageRecord, ...]


def _error(message: str, error_type: str) -> ToolResult:
    return ToolResult(ok=False, error=message, error_type=error_type)


class ToolChain:
    """The tool-call hook chain over one runtime's hooks and tools."""

    def __init__(
        self,
        hooks: Hooks,
        tools: Mapping[str, ToolRegistration],
        *,
        timeout_seconds: float = 60.0,
        max_output_chars: int = 20_000,
        validator: ParamsValidator | None = None,
        withheld: Mapping[str, str] | None = None,
        redaction: RedactionPolicy | None = None,
        threads: ToolThreads | None = None,
    ) -> None:
        """``withheld``: tool names no plugin got (several register them), with why —
        what a call asking for one is told. ``redaction``: the runtime's policy, masking
        what a refused call's observers are told (when left out, the policy in effect
        where the chain is made: :func:`toolang_core.redaction.current`). ``threads``:
        where blocking tools run, counted (the runtime's, so it knows what still runs)."""
        self.hooks = hooks
        self._stages = ChainStages(hooks)  # each stage's hook bound once, not per call
        self.redaction = redaction if redaction is not None else current()
        self.tools = tools
        self.withheld: Mapping[str, str] = withheld if withheld is not None else {}
        self.timeout_seconds = timeout_seconds
        self.max_output_chars = max_output_chars
        self.validator = validator or ParamsValidator()
        self._async: dict[str, tuple[Tool, bool]] = {}
        self.threads = threads if threads is not None else ToolThreads()

    async def run(
        self,
        call: ToolCall,
        ctx: ToolCallContext,
        *,
        wait_for_approval: ApprovalWaiter,
        before_execute: BeforeExecute | None = None,
    ) -> ChainResult:
        """Run ``call`` through every stage and return what the model will see.
        ``before_execute`` runs right before the tool does (not for a refused call)."""
        stages: list[StageRecord] = []
        problems = self.hooks.required_problems()
        if problems:  # a safety plugin the operator relies on is not there
            required = problems[0]
            stages.append(StageRecord("required", "refused", required.plugin, required.message))
            return await self.refuse(call, ctx, _error(required.message, "required_plugin"), stages)
        # Looked up once: the table is replaced whole when offered tools change.
        registration = self.tools.get(call.name)
        refused = self._admissible(call, ctx, registration)
        if refused is not None:
            stage, result = refused
            stages.append(StageRecord(stage, "refused", None, result.error or ""))
            return await self.refuse(call, ctx, result, stages)
        assert registration is not None  # an unknown tool was refused
        call, ctx, blocked = await self._filter(call, ctx, stages, registration)
        if blocked is not None:
            return await self.refuse(call, ctx, blocked, stages)
        denied = await self._approve(call, ctx, stages, wait_for_approval)
        if denied is not None:
            return await self.refuse(call, ctx, denied, stages)
        if before_execute is not None:
            before_execute(call, ctx)
        result, files = await self._execute(registration.tool, call, ctx)
        stages.append(
            StageRecord("execute", "error", None, result.error or "")
            if not result.ok
            else _plain_record("execute", "ok", None)
        )
        result = await self._after(call, result, ctx, stages)
        if files:  # kept once accepted: a withheld result leaves none in the store
            result = await self._keep(call, files, result, ctx, stages)
        return ChainResult(result, call, tuple(stages))

    def _admissible(
        self, call: ToolCall, ctx: ToolCallContext, registration: ToolRegistration | None
    ) -> tuple[str, ToolResult] | None:
        """Lookup, scope and parameter validation — before any hook runs."""
        if registration is None:
            if call.name in self.withheld:
                return "lookup", _error(self.withheld[call.name], "unknown_tool")
            known = ", ".join(sorted(self.tools)[:20]) or "none"
            return "lookup", _error(f"unknown tool {call.name!r} (tools: {known})", "unknown_tool")
        if ctx.allowed_tools is not None and call.name not in ctx.allowed_tools:
            return "scope", _error(
                f"tool {call.name!r} is outside agent {ctx.agent!r}'s scope", "not_allowed"
            )
        params = call.params if type(call.params) is dict else dict(call.params)
        problem = self.validator.problem(registration.tool.parameters, params)
        if problem is not None:
            return "validate", _error(
                f"invalid parameters for {call.name}: {problem}", "invalid_params"
            )
        return None

    async def _filter(
        self,
        call: ToolCall,
        ctx: ToolCallContext,
        stages: list[StageRecord],
        declared: ToolRegistration,
    ) -> tuple[ToolCall, ToolCallContext, ToolResult | None]:
        filtered = await self._stages.filter_tool_call(call, ctx)
        for plugin, verdict in filtered.verdicts:
            stages.append(_filter_stage(plugin, verdict))
        for failure in filtered.failures:
            stages.append(StageRecord("SecurityFilter", "error", failure.plugin, failure.error))
        if filtered.call is not call:
            call = filtered.call
            ctx = attrs.evolve(ctx, call=call)
        if filtered.blocked is not None:
            plugin, block = filtered.blocked
            return (
                call,
                ctx,
                _error(f"blocked by security filter {plugin!r}: {block.reason}", "blocked"),
            )
        if declared.tool.asks_approval is not None:  # the tool itself is never unattended
            stages.append(_filter_stage(declared.plugin, declared.tool.asks_approval))
        elif not filtered.verdicts:
            stages.append(_plain_record("SecurityFilter", "pass", None))
        asked = tuple(v for _, v in filtered.verdicts if isinstance(v, AskApproval))
        if declared.tool.asks_approval is not None:
            asked += (declared.tool.asks_approval,)
        if asked:  # the gate must ask a person, whatever its policy says
            ctx = attrs.evolve(ctx, call=call, approvals_asked=asked)
        return call, ctx, None

    async def _approve(
        self,
        call: ToolCall,
        ctx: ToolCallContext,
        stages: list[StageRecord],
        wait_for_approval: ApprovalWaiter,
    ) -> ToolResult | None:
        approval = await self._stages.approve_tool_call(call, ctx)
        decision = approval.decision
        if isinstance(decision, Pending):
            stages.append(
                StageRecord("ApprovalGate", "pending", approval.plugin, decision.approval_id)
            )
            decision = await wait_for_approval(decision, call, ctx)
        if isinstance(decision, Denied):
            stages.append(StageRecord("ApprovalGate", "denied", approval.plugin, decision.message))
            return _error(decision.message, "denied")
        if isinstance(decision, Granted):
            stages.append(StageRecord("ApprovalGate", "granted", approval.plugin, decision.reason))
        elif ctx.approvals_asked:  # no gate answered: nobody could ask, so it does not run
            rules = ", ".join(repr(a.rule) for a in ctx.approvals_asked)
            message = (
                f"{call.name} needs a person's approval (security filter rule {rules}) but "
                "no approval gate answered; it was not run"
            )
            stages.append(StageRecord("ApprovalGate", "denied", None, message))
            return _error(message, "denied")
        else:
            stages.append(_plain_record("ApprovalGate", "pass", approval.plugin))
        return None

    async def _after(
        self, call: ToolCall, result: ToolResult, ctx: ToolCallContext, stages: list[StageRecord]
    ) -> ToolResult:
        result, changed, failures = await self._stages.filter_tool_result(call, result, ctx)
        for plugin, detail in changed:
            stages.append(StageRecord("SecurityFilter", "modify", plugin, detail))
        for broken in failures:
            stages.append(StageRecord("SecurityFilter", "error", broken.plugin, broken.error))
        unseen: list[str] = []
        for hook, plugin, failure in await self._stages.after_tool_call(call, result, ctx):
            stage = TOOL_CHAIN_STAGES[hook]
            stages.append(
                _plain_record(stage, "ok", plugin)
                if failure is None
                else StageRecord(stage, "error", plugin, failure.error)
            )
            if failure is not None and self.hooks.is_required(plugin):
                unseen.append(f"required plugin {plugin!r} failed in {hook}: {failure.error}")
        if unseen:  # the tool ran, but what must see every call did not see this one
            return ToolResult(
                ok=False,
                error="result withheld: " + "; ".join(unseen),
                error_type="required_plugin",
                duration_ms=result.duration_ms,
            )
        return result

    async def refuse(
        self, call: ToolCall, ctx: ToolCallContext, result: ToolResult, stages: list[StageRecord]
    ) -> ChainResult:
        """A call a stage refused (the last record in ``stages`` decided; the agent loop
        refuses a delegation past the turn's round limit here too, as stage ``limit``):
        it does not run, and the result says why (:class:`Refusal`). The LearningObservers and the
        EventPublishers still see it — an audit trail of what was refused — with the
        parameters and the reason masked by the redaction policy; the result filters and
        the KnowledgeSavers do not (there is no output, nothing was learned)."""
        decided = stages[-1]
        policy = self.redaction
        reason = policy.text(decided.detail or result.error or "")
        refusal = Refusal(decided.stage, decided.verdict, reason, decided.plugin)
        result = attrs.evolve(result, refusal=refusal)
        masked = attrs.evolve(call, params=policy.value(dict(call.params)))
        told = attrs.evolve(result, error=policy.text(result.error or ""))
        for hook, plugin, failure in await self._stages.refused_tool_call(
            masked, told, attrs.evolve(ctx, call=masked)
        ):
            stage = TOOL_CHAIN_STAGES[hook]
            stages.append(
                _plain_record(stage, "ok", plugin)
                if failure is None
                else StageRecord(stage, "error", plugin, failure.error)
            )
        return ChainResult(result, call, tuple(stages))

    async def _execute(
        self, tool: Tool, call: ToolCall, ctx: ToolCallContext
    ) -> tuple[ToolResult, CheckedFiles]:
        """The tool's result, and the files it gave back: checked, not kept yet."""
        started = time.perf_counter()
        params = {**call.params, "context": ctx} if tool.takes_context else call.params
        try:
            with running(tool.name):  # the tasks it starts are its own (.task_exits)
                if self._is_async(tool):
                    async with armed(self.timeout_seconds):
                        output = await tool.function(**params)
                elif tool.blocking:
                    async with armed(self.timeout_seconds):
                        output = await self.threads.run(tool.function, params)
                else:
                    # Inline: a timeout could not interrupt it anyway, and arming one
                    # costs more than a quick tool does.
                    output = tool.function(**params)
                    if _awaitable(output):
                        async with armed(self.timeout_seconds):
                            output = await output
        except TimeoutError:
            return ToolResult(
                ok=False,
                error=f"{tool.name} timed out after {self.timeout_seconds:g} s",
                error_type="timeout",
                duration_ms=(time.perf_counter() - started) * 1000,
            ), ()
        except Exception as exc:
            return ToolResult(
                ok=False,
                error=describe_exception(exc),
                error_type=type(exc).__name__,
                duration_ms=(time.perf_counter() - started) * 1000,
            ), ()
        except (SystemExit, KeyboardInterrupt) as exc:
            if isinstance(exc, KeyboardInterrupt) and (self._is_async(tool) or not tool.blocking):
                raise  # Ctrl-C in the loop's own thread: the person's, not the tool's
            # A tool's sys.exit() (argparse on bad arguments, a click command) or an
            # interrupt it raised in its worker thread would end the runtime and every
            # turn in it: it is this call's error instead.
            return ToolResult(
                ok=False,
                error=f"{tool.name} raised {type(exc).__name__}({_exit_code(exc)}): a tool may "
                "not end the runtime (its plugin should raise an exception instead)",
                error_type=type(exc).__name__,
                duration_ms=(time.perf_counter() - started) * 1000,
            ), ()
        if type(output) is ToolOutput:
            return await self._with_files(tool, output, ctx, started)
        return ToolResult(
            ok=True, output=self._cap(output), duration_ms=(time.perf_counter() - started) * 1000
        ), ()

    async def _with_files(
        self, tool: Tool, output: ToolOutput, ctx: ToolCallContext, started: float
    ) -> tuple[ToolResult, CheckedFiles]:
        """The result of a call whose tool gave back files, referencing them, and the
        files checked (kept by :meth:`_keep` once the result is accepted); a file the
        store refuses fails the call (none is kept)."""
        from toolang_core.attachments.types import AttachmentError
        from toolang_core.tools.files import check_files

        try:
            checked = await check_files(tool.name, output.files, ctx)
        except AttachmentError as exc:
            return ToolResult(
                ok=False,
                error=str(exc),
                error_type="attachment_error",
                duration_ms=(time.perf_counter() - started) * 1000,
            ), ()
        return ToolResult(
            ok=True,
            output=self._cap(output.output),
            duration_ms=(time.perf_counter() - started) * 1000,
            attachments=tuple(ref for ref, _ in checked),
        ), checked

    async def _keep(
        self,
        call: ToolCall,
        files: CheckedFiles,
        result: ToolResult,
        ctx: ToolCallContext,
        stages: list[StageRecord],
    ) -> ToolResult:
        """``result`` as accepted, once the files it references are kept (only those:
        a withheld result, or one a filter took files out of, keeps fewer or none);
        an error result naming the tool when the store cannot keep them."""
        from toolang_core.attachments.types import AttachmentError
        from toolang_core.tools.files import keep_accepted

        try:
            await keep_accepted(call.name, files, result, ctx)
        except AttachmentError as exc:
            stages.append(StageRecord("files", "error", None, str(exc)))
            return ToolResult(
                ok=False,
                error=str(exc),
                error_type="attachment_error",
                duration_ms=result.duration_ms,
            )
        return result

    def _is_async(self, tool: Tool) -> bool:
        """Whether ``tool.function`` is a coroutine function (asked once per tool:
        ``inspect`` takes longer to tell than a quick tool takes to run)."""
        known = self._async.get(tool.name)
        if known is None or known[0] is not tool:
            known = self._async[tool.name] = (tool, inspect.iscoroutinefunction(tool.function))
        return known[1]

    def _cap(self, output: Any) -> Any:
        if isinstance(output, str) and len(output) > self.max_output_chars:
            cut = len(output) - self.max_output_chars
            return output[: self.max_output_chars] + f"\n[… {cut} more characters cut]"
        return output


_PLAIN: Final = frozenset({str, dict, list, int, float, bool, type(None)})


def _exit_code(exc: BaseException) -> str:
    return repr(exc.code) if isinstance(exc, SystemExit) and exc.code is not None else ""


def _awaitable(output: object) -> bool:
    # What tools usually answer (JSON values) spares inspect's slower ABC check.
    return type(output) not in _PLAIN and inspect.isawaitable(output)


def _filter_stage(plugin: str, verdict: object) -> StageRecord:
    if isinstance(verdict, Block):
        return StageRecord("SecurityFilter", "block", plugin, verdict.reason)
    if isinstance(verdict, Modify):
        return StageRecord("SecurityFilter", "modify", plugin, verdict.reason)
    if isinstance(verdict, Observe):
        return StageRecord("SecurityFilter", "observe", plugin, verdict.message)
    if isinstance(verdict, AskApproval):
        return StageRecord(
            "SecurityFilter", "ask", plugin, f"{verdict.reason} (rule {verdict.rule})"
        )
    return _plain_record("SecurityFilter", type(verdict).__name__.lower(), plugin)

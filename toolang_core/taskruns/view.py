"""Building a :class:`TaskRun` from what the store holds.

Three things make a run: its turn request (the truth about queued / running /
canceling / how the turn ended), the turn's steps (progress, the last answer) and the
run's final record, written once the finalizer hooks have run. A turn that ended but
has no final record yet is ``finalizing``.

Terminal classification, first match wins (tRPC-Agent-Go's table, on turn outcomes):

=====================  ===========  ==============================  ==================
turn ended             run status   error                           summary
=====================  ===========  ==============================  ==================
canceled               canceled     ""                              ``"canceled"``
failed (any outcome,   failed       the turn's error                the error, 240
``timeout`` included)
dropped (overflow)     failed       the overflow message            the error, 240
completed              completed    ""                              the output, 240
=====================  ===========  ==============================  ==================

``result`` keeps the last answer in every case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from toolang_core.store.types import Record, StepRecord, TurnRequest, TurnStatus
from toolang_core.taskruns.types import (
    RESULT_CHARS,
    SOURCE,
    SUMMARY_CHARS,
    THREAD_PREFIX,
    ApprovalWait,
    TaskRun,
    TaskRunProgress,
    TaskRunStatus,
    clip,
)

META_KEY: Final = "taskrun"
"""The turn request's ``meta`` entry that makes it a task run."""

FINAL_KIND: Final = "toolang.taskrun"
"""The record holding a run's terminal view, written when it is finalized."""

OPEN_KIND: Final = "toolang.taskrun.open"
"""One record per run not finalized yet: the runtime's work list after a crash."""

EVENT_KINDS: Final = frozenset({"model_call", "tool_call", "transfer"})


def is_task_run(turn: TurnRequest) -> bool:
    return (
        turn.source == SOURCE
        and isinstance(turn.meta.get(META_KEY), Mapping)
        and turn.thread_id == THREAD_PREFIX + turn.id
    )


def progress_of(steps: Sequence[StepRecord]) -> TaskRunProgress | None:
    """The progress counters of a run's steps (``None`` before the first event)."""
    events = [s for s in steps if s.kind in EVENT_KINDS]
    if not events:
        return None
    calls = results = prompt = completion = total = 0
    for step in events:
        if step.kind == "tool_call" and step.status != "intent":  # an intent: no result yet
            results += 1
        if step.kind != "model_call" or step.status != "completed":
            continue
        response = step.data.get("response") or {}
        calls += len(response.get("tool_calls") or ())
        usage = response.get("usage") or {}
        p = int(usage.get("prompt_tokens", usage.get("input_tokens", 0)) or 0)
        c = int(usage.get("completion_tokens", usage.get("output_tokens", 0)) or 0)
        prompt += p
        completion += c
        total += int(usage.get("total_tokens", p + c) or 0)
    return TaskRunProgress(
        event_count=len(events),
        tool_call_count=calls,
        tool_result_count=results,
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        last_event_at=max(s.finished_at for s in events),
    )


def last_answer(steps: Sequence[StepRecord]) -> str:
    """The text of the last model answer that said something."""
    for step in reversed(steps):
        if step.kind == "model_call" and step.status == "completed":
            text = (step.data.get("response") or {}).get("text") or ""
            if text.strip():
                return str(text)
    return ""


def terminal_fields(turn: TurnRequest, steps: Sequence[StepRecord]) -> dict[str, Any]:
    """Status, summary, result, error and outcome of a run whose turn ended."""
    answer = turn.output if turn.output else last_answer(steps)
    result = clip(answer, RESULT_CHARS)
    if turn.status is TurnStatus.COMPLETED:
        return {
            "status": TaskRunStatus.COMPLETED,
            "summary": clip(turn.output, SUMMARY_CHARS),
            "result": result,
            "error": "",
            "outcome": turn.outcome,
        }
    if turn.status is TurnStatus.CANCELED:
        return {
            "status": TaskRunStatus.CANCELED,
            "summary": "canceled",
            "result": result,
            "error": "",
            "outcome": "canceled",
        }
    error = (turn.error or turn.outcome or turn.status.value).strip()
    return {
        "status": TaskRunStatus.FAILED,
        "summary": clip(error, SUMMARY_CHARS),
        "result": result,
        "error": error,
        "outcome": turn.outcome or turn.status.value,
    }


def final_data(turn: TurnRequest, steps: Sequence[StepRecord]) -> dict[str, Any]:
    """What the final record stores for a run whose turn ended (before finalizers)."""
    fields = terminal_fields(turn, steps)
    progress = progress_of(steps)
    return {
        "status": fields["status"].value,
        "summary": fields["summary"],
        "result": fields["result"],
        "error": fields["error"],
        "outcome": fields["outcome"],
        "progress": None if progress is None else _progress_json(progress),
        "metadata": dict(_meta(turn).get("metadata") or {}),
        "finished_at": turn.finished_at if turn.finished_at is not None else turn.updated_at,
    }


def build(
    turn: TurnRequest,
    final: Record | None,
    steps: Sequence[StepRecord] | None = None,
    *,
    approval: ApprovalWait | None = None,
) -> TaskRun:
    """The run view of ``turn``. ``steps`` (when given) fill in live progress."""
    meta = _meta(turn)
    base: dict[str, Any] = {
        "id": turn.id,
        "owner": turn.owner or "",
        "parent_thread_id": str(meta.get("parent_thread_id", "")),
        "parent_turn_id": turn.parent,
        "agent_name": turn.agent,
        "task": turn.input,
        "created_at": turn.created_at,
        "updated_at": turn.updated_at,
        "metadata": dict(meta.get("metadata") or {}),
        "spawn_depth": int(turn.meta.get("spawn_depth", 1)),
        "spawn_reason": meta.get("spawn_reason"),
        "allowed_tools": _tools(turn.meta.get("allowed_tools")),
        "timeout_seconds": turn.timeout_seconds,
        "attempt": turn.attempt,
        "started_at": turn.started_at,
        "child_thread_id": turn.thread_id if turn.started_at is not None else None,
    }
    if final is not None:
        data = final.data
        return TaskRun(
            **base
            | {
                "status": TaskRunStatus(data["status"]),
                "summary": data.get("summary", ""),
                "result": data.get("result", ""),
                "error": data.get("error", ""),
                "outcome": data.get("outcome"),
                "progress": _progress(data.get("progress")),
                "metadata": dict(data.get("metadata") or {}),
                "finished_at": data.get("finished_at"),
                "updated_at": max(final.updated_at, turn.updated_at),
            }
        )
    progress = progress_of(steps) if steps is not None else None
    if turn.status.is_terminal:
        fields = terminal_fields(turn, steps or ())
        fields["status"] = TaskRunStatus.FINALIZING
        return TaskRun(**base | fields, progress=progress, finished_at=turn.finished_at)
    if turn.status is TurnStatus.QUEUED:
        return TaskRun(**base, status=TaskRunStatus.QUEUED)
    if turn.status is TurnStatus.CANCELING:
        return TaskRun(
            **base, status=TaskRunStatus.CANCELING, summary="canceling", progress=progress
        )
    return TaskRun(
        **base, status=TaskRunStatus.RUNNING, progress=progress, awaiting_approval=approval
    )


def _meta(turn: TurnRequest) -> Mapping[str, Any]:
    value = turn.meta.get(META_KEY)
    return value if isinstance(value, Mapping) else {}


def _tools(value: object) -> tuple[str, ...] | None:
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    return None


def _progress_json(progress: TaskRunProgress) -> dict[str, Any]:
    return {
        "event_count": progress.event_count,
        "tool_call_count": progress.tool_call_count,
        "tool_result_count": progress.tool_result_count,
        "prompt_tokens": progress.prompt_tokens,
        "completion_tokens": progress.completion_tokens,
        "total_tokens": progress.total_tokens,
        "last_event_at": progress.last_event_at,
    }


def _progress(data: Mapping[str, Any] | None) -> TaskRunProgress | None:
    if not data:
        return None
    return TaskRunProgress(**{k: data[k] for k in data if k in _PROGRESS_FIELDS})


_PROGRESS_FIELDS: Final = frozenset(
    {
        "event_count",
        "tool_call_count",
        "tool_result_count",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "last_event_at",
    }
)

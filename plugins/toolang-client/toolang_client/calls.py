"""Each API call as data — method, path, query, body, whether a retry is safe, how to
read the answer — shared by :class:`~toolang_client.Client` and
:class:`~toolang_client.AsyncClient`, which only send them."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, Final, Generic, TypeVar
from urllib.parse import quote

import attrs
import httpx

from toolang_client import models
from toolang_client.convert import structure
from toolang_client.errors import error_from

T = TypeVar("T")
IDEMPOTENCY_HEADER: Final = "Idempotency-Key"
RETRY_STATUSES: Final = frozenset({502, 503, 504})


@attrs.frozen
class Call(Generic[T]):
    """One request and how to read its answer. ``safe`` says a retry cannot do the
    work twice (a read, a cancel, a submit with an idempotency key)."""

    method: str
    path: str
    read: Callable[[httpx.Response], T]
    params: Mapping[str, Any] = attrs.field(factory=dict)
    json: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    safe: bool = True
    ok: tuple[int, ...] = (200,)

    def answer(self, response: httpx.Response) -> T:
        """The typed answer of ``response`` (read already).

        :raises ApiError: (its subclass for the status) when the API refused."""
        if response.status_code not in self.ok:
            raise error_from(response)
        return self.read(response)


def _one(model: type[T]) -> Callable[[httpx.Response], T]:
    return lambda response: structure(response.json(), model)


def _many(model: type[T]) -> Callable[[httpx.Response], list[T]]:
    return lambda response: structure(response.json(), list[model])  # type: ignore[valid-type]


def _json(response: httpx.Response) -> Any:
    return response.json()


def _params(**given: Any) -> dict[str, Any]:
    return {k: v for k, v in given.items() if v is not None}


def segment(value: str) -> str:
    """An id as one path segment (a thread id may hold ``/`` and ``:``)."""
    return quote(value, safe=":@")


def submitted_or_turn(response: httpx.Response) -> models.Submitted | models.Turn:
    data = response.json()
    if "turn_id" in data and "seq" not in data:
        return structure(data, models.Submitted)
    return structure(data, models.Turn)


def submit_body(
    text: str,
    *,
    thread_id: str | None = None,
    agent: str | None = None,
    source: str | None = None,
    strategy: str | None = None,
    timeout_seconds: float | None = None,
    priority: int | None = None,
    output_schema: Mapping[str, Any] | None = None,
    limits: Mapping[str, int] | None = None,
    attachments: list[Mapping[str, str]] | None = None,
    stream: bool = False,
    wait: float | None = None,
) -> dict[str, Any]:
    body = _params(
        input=text,
        thread_id=thread_id,
        agent=agent,
        source=source,
        strategy=strategy,
        timeout_seconds=timeout_seconds,
        priority=priority,
        output_schema=output_schema,
        limits=limits,
        attachments=attachments,
        wait=wait,
    )
    if stream:
        body["stream"] = True
    return body


def submit(
    body: Mapping[str, Any], idempotency_key: str | None
) -> Call[models.Submitted | models.Turn]:
    """``POST /api/turns``, made safe to retry by its idempotency key (a new one per
    submit unless the caller names one)."""
    key = idempotency_key or uuid.uuid4().hex
    return Call(
        "POST",
        "/api/turns",
        submitted_or_turn,
        json=body,
        headers={IDEMPOTENCY_HEADER: key},
        ok=(200, 202),
    )


def stream_headers(idempotency_key: str | None) -> dict[str, str]:
    return {IDEMPOTENCY_HEADER: idempotency_key or uuid.uuid4().hex, "Accept": "text/event-stream"}


def turn(turn_id: str) -> Call[models.Turn]:
    return Call("GET", f"/api/turns/{segment(turn_id)}", _one(models.Turn))


def turns(
    *, thread_id: str | None, status: str | None, source: str | None, limit: int | None
) -> Call[list[models.Turn]]:
    params = _params(thread_id=thread_id, status=status, source=source, limit=limit)
    return Call("GET", "/api/turns", _many(models.Turn), params=params)


def steps(turn_id: str) -> Call[list[models.Step]]:
    return Call("GET", f"/api/turns/{segment(turn_id)}/steps", _many(models.Step))


def trace(turn_id: str) -> Call[models.Trace]:
    return Call("GET", f"/api/turns/{segment(turn_id)}/trace", _one(models.Trace))


def cancel(turn_id: str) -> Call[models.Canceled]:
    return Call("POST", f"/api/turns/{segment(turn_id)}/cancel", _one(models.Canceled))


def threads(limit: int | None) -> Call[list[models.Thread]]:
    return Call("GET", "/api/threads", _many(models.Thread), params=_params(limit=limit))


def thread(thread_id: str, limit: int | None) -> Call[models.ThreadWithTurns]:
    return Call(
        "GET",
        f"/api/threads/{segment(thread_id)}",
        _one(models.ThreadWithTurns),
        params=_params(limit=limit),
    )


def approvals(status: str | None) -> Call[list[models.Approval]]:
    return Call("GET", "/api/approvals", _many(models.Approval), params=_params(status=status))


def decide(
    approval_id: str, approve: bool, reason: str | None, always: bool
) -> Call[models.Approval]:
    verb = "approve" if approve else "deny"
    body = _params(reason=reason, always=always or None)
    # Not retried: a decision that went through answers 409 the second time.
    return Call(
        "POST",
        f"/api/approvals/{segment(approval_id)}/{verb}",
        _one(models.Approval),
        json=body,
        safe=False,
    )


def questions(status: str | None) -> Call[list[models.Question]]:
    return Call("GET", "/api/questions", _many(models.Question), params=_params(status=status))


def question(question_id: str) -> Call[models.Question]:
    return Call("GET", f"/api/questions/{segment(question_id)}", _one(models.Question))


def answer(question_id: str, value: Any) -> Call[models.Question]:
    return Call(
        "POST",
        f"/api/questions/{segment(question_id)}/answer",
        _one(models.Question),
        json={"answer": value},
        safe=False,
    )


def task_runs(
    *, parent_thread_id: str | None, status: str | None, limit: int | None
) -> Call[list[models.TaskRun]]:
    params = _params(parent_thread_id=parent_thread_id, status=status, limit=limit)
    return Call("GET", "/api/task-runs", _many(models.TaskRun), params=params)


def task_run(run_id: str) -> Call[models.TaskRun]:
    return Call("GET", f"/api/task-runs/{segment(run_id)}", _one(models.TaskRun))


def wait_task_run(run_id: str, timeout: int) -> Call[models.TaskRun]:
    return Call(
        "GET",
        f"/api/task-runs/{segment(run_id)}/wait",
        _one(models.TaskRun),
        params={"timeout": timeout},
        ok=(200, 202),
    )


def cancel_task_run(run_id: str) -> Call[models.RunCanceled]:
    return Call("POST", f"/api/task-runs/{segment(run_id)}/cancel", _one(models.RunCanceled))


def transcript(run_id: str, limit: int | None) -> Call[Any]:
    return Call(
        "GET", f"/api/task-runs/{segment(run_id)}/transcript", _json, params=_params(limit=limit)
    )


def memory_search(
    q: str, *, agent: str | None, thread_id: str | None, limit: int | None
) -> Call[Any]:
    params = _params(q=q, agent=agent, thread_id=thread_id, limit=limit)
    return Call("GET", "/api/memory/search", _json, params=params)


def health() -> Call[models.Health]:
    return Call("GET", "/api/health", _one(models.Health), ok=(200, 503))


def status() -> Call[Any]:
    return Call("GET", "/api/status", _json)


def usage(**given: Any) -> Call[Any]:
    return Call("GET", "/api/usage", _json, params=_params(**given))

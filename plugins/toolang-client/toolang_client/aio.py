"""The asynchronous client: :class:`AsyncClient` has :class:`~toolang_client.Client`'s
methods, awaitable, and streams as ``async for``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeVar

import httpx

from toolang_client import calls, models
from toolang_client.calls import Call
from toolang_client.client import MAX_SERVER_WAIT, headers_for
from toolang_client.errors import StreamError, TransportError, error_from
from toolang_client.events import Event, EventParser, TurnText
from toolang_client.retry import TERMINAL, Retry

T = TypeVar("T")


class AsyncTurnStream:
    """A turn's events as they come (``async for`` once); see
    :class:`~toolang_client.TurnStream`."""

    def __init__(self, response: httpx.Response, turn_id: str | None) -> None:
        self._response = response
        self._seen = TurnText(turn_id)

    @property
    def turn_id(self) -> str | None:
        return self._seen.turn_id

    @property
    def text(self) -> str:
        return self._seen.text

    @property
    def finished(self) -> models.FinishedEvent | None:
        return self._seen.finished

    async def __aiter__(self) -> AsyncIterator[Event]:
        parser = EventParser()
        try:
            async for line in self._response.aiter_lines():
                for event in parser.feed(line):
                    self._seen.saw(event)
                    yield event
            for event in parser.feed(""):
                self._seen.saw(event)
                yield event
        except httpx.TransportError as exc:
            raise StreamError(f"the event stream of turn {self.turn_id} broke: {exc}") from exc
        finally:
            await self._response.aclose()
        if self._seen.finished is None:
            raise StreamError(f"the event stream of turn {self.turn_id} ended before finished")

    async def __aenter__(self) -> AsyncTurnStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._response.aclose()


class AsyncClient:
    """toolang's HTTP API, asynchronously (see :class:`~toolang_client.Client`)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 60.0,
        retry: Retry | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.retry = retry or Retry()
        self._own = http is None
        self.http = http or httpx.AsyncClient(base_url=base_url, timeout=timeout)
        self.http.headers.update(headers_for(token))

    async def aclose(self) -> None:
        if self._own:
            await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def send(self, call: Call[T], *, timeout: float | None = None) -> T:
        """Send ``call`` (retried per :attr:`retry`) and read its typed answer."""
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self.http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    headers=call.headers,
                    timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
                )
            except httpx.TransportError as exc:
                if not self.retry.again(call, attempt, error=exc):
                    raise TransportError(f"{call.method} {call.path}: {exc}") from exc
            else:
                if not self.retry.again(call, attempt, status=response.status_code):
                    return call.answer(response)
            await asyncio.sleep(self.retry.delay(attempt))

    async def submit(
        self,
        text: str,
        *,
        idempotency_key: str | None = None,
        wait: float | None = None,
        **fields: Any,
    ) -> models.Submitted | models.Turn:
        body = calls.submit_body(text, wait=wait, **fields)
        extra = (wait or 0) + 30 if wait else None
        return await self.send(calls.submit(body, idempotency_key), timeout=extra)

    async def run(
        self,
        text: str,
        *,
        timeout: float = 120.0,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> models.Turn:
        found = await self.submit(
            text, idempotency_key=idempotency_key, wait=min(timeout, MAX_SERVER_WAIT), **fields
        )
        turn_id = found.turn_id if isinstance(found, models.Submitted) else found.id
        if isinstance(found, models.Turn) and found.status in TERMINAL:
            return found
        return await self.wait(turn_id, timeout=timeout)

    async def wait(self, turn_id: str, *, timeout: float = 120.0) -> models.Turn:
        deadline = time.monotonic() + timeout
        while True:
            turn = await self.turn(turn_id)
            if turn.status in TERMINAL:
                return turn
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"turn {turn_id} is still {turn.status} after {timeout} s")
            path = f"/api/turns/{calls.segment(turn_id)}/events"
            try:
                async with await self._open("GET", path, None, left) as stream:
                    async for _ in stream:
                        pass
            except (StreamError, httpx.TimeoutException):
                continue

    async def stream(
        self, text: str, *, idempotency_key: str | None = None, **fields: Any
    ) -> AsyncTurnStream:
        body = calls.submit_body(text, stream=True, **fields)
        return await self._open(
            "POST", "/api/turns", body, None, headers=calls.stream_headers(idempotency_key)
        )

    async def events(self, turn_id: str) -> AsyncTurnStream:
        return await self._open("GET", f"/api/turns/{calls.segment(turn_id)}/events", None, None)

    async def _open(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None,
        timeout: float | None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncTurnStream:
        probe: Call[None] = Call(method, path, lambda r: None, safe=True)
        attempt = 0
        while True:
            attempt += 1
            request = self.http.build_request(
                method,
                path,
                json=body,
                headers=headers,
                timeout=httpx.Timeout(timeout, connect=10.0),
            )
            try:
                response = await self.http.send(request, stream=True)
            except httpx.TransportError as exc:
                if not self.retry.again(probe, attempt, error=exc):
                    raise TransportError(f"{method} {path}: {exc}") from exc
                await asyncio.sleep(self.retry.delay(attempt))
                continue
            if response.status_code != 200:
                await response.aread()
                await response.aclose()
                if self.retry.again(probe, attempt, status=response.status_code):
                    await asyncio.sleep(self.retry.delay(attempt))
                    continue
                raise error_from(response)
            return AsyncTurnStream(response, response.headers.get("x-toolang-turn"))

    async def turn(self, turn_id: str) -> models.Turn:
        return await self.send(calls.turn(turn_id))

    async def turns(
        self,
        *,
        thread_id: str | None = None,
        status: str | None = None,
        source: str | None = None,
        limit: int | None = None,
    ) -> list[models.Turn]:
        return await self.send(
            calls.turns(thread_id=thread_id, status=status, source=source, limit=limit)
        )

    async def steps(self, turn_id: str) -> list[models.Step]:
        return await self.send(calls.steps(turn_id))

    async def trace(self, turn_id: str) -> models.Trace:
        return await self.send(calls.trace(turn_id))

    async def cancel(self, turn_id: str) -> models.Canceled:
        return await self.send(calls.cancel(turn_id))

    async def threads(self, *, limit: int | None = None) -> list[models.Thread]:
        return await self.send(calls.threads(limit))

    async def thread(self, thread_id: str, *, limit: int | None = None) -> models.ThreadWithTurns:
        return await self.send(calls.thread(thread_id, limit))

    async def approvals(self, *, status: str | None = None) -> list[models.Approval]:
        return await self.send(calls.approvals(status))

    async def approve(
        self, approval_id: str, *, reason: str | None = None, always: bool = False
    ) -> models.Approval:
        return await self.send(calls.decide(approval_id, True, reason, always))

    async def deny(self, approval_id: str, *, reason: str | None = None) -> models.Approval:
        return await self.send(calls.decide(approval_id, False, reason, False))

    async def questions(self, *, status: str | None = None) -> list[models.Question]:
        return await self.send(calls.questions(status))

    async def question(self, question_id: str) -> models.Question:
        return await self.send(calls.question(question_id))

    async def answer(self, question_id: str, answer: Any) -> models.Question:
        return await self.send(calls.answer(question_id, answer))

    async def task_runs(
        self,
        *,
        parent_thread_id: str | None = None,
        status: str | None = None,
        limit: int | None = None,
    ) -> list[models.TaskRun]:
        return await self.send(
            calls.task_runs(parent_thread_id=parent_thread_id, status=status, limit=limit)
        )

    async def task_run(self, run_id: str) -> models.TaskRun:
        return await self.send(calls.task_run(run_id))

    async def wait_task_run(self, run_id: str, *, timeout: int = 30) -> models.TaskRun:
        return await self.send(calls.wait_task_run(run_id, timeout), timeout=timeout + 30)

    async def cancel_task_run(self, run_id: str) -> models.RunCanceled:
        return await self.send(calls.cancel_task_run(run_id))

    async def transcript(self, run_id: str, *, limit: int | None = None) -> Any:
        return await self.send(calls.transcript(run_id, limit))

    async def memory_search(
        self,
        q: str,
        *,
        agent: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> Any:
        return await self.send(
            calls.memory_search(q, agent=agent, thread_id=thread_id, limit=limit)
        )

    async def health(self) -> models.Health:
        return await self.send(calls.health())

    async def status(self) -> Any:
        return await self.send(calls.status())

    async def usage(self, **query: Any) -> Any:
        return await self.send(calls.usage(**query))

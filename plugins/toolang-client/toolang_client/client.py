"""The synchronous client (:class:`Client`); :mod:`toolang_client.aio` has the same
methods, awaitable."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import httpx

from toolang_client import calls, models
from toolang_client.calls import Call
from toolang_client.errors import StreamError, TransportError, error_from
from toolang_client.events import Event, EventParser, TurnText
from toolang_client.retry import TERMINAL, Retry

T = TypeVar("T")
MAX_SERVER_WAIT = 300.0
"""The longest ``wait`` the server takes on a submit; longer waits continue here."""


def headers_for(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class TurnStream:
    """A turn's events as they come (iterate it once); ``text`` joins the answer's
    deltas, ``finished`` is the last event, ``turn_id`` the turn's. Use it in a ``with``
    block, or iterate it to the end, to close its connection."""

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

    def __iter__(self) -> Iterator[Event]:
        parser = EventParser()
        try:
            for line in self._response.iter_lines():
                for event in parser.feed(line):
                    self._seen.saw(event)
                    yield event
            for event in parser.feed(""):
                self._seen.saw(event)
                yield event
        except httpx.TransportError as exc:
            raise StreamError(f"the event stream of turn {self.turn_id} broke: {exc}") from exc
        finally:
            self._response.close()
        if self._seen.finished is None:
            raise StreamError(f"the event stream of turn {self.turn_id} ended before finished")

    def __enter__(self) -> TurnStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self._response.close()


class Client:
    """toolang's HTTP API, synchronously.

    ``base_url`` is what ``toolang run`` prints (``http://127.0.0.1:8765``); ``token``
    an owner's token (``[plugins.server] tokens``) or the operator's credential.
    Failed connections and 502/503/504 are retried per ``retry``; every submit carries
    an idempotency key, so a retried submit never makes a second turn. Refusals raise
    the :class:`~toolang_client.ApiError` subclass of their status.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 60.0,
        retry: Retry | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.retry = retry or Retry()
        self._own = http is None
        self.http = http or httpx.Client(base_url=base_url, timeout=timeout)
        self.http.headers.update(headers_for(token))

    def close(self) -> None:
        if self._own:
            self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, call: Call[T], *, timeout: float | None = None) -> T:
        """Send ``call`` (retried per :attr:`retry`) and read its typed answer."""
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self.http.request(
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
            time.sleep(self.retry.delay(attempt))

    # ------------------------------------------------------------ turns

    def submit(
        self,
        text: str,
        *,
        idempotency_key: str | None = None,
        wait: float | None = None,
        **fields: Any,
    ) -> models.Submitted | models.Turn:
        """Submit a turn request: a :class:`~toolang_client.models.Submitted` at once,
        or with ``wait`` (seconds, at most 300) the :class:`~toolang_client.models.Turn`
        when it finished or the wait ran out. ``fields``: ``thread_id``, ``agent``,
        ``source``, ``strategy``, ``timeout_seconds``, ``priority``,
        ``output_schema``, ``limits``, ``attachments``."""
        body = calls.submit_body(text, wait=wait, **fields)
        extra = (wait or 0) + 30 if wait else None
        return self.send(calls.submit(body, idempotency_key), timeout=extra)

    def run(
        self,
        text: str,
        *,
        timeout: float = 120.0,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> models.Turn:
        """Submit and wait until the turn is finished (at most ``timeout`` seconds).

        :raises TimeoutError: when it is not finished by then."""
        found = self.submit(
            text, idempotency_key=idempotency_key, wait=min(timeout, MAX_SERVER_WAIT), **fields
        )
        turn_id = found.turn_id if isinstance(found, models.Submitted) else found.id
        if isinstance(found, models.Turn) and found.status in TERMINAL:
            return found
        return self.wait(turn_id, timeout=timeout)

    def wait(self, turn_id: str, *, timeout: float = 120.0) -> models.Turn:
        """The turn once it is finished: its events are followed until ``finished``.

        :raises TimeoutError: when it is not finished within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            turn = self.turn(turn_id)
            if turn.status in TERMINAL:
                return turn
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"turn {turn_id} is still {turn.status} after {timeout} s")
            try:
                with self._open(
                    "GET", f"/api/turns/{calls.segment(turn_id)}/events", None, left
                ) as stream:
                    for _ in stream:
                        pass
            except (StreamError, httpx.TimeoutException):
                continue

    def stream(self, text: str, *, idempotency_key: str | None = None, **fields: Any) -> TurnStream:
        """Submit a turn request and follow its answer as typed events."""
        body = calls.submit_body(text, stream=True, **fields)
        return self._open(
            "POST", "/api/turns", body, None, headers=calls.stream_headers(idempotency_key)
        )

    def events(self, turn_id: str) -> TurnStream:
        """Attach to a turn's events (at any time; a finished turn's end at once)."""
        return self._open("GET", f"/api/turns/{calls.segment(turn_id)}/events", None, None)

    def _open(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None,
        timeout: float | None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> TurnStream:
        probe: Call[None] = Call(method, path, lambda r: None, safe=True)
        attempt = 0
        while True:
            attempt += 1
            request = self.http.build_request(
                method,
                path,
                json=body,
                headers=headers,
                timeout=httpx.Timeout(timeout, connect=10.0)
                if timeout
                else httpx.Timeout(None, connect=10.0),
            )
            try:
                response = self.http.send(request, stream=True)
            except httpx.TransportError as exc:
                if not self.retry.again(probe, attempt, error=exc):
                    raise TransportError(f"{method} {path}: {exc}") from exc
                time.sleep(self.retry.delay(attempt))
                continue
            if response.status_code != 200:
                response.read()
                response.close()
                if self.retry.again(probe, attempt, status=response.status_code):
                    time.sleep(self.retry.delay(attempt))
                    continue
                raise error_from(response)
            return TurnStream(response, response.headers.get("x-toolang-turn"))

    def turn(self, turn_id: str) -> models.Turn:
        return self.send(calls.turn(turn_id))

    def turns(
        self,
        *,
        thread_id: str | None = None,
        status: str | None = None,
        source: str | None = None,
        limit: int | None = None,
    ) -> list[models.Turn]:
        return self.send(
            calls.turns(thread_id=thread_id, status=status, source=source, limit=limit)
        )

    def steps(self, turn_id: str) -> list[models.Step]:
        return self.send(calls.steps(turn_id))

    def trace(self, turn_id: str) -> models.Trace:
        return self.send(calls.trace(turn_id))

    def cancel(self, turn_id: str) -> models.Canceled:
        return self.send(calls.cancel(turn_id))

    # ------------------------------------------------------------ threads

    def threads(self, *, limit: int | None = None) -> list[models.Thread]:
        return self.send(calls.threads(limit))

    def thread(self, thread_id: str, *, limit: int | None = None) -> models.ThreadWithTurns:
        return self.send(calls.thread(thread_id, limit))

    # ------------------------------------------------------------ people's decisions

    def approvals(self, *, status: str | None = None) -> list[models.Approval]:
        return self.send(calls.approvals(status))

    def approve(
        self, approval_id: str, *, reason: str | None = None, always: bool = False
    ) -> models.Approval:
        return self.send(calls.decide(approval_id, True, reason, always))

    def deny(self, approval_id: str, *, reason: str | None = None) -> models.Approval:
        return self.send(calls.decide(approval_id, False, reason, False))

    def questions(self, *, status: str | None = None) -> list[models.Question]:
        return self.send(calls.questions(status))

    def question(self, question_id: str) -> models.Question:
        return self.send(calls.question(question_id))

    def answer(self, question_id: str, answer: Any) -> models.Question:
        return self.send(calls.answer(question_id, answer))

    # ------------------------------------------------------------ task runs

    def task_runs(
        self,
        *,
        parent_thread_id: str | None = None,
        status: str | None = None,
        limit: int | None = None,
    ) -> list[models.TaskRun]:
        return self.send(
            calls.task_runs(parent_thread_id=parent_thread_id, status=status, limit=limit)
        )

    def task_run(self, run_id: str) -> models.TaskRun:
        return self.send(calls.task_run(run_id))

    def wait_task_run(self, run_id: str, *, timeout: int = 30) -> models.TaskRun:
        return self.send(calls.wait_task_run(run_id, timeout), timeout=timeout + 30)

    def cancel_task_run(self, run_id: str) -> models.RunCanceled:
        return self.send(calls.cancel_task_run(run_id))

    def transcript(self, run_id: str, *, limit: int | None = None) -> Any:
        return self.send(calls.transcript(run_id, limit))

    # ------------------------------------------------------------ the rest

    def memory_search(
        self,
        q: str,
        *,
        agent: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
    ) -> Any:
        return self.send(calls.memory_search(q, agent=agent, thread_id=thread_id, limit=limit))

    def health(self) -> models.Health:
        return self.send(calls.health())

    def status(self) -> Any:
        return self.send(calls.status())

    def usage(self, **query: Any) -> Any:
        return self.send(calls.usage(**query))

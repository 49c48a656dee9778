"""Calling a remote agent: the ``a2a`` model provider behind every remote agent.

A remote agent's definition names the model ``a2a/<endpoint URL>``, so every way of
delegating — ``ask_agent``, ``transfer_to_agent``, ``start_task_run``/``agent_spawn`` —
reaches it through the ordinary agent loop, and the delegating tool call has already
passed the whole tool-hook chain. This "model" sends the conversation's last user
message to the remote agent with a2a-sdk's client and answers with the remote task's
result. The request's ``headers`` (``toolang_outbound_headers``: a tracer's W3C trace
context) go with the message, so the remote turn joins the caller's trace.

Durable and replay-safe: the A2A ``messageId`` is derived from the model call's step
key (``ModelRequest.key``), and the remote task id is written to the call log
(``<home>/agents-remote/calls.db``) before waiting. A turn resumed after a crash finds
the task id and follows it with ``GetTask``; a crash between sending and recording
re-sends the same ``messageId``, which an A2A server treats as the same message. A call
canceled locally sends ``CancelTask`` to the remote.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import structlog

from toolang_core import AgentLoad, redact_text
from toolang_core.models import ModelError, ModelRequest, ModelResponse

if TYPE_CHECKING:
    from toolang_agents_remote import RemoteSettings

PROVIDER = "a2a"

RESUME_FLAG = "toolang.resume_after_restart"
"""Message metadata telling the remote not to run the task again after its restart."""

log = structlog.get_logger("toolang.a2a")

_FINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}


class CallLog:
    """Every remote call: its key, message id, remote task id and outcome."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA busy_timeout=5000")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, url TEXT NOT NULL, "
            "message_id TEXT NOT NULL, task_id TEXT, state TEXT NOT NULL, error TEXT, "
            "started REAL NOT NULL, finished REAL)"
        )

    def find(self, key: str) -> tuple[str, str | None] | None:
        row = self.db.execute(
            "SELECT message_id, task_id FROM calls WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def begin(self, key: str, url: str, message_id: str) -> None:
        self.db.execute(
            "INSERT OR IGNORE INTO calls (key, url, message_id, state, started) "
            "VALUES (?, ?, ?, 'sending', ?)",
            (key, url, message_id, time.time()),
        )

    def sent(self, key: str, task_id: str) -> None:
        self.db.execute(
            "UPDATE calls SET task_id = ?, state = 'waiting' WHERE key = ?", (task_id, key)
        )

    def mark(self, key: str, state: str) -> None:
        self.db.execute("UPDATE calls SET state = ? WHERE key = ?", (state, key))

    def end(self, key: str, state: str, error: str | None = None) -> None:
        # The error may quote the remote agent's answer: masked like every stored text.
        self.db.execute(
            "UPDATE calls SET state = ?, error = ?, finished = ? WHERE key = ?",
            (state, None if error is None else redact_text(error), time.time(), key),
        )

    def recent(self, url: str, limit: int = 10) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT task_id, state, error, started, finished FROM calls WHERE url = ? "
            "ORDER BY started DESC LIMIT ?",
            (url, limit),
        ).fetchall()
        keys = ("task_id", "state", "error", "started", "finished")
        return [dict(zip(keys, row, strict=True)) for row in rows]


def _last_user_text(request: ModelRequest) -> str:
    for message in reversed(request.messages):
        if message.role == "user" and message.content.strip():
            return message.content
    raise ModelError("a remote agent needs a user message to send")


def _result_text(task: Any) -> str:
    texts = [p.text for a in task.artifacts for p in a.parts if p.text]
    if not texts and task.status.HasField("message"):
        texts = [p.text for p in task.status.message.parts if p.text]
    return "\n".join(texts)


def _describe(exc: BaseException, url: str, timeout: float) -> str:
    """A clear, secret-free reason for a failed remote call."""
    import httpx
    from a2a.client import A2AClientError, A2AClientTimeoutError

    cause: BaseException | None = exc  # a2a-sdk wraps the transport's error
    while cause is not None and not isinstance(cause, httpx.HTTPError):
        cause = cause.__cause__ or cause.__context__
    if cause is not None and not isinstance(exc, A2AClientTimeoutError):
        exc = cause
    if isinstance(exc, A2AClientTimeoutError | httpx.TimeoutException | TimeoutError):
        return f"remote agent at {url} did not answer within {timeout:g} s"
    if isinstance(exc, httpx.ConnectError):
        return f"remote agent at {url} is unreachable: {exc}"
    if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError):
        # the remote went away with the request in flight (a killed process, mostly)
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return f"remote agent at {url} is unreachable: the connection was lost mid-call ({why})"
    if isinstance(exc, httpx.HTTPStatusError):
        code = exc.response.status_code
        if code in (401, 403):
            return f"remote agent at {url} refused the credentials (HTTP {code})"
        return f"remote agent at {url} answered HTTP {code}"
    text = str(exc) or type(exc).__name__
    for status in ("401", "403"):
        if status in text:
            return f"remote agent at {url} refused the credentials: {text}"
    if isinstance(exc, A2AClientError):
        return f"remote agent at {url}: {text}"
    return f"remote agent at {url}: {type(exc).__name__}: {text}"


class RemoteAgentModel:
    """One remote agent (one endpoint) as a model."""

    def __init__(self, url: str, provider: RemoteAgentProvider) -> None:
        self.url = url
        self.provider = provider

    async def complete(self, request: ModelRequest) -> ModelResponse:
        settings = self.provider.settings
        text = _last_user_text(request)
        key = (
            request.key
            or hashlib.sha256("\0".join(m.content for m in request.messages).encode()).hexdigest()
        )
        log = self.provider.log
        earlier = log.find(key)
        message_id = "toolang-" + hashlib.sha256(f"{self.url}\0{key}".encode()).hexdigest()[:32]
        task_id = earlier[1] if earlier else None
        timeout = settings.call_timeout_seconds
        if task_id is None:
            log.begin(key, self.url, message_id)  # before anything can fail: it is logged
        try:
            client = await self.provider.client(self.url)
            if task_id is None:
                sent = await asyncio.wait_for(
                    self._send(client, text, message_id, request.headers), timeout
                )
                if not sent.HasField("task"):  # answered at once with a message, no task
                    log.end(key, "completed")
                    answer = "\n".join(p.text for p in sent.message.parts if p.text)
                    return ModelResponse(text=answer, model=f"a2a:{self.url}")
                task_id = sent.task.id
                log.sent(key, task_id)
            task = await asyncio.wait_for(self._follow(client, task_id, key), timeout)
        except asyncio.CancelledError:
            if task_id is not None:
                log.end(key, "canceled", "canceled locally")
                await self._cancel_remote(task_id)
            raise
        except ModelError as exc:
            log.end(key, "failed", str(exc))
            raise
        except Exception as exc:
            reason = redact_text(_describe(exc, self.url, timeout))
            log.end(key, "failed", reason)
            if task_id is not None:  # the call gave up on the task: nobody waits for it
                await self._cancel_remote(task_id)
            raise ModelError(reason) from None
        state = _state_name(task)
        answer = _result_text(task)
        if state != "TASK_STATE_COMPLETED":
            reason = f"remote task {task.id} ended {state.removeprefix('TASK_STATE_').lower()}"
            reason += f": {answer}" if answer else ""
            log.end(key, "failed", reason)
            raise ModelError(reason)
        log.end(key, "completed")
        return ModelResponse(text=answer, model=f"a2a:{self.url}#{task.id}")

    async def _send(
        self, client: Any, text: str, message_id: str, headers: Mapping[str, str]
    ) -> Any:
        """Send the message; ``headers`` (the request's, from ``toolang_outbound_headers``:
        a tracer's W3C ``traceparent``) go with it, so the remote turn continues the
        caller's trace."""
        from a2a.client import ClientCallContext
        from a2a.helpers.proto_helpers import new_text_message
        from a2a.types.a2a_pb2 import SendMessageConfiguration, SendMessageRequest

        message = new_text_message(text)
        message.message_id = message_id
        # This call gives up on the task when the remote goes away mid-call (its
        # CancelTask cannot reach a runtime that is down): a toolang server that
        # restarts must not run it again (toolang-source-a2a's restarts.py).
        message.metadata.update({RESUME_FLAG: False})
        request = SendMessageRequest(
            message=message, configuration=SendMessageConfiguration(return_immediately=True)
        )
        context = ClientCallContext(service_parameters=dict(headers)) if headers else None
        last = None
        async for event in client.send_message(request, context=context):
            last = event
        if last is None or not (last.HasField("task") or last.HasField("message")):
            raise ModelError(f"remote agent at {self.url} answered with neither task nor message")
        return last

    async def _follow(self, client: Any, task_id: str, key: str) -> Any:
        """Poll ``GetTask`` until the remote task is final (an approval wait there,
        input-required, is waited out: a person on the remote side decides)."""
        from a2a.types.a2a_pb2 import GetTaskRequest

        delay = 0.002
        noted = "waiting"
        while True:
            task = await client.get_task(GetTaskRequest(id=task_id, history_length=0))
            state = _state_name(task)
            if state in _FINAL:
                return task
            seen = "input-required" if state == "TASK_STATE_INPUT_REQUIRED" else "waiting"
            if seen != noted:  # the call log shows who the call is waiting for
                self.provider.log.mark(key, seen)
                noted = seen
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.provider.settings.poll_seconds)

    async def _cancel_remote(self, task_id: str) -> None:
        from a2a.types.a2a_pb2 import CancelTaskRequest

        async def cancel() -> None:
            client = await self.provider.client(self.url)
            await asyncio.wait_for(client.cancel_task(CancelTaskRequest(id=task_id)), 10)

        # The local call is going away; the remote cancel must still be sent.
        try:
            await asyncio.shield(asyncio.ensure_future(cancel()))
        except Exception as exc:
            log.warning(
                "a2a.cancel_failed",
                url=self.url,
                task=task_id,
                error=redact_text(_describe(exc, self.url, 10)),
            )


def _state_name(task: Any) -> str:
    from a2a.types.a2a_pb2 import TaskState

    return str(TaskState.Name(task.status.state))


class RemoteAgentProvider:
    """The ``a2a`` model provider: ``a2a/<endpoint URL>`` is that endpoint's agent."""

    def __init__(self, settings: RemoteSettings, home: Path) -> None:
        self.settings = settings
        self.log = CallLog(home / "agents-remote" / "calls.db")
        self._clients: dict[str, Any] = {}

    def model(self, model_id: str | None) -> RemoteAgentModel:
        if not model_id:
            raise ModelError("the a2a model needs an endpoint URL: a2a/<url>")
        return RemoteAgentModel(model_id, self)

    async def client(self, url: str) -> Any:
        found = self._clients.get(url)
        if found is None:
            import httpx
            from a2a.client import ClientConfig, create_client

            headers = {}
            token = self.settings.tokens.get(url)
            if token is not None:
                headers["Authorization"] = f"Bearer {token.reveal()}"
            http = httpx.AsyncClient(headers=headers, timeout=self.settings.call_timeout_seconds)
            found = await create_client(
                url,
                ClientConfig(streaming=False, httpx_client=http),
                resolver_http_kwargs={"headers": headers},
            )
            self._clients[url] = found
        return found


def with_call_outcomes(load: AgentLoad, home: Path) -> AgentLoad:
    """``load`` with each remote agent's recent call outcomes in its health detail
    (``toolang agents show``). The health's state stays what the card read found now: a
    call that found the agent unreachable is older than that read, and counting it
    again would make the agent pool's heartbeat say the opposite of its pings (the pool
    counts every call's outcome itself)."""
    path = home / "agents-remote" / "calls.db"
    if not path.exists():
        return load
    try:
        log = CallLog(path)
    except sqlite3.Error:
        return load
    health = dict(load.health)
    try:
        for definition in load.definitions:
            recent = log.recent(definition.origin)
            current = health.get(definition.name)
            if not recent or current is None:
                continue
            counts: dict[str, int] = {}
            for call in recent:
                counts[str(call["state"])] = counts.get(str(call["state"]), 0) + 1
            summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
            detail = f"{current.detail}; last {len(recent)} call(s): {summary}"
            last = recent[0]
            if last["state"] == "failed":
                detail += f"; last call failed: {last['error']}"
            health[definition.name] = attrs.evolve(current, detail=detail)
    finally:
        log.db.close()
    return attrs.evolve(load, health=health)

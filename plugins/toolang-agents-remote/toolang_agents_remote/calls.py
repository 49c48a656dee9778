"""Calling a remote agent: the ``a2a`` model provider behind every remote agent.

A remote agent's definition names the model ``a2a/<endpoint URL>``, so every way of
delegating — ``ask_agent``, ``transfer_to_agent``, ``start_task_run``/``agent_spawn`` —
reaches it through the ordinary agent loop, and the delegating tool call has already
passed the whole tool-hook chain. This "model" sends the conversation's last user
message to the remote agent with a2a-sdk's client and answers with the remote task's
result. The request's ``headers`` (``toolang_outbound_headers``: a tracer's W3C trace
context) go with the message, so the remote turn joins the caller's trace.

Durable and replay-safe: the A2A ``messageId`` is derived from the model call's step
key (``ModelRequest.key``), and the remote task id is written to the call log (table
``calls`` of the plugin's database on the store's backend: ``<home>/plugins/
agents-remote.db``, or the schema ``<store schema>__agents_remote`` of a PostgreSQL
store) before waiting. A turn resumed after a crash — on this node or on another one
sharing the store — finds the task id and follows it with ``GetTask``; a crash between
sending and recording re-sends the same ``messageId``, which an A2A server treats as
the same message. A call canceled locally sends ``CancelTask`` to the remote.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs
import structlog

from toolang_agents_remote.schema import MIGRATIONS, NAME
from toolang_core import AgentLoad, StoreMissing, describe_exception, redact_text
from toolang_core.models import ModelError, ModelRequest, ModelResponse

if TYPE_CHECKING:
    from toolang_agents_remote import RemoteSettings
    from toolang_core import PluginDatabase, PluginDatabases

PROVIDER = "a2a"

RESUME_FLAG = "toolang.resume_after_restart"
"""Message metadata telling the remote not to run the task again after its restart."""

log = structlog.get_logger("toolang.a2a")

T = TypeVar("T")

_FINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}


class CallLog:
    """Every remote call: its key, message id, remote task id and outcome.

    Kept on the store's backend (``databases``: the runtime's ``plugin_databases``
    service), so a turn resumed on another node sharing the store finds the call its
    first node made. Opened on first use; a writer first carries over the rows of the
    per-node file this log used to be (``<home>/agents-remote/calls.db``, see
    :func:`carry_over`).
    """

    def __init__(self, databases: PluginDatabases, home: Path, *, read_only: bool = False) -> None:
        self.databases = databases
        self.home = home
        self.read_only = read_only
        self._db: PluginDatabase | None = None
        self._worker: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    @property
    def db(self) -> PluginDatabase:
        """The log's database, opened (and migrated, unless read only) on first use.

        :raises StoreMissing: read only, and no call was ever logged.
        """
        if self._db is None:
            with self._lock:
                if self._db is None:
                    db = self.databases.open(NAME, MIGRATIONS, read_only=self.read_only)
                    if not self.read_only:
                        carry_over(db, self.home / NAME / "calls.db")
                    self._db = db
        return self._db

    async def later(self, method: Callable[..., T], *args: Any) -> T:
        """``method(*args)`` off the event loop (a server's round trip), in the log's one
        worker thread: the statements of a call run in the order they were asked for,
        even when the call is canceled while one waits (its end never runs before the
        task id it ends)."""
        with self._lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(1, thread_name_prefix="a2a-call-log")
            worker = self._worker
        return await asyncio.get_running_loop().run_in_executor(worker, method, *args)

    def close(self) -> None:
        with self._lock:
            db, self._db = self._db, None
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True)
        if db is not None:
            db.close()

    def find(self, key: str) -> tuple[str, str | None] | None:
        row = self.db.execute(
            "SELECT message_id, task_id FROM calls WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def begin(self, key: str, url: str, message_id: str) -> None:
        self.db.execute(
            "INSERT INTO calls (key, url, message_id, state, started) "
            "VALUES (?, ?, ?, 'sending', ?) ON CONFLICT (key) DO NOTHING",
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


_COLUMNS: Final = "key, url, message_id, task_id, state, error, started, finished"


def carry_over(db: PluginDatabase, old: Path) -> int:
    """Copy the calls of ``old`` — the per-node SQLite file the log was before it moved
    to the store's backend — into ``db`` (a call already there is kept as it is), then
    rename the file ``calls.db.imported`` so it is read once. Returns the rows copied;
    a file that cannot be read is left where it is, with a warning."""
    try:  # mode=rw: never creates the file (another process may have just renamed it)
        source = sqlite3.connect(f"file:{old}?mode=rw", uri=True)
    except sqlite3.OperationalError:
        return 0
    try:
        rows = source.execute(f"SELECT {_COLUMNS} FROM calls").fetchall()
    except sqlite3.DatabaseError as exc:
        log.warning("a2a.call_log_not_carried_over", path=str(old), error=str(exc))
        return 0
    finally:
        source.close()
    with db.transaction():
        db.executemany(
            f"INSERT INTO calls ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING",
            rows,
        )
    with contextlib.suppress(FileNotFoundError):  # a process beside this one did it
        old.replace(old.with_name("calls.db.imported"))
    log.info("a2a.call_log_carried_over", path=str(old), calls=len(rows), to=db.where)
    return len(rows)


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
        earlier = await log.later(log.find, key)
        message_id = "toolang-" + hashlib.sha256(f"{self.url}\0{key}".encode()).hexdigest()[:32]
        task_id = earlier[1] if earlier else None
        timeout = settings.call_timeout_seconds
        if task_id is None:
            # logged before anything can fail
            await log.later(log.begin, key, self.url, message_id)
        try:
            client = await self.provider.client(self.url)
            if task_id is None:
                sent = await asyncio.wait_for(
                    self._send(client, text, message_id, request.headers), timeout
                )
                if not sent.HasField("task"):  # answered at once with a message, no task
                    await log.later(log.end, key, "completed")
                    answer = "\n".join(p.text for p in sent.message.parts if p.text)
                    return ModelResponse(text=answer, model=f"a2a:{self.url}")
                task_id = sent.task.id
                await log.later(log.sent, key, task_id)
            task = await asyncio.wait_for(self._follow(client, task_id, key), timeout)
        except asyncio.CancelledError:
            if task_id is not None:
                await log.later(log.end, key, "canceled", "canceled locally")
                await self._cancel_remote(task_id)
            raise
        except ModelError as exc:
            await log.later(log.end, key, "failed", str(exc))
            raise
        except Exception as exc:
            reason = redact_text(_describe(exc, self.url, timeout))
            await log.later(log.end, key, "failed", reason)
            if task_id is not None:  # the call gave up on the task: nobody waits for it
                await self._cancel_remote(task_id)
            raise ModelError(reason) from None
        state = _state_name(task)
        answer = _result_text(task)
        if state != "TASK_STATE_COMPLETED":
            reason = f"remote task {task.id} ended {state.removeprefix('TASK_STATE_').lower()}"
            reason += f": {answer}" if answer else ""
            await log.later(log.end, key, "failed", reason)
            raise ModelError(reason)
        await log.later(log.end, key, "completed")
        return ModelResponse(text=answer, model=f"a2a:{self.url}#{task.id}")

    async def _send(
        self, client: Any, text: str, message_id: str, headers: Mapping[str, str]
    ) -> Any:
        """Send the message; ``headers`` (the request's, from ``toolang_outbound_headers``:
        a tracer's W3C ``traceparent``) go with it, so the remote turn continues the
        caller's trace."""
        from a2a.client import ClientCallContext
        from a2a.helpers.proto_helpers import new_text_message
        from a2a.types.a2a_pb2 import Role, SendMessageConfiguration, SendMessageRequest

        # The caller's message is the user's (the helper's default role is the agent's,
        # which a2a-sdk's new_task_from_user_message, used by most agents, refuses).
        message = new_text_message(text, role=Role.ROLE_USER)
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
                await self.provider.log.later(self.provider.log.mark, key, seen)
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

    def __init__(self, settings: RemoteSettings, home: Path, databases: PluginDatabases) -> None:
        self.settings = settings
        self.log = CallLog(databases, home)
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


def with_call_outcomes(load: AgentLoad, home: Path, databases: PluginDatabases) -> AgentLoad:
    """``load`` with each remote agent's recent call outcomes in its health detail
    (``toolang agents show``). The health's state stays what the card read found now: a
    call that found the agent unreachable is older than that read, and counting it
    again would make the agent pool's heartbeat say the opposite of its pings (the pool
    counts every call's outcome itself). The call log is read as it is (read only): with
    none yet, or one that cannot be read (a newer version's, a server that does not
    answer: logged), ``load`` is returned as is — the outcomes are detail, the agents
    stay listed."""
    calls_log = CallLog(databases, home, read_only=True)
    try:
        recent = {d.origin: calls_log.recent(d.origin) for d in load.definitions if d.origin}
    except StoreMissing:
        return load
    except Exception as exc:
        log.warning("a2a.call_outcomes_unread", error=redact_text(describe_exception(exc)))
        return load
    finally:
        calls_log.close()
    health = dict(load.health)
    for definition in load.definitions:
        calls = recent.get(definition.origin)
        current = health.get(definition.name)
        if not calls or current is None:
            continue
        counts: dict[str, int] = {}
        for call in calls:
            counts[str(call["state"])] = counts.get(str(call["state"]), 0) + 1
        summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
        detail = f"{current.detail}; last {len(calls)} call(s): {summary}"
        last = calls[0]
        if last["state"] == "failed":
            detail += f"; last call failed: {last['error']}"
        health[definition.name] = attrs.evolve(current, detail=detail)
    return attrs.evolve(load, health=health)

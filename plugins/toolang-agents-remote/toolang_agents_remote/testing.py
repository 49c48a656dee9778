"""A real remote agent for tests: a2a-sdk's own A2A server (its routes and request
handler, under uvicorn, in a thread of the test process) on a free port of 127.0.0.1.

It needs the plugin's ``test`` extra (``a2a-sdk[http-server]`` and ``uvicorn``)::

    from toolang_agents_remote.testing import A2AServer

    with A2AServer("polyglot") as remote:  # its agent card is at remote.url
        ...  # name remote.url in [plugins.agents-remote] endpoints
    remote.messages  # every message its agent was given, in order
    remote.posted  # the headers of every JSON-RPC call received, in order

The agent answers each message with its own text; ``A2AServer(name, held=True)``'s
answers with a task instead, which completes (with the message's text) once
``remote.release`` is set. Its card offers two skills
(translation and language detection), so routing by skill can be tried against it.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Awaitable, Callable

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import Response

__all__ = ["A2AServer"]

START_SECONDS = 60.0
"""How long the server may take to start (a loaded machine is slow, never this slow)."""


class _Echo(AgentExecutor):
    """Answers every message with its own text, and keeps the messages."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self._lock = threading.Lock()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        with self._lock:
            self.messages.append(text)
        await event_queue.enqueue_event(new_text_message(text))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("echo cannot be canceled")


class _HeldTask(_Echo):
    """Answers each message with a task that works until ``release`` is set, then
    completes with the message's text; keeps the messages like :class:`_Echo`."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        with self._lock:
            self.messages.append(text)
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        while not self.release.is_set():
            await asyncio.sleep(0.02)
        await updater.add_artifact([Part(text=text)])
        await updater.complete()


def _card(name: str, url: str) -> AgentCard:
    return AgentCard(
        name=name,
        description="Translates text between languages.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="translate",
                name="Translate",
                description="Translate text.",
                tags=["translation", "french"],
            ),
            AgentSkill(
                id="detect-language",
                name="Detect language",
                description="Say which language a text is in.",
                tags=["language"],
            ),
        ],
    )


class A2AServer:
    """One A2A agent card and its JSON-RPC endpoint, served until :meth:`stop`.

    ``held=True``: the agent answers each message with a task that completes once
    ``release`` is set (a call that waits, for a node to die in)."""

    def __init__(self, name: str, *, held: bool = False) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        card = _card(name, self.url)
        self._agent = _HeldTask() if held else _Echo()
        self.release = self._agent.release if isinstance(self._agent, _HeldTask) else None
        """Set it to let a held task complete (``None`` unless ``held``)."""
        handler = DefaultRequestHandler(
            agent_executor=self._agent, task_store=InMemoryTaskStore(), agent_card=card
        )
        app = Starlette(
            routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")]
        )
        self.posted: list[dict[str, str]] = []
        """The headers of every POST (JSON-RPC call) received, in order."""

        async def record(
            request: Request, call_next: Callable[[Request], Awaitable[Response]]
        ) -> Response:
            if request.method == "POST":
                self.posted.append(dict(request.headers))
            return await call_next(request)

        app.add_middleware(BaseHTTPMiddleware, dispatch=record)
        # Idle connections stay open for the whole test: uvicorn's default closes them
        # after 5 s, and a call sent on one as it closes is lost before it arrives
        # ("server disconnected"), a race a loaded machine makes likely.
        # log_config=None: uvicorn's default would hand its loggers handlers of their own
        # and stop them propagating, for the whole process (the runtime's log among it).
        config = uvicorn.Config(
            app, log_level="warning", log_config=None, lifespan="off", timeout_keep_alive=600
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    @property
    def messages(self) -> list[str]:
        """Every message the agent was given, in order."""
        with self._agent._lock:
            return list(self._agent.messages)

    def start(self) -> A2AServer:
        self.thread.start()
        deadline = time.monotonic() + START_SECONDS
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the A2A server died while starting")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the A2A server did not start within {START_SECONDS:.0f} s")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()

    def __enter__(self) -> A2AServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.thread.is_alive():
            self.stop()

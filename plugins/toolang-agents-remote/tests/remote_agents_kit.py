"""A real A2A server (a2a-sdk's own routes and request handler, under uvicorn) on
127.0.0.1, started and stopped by the tests."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware


class Echo(AgentExecutor):
    """Answers every message with its own text; every message it ran is noted in
    ``messages``."""

    def __init__(self, messages: list[str]) -> None:
        self.messages = messages

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.messages.append(context.get_user_input())
        await event_queue.enqueue_event(new_text_message(context.get_user_input()))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("echo cannot be canceled")


class HeldTask(AgentExecutor):
    """Answers with a task that works until ``release`` is set, then completes with
    the message's text; every message it ran is noted in ``messages``."""

    def __init__(self, messages: list[str], release: threading.Event) -> None:
        self.messages = messages
        self.release = release

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        self.messages.append(context.get_user_input())
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        while not self.release.is_set():
            await asyncio.sleep(0.02)
        await updater.add_artifact([Part(text=context.get_user_input())])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("a held task is not canceled in these tests")


def card(name: str, url: str) -> AgentCard:
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
    """``with A2AServer("name") as server:`` serves an agent card at ``server.url``.

    ``held=True``: the agent answers each message with a task (:class:`HeldTask`) that
    completes once ``server.release`` is set. ``server.messages`` lists every message
    the agent ran, in order."""

    def __init__(self, name: str, *, held: bool = False) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        agent_card = card(name, self.url)
        self.messages: list[str] = []
        """Every message the agent ran, in order."""
        self.release = threading.Event()
        executor = HeldTask(self.messages, self.release) if held else Echo(self.messages)
        handler = DefaultRequestHandler(
            agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=agent_card
        )
        app = Starlette(
            routes=[*create_agent_card_routes(agent_card), *create_jsonrpc_routes(handler, "/")]
        )
        self.posted: list[dict[str, str]] = []
        """The headers of every POST (JSON-RPC call) received, in order."""

        async def record(request, call_next):
            if request.method == "POST":
                self.posted.append(dict(request.headers))
            return await call_next(request)

        app.add_middleware(BaseHTTPMiddleware, dispatch=record)
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def start(self) -> A2AServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive(), "the A2A server died while starting"
            assert time.monotonic() < deadline, "the A2A server did not start within 30 s"
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

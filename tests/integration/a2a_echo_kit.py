"""A remote agent for integration tests: a real A2A server (a2a-sdk's own routes and
request handler, under uvicorn, in a thread of the test process) on 127.0.0.1 serving
one agent card, its agent echoing every message — and counting the messages it was
given, the remote side's record of the calls that reached it.

``with EchoAgent("polyglot") as remote:`` serves the card at ``remote.url``; the
toolang runtimes name it in ``[plugins.agents-remote] endpoints``.
"""

from __future__ import annotations

import socket
import threading
import time

import uvicorn
from a2a.helpers.proto_helpers import new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette


class _Echo(AgentExecutor):
    """Answers every message with its own text; counts the messages."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self._lock = threading.Lock()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        with self._lock:
            self.messages.append(text)
        await event_queue.enqueue_event(new_text_message(f"echo: {text}"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("echo cannot be canceled")


def _card(name: str, url: str) -> AgentCard:
    return AgentCard(
        name=name,
        description="Echoes what it is asked (a remote agent of the tests).",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echo text.", tags=["echo"])],
    )


class EchoAgent:
    """One A2A agent card and its JSON-RPC endpoint on a free loopback port."""

    def __init__(self, name: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        card = _card(name, self.url)
        self.executor = _Echo()
        handler = DefaultRequestHandler(
            agent_executor=self.executor, task_store=InMemoryTaskStore(), agent_card=card
        )
        routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")]
        app = Starlette(routes=routes)
        # Idle connections stay open for the whole test: uvicorn's default closes them
        # after 5 s, and a call sent on one as it closes is lost before it arrives
        # ("server disconnected"), a race a loaded machine makes likely.
        config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_keep_alive=600)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    @property
    def messages(self) -> list[str]:
        """Every message the agent was given, in order."""
        return list(self.executor.messages)

    def __enter__(self) -> EchoAgent:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert self.thread.is_alive(), "the A2A server died while starting"
            assert time.monotonic() < deadline, "the A2A server did not start within 60 s"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()

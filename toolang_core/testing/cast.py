"""One scripted model playing several agents, and reading a model request.

A :class:`Cast` answers each agent from its own script. The step it answers is the
number of assistant messages since the conversation's last user message
(:func:`position`) — so it holds no state, every agent's turn (and a resumed one) starts
at its first step, and steps may be functions of the request (to read an id out of the
previous tool result with :func:`last_result`).

    cast = Cast(assistant=[tool_call("ask_agent", {...}), text("done")],
                researcher=[text("found it")])
    runtime = make_runtime(tmp_path, plugins=[("scripted", cast.plugin()), ...])
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Final

from toolang_core.models.types import ModelRequest, ModelResponse
from toolang_core.testing.models import ScriptedModel, Step

Answer = Callable[[ModelRequest], "Step | ModelResponse"]
Script = Sequence["Step | Answer"] | Answer
"""Steps by position, or one function answering every request of the agent."""

DELEGATION_TOOLS: Final = (
    "start_task_run",
    "list_task_runs",
    "get_task_run",
    "wait_task_run",
    "cancel_task_run",
    "read_task_run_transcript",
    "agent_spawn",
    "agent_wait",
    "agent_stop",
    "ask_agent",
    "transfer_to_agent",
)
"""Every tool the core's delegation and task runs offer an agent."""


def agent_of(request: ModelRequest) -> str:
    """The agent a request is for, from the runtime context of its system message."""
    found = re.search(r"^- agent: (\S+)$", request.messages[0].content, re.M)
    assert found, request.messages[0].content
    return found.group(1)


def position(request: ModelRequest) -> int:
    """How many assistant messages follow the conversation's last user message: the
    step of the agent's turn this request asks for (0: the first)."""
    count = 0
    for message in reversed(request.messages):
        if message.role == "user":
            break
        if message.role == "assistant":
            count += 1
    return count


def user_text(request: ModelRequest) -> str:
    """The conversation's last user message."""
    return next(m.content for m in reversed(request.messages) if m.role == "user")


def last_result(request: ModelRequest) -> dict[str, Any]:
    """The tool result the request ends with, as recorded (``ok``, ``output``, …)."""
    result: dict[str, Any] = json.loads(request.messages[-1].content)
    return result


def last_output(request: ModelRequest) -> Any:
    """The output of the tool result the request ends with."""
    return last_result(request).get("output")


class Cast:
    """A scripted model answering each agent (by name) from its own script; ``calls``
    lists ``(agent, position)`` as answered, ``requests`` every request."""

    def __init__(self, **scripts: Script) -> None:
        self.scripts = dict(scripts)
        self.calls: list[tuple[str, int]] = []
        self.requests: list[ModelRequest] = []
        self.model = ScriptedModel(self.respond)

    def respond(self, request: ModelRequest) -> Step | ModelResponse:
        """The step of the requesting agent's script at the request's position.

        :raises AssertionError: when that agent's script has no such step."""
        agent, index = agent_of(request), position(request)
        self.calls.append((agent, index))
        self.requests.append(request)
        script = self.scripts.get(agent)
        if callable(script):
            return script(request)
        if script is None or index >= len(script):
            raise AssertionError(f"agent {agent!r} has no step {index}")
        step = script[index]
        return step(request) if callable(step) else step

    def requests_of(self, agent: str) -> list[ModelRequest]:
        """The requests made for ``agent``, in order."""
        return [r for r in self.requests if agent_of(r) == agent]

    def plugin(self) -> object:
        """The model plugin to register (as ``scripted``)."""
        return self.model.plugin()

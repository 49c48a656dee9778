"""Real `toolang run` processes serving A2A on loopback, for the tests and the bench.

The model is a test plugin installed as a real distribution: it answers
``echo: <the last user message>`` (and ``[name type size]`` per image attached);
``ask:{json}`` makes it call ``ask_person`` with those parameters; a message containing
``slow`` makes it wait a minute first (something to cancel), ``delegate:NAME:TEXT``
makes it call ``ask_agent``, and ``json:VALUE`` answers VALUE (a typed answer).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from toolang_core.testing.dists import make_distribution
from toolang_core.testing.processes import free_port, start_toolang_run, wait_serving

MODEL_MODULE = """
import asyncio, json, os
from toolang_core import hookimpl, ToolCall
from toolang_core.models.types import ModelResponse


class Echo:
    attachment_types = ("image/*",)

    async def complete(self, request):
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(text="remote said: " + last.content, model="echo")
        text = next(m.content for m in reversed(request.messages) if m.role == "user")
        if text.startswith("delegate:") and not os.environ.get("A2A_NO_DELEGATE"):
            _, tool, agent, ask = text.split(":", 3)
            params = {"agent": agent, "request": ask}
            if tool == "start_task_run":
                params = {"agent_name": agent, "task": ask, "mode": "sync"}
            if tool == "transfer_to_agent":
                params = {"agent_name": agent, "message": ask}
            if tool == "agent_spawn":
                params = {"agent": agent, "instruction": ask}
            return ModelResponse(tool_calls=(ToolCall("c1", tool, params),), model="echo")
        if text.startswith("json:"):
            return ModelResponse(text=text[5:], model="echo")
        if text.startswith("ask:"):
            params = json.loads(text[4:])
            return ModelResponse(tool_calls=(ToolCall("q1", "ask_person", params),), model="echo")
        if text.startswith("tool:"):
            return ModelResponse(
                tool_calls=(ToolCall("n1", "kit_note", {"text": text[5:]}),), model="echo"
            )
        if "slow" in text:
            await asyncio.sleep(float(os.environ.get("A2A_SLOW_SECONDS", "60")))
        counter = os.environ.get("A2A_COUNTER")
        if counter:
            with open(counter, "a", encoding="utf-8") as f:
                f.write(text + "\\n")
        last_user = next(m for m in reversed(request.messages) if m.role == "user")
        seen = "".join(
            f" [{a.ref.name} {a.media_type} {a.ref.size}]" for a in last_user.attachments
        )
        return ModelResponse(text="echo: " + text + seen, model="echo")


class Provider:
    def model(self, model_id):
        return Echo()


@hookimpl
def toolang_register_models(register):
    register("echo", lambda context: Provider(), description="echoes (tests)")


def kit_note(text: str) -> str:
    '''Write a note (a side effect that needs approval in the tests).

    :param text: the note
    '''
    with open(os.environ["A2A_COUNTER"] + ".notes", "a", encoding="utf-8") as f:
        f.write(text + "\\n")
    return "noted " + text


@hookimpl
def toolang_register_tools(register):
    from toolang_core import Tool

    register(Tool.from_function(kit_note))
"""


def install_kit(site: Path) -> None:
    make_distribution(
        site,
        "toolang-a2a-test-kit",
        entry_points={"toolang": {"echo-model": "a2a_echo_model"}},
        modules={"a2a_echo_model": MODEL_MODULE},
    )


BASE_CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.02
lease_seconds = 5.0
shutdown_grace_seconds = 0.2

[models]
default = "echo"
"""


class Runtime:
    """One `toolang run` in its own home (its own store) serving A2A on a free port."""

    def __init__(
        self,
        home: Path,
        site: Path,
        config: str,
        *,
        plugins: str = "source-a2a,echo-model,source-chat",
        env: dict[str, str] | None = None,
    ) -> None:
        self.home = home
        self.site = site
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        home.mkdir(parents=True, exist_ok=True)
        (home / "toolang.toml").write_text(
            BASE_CONFIG + config.replace("{port}", str(self.port)), encoding="utf-8"
        )
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        self.env.update(
            TOOLANG_LOAD_PLUGINS=plugins,
            PYTHONPATH=os.pathsep.join([str(site), self.env.get("PYTHONPATH", "")]),
            A2A_COUNTER=str(home / "received.txt"),
            **(env or {}),
        )
        self.process: subprocess.Popen[str] | None = None

    def start(self, *, serves: bool = True) -> Runtime:
        """Start it and wait until its card answers (``serves=False``: until it has
        started, for a runtime that serves no A2A)."""
        self.log = self.home / f"run-{time.monotonic_ns()}.log"
        self.process = start_toolang_run(self.home, self.env, self.log)
        if serves:
            ready, what = self.card_served, f"the A2A server at {self.url}"
        else:
            ready, what = self.started, "toolang run to start"
        wait_serving(self.process, self.log, ready, what=what)
        return self

    def started(self) -> bool:
        """Whether it logged that it started."""
        return "runtime.started" in self.log.read_text(encoding="utf-8")

    def card_served(self) -> bool:
        """Whether its agent card answers (it is up and serving A2A)."""
        try:
            return httpx.get(self.url + "/.well-known/agent-card.json", timeout=1).is_success
        except httpx.HTTPError:
            return False

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolang_core", *args],
            cwd=self.home,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> str:
        if self.process is None:
            return ""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        return self.log.read_text(encoding="utf-8")

    def received(self) -> list[str]:
        path = self.home / "received.txt"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

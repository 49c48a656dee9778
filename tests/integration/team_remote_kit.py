"""A remote team member: a real `toolang run` process serving its agent ``far`` over A2A.

``far`` is an AGENT.md agent (toolang-agents-user) advertising the ``survey``
capability, so its card lists ``survey`` as a skill and the leader's pool sees it. Its
model is a test plugin installed as a real distribution: it writes every request it
sees (all its messages, one JSON line) to ``seen.jsonl`` in the remote's home — the
remote side's record of what crossed the team boundary — then answers ``REMOTE_ANSWER``;
a task containing ``slow`` makes it wait a minute first (a task to be killed holding).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import httpx

from toolang_core.testing.dists import make_distribution
from toolang_core.testing.processes import free_port, start_toolang_run, wait_serving

MODEL_MODULE = """
import asyncio, json, os
from toolang_core import hookimpl
from toolang_core.models.types import ModelResponse


class Far:
    async def complete(self, request):
        with open(os.environ["REMOTE_SEEN"], "a", encoding="utf-8") as f:
            f.write(json.dumps([m.content for m in request.messages]) + "\\n")
        text = next(m.content for m in reversed(request.messages) if m.role == "user")
        if "slow" in text:
            await asyncio.sleep(60)
        return ModelResponse(text=os.environ["REMOTE_ANSWER"], model="far-kit")


class Provider:
    def model(self, model_id):
        return Far()


@hookimpl
def toolang_register_models(register):
    register("far-kit", lambda context: Provider(), description="the remote member (tests)")
"""

AGENT_MD = """---
name: far
description: answers surveys from another process
capabilities: [survey]
---
You answer survey questions briefly.
"""

CONFIG = """
[runtime]
executor = "agent"
poll_seconds = 0.02
lease_seconds = 5.0
shutdown_grace_seconds = 0.2

[models]
default = "far-kit"

[agents]
default = "far"

[plugins.source-a2a]
listen = "127.0.0.1:{port}"
tokens = { leader-a = "token-of-a" }
"""

PLUGINS = "source-a2a,agents-user,source-chat,far-kit"
TOKEN = "token-of-a"


def install_kit(site: Path) -> None:
    make_distribution(
        site,
        "toolang-team-remote-kit",
        entry_points={"toolang": {"far-kit": "team_far_model"}},
        modules={"team_far_model": MODEL_MODULE},
    )


class RemoteMember:
    """`toolang run` in its own home and store, serving ``far`` on a free loopback port."""

    def __init__(self, home: Path, site: Path, *, answer: str) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.endpoint = self.url + "/a2a/far"
        (home / "agents" / "far").mkdir(parents=True)
        (home / "agents" / "far" / "AGENT.md").write_text(AGENT_MD, encoding="utf-8")
        (home / "toolang.toml").write_text(
            CONFIG.replace("{port}", str(self.port)), encoding="utf-8"
        )
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        self.env.update(
            TOOLANG_LOAD_PLUGINS=PLUGINS,
            PYTHONPATH=os.pathsep.join([str(site), self.env.get("PYTHONPATH", "")]),
            REMOTE_SEEN=str(home / "seen.jsonl"),
            REMOTE_ANSWER=answer,
        )
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> RemoteMember:
        self.log = self.home / "run.log"
        self.process = start_toolang_run(self.home, self.env, self.log)
        wait_serving(
            self.process, self.log, self.card_served, what=f"the remote member at {self.url}"
        )
        return self

    def card_served(self) -> bool:
        """Whether its agent card answers (it is up and serving A2A)."""
        try:
            return httpx.get(self.endpoint + "/.well-known/agent-card.json", timeout=1).is_success
        except httpx.HTTPError:
            return False

    def seen(self) -> list[list[str]]:
        """Every request the remote's model saw: its messages' contents."""
        path = self.home / "seen.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)

    def leader_config(self, card_timeout: float = 5.0, call_timeout: float = 30.0) -> str:
        """The ``[plugins.agents-remote]`` table a leader needs to call ``far``."""
        return (
            "[plugins.agents-remote]\n"
            f'endpoints = ["{self.endpoint}"]\n'
            f'tokens = {{ "{self.endpoint}" = "{TOKEN}" }}\n'
            f"timeout_seconds = {card_timeout}\n"
            f"call_timeout_seconds = {call_timeout}\n"
            "poll_seconds = 0.02\n"
        )

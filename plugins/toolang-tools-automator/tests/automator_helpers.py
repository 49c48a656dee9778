"""A scripted model that plays one script per chat request and answers workflow and
background steps by what they ask — and real turns served until idle."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolang_core.testing.cast import position
from toolang_core.testing.models import Step, text

STEP = re.compile(r"^You are running step '(\w+)' of workflow")


class Conductor:
    """``scripts[input]`` answers a chat turn whose input is ``input`` (by the number of
    assistant messages so far); ``steps(step_id, task)`` answers a workflow step;
    anything else is a background task, answered ``done: <task>``."""

    def __init__(
        self,
        scripts: Mapping[str, Sequence[Step]],
        steps: Callable[[str, str], Any] | None = None,
    ) -> None:
        self.scripts = dict(scripts)
        self.steps = steps or (lambda step, task: text(f"result of {step}"))
        self.tasks: list[str] = []

    async def __call__(self, request: Any) -> Any:
        users = [m for m in request.messages if m.role == "user"]
        said = users[-1].content if users else ""
        if said in self.scripts:
            answer = self.scripts[said][position(request)]
            if callable(answer):  # a step that looks at the request (e.g. a run id)
                answer = answer(request)
            return await answer if asyncio.iscoroutine(answer) else answer
        self.tasks.append(said)
        found = STEP.match(said)
        if found:
            answer = self.steps(found.group(1), said)
            return await answer if asyncio.iscoroutine(answer) else answer
        return text(f"done: {said[:60]}")

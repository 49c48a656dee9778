"""The built-in delegation plugin: the task-run, teammate and agent-as-tool tools (the
team tools are toolang-teams').

Registered by every host (status ``builtin``), offered to agents only when there is
someone to delegate to (two active agents or more: not in single-agent mode). The tools
are partitioned like any other: the automator role owns the task-run and teammate
tools, the embedded ``assistant`` owns ``ask_agent`` and ``transfer_to_agent`` and is
granted the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from toolang_core.markers import hookimpl
from toolang_core.taskruns import teammates, tools
from toolang_core.tools.types import Tool
from toolang_core.turn import delegation, escalation

if TYPE_CHECKING:
    from toolang_core.plugins.registrars import RegisterTool


FUNCTIONS = (*tools.TOOLS, *teammates.TOOLS, *delegation.TOOLS)
TOOL_NAMES = tuple(sorted(f.__name__ for f in FUNCTIONS))
"""The names of the delegation tools every host registers."""

IDEMPOTENT: Final = True
"""Every delegation tool is idempotent, so a call found in doubt after a crash is made
again under the same idempotency key: ``start_task_run`` and ``agent_spawn`` find the
run they spawned by that key (``TaskRunController.child_by_key``) and spawn nothing —
a sync ``start_task_run`` then waits for it and answers with its result; the others
read, wait, cancel or hand over; ``ask_agent`` resumes its nested loop from its
recorded steps."""


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    for function in FUNCTIONS:
        register(
            Tool.from_function(
                function, blocking=False, requires=("delegation",), idempotent=IDEMPOTENT
            )
        )
    # Offered by the agent loop to a turn narrower than its agent's role, never
    # partitioned (toolang_core.turn.escalation); it grants nothing by itself.
    register(Tool.from_function(escalation.request_tool, blocking=False, idempotent=True))

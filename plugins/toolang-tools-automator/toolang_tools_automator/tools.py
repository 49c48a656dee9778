"""The automator's tools with their JSON Schemas (tightened: lengths, patterns, ranges)."""

from __future__ import annotations

from toolang_tools_automator import bg, cron, workflows
from toolang_tools_automator.common import constrained

NAME = {"pattern": r"^[a-z0-9][a-z0-9_-]{0,47}$"}
AGENT = {"pattern": r"^[a-z][a-z0-9_-]{0,63}$"}
CHORE_ID = {"pattern": r"^cron\.[0-9a-f]{20}$"}
TASK_ID = {"pattern": r"^[a-z0-9][a-z0-9_-]{0,127}$"}
RUN_ID = {"pattern": r"^wf-[0-9a-f]{20}$"}
PROMPT = {"minLength": 1, "maxLength": 8_000, "pattern": r"\S"}

TOOLS = (
    constrained(
        cron.cron_add,
        name=NAME,
        schedule={"minLength": 1, "maxLength": 300},
        prompt=PROMPT,
        agent=AGENT,
        thread_id={"pattern": r"^[A-Za-z0-9][A-Za-z0-9:_.@/-]{0,199}$"},
    ),
    constrained(cron.cron_list),
    constrained(cron.cron_pause, id=CHORE_ID),
    constrained(cron.cron_resume, id=CHORE_ID),
    constrained(cron.cron_remove, id=CHORE_ID),
    constrained(bg.bg_submit, prompt=PROMPT, agent=AGENT),
    constrained(bg.bg_status, task_id=TASK_ID),
    constrained(bg.bg_result, task_id=TASK_ID),
    constrained(bg.bg_cancel, task_id=TASK_ID),
    constrained(
        workflows.workflow_save,
        name=NAME,
        yaml_content={"minLength": 1, "maxLength": workflows.MAX_YAML},
    ),
    constrained(workflows.workflow_run, name=NAME, input={"maxLength": 8_000}),
    constrained(workflows.workflow_status, run_id=RUN_ID),
    constrained(workflows.workflow_cancel, run_id=RUN_ID),
)

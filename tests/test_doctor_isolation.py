"""``toolang doctor``'s isolation check and its failed traces (Lango: "Recent failed
traces and isolation leaks are surfaced through lango doctor")."""

from __future__ import annotations

import json

from toolang_core import NewTurnRequest, Tool, TurnStatus, hookimpl
from toolang_core.doctor import DoctorContext
from toolang_core.doctor.isolation import check_isolation
from toolang_core.testing.cast import Cast
from toolang_core.testing.models import error
from toolang_core.testing.runtimes import serve_until_idle

AGENT = '[runtime]\nexecutor = "agent"\n[models]\ndefault = "scripted"\n'


def test_doctor_names_a_turn_handed_across_owners_and_each_failed_trace(
    toolang_runtime, toolang_cli, toolang_home
):
    cast = Cast(assistant=[error("the model is down")])
    runtime = toolang_runtime(AGENT, plugins={"scripted": cast.plugin()})
    inbox = runtime.open_inbox()
    parent = inbox.submit(
        NewTurnRequest(source="chat", thread_id="chat:alice", input="hi", owner="alice")
    ).id
    # a plugin's bug: work handed over from alice's turn, running as the operator's
    child = inbox.submit(
        NewTurnRequest(source="task", thread_id="task:leak", input="go", parent=parent)
    ).id
    # the operator's turn handing work over as usual: the same work, not flagged
    mine = inbox.submit(NewTurnRequest(source="chat", thread_id="chat:me", input="hi")).id
    inbox.submit(NewTurnRequest(source="task", thread_id="task:fine", input="go", parent=mine))
    serve_until_idle(runtime)
    assert {inbox.get(t).status for t in (parent, child)} == {TurnStatus.FAILED}
    toolang_home.write_config("")  # the doctor of a plain configuration

    result = toolang_cli("doctor", "--json")
    assert result.returncode == 1, result.stdout
    findings = json.loads(result.stdout)
    (crossed,) = [f for f in findings if f["area"] == "isolation" and f["status"] == "fail"]
    assert crossed["summary"] == (
        "1 delegated turn(s) ran as another owner than the turn that handed them over"
    )
    assert crossed["details"] == [
        f"{child} on task:leak (task): 'owner''s, its parent {parent} 'alice''s"
    ]
    (traces,) = [f for f in findings if f["area"] == "traces"]
    assert traces["status"] == "warn"
    assert traces["summary"].startswith("4 turn(s) failed in the last 24 hours (")
    assert {f"toolang turns trace {parent}", f"toolang turns trace {child}"} <= {
        d.split("  #")[0] for d in traces["details"]
    }


def isolation_findings(runtime):
    context = DoctorContext(env={}, config_path=None, config=runtime.config, host=runtime.host)
    context.runtime = runtime
    return list(check_isolation(context))


def test_doctor_finds_no_path_in_a_plain_runtime(toolang_runtime):
    (found,) = isolation_findings(toolang_runtime())
    assert (found.status, found.summary) == (
        "ok",
        "no path between owners found (sandbox, tools, remote agents, delegated turns)",
    )


def remember_for_everyone(note: str) -> str:
    """Keep a note.

    :param note: what to keep
    """
    return "kept"


class BlindMemoryTool:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(remember_for_everyone, requires=("memory",)))


def test_a_memory_tool_without_the_call_context_is_a_path_between_owners(toolang_runtime):
    runtime = toolang_runtime(plugins={"blind": BlindMemoryTool()})
    (found,) = [c for c in isolation_findings(runtime) if c.status == "fail"]
    assert found.summary.startswith("1 tool(s) use memory without the call's context")
    assert found.details[0] == "remember_for_everyone (plugin blind)"

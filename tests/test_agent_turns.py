"""Agent turns with a scripted model: the loop, the chain, the completion contract."""

from __future__ import annotations

import asyncio
import json

from bump_tools import BUMPED, BumpTools, clear_bumps  # noqa: F401 (a fixture)

from toolang_core import Tool, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import AgentsConfig, ModelsConfig, RuntimeConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, Step, error, text, tool_call
from toolang_core.tools.types import ToolCall
from toolang_core.turn.delegation_plugin import TOOL_NAMES as DELEGATION_TOOLS

COUNTER = BUMPED


def Tools():
    """``bump``, and ``fs_secret`` (a tool whose name marks it sensitive)."""
    return BumpTools(
        Tool(
            name="fs_secret",
            description="",
            parameters={"type": "object"},
            function=lambda **kw: "ok",
            blocking=False,
        )
    )


def make(tmp_path, model, **agents):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        agents=AgentsConfig(**agents),
    )
    return Runtime.with_plugins(config, [("scripted", model.plugin()), ("tools", Tools())], env={})


def run_turn(runtime, text_in="hi", thread="cli:t", **kw):
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id=thread, input=text_in, **kw)).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    try:
        return inbox.get(turn_id), inbox.store.steps(turn_id)
    finally:
        inbox.store.close()


def test_a_visible_answer_completes_the_turn(tmp_path):
    model = ScriptedModel([text("hello back")])
    turn, steps = run_turn(make(tmp_path, model))
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "hello back")
    assert [s.kind for s in steps] == ["prompt_build", "model_call"]
    model.assert_complete()


def test_tool_calls_pass_the_chain_and_results_reach_the_model(tmp_path):
    model = ScriptedModel([tool_call("bump", {"label": "a"}, call_id="c1"), text("done")])
    turn, steps = run_turn(make(tmp_path, model))
    assert (turn.status, turn.output, COUNTER) == (TurnStatus.COMPLETED, "done", ["a"])
    tool_message = model.calls[1].messages[-1]
    assert (tool_message.role, tool_message.tool_call_id) == ("tool", "c1")
    assert json.loads(tool_message.content) == {"ok": True, "output": "bumped a"}
    tool_step = steps[2]
    assert tool_step.idempotency_key == f"{turn.id}:tool:c1"
    assert [s["stage"] for s in tool_step.data["chain"]] == [
        "SecurityFilter",
        "ApprovalGate",
        "execute",
    ]


def test_invalid_parameters_go_back_to_the_model_as_a_structured_error(tmp_path):
    model = ScriptedModel([tool_call("bump", {"labl": "a"}), text("sorry")])
    turn, _ = run_turn(make(tmp_path, model))
    assert (turn.status, COUNTER) == (TurnStatus.COMPLETED, [])
    sent = json.loads(model.calls[1].messages[-1].content)
    assert sent["ok"] is False
    assert sent["error_type"] == "invalid_params"
    assert "params must contain ['label']" in sent["error"]


def test_unknown_tools_are_a_structured_error_too(tmp_path):
    model = ScriptedModel([tool_call("fly", {}), text("cannot")])
    turn, _ = run_turn(make(tmp_path, model))
    assert turn.status is TurnStatus.COMPLETED
    assert json.loads(model.calls[1].messages[-1].content)["error_type"] == "unknown_tool"


def test_the_same_call_repeated_is_loop_detected_whatever_the_ids(tmp_path):
    calls = iter(range(100))
    model = ScriptedModel(
        lambda request: tool_call("bump", {"label": "x"}, call_id=f"id-{next(calls)}")
    )
    turn, _ = run_turn(make(tmp_path, model, loop_repeats=3))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "loop_detected")
    assert "3 times" in turn.error
    assert COUNTER == ["x", "x"]  # the third repetition is never run


def test_tools_used_but_no_visible_answer_is_empty_after_tool_use(tmp_path):
    model = ScriptedModel([tool_call("bump", {"label": "a"}), text("   ")])
    turn, _ = run_turn(make(tmp_path, model))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "empty_after_tool_use")


def test_an_empty_answer_without_tools_fails_too(tmp_path):
    turn, _ = run_turn(make(tmp_path, ScriptedModel([text("")])))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "empty_answer")


def test_max_steps_is_enforced_in_code(tmp_path):
    labels = iter(range(100))
    model = ScriptedModel(lambda request: tool_call("bump", {"label": str(next(labels))}))
    turn, _ = run_turn(make(tmp_path, model, max_steps=4))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "max_steps")
    assert len(model.calls) == 4


def test_a_slow_agent_times_out(tmp_path):
    model = ScriptedModel([text("late", delay=5)])
    turn, _ = run_turn(make(tmp_path, model, turn_timeout_seconds=0.2))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "timeout")


def test_a_model_error_fails_the_turn_with_model_error(tmp_path):
    turn, steps = run_turn(make(tmp_path, ScriptedModel([error("quota exceeded")])))
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "quota exceeded" in turn.error
    assert (steps[-1].kind, steps[-1].status) == ("model_call", "failed")


def test_an_unknown_model_provider_is_named(tmp_path):
    model = ScriptedModel([])
    runtime = make(tmp_path, model)
    runtime.config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=runtime.config.runtime,
        models=ModelsConfig(default="nope/x"),
    )
    turn, _ = run_turn(runtime)
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "no model provider 'nope'" in turn.error
    assert "installed providers: scripted" in turn.error


def test_history_of_the_thread_is_in_the_next_prompt(tmp_path):
    model = ScriptedModel([text("first answer"), text("second answer")])
    runtime = make(tmp_path, model)
    run_turn(runtime, "first question")
    run_turn(runtime, "second question")
    roles = [(m.role, m.content) for m in model.calls[1].messages[1:]]
    assert roles == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
    ]


def test_history_is_capped(tmp_path):
    model = ScriptedModel([text(f"a{i}") for i in range(4)])
    runtime = make(tmp_path, model, history_turns=1)
    for i in range(4):
        run_turn(runtime, f"q{i}")
    assert [m.content for m in model.calls[3].messages[1:]] == ["q2", "a2", "q3"]


def test_plugin_notes_are_rendered_by_the_runtime(tmp_path):
    class Notes:
        @staticmethod
        @hookimpl
        def toolang_prompt_notes(agent, thread_id, runtime):
            return f"{agent} on {thread_id}: bump failed twice today"

    model = ScriptedModel([text("ok")])
    runtime = make(tmp_path, model)
    runtime.host.register(Notes(), "notes")
    run_turn(runtime)
    system = model.calls[0].messages[0].content
    assert "## Notes\n- assistant on cli:t: bump failed twice today" in system


def test_secrets_never_reach_the_stored_steps(tmp_path):
    key = "sk-proj-" + "a" * 30
    model = ScriptedModel(
        [tool_call("fs_secret", {"token": key, "note": f"use {key}"}), text("done")]
    )
    _, steps = run_turn(make(tmp_path, model), f"my key is {key}")
    stored = json.dumps([s.data for s in steps])
    assert key not in stored
    assert "********" in stored


def test_long_prompts_are_truncated_in_the_trace_with_a_flag(tmp_path):
    model = ScriptedModel([text("ok")])
    _, steps = run_turn(make(tmp_path, model), "x" * 10_000)
    data = steps[1].data
    assert data["truncated"] is True
    assert len(data["messages"][-1]["content"]) == 4_000
    assert len(model.calls[0].messages[-1].content) == 10_000  # the model saw all of it


def test_steered_input_reaches_the_running_turn_at_the_next_model_call(tmp_path):
    started = asyncio.Event()
    release = asyncio.Event()

    async def waiting(request):
        if len(model.calls) == 1:
            started.set()
            await release.wait()
            return tool_call("bump", {"label": "a"})
        return text("seen: " + request.messages[-1].content)

    model = ScriptedModel(waiting)
    runtime = make(tmp_path, model)
    inbox = runtime.open_inbox()

    async def scenario():
        turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        await asyncio.wait_for(started.wait(), 10)
        steer = inbox.submit(
            NewTurnRequest(source="chat", thread_id="cli:t", input="also X", strategy="steer")
        )
        assert steer.steer
        release.set()
        while not inbox.get(turn_id).status.is_terminal:
            await asyncio.sleep(0.01)
        stop.set()
        await serving
        return turn_id, steer.id

    turn_id, steer_id = asyncio.run(scenario())
    assert inbox.get(turn_id).output == "seen: also X"
    assert inbox.get(steer_id).status is TurnStatus.STEERED


def test_a_resumed_turn_replays_completed_steps_and_never_reruns_a_tool(tmp_path):
    blocked = asyncio.Event()

    async def first_attempt(request):
        if len(first.calls) == 1:
            return tool_call("bump", {"label": "once"}, call_id="c1")
        blocked.set()
        await asyncio.Event().wait()  # the process "dies" here: never answers
        raise AssertionError("unreachable")

    first = ScriptedModel(first_attempt)
    runtime = make(tmp_path, first)
    inbox = runtime.open_inbox()

    async def interrupted():
        turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        await asyncio.wait_for(blocked.wait(), 10)
        stop.set()  # shutdown with no grace: the turn goes back to the queue
        await serving
        return turn_id

    turn_id = asyncio.run(interrupted())
    assert inbox.get(turn_id).status is TurnStatus.QUEUED
    assert COUNTER == ["once"]
    second = ScriptedModel([text("finished")])  # step 0 is replayed from the store
    turn, steps = run_turn_existing(make(tmp_path, second), inbox, turn_id)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "finished")
    assert COUNTER == ["once"]
    assert len(second.calls) == 1
    assert [s.kind for s in steps].count("tool_call") == 1


def run_turn_existing(runtime, inbox, turn_id):
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return inbox.get(turn_id), inbox.store.steps(turn_id)


def test_an_agent_outside_its_scope_is_refused(tmp_path):
    from toolang_core.agents.types import AgentDefinition, AgentLoad

    class Source:
        label = "user"
        name = "test-agents"

        def load(self, context):
            return AgentLoad(
                (AgentDefinition(name="narrow", instruction="narrow", prefixes=("fs_",)),)
            )

    class Agents:
        @staticmethod
        @hookimpl
        def toolang_agent_sources():
            return Source()

    model = ScriptedModel([tool_call("bump", {"label": "a"}), text("no")])
    runtime = make(tmp_path, model)
    runtime.host.register(Agents(), "agents")
    turn, _ = run_turn(runtime, agent="narrow")
    assert turn.status is TurnStatus.COMPLETED
    sent = json.loads(model.calls[1].messages[-1].content)
    assert sent["error_type"] == "not_allowed"
    assert [t.name for t in model.calls[0].tools] == ["fs_secret"]
    assert COUNTER == []


def test_an_unknown_agent_fails_the_turn_clearly(tmp_path):
    turn, _ = run_turn(make(tmp_path, ScriptedModel([])), agent="ghost")
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "agent_error")
    assert "agent 'ghost' is unknown" in turn.error


def test_turns_trace_prints_a_timeline_with_every_chain_stage(tmp_path):
    import os
    import subprocess
    import sys

    model = ScriptedModel([tool_call("bump", {"label": "t"}, call_id="c1"), text("all done")])
    turn, _ = run_turn(make(tmp_path, model))
    (tmp_path / "toolang.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env["TOOLANG_LOAD_PLUGINS"] = ""
    out = subprocess.run(
        [sys.executable, "-m", "toolang_core", "turns", "trace", turn.id],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = out.splitlines()
    assert lines[0] == f"turn {turn.id} on cli:t: completed, attempt 1"
    steps = lines[: lines.index("after the turn:")]
    kinds = [line.split()[2] for line in steps if line.strip().startswith(("+", "-0"))]
    assert kinds == ["prompt_build", "model_call", "tool_call", "model_call"]
    assert "→ asks for bump" in out
    assert 'bump({"label": "t"}) → ok: bumped t' in out
    assert [
        line.split()[0]
        for line in lines
        if line.strip().startswith(("Security", "Approval", "execute"))
    ] == [
        "SecurityFilter",
        "ApprovalGate",
        "execute",
    ]
    after = lines[lines.index("after the turn:") + 1 : -1]
    assert [line.split()[1:3] for line in after] == [["turn_state", "ok"], ["prompt_trace", "ok"]]
    assert lines[-1] == "output all done"


def test_turns_trace_of_an_unknown_turn_says_so(tmp_path):
    import os
    import subprocess
    import sys

    run_turn(make(tmp_path, ScriptedModel([text("x")])))
    (tmp_path / "toolang.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env["TOOLANG_LOAD_PLUGINS"] = ""
    done = subprocess.run(
        [sys.executable, "-m", "toolang_core", "turns", "trace", "nope"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 6
    assert "no turn request with id 'nope'" in done.stderr


class ScopedAgents:
    """A user source: 'narrow' claims fs_* and is granted bump; 'brief' has max_steps 1."""

    @staticmethod
    @hookimpl
    def toolang_agent_sources():
        from toolang_core.agents.types import AgentDefinition, AgentLoad

        class Source:
            label = "user"
            name = "test-agents"

            def load(self, context):
                return AgentLoad(
                    (
                        AgentDefinition(name="narrow", prefixes=("fs_*",), tools=("bump",)),
                        AgentDefinition(name="brief", tools=("*",), max_steps=1),
                    )
                )

        return Source()


def test_spawn_time_allowed_tools_narrow_what_the_agent_may_use(tmp_path):
    model = ScriptedModel([tool_call("fs_secret", {}), text("narrowed")])
    runtime = make(tmp_path, model)
    runtime.host.register(ScopedAgents(), "agents")
    turn, steps = run_turn(runtime, agent="narrow", meta={"allowed_tools": ["bump"]})
    # request_tool too: the narrowed turn may ask for the rest of its role (escalation)
    assert [t.name for t in model.calls[0].tools] == ["bump", "request_tool"]
    assert steps[0].data["tools"] == ["bump", "request_tool"]
    assert json.loads(model.calls[1].messages[-1].content)["error_type"] == "not_allowed"
    assert turn.status is TurnStatus.COMPLETED


def test_allowed_tools_outside_the_agents_scope_fail_the_turn_clearly(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]))
    runtime.host.register(ScopedAgents(), "agents")
    turn, _ = run_turn(runtime, agent="narrow", meta={"allowed_tools": ["bump", "exec_run"]})
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "agent_error")
    assert turn.error == (
        "allowed_tools asks for 'exec_run' outside agent 'narrow''s scope (bump, fs_secret); "
        "allowed_tools can only narrow an agent's scope"
    )


def test_an_agents_own_step_limit_overrides_the_configured_one(tmp_path):
    model = ScriptedModel(lambda request: tool_call("bump", {"label": str(len(COUNTER))}))
    runtime = make(tmp_path, model, max_steps=10)
    runtime.host.register(ScopedAgents(), "agents")
    turn, _ = run_turn(runtime, agent="brief")
    assert (turn.status, turn.outcome, len(model.calls)) == (TurnStatus.FAILED, "max_steps", 1)


def test_tools_no_agent_owns_are_logged_when_the_runtime_starts(tmp_path):
    from structlog.testing import capture_logs

    runtime = make(tmp_path, ScriptedModel([]))
    runtime.host.register(ScopedAgents(), "agents")
    with capture_logs() as logs:
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    (event,) = [e for e in logs if e["event"] == "agents.unmatched_tools"]
    # The built-in delegation tools and ask_person too: these test agents leave them unowned.
    assert event["tools"] == sorted(["bump", "ask_person", *DELEGATION_TOOLS])


def test_tools_whose_service_is_off_are_assigned_to_no_agent(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]))
    assert "memory_agent_save" in runtime.host.components.tools
    assignment = runtime.agents.assignment
    assert "memory_agent_save" not in {*assignment.scope("assistant"), *assignment.unmatched}


def test_a_speaker_is_built_once_per_agent_and_anew_after_a_reload(tmp_path):
    from toolang_core.turn.agent import AgentExecutor

    runtime = make(tmp_path, ScriptedModel([]))
    executor = AgentExecutor(runtime)
    agent = executor.agent(None)
    first = executor.speaker_for(agent)
    assert executor.speaker_for(executor.agent(None)) is first
    assert [s.name for s in first.specs] == sorted(first.allowed)
    narrowed = executor.speaker_for(agent, ["bump"])
    assert narrowed is not first and narrowed.allowed == frozenset({"bump"})
    assert executor.speaker_for(agent, ["bump"]) is narrowed
    runtime.agents.reload()  # a changed AGENT.md, a remote back up: read again
    again = executor.speaker_for(executor.agent(None))
    assert again is not first and again.allowed == first.allowed


def test_a_call_id_the_model_reuses_in_a_later_answer_runs_its_own_call(tmp_path):
    """A step's key spans the turn: the second ``c1`` was answered with the first
    call's recorded result, and never ran."""
    model = ScriptedModel(
        [
            tool_call("bump", {"label": "first"}, call_id="c1"),
            tool_call("bump", {"label": "second"}, call_id="c1"),
            text("done"),
        ]
    )
    turn, steps = run_turn(make(tmp_path, model))
    assert (turn.status, COUNTER) == (TurnStatus.COMPLETED, ["first", "second"])
    second = model.calls[2].messages[-1]
    assert second.tool_call_id == "c1-0"
    assert json.loads(second.content)["output"] == "bumped second"
    keys = [s.idempotency_key for s in steps if s.kind == "tool_call"]
    assert keys == [f"{turn.id}:tool:c1", f"{turn.id}:tool:c1-0"]


def test_renamed_call_ids_are_checked_again(tmp_path):
    """``["x-2", "x", "x"]``: the third was renamed ``x-2``, the first call's id."""
    calls = [ToolCall(i, "bump", {"label": f"n{n}"}) for n, i in enumerate(["x-2", "x", "x"])]
    model = ScriptedModel([Step(tool_calls=tuple(calls)), text("done")])
    turn, steps = run_turn(make(tmp_path, model))
    assert (turn.status, COUNTER) == (TurnStatus.COMPLETED, ["n0", "n1", "n2"])
    keys = [s.idempotency_key.rsplit(":", 1)[1] for s in steps if s.kind == "tool_call"]
    assert keys == ["x-2", "x", "x-0-2"]

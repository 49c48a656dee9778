"""A turn as the SDK's in-memory exporter receives it: the span tree, its GenAI
attributes, task runs under their parent turn, and nothing private in any attribute."""

from __future__ import annotations

import json
from pathlib import Path

from otel_kit import EMAIL, SECRET, Agents, Shelf, by_name, children, run_turn, serve, submit

import toolang_otel as plugin
from toolang_core import TurnStatus, hookimpl
from toolang_core.models.types import ModelRequest
from toolang_core.testing.models import text, tool_call


def spans_of(runtime):
    last = plugin.holder_of(runtime).last
    assert last is not None, "the plugin did not start"
    return list(last.telemetry.span_exporter.get_finished_spans())


def test_a_chat_turn_with_a_tool_call_and_a_memory_recall_is_one_span_tree(agent_runtime):
    shelf = Shelf()
    shelf.entries.append("tides are high at noon")
    runtime = agent_runtime(
        [tool_call("lookup", {"term": "tides"}, call_id="c1"), text("high at noon")],
        memory=shelf,
    )
    turn = run_turn(runtime, "when are the tides")
    assert turn.status is TurnStatus.COMPLETED
    spans = spans_of(runtime)
    root = by_name(spans)["invoke_agent assistant"]
    assert root.parent is None
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}
    names = sorted(s.name for s in children(spans, root))
    assert names == sorted(
        [
            "admission",
            "memory_recall",
            "chat scripted",
            "chat scripted",
            "execute_tool lookup",
            "after_turn prompt_trace",
            "after_turn memory_write",
        ]
    )
    assert dict(root.attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "assistant",
        "gen_ai.conversation.id": "cli:t",
        "toolang.turn.id": turn.id,
        "toolang.turn.source": "chat",
        "toolang.thread.group": "chat",
        "toolang.turn.attempt": 1,
        "toolang.turn.priority": turn.priority,
        "toolang.turn.status": "completed",
    }
    assert [e.name for e in root.events] == ["prompt_build"]
    recall = by_name(spans)["memory_recall"]
    assert dict(recall.attributes) == {
        "toolang.step.kind": "memory_recall",
        "toolang.memory.provider": "shelf",
        "toolang.memory.items": 1,
        "toolang.memory.degraded": False,
    }
    assert by_name(spans)["after_turn memory_write"].attributes["toolang.stage.ok"] is True
    # every child lies within its turn
    for child in children(spans, root):
        assert root.start_time <= child.start_time <= child.end_time <= root.end_time, child.name


def test_model_calls_carry_the_gen_ai_request_usage_and_finish_reason(agent_runtime):
    from toolang_core.models.types import ModelResponse
    from toolang_core.tools.types import ToolCall

    answers = iter(
        [
            ModelResponse(
                tool_calls=(ToolCall("c1", "lookup", {"term": "x"}),),
                usage={"input_tokens": 120, "output_tokens": 7},
                model="tiny-1",
            ),
            ModelResponse(
                text="done", usage={"input_tokens": 150, "output_tokens": 2}, model="tiny-1"
            ),
        ]
    )
    runtime = agent_runtime(lambda request: next(answers))
    run_turn(runtime)
    calls = [s for s in spans_of(runtime) if s.name == "chat tiny-1"]
    assert [dict(s.attributes) for s in calls] == [
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "scripted",
            "gen_ai.system": "scripted",
            "gen_ai.request.model": "tiny-1",
            "gen_ai.response.model": "tiny-1",
            "gen_ai.usage.input_tokens": 120,
            "gen_ai.usage.output_tokens": 7,
            "gen_ai.response.finish_reasons": ("tool_calls",),
        },
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "scripted",
            "gen_ai.system": "scripted",
            "gen_ai.request.model": "tiny-1",
            "gen_ai.response.model": "tiny-1",
            "gen_ai.usage.input_tokens": 150,
            "gen_ai.usage.output_tokens": 2,
            "gen_ai.response.finish_reasons": ("stop",),
        },
    ]
    assert all(s.kind.name == "CLIENT" for s in calls)


def test_a_tool_call_span_has_the_verdict_of_every_hook_stage_as_events(agent_runtime):
    runtime = agent_runtime([tool_call("lookup", {"term": "x"}, call_id="c1"), text("done")])
    run_turn(runtime)
    (tool,) = [s for s in spans_of(runtime) if s.name == "execute_tool lookup"]
    assert dict(tool.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function",
        "toolang.tool.outcome": "ok",
    }
    stages = [(e.name, e.attributes["toolang.hook.verdict"]) for e in tool.events]
    assert stages[:3] == [("SecurityFilter", "pass"), ("ApprovalGate", "pass"), ("execute", "ok")]


def delegating(request: ModelRequest):
    """The parent turn starts a task run and waits for it; the child answers."""
    user = next(m.content for m in reversed(request.messages) if m.role == "user")
    if user == "child work":
        return text("child done")
    if request.messages[-1].role == "tool":
        return text("parent done")
    return tool_call("start_task_run", {"task": "child work", "mode": "sync"})


def test_a_task_run_is_a_child_of_its_parent_turn(agent_runtime):
    runtime = agent_runtime(delegating, extra={"agents": Agents()})
    parent = run_turn(runtime, "delegate it")
    assert parent.status is TurnStatus.COMPLETED
    spans = spans_of(runtime)
    turns = [s for s in spans if s.name.startswith("invoke_agent")]
    (root,) = [s for s in turns if s.parent is None]
    (child,) = [s for s in turns if s.parent is not None]
    assert root.attributes["toolang.turn.id"] == parent.id
    assert child.parent.span_id == root.context.span_id
    assert child.context.trace_id == root.context.trace_id
    assert child.attributes["toolang.turn.source"] == "task"
    assert child.attributes["toolang.turn.parent"] == parent.id
    child_calls = [s for s in children(spans, child) if s.name.startswith("chat")]
    assert len(child_calls) == 1


def every_attribute_text(spans) -> str:
    values = []
    for span in spans:
        values.extend(str(v) for v in span.attributes.values())
        values.append(span.name)
        values.append(str(span.status.description))
        for event in span.events:
            values.extend(str(v) for v in event.attributes.values())
    return "\n".join(values)


def test_no_secret_or_personal_data_of_the_conversation_reaches_any_attribute(agent_runtime):
    runtime = agent_runtime(
        [tool_call("lookup", {"term": EMAIL, "token": SECRET}), text(f"mail {EMAIL}")]
    )
    run_turn(runtime, f"my key is {SECRET}, mail me at {EMAIL}")
    dumped = every_attribute_text(spans_of(runtime))
    assert SECRET not in dumped
    assert EMAIL not in dumped
    assert "ada.lovelace" not in dumped


def test_content_is_recorded_only_when_configured_and_then_masked(agent_runtime):
    runtime = agent_runtime(
        [tool_call("lookup", {"term": "tides", "token": SECRET}), text("done")],
        'exporter = "memory"\nsample_ratio = 1\nrecord_content = true\nmax_content_chars = 400\n',
    )
    run_turn(runtime, f"key {SECRET}")
    spans = spans_of(runtime)
    (tool,) = [s for s in spans if s.name == "execute_tool lookup"]
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {
        "term": "tides",
        "token": "********",
    }
    assert "found tides" in tool.attributes["gen_ai.tool.call.result"]
    first_call = next(s for s in spans if s.name.startswith("chat"))
    assert "gen_ai.input.messages" in first_call.attributes
    assert SECRET not in every_attribute_text(spans)


def test_a_failed_turn_is_an_error_span_with_its_outcome(agent_runtime):
    from toolang_core.testing.models import error

    runtime = agent_runtime([error("the model is down")])
    turn = run_turn(runtime)
    assert turn.status is TurnStatus.FAILED
    spans = spans_of(runtime)
    root = by_name(spans)["invoke_agent assistant"]
    assert root.status.status_code.name == "ERROR"
    assert root.attributes["toolang.turn.outcome"] == "model_error"
    assert root.attributes["error.type"] == "model_error"
    (call,) = [s for s in spans if s.name.startswith("chat")]
    assert call.status.status_code.name == "ERROR"
    assert "the model is down" not in every_attribute_text(spans)


def test_with_exporter_none_nothing_is_built(agent_runtime):
    runtime = agent_runtime([text("hi")], "")
    run_turn(runtime)
    assert plugin.holder_of(runtime).last is None


class TurnHookCensus:
    """Which plugins implement the plugin's turn-path hooks while the runtime runs."""

    def __init__(self):
        self.seen = {}

    @hookimpl
    def toolang_startup(self, runtime):
        self.seen = {hook: runtime.host.hooks.implementations(hook) for hook in plugin.TURN_HOOKS}


def test_with_exporter_none_a_run_calls_none_of_the_turn_hooks(agent_runtime):
    census = TurnHookCensus()
    runtime = agent_runtime([text("hi")], "", extra={"census": census})
    run_turn(runtime)
    assert census.seen == {hook: [] for hook in plugin.TURN_HOOKS}
    # Once the run is over the plugin's hooks are listed again (`toolang hooks`).
    assert runtime.host.hooks.implementations("toolang_turn_step") == [plugin.NAME]


def test_with_an_exporter_every_turn_hook_is_called(agent_runtime):
    census = TurnHookCensus()
    runtime = agent_runtime([text("hi")], extra={"census": census})
    run_turn(runtime)
    assert census.seen == {hook: [plugin.NAME] for hook in plugin.TURN_HOOKS}
    assert "invoke_agent assistant" in [s.name for s in spans_of(runtime)]


def test_two_turns_on_two_threads_are_two_traces(agent_runtime):
    runtime = agent_runtime([text("one"), text("two")])
    submit(runtime, "a", thread="cli:a")
    submit(runtime, "b", thread="cli:b")
    serve(runtime)
    roots = [s for s in spans_of(runtime) if s.name.startswith("invoke_agent")]
    assert len({s.context.trace_id for s in roots}) == 2


def test_a_sampled_out_turn_makes_no_span_and_still_counts(agent_runtime):
    runtime = agent_runtime([text("hi")], 'exporter = "memory"\nsample_ratio = 0\n')
    run_turn(runtime)
    assert spans_of(runtime) == []
    metrics = plugin.holder_of(runtime).last.final_metrics
    names = {m.name for r in metrics.resource_metrics for s in r.scope_metrics for m in s.metrics}
    assert "toolang.turns.finished" in names


def test_a_task_run_of_a_sampled_out_turn_is_not_traced_either(agent_runtime):
    runtime = agent_runtime(
        delegating, 'exporter = "memory"\nsample_ratio = 0\n', extra={"agents": Agents()}
    )
    parent = run_turn(runtime, "delegate it")
    assert parent.status is TurnStatus.COMPLETED
    assert spans_of(runtime) == []


REMOTE = "http://127.0.0.1:9/a2a/reviewer"


class RemoteAgent:
    """The default agent answering through a remote A2A endpoint: its model is
    ``a2a/<endpoint>``, as toolang-agents-remote names a remote agent's model."""

    label = "builtin"
    name = "otel-test-remote"

    @hookimpl
    def toolang_agent_sources(self):
        return self

    def load(self, context):
        from toolang_core import AgentDefinition, AgentLoad

        return AgentLoad(definitions=[AgentDefinition(name="assistant", model=f"a2a/{REMOTE}")])


def test_a_remote_agents_call_is_named_by_the_genai_convention(
    agent_runtime, toolang_scripted_model
):
    # The GenAI convention names an inference span `{operation} {gen_ai.request.model}`,
    # the provider going into gen_ai.provider.name: `chat <endpoint URL>`, not
    # `chat a2a/<endpoint>` (which docs/otel.md once said).
    remote = toolang_scripted_model([text("reviewed")])
    runtime = agent_runtime([], extra={"a2a": remote.plugin("a2a"), "remote": RemoteAgent()})
    assert run_turn(runtime).status is TurnStatus.COMPLETED
    (call,) = [s for s in spans_of(runtime) if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert call.name == f"chat {REMOTE}"
    assert (call.attributes["gen_ai.provider.name"], call.attributes["gen_ai.request.model"]) == (
        "a2a",
        REMOTE,
    )
    docs = (Path(__file__).resolve().parents[3] / "docs" / "otel.md").read_text(encoding="utf-8")
    assert "`chat a2a/<endpoint>`" not in docs and "`chat <endpoint URL>`" in docs

"""toolang_publish_event: tool calls become tool.* events on the bus, private by default."""

from __future__ import annotations

import json

from event_publisher_kit import Subscriber, run_turn

import toolang_hook_event_publisher as plugin
from toolang_core import ToolCall, ToolCallContext, ToolResult, TurnStatus, hookimpl
from toolang_core.testing.models import text, tool_call

SECRET = "sk-proj-abcdefghijklmnopqrstuvwx"


def tool_events(subscriber):
    return [e for e in subscriber.events if e.kind.startswith("tool.")]


def test_a_tool_call_reaches_every_bus_subscriber_without_params_or_output(agent_runtime):
    subscriber = Subscriber()
    runtime = agent_runtime(
        [tool_call("lookup", {"term": "x", "token": "hunter2"}, call_id="c1"), text("done")],
        extra={"subscriber": subscriber},
    )
    turn = run_turn(runtime)
    assert turn.status is TurnStatus.COMPLETED
    (event,) = tool_events(subscriber)
    assert event.kind == "tool.completed"
    assert (event.run_id, event.thread_id, event.turn_id) == (runtime.run_id, "cli:t", turn.id)
    data = dict(event.data)
    assert data.pop("duration_ms") >= 0
    assert data == {
        "tool": "lookup",
        "call_id": "c1",
        "ok": True,
        "error_type": None,
        "error": None,
        "agent": "assistant",
        "spawn_depth": 0,
    }


def test_the_turn_event_follows_the_tool_event_on_the_bus(agent_runtime):
    subscriber = Subscriber()
    runtime = agent_runtime(
        [tool_call("lookup", {"term": "x"}), text("done")], extra={"subscriber": subscriber}
    )
    run_turn(runtime)
    assert [e.kind for e in subscriber.events] == ["tool.completed", "turn.completed"]


def test_a_failing_tool_is_a_tool_failed_event_with_its_error_masked(agent_runtime):
    subscriber = Subscriber()
    runtime = agent_runtime(
        [tool_call("explode", {"why": f"bad key {SECRET}"}), text("sorry")],
        extra={"subscriber": subscriber},
    )
    run_turn(runtime)
    (event,) = tool_events(subscriber)
    assert event.kind == "tool.failed"
    assert (event.data["ok"], event.data["error_type"]) == (False, "RuntimeError")
    assert "bad key ********" in event.data["error"]
    assert SECRET not in repr(event)


def test_params_and_output_are_opt_in_with_secrets_masked_and_long_values_cut(agent_runtime):
    subscriber = Subscriber()
    runtime = agent_runtime(
        [tool_call("lookup", {"term": "x", "token": "hunter2"}), text("done")],
        "include_params = true\ninclude_output = true\nmax_value_chars = 100\n",
        extra={"subscriber": subscriber},
    )
    run_turn(runtime)
    (event,) = tool_events(subscriber)
    assert event.data["params"] == {"term": "x", "token": "********"}
    output = event.data["output"]
    assert output.startswith('"found x: xxx')
    assert output.endswith("more characters cut]")
    assert len(output) < 150


def test_with_no_sink_and_no_other_subscriber_no_tool_event_is_built(toolang_runtime):
    runtime = toolang_runtime(plugins={"hook-event-publisher": plugin})
    call = ToolCall("c1", "lookup", {"term": "x"})
    ctx = ToolCallContext(
        call=call, turn_id="t", thread_id="th", run_id="r", agent="a", runtime=runtime
    )
    assert plugin.toolang_publish_event(call, ToolResult(ok=True), ctx) is None


def after_stages(runtime, turn):
    from toolang_core.runtime.after_turn import AFTER_KIND

    store = runtime.open_inbox().store
    try:
        return [s["stage"] for s in store.get_record(AFTER_KIND, turn.id).data["stages"]]
    finally:
        store.close()


class Deliverer:
    """Delivers turns (so each turn has an after-record to read)."""

    @hookimpl
    def toolang_deliver_turn(self, turn, runtime):
        return None


def test_with_no_sink_the_plugin_takes_no_event_and_turns_publish_none(agent_runtime):
    runtime = agent_runtime(
        [tool_call("lookup", {"term": "x"}), text("done")], extra={"deliverer": Deliverer()}
    )
    turn = run_turn(runtime)
    assert turn.status is TurnStatus.COMPLETED
    # Nobody to hand a turn.* event to: the post-turn stages skip the events stage.
    assert after_stages(runtime, turn) == ["turn_state", "prompt_trace", "delivery"]
    assert plugin.toolang_inactive_hooks(runtime) == ("toolang_on_event",)


def test_with_a_sink_the_plugin_takes_every_event(agent_runtime, tmp_path):
    sink = f'sinks = [{{ type = "jsonl", path = "{tmp_path / "events.jsonl"}" }}]\n'
    runtime = agent_runtime(
        [tool_call("lookup", {"term": "x"}), text("done")],
        sink,
        extra={"deliverer": Deliverer()},
    )
    turn = run_turn(runtime)
    assert after_stages(runtime, turn) == ["turn_state", "prompt_trace", "events", "delivery"]
    assert plugin.toolang_inactive_hooks(runtime) == ()
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert [json.loads(line)["kind"] for line in lines] == ["tool.completed", "turn.completed"]


def test_a_call_the_chain_refused_is_a_tool_refused_event_with_its_refusal(agent_runtime):
    from toolang_core import Block, hookimpl

    class Guard:
        @staticmethod
        @hookimpl
        def toolang_filter_tool_call(call, ctx):
            return Block(f"no keys here: {call.params['term']}")

    subscriber = Subscriber()
    runtime = agent_runtime(
        [tool_call("lookup", {"term": SECRET}, call_id="c1"), text("sorry")],
        "include_params = true\n",
        extra={"subscriber": subscriber, "guard": Guard()},
    )
    run_turn(runtime)
    (event,) = tool_events(subscriber)
    assert event.kind == "tool.refused"
    assert (event.data["ok"], event.data["error_type"]) == (False, "blocked")
    assert event.data["refusal"] == {
        "stage": "SecurityFilter",
        "verdict": "block",
        "plugin": "guard",
        "reason": "no keys here: ********",
    }
    assert event.data["params"] == {"term": "********"}
    assert SECRET not in repr(event)

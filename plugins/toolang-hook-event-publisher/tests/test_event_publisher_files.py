"""The jsonl and stdout sinks, kinds filtering, and the bounded queue."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import structlog
from event_publisher_kit import read_lines, run_turn

import toolang_hook_event_publisher as plugin
from toolang_core import Event, TurnStatus
from toolang_core.testing.models import text, tool_call
from toolang_hook_event_publisher.sinks import JsonlWriter


def jsonl(path, **keys) -> str:
    extra = "".join(f", {k} = {json.dumps(v)}" for k, v in keys.items())
    return f'{{type = "jsonl", path = "{path}"{extra}}}'


def test_a_real_turn_writes_one_json_line_per_event(agent_runtime, tmp_path):
    out = tmp_path / "events.jsonl"
    runtime = agent_runtime(
        [tool_call("lookup", {"term": "x"}), text("done")], f"sinks = [{jsonl(out)}]\n"
    )
    turn = run_turn(runtime)
    lines = read_lines(out)
    assert [line["kind"] for line in lines] == ["tool.completed", "turn.completed"]
    assert {line["turn_id"] for line in lines} == {turn.id}
    assert {line["thread_id"] for line in lines} == {"cli:t"}
    assert len({line["id"] for line in lines}) == 2
    assert lines[0]["data"]["tool"] == "lookup"
    assert (lines[1]["data"]["source"], lines[1]["data"]["attempt"]) == ("chat", 1)
    assert plugin.stats(runtime)["sinks[0]"].delivered == 2


def test_a_runtime_served_again_keeps_delivering(agent_runtime, tmp_path):
    out = tmp_path / "events.jsonl"
    runtime = agent_runtime([text("one"), text("two")], f"sinks = [{jsonl(out)}]\n")
    first, second = run_turn(runtime), run_turn(runtime)  # each serve has its own event loop
    assert [line["turn_id"] for line in read_lines(out)] == [first.id, second.id]


def test_kinds_choose_what_reaches_each_sink(agent_runtime, tmp_path):
    turns, tools = tmp_path / "turns.jsonl", tmp_path / "tools.jsonl"
    runtime = agent_runtime(
        [tool_call("lookup", {"term": "x"}), text("done")],
        f'kinds = ["turn.*"]\nsinks = [{jsonl(turns)}, {jsonl(tools, kinds=["tool.*"])}]\n',
    )
    run_turn(runtime)
    assert [line["kind"] for line in read_lines(turns)] == ["turn.completed"]
    assert [line["kind"] for line in read_lines(tools)] == ["tool.completed"]


def test_the_stdout_sink_prints_the_same_json_lines(agent_runtime, capsys):
    runtime = agent_runtime([text("hello")], 'sinks = [{type = "stdout"}]\n')
    run_turn(runtime)
    out = capsys.readouterr().out  # unconfigured structlog prints there too: skip its lines
    (line,) = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    assert line["kind"] == "turn.completed"


def test_a_sink_that_cannot_write_fails_its_events_but_never_the_turn(agent_runtime, tmp_path):
    runtime = agent_runtime([text("hello")], f"sinks = [{jsonl(tmp_path)}]\n")  # a directory
    with structlog.testing.capture_logs() as logs:
        turn = run_turn(runtime)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "hello")
    stats = plugin.stats(runtime)["sinks[0]"]
    assert (stats.delivered, stats.failed) == (0, 1)
    (failed,) = [e for e in logs if e["event"] == "event_publisher.delivery_failed"]
    assert f"cannot append to {tmp_path}" in failed["error"]


def test_a_full_queue_drops_the_oldest_events_and_counts_them(toolang_runtime, tmp_path):
    out = tmp_path / "events.jsonl"
    runtime = toolang_runtime(
        f"[plugins.{plugin.NAME}]\nqueue_size = 2\nsinks = [{jsonl(out)}]\n",
        plugins={plugin.NAME: plugin},
    )
    publisher = plugin.publisher_of(runtime)

    async def burst():
        # No await between the offers: the worker cannot run, so the queue must overflow.
        for number in range(5):
            publisher.accept(Event("test.burst", {"n": number}))
        await publisher.shutdown("stop")

    with structlog.testing.capture_logs() as logs:
        asyncio.run(burst())
    assert [line["data"]["n"] for line in read_lines(out)] == [3, 4]
    stats = plugin.stats(runtime)["sinks[0]"]
    assert (stats.delivered, stats.dropped, stats.failed, stats.undelivered) == (2, 3, 0, 0)
    assert [e["event"] for e in logs] == [
        "event_publisher.queue_full",
        "event_publisher.events_lost",
    ]


def test_an_event_published_with_no_sink_taking_it_is_not_queued(toolang_runtime, tmp_path):
    runtime = toolang_runtime(
        f'[plugins.{plugin.NAME}]\nkinds = ["turn.*"]\nsinks = [{jsonl(tmp_path / "e")}]\n',
        plugins={plugin.NAME: plugin},
    )
    assert plugin.publisher_of(runtime).accept(Event("tool.completed")) == 0


WRITER = """
import sys
from pathlib import Path
from toolang_hook_event_publisher.sinks import JsonlWriter

writer = JsonlWriter(Path(sys.argv[1]))
for n in range(200):
    writer.write([{"writer": sys.argv[2], "n": n, "pad": "x" * 20000}])
"""


def test_lines_from_several_processes_never_interleave(tmp_path):
    out = tmp_path / "shared.jsonl"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(out), str(i)]) for i in range(3)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0]
    lines = read_lines(out)  # every line parses: none was torn or merged
    assert sorted((line["writer"], line["n"]) for line in lines) == sorted(
        (str(i), n) for i in range(3) for n in range(200)
    )


def test_a_file_moved_away_by_log_rotation_is_recreated_at_its_path(tmp_path):
    out = tmp_path / "events.jsonl"
    writer = JsonlWriter(out)
    writer.write([{"n": 1}])
    out.rename(tmp_path / "events.jsonl.1")
    writer.write([{"n": 2}])
    writer.close()
    assert read_lines(tmp_path / "events.jsonl.1") == [{"n": 1}]
    assert read_lines(out) == [{"n": 2}]

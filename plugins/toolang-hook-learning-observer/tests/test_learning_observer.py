"""toolang-hook-learning-observer: recording outcomes, prompt notes, batching, retention."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from learning_helpers import db_path, make_runtime, observe, rows, serve

import toolang_hook_learning_observer as plugin
from toolang_core import BatchWriter, ConfigError, ToolCall, ToolResult, TurnStatus
from toolang_core.testing.models import text, tool_call

KEY = "sk-proj-" + "k" * 32


def note(runtime, agent="assistant"):
    return plugin.toolang_prompt_notes(agent=agent, thread_id="cli:t", runtime=runtime)


# -- recording ---------------------------------------------------------------------------


def test_every_executed_call_of_a_real_turn_is_recorded(toolang_runtime, toolang_scripted_model):
    model = toolang_scripted_model(
        [
            tool_call("flaky_write", {"path": "a.txt"}, call_id="c1"),
            tool_call("flaky_write", {"path": "locked/b.txt"}, call_id="c2"),
            text("done"),
        ]
    )
    runtime = make_runtime(toolang_runtime, model=model)
    (turn_id,) = serve(runtime, "write two files")
    ok, failed = rows(runtime)
    assert (ok["tool"], ok["agent"], ok["ok"], ok["error_type"], ok["error"]) == (
        "flaky_write",
        "assistant",
        1,
        None,
        None,
    )
    assert (failed["ok"], failed["error_type"]) == (0, "PermissionError")
    assert failed["error"] == "PermissionError: [Errno 13] Permission denied: 'locked/b.txt'"
    assert (failed["turn_id"], failed["thread_id"], failed["call_id"]) == (turn_id, "cli:t", "c2")
    assert failed["duration_ms"] >= 0
    assert abs(failed["at"] - time.time()) < 600


def test_a_call_the_chain_refused_is_no_failure_of_the_tool(
    toolang_runtime, toolang_scripted_model
):
    from toolang_core import Block, hookimpl

    class Guard:  # blocks every write under secret/
        @staticmethod
        @hookimpl
        def toolang_filter_tool_call(call, ctx):
            if str(call.params.get("path", "")).startswith("secret/"):
                return Block("no writes under secret/")
            return None

    model = toolang_scripted_model(
        [
            tool_call("flaky_write", {"path": "secret/a.txt"}, call_id="blocked"),
            tool_call("flaky_write", {"path": 3}, call_id="invalid"),
            tool_call("no_such_tool", {}, call_id="unknown"),
            tool_call("flaky_write", {"path": "b.txt"}, call_id="ran"),
            text("done"),
        ]
    )
    runtime = make_runtime(toolang_runtime, model=model)
    runtime.host.register(Guard(), "guard")
    serve(runtime, "write")
    (ran,) = rows(runtime)
    assert (ran["call_id"], ran["ok"]) == ("ran", 1)
    assert note(runtime) is None  # three refusals in a row: no failure to mention


def test_a_failing_tool_still_reaches_the_model_and_the_turn_completes(
    toolang_runtime, toolang_scripted_model
):
    model = toolang_scripted_model(
        [tool_call("flaky_write", {"path": "locked/x"}), text("could not write")]
    )
    runtime = make_runtime(toolang_runtime, model=model)
    (turn_id,) = serve(runtime, "go")
    assert runtime.open_inbox().get(turn_id).status is TurnStatus.COMPLETED
    sent = json.loads(model.calls[1].messages[-1].content)
    assert (sent["ok"], sent["error_type"]) == (False, "PermissionError")


def test_secrets_in_error_text_are_masked_before_they_are_stored(toolang_runtime):
    runtime = make_runtime(toolang_runtime)
    observe(runtime, "http_get", ok=False, error=f"401 for https://bob:hunter2@x.org key {KEY}")
    (row,) = rows(runtime)
    assert KEY not in row["error"]
    assert "hunter2" not in row["error"]
    assert row["error"].count("********") == 2


def test_error_text_is_cut_to_max_error_chars(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "max_error_chars = 40")
    observe(runtime, "exec_run", ok=False, error="boom " * 100)
    (row,) = rows(runtime)
    assert len(row["error"]) == 40
    assert row["error"].endswith("…")


def test_a_huge_error_is_masked_where_it_is_kept(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "max_error_chars = 100")
    observe(runtime, "exec_run", ok=False, error=f"auth with {KEY} failed: " + "x" * 100_000)
    (row,) = rows(runtime)
    assert row["error"].startswith("auth with ******** failed: xxx")
    assert len(row["error"]) == 100


def test_ill_typed_results_and_contexts_are_recorded_without_raising(toolang_runtime):
    runtime = make_runtime(toolang_runtime)

    class Odd:
        runtime = None

    odd = Odd()
    odd.runtime = runtime
    odd.agent = None
    result = ToolResult(ok=False, error=None, error_type=None, duration_ms=float("nan"))
    plugin.toolang_observe_tool_result(ToolCall("c", "", {}), result, odd)
    plugin.toolang_observe_tool_result(object(), object(), odd)
    first, second = rows(runtime)
    assert (first["agent"], first["tool"], first["error_type"], first["error"]) == (
        "?",
        "?",
        "error",
        None,
    )
    assert first["duration_ms"] == 0.0
    assert (second["ok"], second["turn_id"]) == (0, "")


# -- batching ------------------------------------------------------------------------------


def test_outcomes_wait_in_memory_until_a_batch_is_full(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "flush_seconds = 3600\nbatch_size = 3")

    async def scenario():
        observe(runtime, "echo")
        observe(runtime, "echo")
        waiting = len(rows(runtime))
        observe(runtime, "echo")
        return waiting, len(rows(runtime))

    assert asyncio.run(scenario()) == (0, 3)


def test_a_batch_of_successes_and_failures_is_written_in_the_order_observed(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "flush_seconds = 3600\nbatch_size = 5")
    outcomes = [True, False, False, True, False]

    async def scenario():
        for index, ok in enumerate(outcomes):
            observe(runtime, f"tool{index}", ok=ok)

    asyncio.run(scenario())
    assert [(r["tool"], r["ok"], r["error_type"]) for r in rows(runtime)] == [
        ("tool0", 1, None),
        ("tool1", 0, "PermissionError"),
        ("tool2", 0, "PermissionError"),
        ("tool3", 1, None),
        ("tool4", 0, "PermissionError"),
    ]


def test_a_batch_larger_than_one_insert_statement_is_written_whole_in_order(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "flush_seconds = 3600\nbatch_size = 130")
    outcomes = [index % 7 != 3 for index in range(130)]

    async def scenario():
        for index, ok in enumerate(outcomes):
            observe(runtime, f"tool{index}", ok=ok)

    asyncio.run(scenario())
    written = rows(runtime)
    assert [r["tool"] for r in written] == [f"tool{index}" for index in range(130)]
    assert [bool(r["ok"]) for r in written] == outcomes


def test_a_waiting_batch_is_written_after_flush_seconds(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "flush_seconds = 0.05")

    async def scenario():
        observe(runtime, "echo")
        deadline = time.monotonic() + 10
        while not rows(runtime) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return len(rows(runtime))

    assert asyncio.run(scenario()) == 1


def test_waiting_outcomes_are_written_at_shutdown(toolang_runtime, toolang_scripted_model):
    model = toolang_scripted_model([tool_call("echo", {"text": "hi"}), text("ok")])
    runtime = make_runtime(toolang_runtime, "flush_seconds = 3600", model=model)
    serve(runtime, "go")
    assert [r["tool"] for r in rows(runtime)] == ["echo"]


def test_a_batch_that_cannot_be_written_is_dropped_without_raising():
    def broken(batch):
        raise OSError("disk full")

    writer = BatchWriter(broken, flush_seconds=3600, batch_size=2)
    writer.add("a")
    writer.add("b")  # flushes: the write fails, the rows are dropped
    assert (len(writer), writer.flush()) == (0, 0)


# -- prompt notes ----------------------------------------------------------------------------


def test_the_next_prompt_names_a_tool_that_failed_recently(toolang_runtime, toolang_scripted_model):
    paths = ["locked/1", "ok/2", "locked/3", "ok/4", "locked/5"]
    model = toolang_scripted_model(
        [*(tool_call("flaky_write", {"path": p}) for p in paths), text("tried"), text("hello")]
    )
    runtime = make_runtime(toolang_runtime, model=model)
    serve(runtime, "write five files", "and now?")
    system = model.calls[-1].messages[0].content
    assert (
        "- Recent tool failures: flaky_write failed 3 of its last 5 calls (most recently just "
        "now: PermissionError: [Errno 13] Permission denied: 'locked/5')." in system
    )
    assert "Recent tool failures" not in model.calls[0].messages[0].content


def test_a_tool_below_min_failures_is_not_mentioned(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "min_failures = 2")
    observe(runtime, "fs_write", ok=False)
    for _ in range(4):
        observe(runtime, "fs_write")
    assert note(runtime) is None


def test_only_the_last_window_calls_count(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "window_calls = 3\nmin_failures = 2")
    for ok in (False, False, False, True, True):
        observe(runtime, "fs_write", ok=ok)
    assert note(runtime) is None  # the three failures are older than the last three calls
    observe(runtime, "fs_write", ok=False)
    observe(runtime, "fs_write", ok=False)
    assert "fs_write failed 2 of its last 3 calls" in note(runtime)


def test_failures_older_than_recent_hours_are_not_mentioned(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "recent_hours = 1")
    runtime.clock = lambda: time.time() - 7200
    observe(runtime, "fs_write", ok=False)
    observe(runtime, "fs_write", ok=False)
    runtime.clock = time.time
    assert note(runtime) is None


def test_the_note_says_how_long_ago_the_latest_failure_was(toolang_runtime):
    runtime = make_runtime(toolang_runtime)
    runtime.clock = lambda: time.time() - 125
    observe(runtime, "fs_write", ok=False, error_type="timeout", error="fs_write timed out")
    observe(runtime, "fs_write", ok=False, error_type="timeout", error="fs_write timed out")
    runtime.clock = time.time
    assert note(runtime) == (
        "Recent tool failures: fs_write failed 2 of its last 2 calls "
        "(most recently 2 min ago: timeout: fs_write timed out)."
    )


def test_notes_are_about_the_agents_own_tools(toolang_runtime):
    runtime = make_runtime(toolang_runtime)
    for _ in range(3):
        observe(runtime, "exec_run", ok=False, agent="operator")
    assert note(runtime, "assistant") is None
    assert "exec_run failed 3 of its last 3 calls" in note(runtime, "operator")


def test_max_notes_bounds_how_many_tools_are_named_most_recent_first(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "max_notes = 2")
    for tool in ("t1", "t2", "t3"):
        observe(runtime, tool, ok=False)
        observe(runtime, tool, ok=False)
    text_ = note(runtime)
    assert [t for t in ("t1", "t2", "t3") if f"{t} failed" in text_] == ["t2", "t3"]
    assert text_.index("t3 failed") < text_.index("t2 failed")


def test_the_note_is_cut_at_max_note_chars(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "max_note_chars = 100\nmax_notes = 5")
    for tool in ("first_tool", "second_tool", "third_tool"):
        observe(runtime, tool, ok=False, error="x" * 200)
        observe(runtime, tool, ok=False, error="x" * 200)
    assert len(note(runtime)) == 100


def test_max_notes_zero_turns_notes_off(toolang_runtime):
    runtime = make_runtime(toolang_runtime, "max_notes = 0")
    observe(runtime, "fs_write", ok=False)
    observe(runtime, "fs_write", ok=False)
    assert note(runtime) is None


# -- retention -------------------------------------------------------------------------------


def test_outcomes_older_than_keep_days_are_deleted_at_startup(
    toolang_runtime, toolang_scripted_model
):
    runtime = make_runtime(toolang_runtime, "keep_days = 7")
    runtime.clock = lambda: time.time() - 8 * 86_400
    observe(runtime, "old_tool")
    runtime.clock = lambda: time.time() - 6 * 86_400
    observe(runtime, "recent_tool")
    runtime.clock = time.time
    assert len(rows(runtime)) == 2
    serve(runtime)  # start-up prunes; nothing to serve
    assert [r["tool"] for r in rows(runtime)] == ["recent_tool"]


# -- settings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("window_calls = 0", "window_calls: expected a number >= 1, found 0"),
        ("min_failures = 9", "min_failures: expected at most window_calls (5), found 9"),
        ("keep_days = -1", "keep_days: expected a number >= 0.01, found -1"),
        ('max_notes = "many"', "plugins.hook-learning-observer.max_notes: expected an integer"),
        ("window = 5", "plugins.hook-learning-observer.window: unknown key"),
    ],
)
def test_bad_settings_are_config_errors_naming_the_key(toolang_runtime, setting, message):
    with pytest.raises(ConfigError) as caught:
        make_runtime(toolang_runtime, setting)
    assert "plugins.hook-learning-observer" in str(caught.value)
    assert message in str(caught.value)


def test_the_database_is_the_plugins_own_file(toolang_runtime):
    runtime = make_runtime(toolang_runtime)
    observe(runtime, "echo")
    assert db_path(runtime).name == "hook-learning-observer.db"
    assert rows(runtime)[0]["tool"] == "echo"

"""toolang-source-task, alone."""

from __future__ import annotations

import asyncio

import pytest

import toolang_source_task as plugin
from toolang_core.errors import UsageError
from toolang_core.store.types import TurnFilter, TurnStatus
from toolang_source_task.tasks import HANDED, TaskBook

ECHO = '[runtime]\nexecutor = "echo"\n'
ENV = {"TOOLANG_LOAD_PLUGINS": "source-task"}


@pytest.fixture
def runtime(toolang_runtime):
    return toolang_runtime(ECHO + "sources = []\n", plugins={"source-task": plugin})


@pytest.fixture
def book(runtime):
    return TaskBook(runtime.open_store())


def turns_of(store, ref):
    return store.list_turns(TurnFilter(thread_id=f"task:{ref}"))


def test_an_active_task_gets_one_turn_on_its_thread(runtime, book):
    task = book.add("Write notes", body="about the scheduler", ref="notes")
    inbox = runtime.open_inbox()
    assert book.submit_due(inbox) == ["notes"]
    assert book.submit_due(inbox) == []  # the revision was handed over already
    (turn,) = turns_of(book.store, "notes")
    assert (turn.source, turn.input) == ("task", "Task notes: Write notes\n\nabout the scheduler")
    assert turn.meta["task"] == {"ref": "notes", "revision": task.revision}


def test_edits_while_pending_coalesce_into_one_turn(runtime, book):
    book.add("Draft", ref="draft")
    inbox = runtime.open_inbox()
    book.submit_due(inbox)
    book.change("draft", body="more detail")
    book.change("draft", body="even more detail")
    book.submit_due(inbox)
    (turn,) = turns_of(book.store, "draft")
    assert turn.input.endswith("even more detail")
    assert turn.meta["task"]["revision"] == 3


def test_paused_and_finished_tasks_are_not_handed_over(runtime, book):
    book.add("Later", ref="later")
    book.change("later", paused=True)
    book.add("Done", ref="done-one")
    book.change("done-one", status="done")
    assert book.submit_due(runtime.open_inbox()) == []
    book.change("later", paused=False)
    assert book.submit_due(runtime.open_inbox()) == ["later"]


def test_a_failed_task_turn_is_not_retried_until_the_task_changes(runtime, book):
    book.add("Flaky", ref="flaky")
    inbox = runtime.open_inbox()
    book.submit_due(inbox)
    assert len(turns_of(book.store, "flaky")) == 1
    (claimed,) = book.store.claim(run_id="r", limit=1, now=book.clock(), lease_seconds=30, caps={})
    book.store.finish(
        claimed.id, run_id="r", attempt=1, status=TurnStatus.FAILED, now=book.clock(), error="boom"
    )
    assert book.submit_due(inbox) == []
    book.change("flaky", body="try again with this hint")
    assert book.submit_due(inbox) == ["flaky"]


def test_the_source_loop_hands_tasks_over_while_the_runtime_runs(runtime, book):
    book.add("Loop", ref="loop")

    async def scenario():
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=["task"]))
        for _ in range(500):
            turns = turns_of(book.store, "loop")
            if turns and turns[0].status is TurnStatus.COMPLETED:
                break
            await asyncio.sleep(0.01)
        stop.set()
        await serving

    asyncio.run(scenario())
    (turn,) = turns_of(book.store, "loop")
    assert turn.status is TurnStatus.COMPLETED


def test_refs_are_validated_and_unique(book):
    with pytest.raises(UsageError, match="task ref"):
        book.add("x", ref="../etc")
    book.add("x", ref="x1")
    with pytest.raises(UsageError, match="already exists"):
        book.add("y", ref="x1")


def test_the_tasks_commands(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    assert toolang_cli("tasks", "add", "Ship it", "--ref", "ship", env=ENV).stdout == "ship\n"
    listed = toolang_cli("tasks", "list", env=ENV).stdout
    assert "ship" in listed and "todo" in listed
    assert toolang_cli("tasks", "edit", "ship", "--body", "now", env=ENV).stdout == (
        "ship revision 2\n"
    )
    assert toolang_cli("tasks", "pause", "ship", env=ENV).returncode == 0
    assert "(paused)" in toolang_cli("tasks", "show", "ship", env=ENV).stdout
    assert toolang_cli("tasks", "resume", "ship", env=ENV).returncode == 0
    assert toolang_cli("tasks", "cancel", "ship", env=ENV).stdout.startswith("ship cancelled")
    assert "ship" not in toolang_cli("tasks", "list", env=ENV).stdout
    assert "cancelled" in toolang_cli("tasks", "list", "--all", env=ENV).stdout
    missing = toolang_cli("tasks", "show", "nope", env=ENV)
    assert missing.returncode == 2
    assert "no task 'nope'" in missing.stderr


def test_a_revision_handed_over_again_is_placed_once(runtime, book):
    """Two runtimes on one store handing the same revision over at once, or one killed
    between placing the turn and counting it handed over: still one turn."""
    book.add("Once", ref="once")
    inbox = runtime.open_inbox()
    assert book.submit_due(inbox) == ["once"]
    (claimed,) = book.store.claim(run_id="r", limit=1, now=book.clock(), lease_seconds=30, caps={})
    book.store.finish(
        claimed.id, run_id="r", attempt=1, status=TurnStatus.COMPLETED, now=book.clock()
    )
    book.store.delete_record(HANDED, "once")  # as if the hand-over was never counted
    book.submit_due(inbox)
    assert [t.id for t in turns_of(book.store, "once")] == [claimed.id]

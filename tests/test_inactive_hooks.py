"""``toolang_inactive_hooks``: a plugin names the hooks it has nothing to do in for a run;
the core calls none of them until the run ends, and never a tool-chain hook less."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

from toolang_core import hookimpl
from toolang_core.store.types import TurnStatus
from toolang_core.testing.runtimes import make_runtime, request, serve_until_idle

TURN_HOOKS = ("toolang_turn_started", "toolang_turn_step", "toolang_turn_finished")


class Watcher:
    """Watches turns, and says its turn hooks are inactive while ``quiet`` is true."""

    def __init__(self, quiet, *, answer=None):
        self.quiet = quiet
        self.answer = TURN_HOOKS if answer is None else answer
        self.seen = []
        self.asked = 0
        self.implemented_at_startup = None

    @hookimpl
    def toolang_inactive_hooks(self, runtime):
        self.asked += 1
        return self.answer if self.quiet else None

    @hookimpl
    def toolang_startup(self, runtime):
        self.implemented_at_startup = runtime.host.hooks.implementations("toolang_turn_step")

    @hookimpl
    def toolang_turn_started(self, turn, runtime):
        self.seen.append("started")

    @hookimpl
    def toolang_turn_step(self, step, runtime):
        self.seen.append("step")

    @hookimpl
    def toolang_turn_finished(self, turn, stages, runtime):
        self.seen.append("finished")

    @hookimpl
    def toolang_filter_tool_call(self, call, ctx):
        return None


def serve_one_turn(rt):
    inbox = rt.open_inbox()
    turn_id = inbox.submit(request("chat:1", "hi")).id
    serve_until_idle(rt)
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED


def test_inactive_turn_hooks_are_not_called_and_the_others_still_watch(tmp_path):
    rt = make_runtime(tmp_path)
    quiet, loud = Watcher(quiet=True), Watcher(quiet=False)
    rt.host.register(quiet, "quiet")
    rt.host.register(loud, "loud")
    serve_one_turn(rt)
    assert quiet.seen == []
    assert loud.seen == ["started", "step", "finished"]
    assert quiet.implemented_at_startup == ["loud"]


def test_when_every_watcher_is_inactive_the_run_watches_no_turn(tmp_path):
    rt = make_runtime(tmp_path)
    quiet = Watcher(quiet=True)
    rt.host.register(quiet, "quiet")
    serve_one_turn(rt)
    assert quiet.seen == []
    assert quiet.implemented_at_startup == []


def test_the_hooks_are_active_again_once_the_run_ends_and_each_run_asks_anew(tmp_path):
    rt = make_runtime(tmp_path)
    watcher = Watcher(quiet=True)
    rt.host.register(watcher, "watcher")
    serve_one_turn(rt)
    assert rt.host.hooks.implementations("toolang_turn_step") == ["watcher"]
    watcher.quiet = False
    serve_one_turn(rt)
    assert watcher.asked == 2
    assert watcher.seen == ["started", "step", "finished"]


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (("toolang_filter_tool_call",), "is always called"),
        (("toolang_startup",), "is always called"),
        (("toolang_on_event",), "does not implement toolang_on_event"),
        (("toolang_turn_stepp",), "is not a toolang hook"),
        ("toolang_turn_step", "expected a collection of hook names"),
    ],
)
def test_a_name_that_cannot_be_inactive_is_logged_and_ignored(tmp_path, answer, error):
    rt = make_runtime(tmp_path)
    watcher = Watcher(quiet=True, answer=answer)
    rt.host.register(watcher, "watcher")
    with capture_logs() as logs:
        serve_one_turn(rt)
    ignored = [e for e in logs if e["event"] == "hook.inactive_ignored"]
    assert len(ignored) == 1 and ignored[0]["plugin"] == "watcher", logs
    assert error in ignored[0]["error"]
    assert watcher.seen == ["started", "step", "finished"]
    assert watcher.implemented_at_startup == ["watcher"]


def test_a_tool_chain_hook_named_inactive_is_still_called(tmp_path):
    rt = make_runtime(tmp_path)
    watcher = Watcher(quiet=True, answer=("toolang_filter_tool_call", *TURN_HOOKS))
    rt.host.register(watcher, "watcher")

    async def during_the_run():
        stop = asyncio.Event()
        serving = asyncio.create_task(rt.serve(stop, sources=()))
        while not rt.admitting:
            await asyncio.sleep(0.001)
        try:
            return (
                rt.host.hooks.implementations("toolang_filter_tool_call"),
                rt.host.hooks.implementations("toolang_turn_step"),
            )
        finally:
            stop.set()
            await serving

    chain, steps = asyncio.run(during_the_run())
    assert chain == ["watcher"]
    assert steps == []


def test_a_plugin_whose_answer_raises_keeps_every_hook(tmp_path):
    class Raising(Watcher):
        @hookimpl
        def toolang_inactive_hooks(self, runtime):
            raise RuntimeError("settings unreadable")

    rt = make_runtime(tmp_path)
    watcher = Raising(quiet=True)
    rt.host.register(watcher, "raising")
    with capture_logs() as logs:
        serve_one_turn(rt)
    assert any(
        e["event"] == "hook.failed" and e["hook"] == "toolang_inactive_hooks" for e in logs
    ), logs
    assert watcher.seen == ["started", "step", "finished"]


class QuietHeaders:
    """Adds a header to every model call, unless it names the hook inactive."""

    def __init__(self, quiet):
        self.quiet = quiet
        self.asked = 0

    @hookimpl
    def toolang_inactive_hooks(self, runtime):
        return ("toolang_outbound_headers",) if self.quiet else ()

    @hookimpl
    def toolang_outbound_headers(self, turn, key, runtime):
        self.asked += 1
        return {"x-quiet": "no"}


@pytest.mark.parametrize("quiet", [True, False])
def test_the_agent_loop_asks_no_headers_of_a_plugin_that_named_them_inactive(
    toolang_runtime, toolang_scripted_model, quiet
):
    """The executor is built after the inactive hooks are known: an agent turn's model
    calls ask no headers of a plugin that named the hook inactive for the run."""
    from toolang_core import NewTurnRequest
    from toolang_core.testing.models import text

    model = toolang_scripted_model([text("done")])
    headers = QuietHeaders(quiet)
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n[runtime]\nexecutor = "agent"\npoll_seconds = 0.05\n',
        plugins={"scripted": model.plugin(), "headers": headers},
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    (request,) = model.calls
    assert dict(request.headers) == ({} if quiet else {"x-quiet": "no"})
    assert headers.asked == (0 if quiet else 1)

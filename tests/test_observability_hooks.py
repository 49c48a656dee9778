"""The observability hooks: a plugin follows each turn from admission through its stored
steps to its outcome, isolated from the turn; and reports its health to doctor."""

from __future__ import annotations

import asyncio

from toolang_core import DoctorCheck, hookimpl
from toolang_core.doctor import DoctorContext, check_plugin_health
from toolang_core.plugins.host import PluginHost
from toolang_core.store.types import TurnStatus
from toolang_core.testing.runtimes import (
    GatedExecutor,
    make_config,
    make_runtime,
    request,
    serving,
    wait_status,
)


class Watcher:
    def __init__(self):
        self.seen = []

    @hookimpl
    def toolang_turn_started(self, turn, runtime):
        self.seen.append(("started", turn.id, turn.status))

    @hookimpl
    def toolang_turn_step(self, step, runtime):
        self.seen.append(("step", step.turn_id, step.kind))

    @hookimpl
    def toolang_turn_finished(self, turn, stages, runtime):
        self.seen.append(("finished", turn.id, turn.status, turn.outcome, list(stages)))


class Broken:
    @hookimpl
    def toolang_turn_started(self, turn, runtime):
        raise RuntimeError("observer bug")

    @hookimpl
    def toolang_turn_step(self, step, runtime):
        raise RuntimeError("observer bug")

    @hookimpl
    def toolang_turn_finished(self, turn, stages, runtime):
        raise RuntimeError("observer bug")


def test_a_turn_is_seen_started_then_its_steps_then_finished(tmp_path):
    rt = make_runtime(tmp_path)
    watcher = Watcher()
    rt.host.register(watcher, "watcher")
    inbox = rt.open_inbox()
    turn_id = inbox.submit(request("chat:1", "hi")).id
    asyncio.run(rt.serve(asyncio.Event(), until_idle=True))
    assert watcher.seen == [
        ("started", turn_id, TurnStatus.RUNNING),
        ("step", turn_id, "echo"),  # a final step: passed when the task ends
        ("finished", turn_id, TurnStatus.COMPLETED, None, []),
    ]


def test_steps_are_seen_as_they_are_stored_and_a_broken_observer_changes_nothing(tmp_path):
    executor = GatedExecutor()
    rt = make_runtime(tmp_path, executor=executor)
    watcher = Watcher()
    rt.host.register(Broken(), "broken")
    rt.host.register(watcher, "watcher")
    inbox = rt.open_inbox()

    async def scenario():
        turn_id = inbox.submit(request("chat:1", "hi")).id
        async with serving(rt):
            await executor.wait_started(turn_id)
            assert watcher.seen == [("started", turn_id, TurnStatus.RUNNING)]
            executor.release(turn_id)
            await wait_status(inbox, turn_id, {"completed"})
        return turn_id

    turn_id = asyncio.run(scenario())
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    assert [entry[:3] for entry in watcher.seen] == [
        ("started", turn_id, TurnStatus.RUNNING),
        ("step", turn_id, "gated"),
        ("finished", turn_id, TurnStatus.COMPLETED),
    ]


def test_a_turn_handed_back_at_shutdown_is_finished_as_released(tmp_path):
    executor = GatedExecutor()
    rt = make_runtime(tmp_path, executor=executor, shutdown_grace_seconds=0)
    watcher = Watcher()
    rt.host.register(watcher, "watcher")
    inbox = rt.open_inbox()

    async def scenario():
        turn_id = inbox.submit(request("chat:1", "hi")).id
        async with serving(rt):
            await executor.wait_started(turn_id)
        return turn_id

    turn_id = asyncio.run(scenario())
    assert inbox.get(turn_id).status is TurnStatus.QUEUED
    (finished,) = [entry for entry in watcher.seen if entry[0] == "finished"]
    assert finished[3] == "released"


def test_nobody_watching_means_no_observer_on_the_turns_path(tmp_path):
    rt = make_runtime(tmp_path)
    assert rt.host.hooks.observes_turns() is False
    rt.host.register(Watcher(), "watcher")
    assert rt.host.hooks.observes_turns() is True


class Reporter:
    @hookimpl
    def toolang_doctor_checks(self, runtime):
        return [DoctorCheck("reporter", "warn", "the exporter is slow", ("3 of 9 failed",))]


class BrokenReporter:
    @hookimpl
    def toolang_doctor_checks(self, runtime):
        raise ValueError("cannot tell")


def test_doctor_shows_what_plugins_report_and_names_a_plugin_whose_report_raised(tmp_path):
    host = PluginHost()
    host.register(Reporter(), "reporter")
    host.register(BrokenReporter(), "broken-reporter")
    ctx = DoctorContext(env={}, config_path=None, config=make_config(tmp_path), host=host)
    found = list(check_plugin_health(ctx))
    assert DoctorCheck("reporter", "warn", "the exporter is slow", ("3 of 9 failed",)) in found
    (broken,) = [c for c in found if c.area == "broken-reporter"]
    assert broken.status == "fail"
    assert "cannot tell" in broken.summary

"""Memory in the runtime: recall before the prompt, the post-turn order, failures that
degrade but never break a turn, and each agent's memory kept to itself."""

from __future__ import annotations

import asyncio
import time

import attrs
import pytest

from toolang_core import NewTurnRequest, ToolCall, ToolCallContext, TurnStatus, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import MemoryConfig, ModelsConfig, RuntimeConfig
from toolang_core.memory import MemoryForget, MemoryLimits
from toolang_core.memory.tools import memory_agent_forget, memory_agent_recall, memory_agent_save
from toolang_core.runtime import Runtime
from toolang_core.runtime.after_turn import AFTER_KIND, PROMPT_TRACE_KIND, STAGES
from toolang_core.testing.list_memory import ListMemory, Shelf
from toolang_core.testing.models import ScriptedModel, text
from toolang_core.testing.runtimes import serve_turns


class MemoryPlugin:
    """Offers ``factory()`` as the memory plugin ``test``."""

    def __init__(self, factory):
        self.factory = factory

    @hookimpl
    def toolang_register_memory(self, register):
        register("test", lambda context: self.factory())


class Detectors:
    """Registers ``detectors`` (name → detector) with the runtime's redaction policy."""

    def __init__(self, **detectors):
        self.detectors = detectors

    @hookimpl
    def toolang_register_redactors(self, register):
        for name, detector in self.detectors.items():
            register(name, lambda context, detector=detector: detector)


def employees():
    return ("acme", Detectors(employees=lambda t: t.replace("EMP-4711", "[employee]")))


def make(tmp_path, model, memory_factory=None, *, extra=(), **memory):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.02, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        memory=MemoryConfig(plugin="test" if memory_factory else None, **memory),
    )
    plugins = [("scripted", model.plugin()), *extra]
    if memory_factory is not None:
        plugins.append(("memory", MemoryPlugin(memory_factory)))
    return Runtime.with_plugins(config, plugins, env={})


def serve(runtime, *inputs, thread="cli:m", source="chat"):
    """Serve one turn per input; ``(turn, its steps)`` for each."""
    ids = serve_turns(runtime, *inputs, thread=thread, source=source)
    store = runtime.open_store()
    try:
        return [(store.get(i), store.steps(i)) for i in ids]
    finally:
        store.close()


def record(runtime, kind, key):
    store = runtime.open_store()
    try:
        found = store.get_record(kind, key)
        return dict(found.data) if found else None
    finally:
        store.close()


def step(steps, kind):
    (found,) = [s for s in steps if s.kind == kind]
    return found


# -- on and off -------------------------------------------------------------------------


def test_without_a_memory_plugin_memory_is_visibly_off(tmp_path):
    model = ScriptedModel([text("hi")])
    ((turn, steps),) = serve(make(tmp_path, model), "hello")
    assert turn.status is TurnStatus.COMPLETED
    built = step(steps, "prompt_build").data
    assert built["memory"] == {"plugin": None, "status": "off"}
    assert not [s for s in built["tools"] if s.startswith("memory_agent_")]
    assert "memory_recall" not in [s.kind for s in steps]


def test_an_unknown_memory_plugin_stops_the_start_with_a_clear_error(tmp_path):
    from toolang_core import ConfigError

    runtime = make(tmp_path, ScriptedModel([]))
    runtime.config = ToolangConfig(
        base_dir=tmp_path, home=tmp_path / ".toolang", memory=MemoryConfig(plugin="nope")
    )
    with pytest.raises(ConfigError, match=r"memory.plugin: no installed plugin offers .*'nope'"):
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))


def test_what_was_remembered_is_recalled_into_the_next_prompt(tmp_path):
    shelf = Shelf()
    model = ScriptedModel([text("Noted: the boat is blue."), text("It is blue.")])
    runtime = make(tmp_path, model, lambda: ListMemory(shelf))
    (first, _), (second, steps) = serve(
        runtime, "remember that the boat is blue", "what colour is the boat"
    )
    assert (first.status, second.status, second.outcome) == (
        TurnStatus.COMPLETED,
        TurnStatus.COMPLETED,
        None,
    )
    system = model.calls[1].messages[0].content
    assert "## Remembered" in system
    assert "the boat is blue" in system.split("## Remembered")[1]
    recalled = step(steps, "memory_recall")
    assert recalled.status == "completed"
    assert recalled.data["plugin"] == "test"
    assert recalled.data["request"]["query"] == "what colour is the boat"
    assert recalled.data["count"] >= 1


def test_a_remembered_exchange_holds_no_secret_of_its_input_or_answer(tmp_path):
    """The exchange is checked by its parts (each masked as it reached its step); a
    part with something to mask is masked in what memory stores, by the core's rules
    and by an installed detector alike."""
    key = "sk-proj-" + "b" * 30
    shelf = Shelf()
    model = ScriptedModel([text("Filed EMP-4711."), text("Noted.")])
    runtime = make(tmp_path, model, lambda: ListMemory(shelf), extra=[employees()])
    serve(runtime, f"my key is {key}", "the boat is blue")
    stored = [row.text for row in shelf.rows]
    assert len(stored) == 2
    assert key not in stored[0] and "********" in stored[0]
    assert "EMP-4711" not in stored[0] and "[employee]" in stored[0]
    assert stored[1].endswith(": the boat is blue\nassistant: Noted.")  # clean: as it was


def shelved(text: str, key: str | None = None) -> Shelf:
    """A shelf holding ``text``, remembered for the assistant by another writer (not this
    runtime's turns)."""
    from toolang_core.memory import MemoryEntry, MemoryWriteBatch

    shelf = Shelf()
    batch = MemoryWriteBatch(
        agent_uri="toolang:agent/assistant",
        agent_id="assistant",
        entries=(MemoryEntry(text=text, key=key),),
    )
    asyncio.run(ListMemory(shelf).remember(batch))
    return shelf


def test_a_recalled_exchange_this_runtime_remembered_is_not_scanned_again(tmp_path):
    """Its one-line form was made of parts the policy had checked; a recalled text the
    runtime did not write (here: put on the shelf directly) is scanned as ever."""
    scanned: list[str] = []
    shelf = shelved("the kayak is\nyellow")
    model = ScriptedModel([text("Noted."), text("Blue.")])
    spy = ("acme", Detectors(spy=lambda t: scanned.append(t) or t))
    runtime = make(tmp_path, model, lambda: ListMemory(shelf), extra=[spy])
    _, (_, steps) = serve(runtime, "the boat is blue", "what colour is the boat or kayak")
    rendered = step(steps, "memory_recall").data["rendered"]
    (exchange,) = [line for line in rendered if "the boat is blue" in line]
    assert exchange.startswith("owner: the boat is blue assistant: Noted. (remembered ")
    (other,) = [line for line in rendered if "kayak" in line]
    assert not [t for t in scanned if "the boat is blue assistant: Noted." in t]
    assert [t for t in scanned if "the kayak is yellow" in t]  # written elsewhere: scanned
    assert other.startswith("the kayak is yellow (remembered ")


def test_a_recalled_text_is_masked_by_a_detector_installed_after_it_was_written(tmp_path):
    shelf = shelved("the boat belongs to EMP-4711")
    model = ScriptedModel([text("Blue.")])
    runtime = make(tmp_path, model, lambda: ListMemory(shelf), extra=[employees()])
    ((_, steps),) = serve(runtime, "whose is the boat")
    (line,) = step(steps, "memory_recall").data["rendered"]
    assert line.startswith("the boat belongs to [employee] (remembered ")


def test_the_prompt_build_and_trace_carry_the_recall_steps_summary_as_a_walk_masks_it(tmp_path):
    """The summary is masked and encoded once, with the recall's step: the prompt build's
    step and the prompt trace hold what a walk of their own would have stored."""
    shelf = shelved("the boat is EMP-4711's", key="owner EMP-4711")
    model = ScriptedModel([text("Blue.")])
    runtime = make(tmp_path, model, lambda: ListMemory(shelf), extra=[employees()])
    ((turn, steps),) = serve(runtime, "whose boat, EMP-4711's?")
    recall = dict(step(steps, "memory_recall").data)
    summary = {k: v for k, v in recall.items() if k != "rendered"}
    build = dict(step(steps, "prompt_build").data)
    redact = runtime.redaction.value
    assert build["memory"] == summary == redact(summary)
    assert redact(build) == build
    assert summary["request"]["query"] == "whose boat, [employee]'s?"
    assert summary["items"][0]["key"] == "owner [employee]"
    assert "EMP-4711" not in repr(build)
    trace = record(make(tmp_path, model), PROMPT_TRACE_KIND, turn.id)
    assert trace == {**build, "model_calls": 1}


def test_chore_turns_are_not_remembered_by_default(tmp_path):
    shelf = Shelf()
    model = ScriptedModel([text("tick handled")])
    runtime = make(tmp_path, model, lambda: ListMemory(shelf))
    ((turn, _),) = serve(runtime, "heartbeat", thread="chore:beat", source="chore")
    assert turn.status is TurnStatus.COMPLETED
    assert shelf.rows == []
    assert record(runtime, AFTER_KIND, turn.id) is None or "memory_write" not in [
        s["stage"] for s in record(runtime, AFTER_KIND, turn.id)["stages"]
    ]


def test_memory_tools_are_offered_while_memory_is_on(tmp_path):
    model = ScriptedModel([text("hi")])
    ((_, steps),) = serve(make(tmp_path, model, lambda: ListMemory(Shelf())), "hello")
    tools = step(steps, "prompt_build").data["tools"]
    assert {"memory_agent_save", "memory_agent_recall", "memory_agent_forget"} <= set(tools)


# -- the post-turn order ------------------------------------------------------------------


def test_after_a_turn_state_prompt_trace_memory_events_and_delivery_happen_in_order(tmp_path):
    seen: list[str] = []
    holder: dict[str, Runtime] = {}

    class Watching(ListMemory):
        async def remember(self, batch):
            runtime = holder["runtime"]
            turn = runtime.open_inbox().get(batch.turn_id)
            assert turn.status is TurnStatus.COMPLETED  # 1 before 3
            assert record(runtime, PROMPT_TRACE_KIND, batch.turn_id) is not None  # 2 before 3
            seen.append("memory_write")
            return await super().remember(batch)

    class Watchers:
        @hookimpl
        def toolang_on_event(self, event, runtime):
            if event.kind.startswith("turn."):
                seen.append("events")

        @hookimpl
        def toolang_deliver_turn(self, turn, runtime):
            assert turn.output == "done"
            seen.append("delivery")

    model = ScriptedModel([text("done")])
    runtime = make(tmp_path, model, lambda: Watching(Shelf()), extra=[("watchers", Watchers())])
    holder["runtime"] = runtime
    ((turn, _),) = serve(runtime, "go")
    assert seen == ["memory_write", "events", "delivery"]
    after = record(runtime, AFTER_KIND, turn.id)
    assert [s["stage"] for s in after["stages"]] == list(STAGES)
    assert all(s["ok"] for s in after["stages"])
    times = [s["at"] for s in after["stages"]]
    assert times == sorted(times)


def test_the_prompt_trace_names_the_plugin_the_request_and_the_diagnostics(tmp_path):
    model = ScriptedModel([text("done")])
    ((turn, _),) = serve(make(tmp_path, model, lambda: ListMemory(Shelf())), "the tide")
    trace = record(make(tmp_path, model), PROMPT_TRACE_KIND, turn.id)
    assert trace["memory"]["plugin"] == "test"
    assert trace["memory"]["request"]["query"] == "the tide"
    assert "diagnostics" in trace["memory"]
    assert trace["degraded"] is False


def test_a_runtime_without_memory_events_or_delivery_writes_no_after_record(tmp_path):
    runtime = make(tmp_path, ScriptedModel([text("x")]))
    runtime.config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="echo", poll_seconds=0.02),
    )
    ((turn, _),) = serve(runtime, "go")
    assert record(runtime, AFTER_KIND, turn.id) is None


# -- failures degrade, never break --------------------------------------------------------


class RaisingRecall(ListMemory):
    async def recall(self, request):
        raise ConnectionError("the memory server is down")


class HangingRecall(ListMemory):
    def __init__(self, shelf):
        super().__init__(shelf)

    async def recall(self, request):
        await asyncio.sleep(3600)


class RaisingRemember(ListMemory):
    async def remember(self, batch):
        raise OSError("disk full")


def test_a_recall_that_raises_degrades_the_turn_which_still_completes(tmp_path):
    model = ScriptedModel([text("answered anyway")])
    runtime = make(tmp_path, model, lambda: RaisingRecall(Shelf()))
    ((turn, steps),) = serve(runtime, "hello")
    assert (turn.status, turn.output, turn.outcome) == (
        TurnStatus.COMPLETED,
        "answered anyway",
        "degraded",
    )
    recalled = step(steps, "memory_recall")
    assert recalled.status == "failed"
    assert "memory plugin 'test': recall failed: ConnectionError" in recalled.error
    assert recalled.data["degraded"] is True
    assert record(runtime, PROMPT_TRACE_KIND, turn.id)["degraded"] is True


def test_a_recall_that_hangs_past_the_timeout_degrades_the_turn(tmp_path):
    model = ScriptedModel([text("answered anyway")])
    runtime = make(tmp_path, model, lambda: HangingRecall(Shelf()), recall_timeout_seconds=0.2)
    ((turn, steps),) = serve(runtime, "hello")
    assert (turn.status, turn.outcome) == (TurnStatus.COMPLETED, "degraded")
    assert "recall took longer than 0.2 s" in step(steps, "memory_recall").error


def test_a_sync_recall_that_hangs_does_not_stall_the_runtime(tmp_path):
    class BlockingSync:
        """Synchronous methods: the runtime runs them in a worker thread."""

        def recall(self, request):
            time.sleep(1.5)
            raise AssertionError("too late to matter")

        def remember(self, batch):
            from toolang_core.memory import MemoryWriteResult

            return MemoryWriteResult(written=len(batch.entries), provider="sync")

        def forget(self, request):
            raise NotImplementedError

        def health(self):
            raise NotImplementedError

    model = ScriptedModel([text("one"), text("two")])
    runtime = make(tmp_path, model, BlockingSync, recall_timeout_seconds=0.1)
    (first, _), (second, _) = serve(runtime, "a", "b")
    assert [t.outcome for t in (first, second)] == ["degraded", "degraded"]


def test_a_write_that_fails_never_fails_the_completed_turn(tmp_path):
    model = ScriptedModel([text("done"), text("still serving")])
    runtime = make(tmp_path, model, lambda: RaisingRemember(Shelf()))
    (first, _), (second, _) = serve(runtime, "go", "again")
    assert (first.status, first.outcome, first.output) == (TurnStatus.COMPLETED, None, "done")
    assert second.status is TurnStatus.COMPLETED  # the runtime kept serving
    after = record(runtime, AFTER_KIND, first.id)
    (write,) = [s for s in after["stages"] if s["stage"] == "memory_write"]
    assert write["ok"] is False
    assert "remember failed: OSError: disk full" in write["detail"]["error"]
    assert write["detail"]["plugin"] == "test"
    assert write["detail"]["request"] == {
        "agent_id": "assistant",
        "thread_id": "cli:m",
        "entries": 1,
        "origin": "turn",
    }


class OddDiagnostics(ListMemory):
    async def remember(self, batch):
        written = await super().remember(batch)
        return attrs.evolve(written, diagnostics={"when": object()})  # not JSON


def test_a_write_whose_diagnostics_cannot_be_stored_loses_only_the_after_record(tmp_path):
    model = ScriptedModel([text("done"), text("still serving")])
    runtime = make(tmp_path, model, lambda: OddDiagnostics(Shelf()))
    (first, _), (second, _) = serve(runtime, "go", "again")
    assert (first.status, first.output) == (TurnStatus.COMPLETED, "done")
    assert (second.status, second.output) == (TurnStatus.COMPLETED, "still serving")
    # checked before it rode along: the record stays as committed with the turn's state
    after = record(runtime, AFTER_KIND, first.id)
    assert [s["stage"] for s in after["stages"]] == ["turn_state", "prompt_trace"]
    assert after["unfinished"] == ["memory_write"]
    assert record(runtime, PROMPT_TRACE_KIND, first.id) is not None


def test_a_plugin_that_fails_to_start_leaves_memory_down_and_turns_degraded(tmp_path):
    def broken():
        raise RuntimeError("cannot open the database")

    model = ScriptedModel([text("fine")])
    runtime = make(tmp_path, model, broken)
    ((turn, steps),) = serve(runtime, "hello")
    assert (turn.status, turn.outcome) == (TurnStatus.COMPLETED, "degraded")
    assert "failed to start: RuntimeError: cannot open the database" in (
        step(steps, "memory_recall").error
    )
    built = step(steps, "prompt_build").data
    assert not [t for t in built["tools"] if t.startswith("memory_agent_")]


def test_a_resumed_turn_replays_its_recall_instead_of_asking_again(tmp_path):
    calls = []

    class Counting(ListMemory):
        async def recall(self, request):
            calls.append(request.turn_id)
            return await super().recall(request)

    shelf = Shelf()
    gate = asyncio.Event()

    async def first_attempt(request):
        gate.set()
        await asyncio.Event().wait()

    model = ScriptedModel(first_attempt)
    runtime = make(tmp_path, model, lambda: Counting(shelf))
    inbox = runtime.open_inbox()

    async def interrupted():
        turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:r", input="x")).id
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        await asyncio.wait_for(gate.wait(), 10)
        stop.set()
        await serving
        return turn_id

    turn_id = asyncio.run(interrupted())
    second = ScriptedModel([text("resumed")])
    runtime2 = make(tmp_path, second, lambda: Counting(shelf))
    asyncio.run(runtime2.serve(asyncio.Event(), until_idle=True, sources=()))
    assert inbox.get(turn_id).output == "resumed"
    assert calls == [turn_id]  # recalled once, replayed on the second attempt
    inbox.store.close()


# -- each agent's memory is its own --------------------------------------------------------


def tool_context(runtime, agent):
    return ToolCallContext(
        call=ToolCall("c", "memory_agent_save", {}),
        turn_id="t-" + agent,
        thread_id="cli:m",
        run_id="r",
        agent=agent,
        runtime=runtime,
    )


def test_agent_b_cannot_recall_or_forget_agent_a_memories_through_the_tools(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]), lambda: ListMemory(Shelf()))
    alice, bob = tool_context(runtime, "alice"), tool_context(runtime, "bob")

    async def scenario():
        await memory_agent_save("vault.code", "the vault code is 4711", context=alice)
        assert await memory_agent_recall("vault code", context=bob) == []
        assert await memory_agent_forget("vault.code", context=bob) == {
            "forgotten": 0,
            "key": "vault.code",
        }
        found = await memory_agent_recall("vault code", context=alice)
        assert [f["key"] for f in found] == ["vault.code"]

    asyncio.run(scenario())


def test_agent_b_cannot_recall_agent_a_memories_through_the_api(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]), lambda: ListMemory(Shelf()))
    memory = runtime.memory

    async def scenario():
        await memory.save("alice", "alice keeps the keys under the mat", key="keys")
        assert (await memory.search("bob", "keys mat")).items == ()
        assert await memory.forget(MemoryForget(agent_id="bob")) == 0
        assert len((await memory.search("alice", "keys mat")).items) == 1

    asyncio.run(scenario())


def test_the_runtime_drops_items_a_plugin_returns_for_another_agent(tmp_path):
    class Leaky(ListMemory):
        async def recall(self, request):
            other = attrs_evolve_request(request, agent_id="alice")
            return await super().recall(other)

    shelf = Shelf()
    runtime = make(tmp_path, ScriptedModel([]), lambda: Leaky(shelf))
    memory = runtime.memory

    async def scenario():
        await memory.save("alice", "alice's secret plan")
        result = await memory.search("bob", "secret plan", limits=MemoryLimits(5, 1000))
        assert result.items == ()

    asyncio.run(scenario())


def attrs_evolve_request(request, **changes):
    import attrs

    return attrs.evolve(request, **changes)


def test_doctor_reports_an_unknown_memory_plugin_as_a_failed_check(tmp_path):
    from toolang_core.doctor import run_checks

    (tmp_path / "toolang.toml").write_text('[memory]\nplugin = "nope"\n')
    checks = run_checks(tmp_path / "toolang.toml", env={"TOOLANG_LOAD_PLUGINS": ""})
    (memory,) = [c for c in checks if c.area == "memory"]
    assert memory.status == "fail"
    assert "no installed plugin offers the memory plugin 'nope'" in memory.details[0]
    assert {c.area for c in checks} >= {"config", "plugins", "store", "memory", "agents"}


def test_doctor_says_memory_is_off_when_no_plugin_is_configured(tmp_path):
    from toolang_core.doctor import run_checks

    (tmp_path / "toolang.toml").write_text("")
    checks = run_checks(tmp_path / "toolang.toml", env={"TOOLANG_LOAD_PLUGINS": ""})
    (memory,) = [c for c in checks if c.area == "memory"]
    assert (memory.status, memory.summary) == (
        "info",
        "memory is off (set [memory] plugin to turn it on)",
    )


def test_a_write_batch_is_masked_entry_by_entry_and_handed_on_as_is_when_clean():
    from toolang_core.memory import MemoryEntry, MemoryWriteBatch
    from toolang_core.memory.service import masked
    from toolang_core.redaction import use_detectors

    clean = MemoryEntry(text="the boat is blue")
    secret = MemoryEntry(text="the boat is EMP-4711's", meta={"who": "EMP-4711", "n": 1})
    batch = MemoryWriteBatch(agent_uri="toolang:agent/a", agent_id="a", entries=(clean,))
    both = attrs.evolve(batch, entries=(clean, secret))
    undo = use_detectors({"acme:employees": lambda t: t.replace("EMP-4711", "[employee]")})
    try:
        assert masked(batch) is batch
        out = masked(both)
    finally:
        undo()
    assert out.entries[0] is clean
    assert out.entries[1].text == "the boat is [employee]'s"
    assert dict(out.entries[1].meta) == {"who": "[employee]", "n": 1}
    assert attrs.evolve(out, entries=both.entries) == both


def test_an_item_line_made_again_is_checked_again_once_the_detectors_change():
    from toolang_core.memory import MemoryItem, MemoryRecallResult
    from toolang_core.memory.types import Provenance
    from toolang_core.redaction import composed_text, known_clean, redact, use_detectors
    from toolang_core.turn.memory import render

    text = "the skiff is\ngreen, says EMP-4711"
    composed_text(" ".join(text.split()), (" ".join(text.split()),))  # as a write leaves it
    item = MemoryItem("i1", text, 1.0, Provenance(agent_id="a", created_at=1.7e9), key="skiff")
    result = MemoryRecallResult(items=(item,))
    (line,) = render(result)
    assert line.startswith("skiff: the skiff is green, says EMP-4711 (remembered ")
    assert known_clean(line) and render(result) == (line,)
    undo = use_detectors({"acme:employees": lambda t: t.replace("EMP-4711", "[employee]")})
    try:
        (again,) = render(result)
        assert again == line and not known_clean(again)
        assert redact({"rendered": [again]})["rendered"][0].startswith(
            "skiff: the skiff is green, says [employee] (remembered "
        )
    finally:
        undo()


def test_a_call_past_its_timeout_fails_and_a_cancellation_from_elsewhere_stays_one():
    """The service's deadline is its own: the time-out becomes an outcome (the task is
    left as it was, its later time-outs work), a cancellation of the turn stays one."""
    from toolang_core.memory.service import MemoryService

    service = MemoryService(
        "test", MemoryConfig(plugin="test", recall_timeout_seconds=0.05), HangingRecall(Shelf())
    )
    request = MemoryLimits()  # never read: the plugin hangs before it looks

    async def timed_out():
        task = asyncio.current_task()
        started = time.perf_counter()
        result, outcome = await service.recall(_recall_request(request))
        took = time.perf_counter() - started
        # Back at all means the deadline worked: the plugin hangs for an hour.
        assert result is None and not outcome.ok and took >= 0.05
        assert outcome.error == "memory plugin 'test': recall took longer than 0.05 s"
        assert task.cancelling() == 0
        with pytest.raises(TimeoutError):  # the task's own time-outs still work
            async with asyncio.timeout(0.01):
                await asyncio.sleep(1)

    async def cancelled():
        call = asyncio.create_task(service.recall(_recall_request(request)))
        await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(timed_out())
    asyncio.run(cancelled())


def _recall_request(limits):
    from toolang_core.memory import MemoryRecallRequest

    return MemoryRecallRequest(
        agent_uri="toolang:agent/a", agent_id="a", query_text="q", limits=limits
    )

"""A turn interrupted after a tool gave back a file, and resumed by another runtime on
the same SQLite file, sends the model the tool's answer as the interrupted attempt
did: the file's name as the tool gave it, although the step it is replayed from keeps
the name masked at rest (docs/attachments.md, "Files from tools").

A stop/restart in one process rather than a killed ``toolang run``: what the model
was sent is the point, and only an in-process scripted model can be asked (the
file-scripted model of the crash kit answers with it, and an answer is masked at
rest). The interruption is the same for the turn: its attempt ends mid-call, its
steps stay, the next runtime replays them (tests/test_model_retry_crash.py kills a
real process at the same point)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time

from test_attachments import PNG

from toolang_core import Tool, ToolFile, ToolOutput, hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelRetryConfig, ModelsConfig, RuntimeConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, error, text, tool_call

SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0"
NAME = f"report-{SECRET}.png"
"""A file name holding a key: the step stores it masked."""
SHA = hashlib.sha256(PNG).hexdigest()


def draw_report() -> ToolOutput:
    """Draw the report."""
    return ToolOutput("drawn", [ToolFile(PNG, NAME)])


class ReportTool:
    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(draw_report, blocking=False))


def make(tmp_path, model: ScriptedModel, wait: float) -> Runtime:
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(
            default="scripted",
            retry=ModelRetryConfig(
                attempts=5, initial_wait_seconds=wait, max_wait_seconds=wait, jitter=0
            ),
        ),
    )
    plugins = [("scripted", model.plugin("scripted")), ("report", ReportTool())]
    return Runtime.with_plugins(config, plugins, env={})


async def serve_until(runtime: Runtime, done, what: str) -> None:
    """Serve ``runtime`` until ``done()``, then stop it (its running turn is handed
    back, to be resumed)."""
    stop = asyncio.Event()
    serving = asyncio.create_task(runtime.serve(stop, sources=()))
    deadline = time.monotonic() + 60
    while not done():
        assert not serving.done(), "the runtime stopped on its own"
        assert time.monotonic() < deadline, f"waited 60 s for {what}"
        await asyncio.sleep(0.02)
    stop.set()
    await serving


def test_a_resumed_turn_sends_a_tool_files_name_as_the_interrupted_attempt_did(tmp_path):
    first = ScriptedModel(
        [tool_call("draw_report", {}), error("slow down", kind="rate_limit")],
        attachment_types=("image/*",),
    )
    runtime = make(tmp_path, first, wait=600)  # a retry wait it never lives to finish
    inbox = runtime.open_inbox()
    store = inbox.store
    try:
        turn_id = inbox.submit(
            NewTurnRequest(source="chat", thread_id="cli:r", input="draw", owner="alice")
        ).id
        waiting = f"{turn_id}:model:1:try:1"
        asyncio.run(serve_until(runtime, lambda: store.find_step(waiting) is not None, "the retry"))
        assert store.get(turn_id).status is not TurnStatus.COMPLETED

        second = ScriptedModel([text("a report")], attachment_types=("image/*",))
        resumed = make(tmp_path, second, wait=0.01)
        asyncio.run(resumed.serve(asyncio.Event(), until_idle=True, sources=()))

        turn = store.get(turn_id)
        assert (turn.status, turn.output, turn.attempt) == (TurnStatus.COMPLETED, "a report", 2)
        assert len(first.calls) == 2 and len(second.calls) == 1  # the tool's answer: replayed
        before, after = first.calls[1].messages[-1], second.calls[0].messages[-1]
        assert (after.role, after.name) == ("tool", "draw_report")
        # what the model read is what it read before the interruption …
        assert after.content == before.content
        assert json.loads(after.content)["attachments"][0]["name"] == NAME
        assert [a.ref for a in after.attachments] == [a.ref for a in before.attachments]
        assert after.attachments[0].ref.name == NAME
        assert after.attachments[0].read_bytes() == PNG
        # … while the step it was replayed from keeps the name masked at rest
        [step] = [s for s in store.steps(turn_id) if s.kind == "tool_call"]
        assert step.attempt == 1
        assert SECRET not in json.dumps(step.data)
        assert step.data["result"]["attachments"][0]["sha256"] == SHA
    finally:
        store.close()


def test_a_replayed_file_that_is_not_the_owners_keeps_its_stored_name(tmp_path):
    """The owner record is asked as the turn's owner: another owner's name for the same
    bytes never reaches the model (the file is then not found: a text reference)."""
    from toolang_core.attachments import AttachmentRef
    from toolang_core.turn.attachments import as_given

    model = ScriptedModel([text("unused")])
    runtime = make(tmp_path, model, wait=0.01)
    store = runtime.open_store()
    try:
        from toolang_core.attachments import AttachmentStore

        AttachmentStore.of(runtime.config, store).put(PNG, name=NAME, owner="alice")
        masked = runtime.redaction.text(NAME)
        assert masked != NAME
        stored = AttachmentRef(SHA, "image/png", masked, len(PNG))
        assert as_given(runtime, store, "alice", [stored])[0].name == NAME
        assert as_given(runtime, store, "mallory", [stored])[0].name == masked
        renamed = AttachmentRef(SHA, "image/png", "other.png", len(PNG))
        assert as_given(runtime, store, "alice", [renamed])[0].name == "other.png"
    finally:
        store.close()

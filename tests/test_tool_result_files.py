"""Files a native tool gives back with its result (``ToolOutput``): kept by hash as a
request's attachments are, referenced in the step, and sent to the model with the
tool's answer when it takes their type — a text reference when it does not
(docs/attachments.md, "Files from tools")."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest
from test_attachments import PNG

from toolang_core import Tool, ToolFile, ToolOutput, ToolResult, hookimpl
from toolang_core.attachments import AttachmentNotFound, AttachmentRef, AttachmentStore
from toolang_core.attachments.store import RECORD_KIND
from toolang_core.config import ToolangConfig
from toolang_core.config.model import (
    ModelRetryConfig,
    ModelsConfig,
    PluginsConfig,
    RuntimeConfig,
)
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, error, text, tool_call
from toolang_core.turn import trace
from toolang_core.turn.timeline import timeline

SHA = hashlib.sha256(PNG).hexdigest()
ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(56)


def draw_dot(color: str) -> ToolOutput:
    """Draw a dot of ``color``."""
    return ToolOutput({"drawn": color}, [ToolFile(PNG, f"{color}-dot.png")])


def build_binary() -> ToolOutput:
    """Build a program (bytes the attachment store does not take)."""
    return ToolOutput("built", [ToolFile(PNG, "icon.png"), ToolFile(ELF, "a.out")])


class DrawingTools:
    @hookimpl
    def toolang_register_tools(self, register):
        register(Tool.from_function(draw_dot, blocking=False))
        register(Tool.from_function(build_binary, blocking=False))


def make(tmp_path, models, fallback=(), extra=(), required=()):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(
            default="scripted", fallback=tuple(fallback), retry=ModelRetryConfig(attempts=1)
        ),
        plugins=PluginsConfig(required=tuple(required)),
    )
    plugins = [(name, model.plugin(name)) for name, model in models.items()]
    plugins.append(("drawing", DrawingTools()))
    plugins.extend(extra)
    return Runtime.with_plugins(config, plugins, env={})


def run_turn(runtime, owner=None):
    inbox = runtime.open_inbox()
    try:
        turn_id = inbox.submit(
            NewTurnRequest(source="chat", thread_id="cli:d", input="draw", owner=owner)
        ).id
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        turn = inbox.get(turn_id)
        results = [s.data["result"] for s in inbox.store.steps(turn_id) if "result" in s.data]
        return turn, results
    finally:
        inbox.store.close()


def test_a_native_tools_image_is_kept_by_hash_and_reaches_a_model_that_takes_images(tmp_path):
    model = ScriptedModel(
        [tool_call("draw_dot", {"color": "red"}), text("a red dot")], attachment_types=("image/*",)
    )
    runtime = make(tmp_path, {"scripted": model})
    turn, [result] = run_turn(runtime, owner="alice")

    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "a red dot")
    ref = {"sha256": SHA, "media_type": "image/png", "name": "red-dot.png", "size": len(PNG)}
    assert result["ok"] is True and result["output"] == {"drawn": "red"}
    assert result["attachments"] == [ref]  # the step references it; the bytes are not in it
    answer = model.calls[1].messages[-1]
    assert (answer.role, answer.name) == ("tool", "draw_dot")
    assert json.loads(answer.content) == {
        "ok": True,
        "output": {"drawn": "red"},
        "attachments": [ref],
    }
    [image] = answer.attachments
    assert (image.ref.sha256, image.media_type, image.read_bytes()) == (SHA, "image/png", PNG)
    # Kept as a request's attachments are: by hash, the turn owner's and no one else's.
    store = runtime.open_store()
    try:
        kept = AttachmentStore.of(runtime.config, store)
        assert kept.path_of(SHA).read_bytes() == PNG
        assert kept.ref(SHA, owner="alice").name == "red-dot.png"
        try:
            kept.ref(SHA, owner="mallory")
            raise AssertionError("another owner could use the tool's file")
        except AttachmentNotFound:
            pass
    finally:
        store.close()


def test_a_model_that_takes_no_images_gets_a_text_reference_instead(tmp_path):
    model = ScriptedModel(
        [tool_call("draw_dot", {"color": "red"}), text("told of a dot")], attachment_types=()
    )
    runtime = make(tmp_path, {"scripted": model})
    turn, _ = run_turn(runtime)

    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "told of a dot")
    answer = model.calls[1].messages[-1]
    assert answer.attachments == ()
    assert answer.content.splitlines()[1] == (
        f"[attachment 'red-dot.png' (image/png, {len(PNG)} bytes, sha256 {SHA}) not sent: "
        "model 'scripted' does not accept image/png (it accepts: no attachments)]"
    )


def test_a_fallback_that_takes_no_images_gets_the_text_reference_and_answers(tmp_path):
    main = ScriptedModel([tool_call("draw_dot", {"color": "red"}), error("overloaded")])
    backup = ScriptedModel([text("the backup answered")], attachment_types=("text/plain",))
    runtime = make(tmp_path, {"scripted": main, "backup": backup}, fallback=["backup"])
    turn, _ = run_turn(runtime)

    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "the backup answered")
    assert len(main.calls[1].messages[-1].attachments) == 1  # the main model takes images
    told = backup.calls[0].messages[-1]
    assert told.attachments == ()
    assert "not sent: model 'backup' does not accept image/png" in told.content


def test_each_attempts_step_says_what_its_model_got_of_each_file(tmp_path):
    """The trace shows the prompt each model was sent: the main model's failed attempt
    had the image attached, the fallback that answered got a text reference instead."""
    main = ScriptedModel(
        [tool_call("draw_dot", {"color": "red"}), error("overloaded")],
        attachment_types=("image/*",),
    )
    backup = ScriptedModel([text("the backup answered")], attachment_types=("text/plain",))
    runtime = make(tmp_path, {"scripted": main, "backup": backup}, fallback=["backup"])
    turn, _ = run_turn(runtime)
    store = runtime.open_store()
    try:
        steps = store.steps(turn.id)
    finally:
        store.close()

    by_key = {s.idempotency_key: s for s in steps}
    failed, answered = by_key[f"{turn.id}:model:1:try:1"], by_key[f"{turn.id}:model:1"]
    ref = {"sha256": SHA, "media_type": "image/png", "name": "red-dot.png", "size": len(PNG)}
    why = "model 'backup' does not accept image/png (it accepts: text/plain)"
    # the tool's answer is the 4th message: system, user, the call, the answer
    assert failed.data["model"] == "scripted"
    assert failed.data["files"] == [{"message": 3, **ref, "sent": "attached"}]
    assert failed.data["messages"][3]["attachments"] == [ref]
    assert answered.data["model"] == "backup"
    assert answered.data["files"] == [{"message": 3, **ref, "sent": "text_reference", "why": why}]
    told = answered.data["messages"][3]
    assert "attachments" not in told  # as sent: the file was not attached
    assert told["content"].splitlines()[1] == (
        f"[attachment 'red-dot.png' (image/png, {len(PNG)} bytes, sha256 {SHA}) not sent: {why}]"
    )
    shown = "\n".join(timeline(turn, steps))
    assert f"file 'red-dot.png' (image/png, {len(PNG)} bytes) attached" in shown
    assert (
        f"file 'red-dot.png' (image/png, {len(PNG)} bytes) sent as a text reference: "
        "model 'backup' does not accept image/png" in shown
    )


def test_a_files_name_in_the_steps_files_is_masked_at_rest(tmp_path):
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0"

    def leak_dot() -> ToolOutput:
        """Draw a dot named after a key."""
        return ToolOutput("drawn", [ToolFile(PNG, f"{secret}.png")])

    class Leaky:
        @hookimpl
        def toolang_register_tools(self, register):
            register(Tool.from_function(leak_dot, blocking=False))

    model = ScriptedModel([tool_call("leak_dot", {}), text("drawn")], attachment_types=())
    runtime = make(tmp_path, {"scripted": model}, extra=[("leaky", Leaky())])
    turn, _ = run_turn(runtime)
    assert f"{secret}.png" in model.calls[1].messages[-1].content  # the model got it
    store = runtime.open_store()
    try:
        [step] = [s for s in store.steps(turn.id) if s.idempotency_key == f"{turn.id}:model:1"]
    finally:
        store.close()
    [sent] = step.data["files"]
    assert sent["sent"] == "text_reference" and secret not in json.dumps(step.data)


class BrokenResultFilter:
    @hookimpl
    def toolang_filter_tool_result(self, call, result, ctx):
        raise OSError("the result scanner is down")


class BrokenAudit:
    @hookimpl
    def toolang_observe_tool_result(self, call, result, ctx):
        raise OSError("the audit log is full")


@pytest.mark.parametrize(
    ("plugin", "required", "error_type"),
    [
        (("result-filter", BrokenResultFilter()), (), "filter_failed"),
        (("audit", BrokenAudit()), ("audit",), "required_plugin"),
    ],
    ids=["result-filter-fails-closed", "required-observer"],
)
def test_a_withheld_results_files_are_not_kept(tmp_path, plugin, required, error_type):
    """A result the chain withholds references no file: none of its files is stored,
    and no owner record names them."""
    model = ScriptedModel([tool_call("draw_dot", {"color": "red"}), text("withheld")])
    runtime = make(tmp_path, {"scripted": model}, extra=[plugin], required=required)
    turn, [result] = run_turn(runtime, owner="alice")

    assert (turn.status, result["ok"], result["error_type"]) == (
        TurnStatus.COMPLETED,
        False,
        error_type,
    )
    assert "attachments" not in result
    assert not any(p.is_file() for p in runtime.config.attachments_dir.rglob("*"))
    store = runtime.open_store()
    try:
        assert store.get_record(RECORD_KIND, SHA) is None
    finally:
        store.close()


def test_a_file_already_kept_stays_when_a_later_result_with_it_is_withheld(tmp_path):
    """Nothing is deleted: the same bytes kept before for the owner stay theirs."""
    model = ScriptedModel([tool_call("draw_dot", {"color": "red"}), text("withheld")])
    runtime = make(tmp_path, {"scripted": model}, extra=[("result-filter", BrokenResultFilter())])
    store = runtime.open_store()
    try:
        AttachmentStore.of(runtime.config, store).put(PNG, name="mine.png", owner="alice")
    finally:
        store.close()
    run_turn(runtime, owner="alice")

    store = runtime.open_store()
    try:
        kept = AttachmentStore.of(runtime.config, store)
        assert kept.ref(SHA, owner="alice").name == "mine.png"
        assert kept.path_of(SHA).read_bytes() == PNG
    finally:
        store.close()


def test_a_file_the_store_refuses_fails_the_call_naming_tool_and_file_and_keeps_none(tmp_path):
    model = ScriptedModel([tool_call("build_binary", {}), text("it failed")])
    runtime = make(tmp_path, {"scripted": model})
    turn, [result] = run_turn(runtime)

    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "it failed")
    assert result["ok"] is False and result["error_type"] == "attachment_error"
    assert "tool 'build_binary' gave back a file that is refused" in result["error"]
    assert "attachment 'a.out'" in result["error"]
    assert not any(p.is_file() for p in runtime.config.attachments_dir.rglob("*"))


def test_a_results_attachments_survive_the_step_for_a_replay():
    ref = AttachmentRef(SHA, "image/png", "dot.png", len(PNG))
    result = ToolResult(ok=True, output="x", attachments=(ref,))
    assert trace.result_from_json(json.loads(json.dumps(trace.result_json(result)))) == result
    plain = ToolResult(ok=True, output="x")
    assert "attachments" not in trace.result_json(plain)

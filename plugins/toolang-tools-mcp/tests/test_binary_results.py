"""Images, embedded resources and over-large results from a real MCP server, through
the whole chain: kept by hash, referenced in the step, and sent to the model as it
takes them."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json

from tools_mcp_kit import SERVERS, runtime_with, stdio_server

from toolang_core import AttachmentStore
from toolang_core.runtime.after_turn import PROMPT_TRACE_KIND
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import text, tool_call

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
TOKEN = "ghp_R8mT2vX9qL4wZ7nB3kD6fH1jP5sC0yA2eG4u"


def media(runtime_parts, model, tmp_path, extra=""):
    toolang_runtime, toolang_home, monkeypatch = runtime_parts
    return runtime_with(
        toolang_runtime,
        toolang_home,
        monkeypatch,
        stdio_server("media", "media_server.py", str(tmp_path / "ledger"), extra=extra),
        scripted=model.plugin(),
    )


def run_one_turn(runtime):
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:m", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return inbox, turn_id


def tool_results(inbox, turn_id):
    return [s.data["result"] for s in inbox.store.steps(turn_id) if "result" in s.data]


def test_an_image_is_kept_by_hash_referenced_in_the_step_and_sent_to_a_model_that_takes_it(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    assert (SERVERS / "media_server.py").is_file()
    model = toolang_scripted_model(
        [tool_call("media_snapshot", {}), text("a red dot")], attachment_types=("image/*",)
    )
    runtime = media((toolang_runtime, toolang_home, monkeypatch), model, tmp_path)
    inbox, turn_id = run_one_turn(runtime)

    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    sha = hashlib.sha256(PNG).hexdigest()
    [result] = tool_results(inbox, turn_id)
    assert result["ok"] is True
    assert result["output"] == "one red dot"
    assert result["attachments"] == [
        {"sha256": sha, "media_type": "image/png", "name": "snapshot-image.png", "size": len(PNG)}
    ]
    kept = AttachmentStore.of(runtime.config, inbox.store)
    assert kept.path_of(sha).read_bytes() == PNG  # under the home directory, by hash
    assert kept.path_of(sha).is_relative_to(toolang_home.path)
    # The second model call gets the image with the tool's answer.
    answer = model.calls[1].messages[-1]
    assert (answer.role, answer.name) == ("tool", "media_snapshot")
    [image] = answer.attachments
    assert (image.ref.sha256, image.media_type, image.read_bytes()) == (sha, "image/png", PNG)
    assert "not sent" not in answer.content


def test_a_model_that_takes_no_images_gets_a_text_reference_and_the_turn_goes_on(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    model = toolang_scripted_model(
        [tool_call("media_snapshot", {}), text("I was told of a picture")], attachment_types=()
    )
    runtime = media((toolang_runtime, toolang_home, monkeypatch), model, tmp_path)
    inbox, turn_id = run_one_turn(runtime)

    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    assert inbox.get(turn_id).output == "I was told of a picture"
    answer = model.calls[1].messages[-1]
    assert answer.attachments == ()
    sha = hashlib.sha256(PNG).hexdigest()
    assert (
        f"[attachment 'snapshot-image.png' (image/png, {len(PNG)} bytes, sha256 {sha}) "
        "not sent: model 'scripted' does not accept image/png (it accepts: no attachments)]"
    ) in answer.content
    assert json.loads(answer.content.splitlines()[0])["output"] == "one red dot"


def test_an_embedded_blob_resource_is_kept_and_sent_under_its_uri_name(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    model = toolang_scripted_model(
        [tool_call("media_report", {}), text("read it")], attachment_types=("application/pdf",)
    )
    runtime = media((toolang_runtime, toolang_home, monkeypatch), model, tmp_path)
    inbox, turn_id = run_one_turn(runtime)

    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    sha = hashlib.sha256(PDF).hexdigest()
    [result] = tool_results(inbox, turn_id)
    assert result["attachments"] == [
        {"sha256": sha, "media_type": "application/pdf", "name": "q3-report.pdf", "size": len(PDF)}
    ]
    [pdf] = model.calls[1].messages[-1].attachments
    assert (pdf.ref.name, pdf.media_type) == ("q3-report.pdf", "application/pdf")
    assert pdf.read_bytes() == PDF
    assert AttachmentStore.of(runtime.config, inbox.store).path_of(sha).read_bytes() == PDF


def test_a_50_mb_result_is_refused_naming_the_server_and_nothing_is_lost(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    model = toolang_scripted_model(
        [
            tool_call("media_dump", {"megabytes": 50}),
            tool_call("media_snapshot", {}),
            text("the dump was too big"),
        ]
    )
    runtime = media((toolang_runtime, toolang_home, monkeypatch), model, tmp_path)
    inbox, turn_id = run_one_turn(runtime)

    turn = inbox.get(turn_id)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "the dump was too big")
    dumped, snapped = tool_results(inbox, turn_id)
    assert dumped["ok"] is False
    assert "MCP server 'media', tool 'dump': the result is over 10485760 bytes" in dumped["error"]
    assert "refused, not truncated" in dumped["error"]
    assert "attachments" not in dumped
    # The model was told why; the session still serves the next call, whose image is kept.
    told = json.loads(model.calls[1].messages[-1].content)
    assert told["ok"] is False and "MCP server 'media'" in told["error"]
    assert snapped["ok"] is True
    kept = AttachmentStore.of(runtime.config, inbox.store)
    [stored] = [p for p in kept.folder.rglob("*") if p.is_file()]
    assert stored == kept.path_of(hashlib.sha256(PNG).hexdigest())  # nothing of the dump


def test_a_secret_in_a_text_result_is_masked_at_rest(
    toolang_runtime, toolang_home, monkeypatch, toolang_scripted_model, tmp_path
):
    model = toolang_scripted_model([tool_call("media_credentials", {}), text("noted")])
    runtime = media((toolang_runtime, toolang_home, monkeypatch), model, tmp_path)
    inbox, turn_id = run_one_turn(runtime)

    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    # The model read the tool's answer (raw, in memory) …
    assert TOKEN in model.calls[1].messages[-1].content
    # … the store keeps none of it raw: not the step, not the prompt trace.
    [result] = tool_results(inbox, turn_id)
    assert result["output"]["text"].startswith("the deploy token is ")
    steps = [s.data for s in inbox.store.steps(turn_id)]
    trace = inbox.store.get_record(PROMPT_TRACE_KIND, turn_id)
    at_rest = json.dumps([steps, dict(trace.data) if trace is not None else None])
    assert TOKEN not in at_rest
    inbox.store.close()
    for path in toolang_home.path.rglob("*"):  # the database, its journal, the files
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path

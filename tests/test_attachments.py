"""Attachments (issue #33 item 2): stored once by hash under the home directory, sniffed,
limited, owned, and handed to models that accept them — through a real runtime with a
scripted model."""

from __future__ import annotations

import asyncio
import base64
import json
import logging

import pytest

from toolang_core import ConfigError
from toolang_core.attachments import (
    REFUSED,
    AttachmentError,
    AttachmentNotFound,
    AttachmentRef,
    AttachmentStore,
    sniff,
    with_attachments,
)
from toolang_core.config import ToolangConfig, load_config
from toolang_core.config.model import AttachmentsConfig, ModelsConfig, RuntimeConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, text

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
SECRET_NOTE = b"the key is sk-proj-abcdefghijklmnopqrstuvwxyz012345\n"


def make(tmp_path, model, **attachments):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        attachments=AttachmentsConfig(**attachments),
    )
    return Runtime.with_plugins(config, [("scripted", model.plugin())], env={})


def submit_with(runtime, files, *, owner=None, refs_owner=None, thread="cli:t"):
    """Store ``files`` (name → bytes) for ``refs_owner`` and submit a request of
    ``owner`` referencing them; run it; return the turn and its steps."""
    inbox = runtime.open_inbox()
    try:
        store = AttachmentStore.of(runtime.config, inbox.store)
        giver = owner if refs_owner is None else refs_owner
        refs = [store.put(data, name=name, owner=giver) for name, data in files.items()]
        turn_id = inbox.submit(
            NewTurnRequest(
                source="chat",
                thread_id=thread,
                input="look",
                owner=owner,
                meta=with_attachments({}, refs),
            )
        ).id
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        return inbox.get(turn_id), inbox.store.steps(turn_id)
    finally:
        inbox.store.close()


def test_an_image_attachment_reaches_the_model(tmp_path):
    model = ScriptedModel([text("a red dot")])
    turn, steps = submit_with(make(tmp_path, model), {"dot.png": PNG})
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "a red dot")
    [got] = model.attachments
    assert (got.ref.name, got.media_type, got.ref.size) == ("dot.png", "image/png", len(PNG))
    assert got.read_bytes() == PNG
    assert model.calls[0].messages[-1].attachments == (got,)
    # the request and its steps reference it; no step holds its bytes
    prompt_build, model_call = steps
    assert prompt_build.data["attachments"] == [got.ref.to_json()]
    assert model_call.data["messages"][-1]["attachments"] == [got.ref.to_json()]


def test_the_same_bytes_are_stored_once_for_two_requests(tmp_path):
    model = ScriptedModel([text("one"), text("two")])
    runtime = make(tmp_path, model)
    submit_with(runtime, {"a.png": PNG}, thread="cli:a")
    submit_with(runtime, {"b.png": PNG}, thread="cli:b")
    files = [p for p in (tmp_path / ".toolang" / "attachments").rglob("*") if p.is_file()]
    assert len(files) == 1
    assert files[0].read_bytes() == PNG
    assert [a.ref.name for a in model.attachments] == ["a.png", "b.png"]
    assert len({a.ref.sha256 for a in model.attachments}) == 1


def test_a_model_that_takes_no_images_refuses_before_any_call(tmp_path):
    model = ScriptedModel([], attachment_types=("text/plain",))
    turn, steps = submit_with(make(tmp_path, model), {"dot.png": PNG})
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, REFUSED)
    assert "model 'scripted'" in turn.error and "image/png" in turn.error
    assert "dot.png" in turn.error
    assert model.calls == []
    assert [s.kind for s in steps if s.kind == "model_call"] == []


def test_another_owners_hash_in_a_request_is_refused_before_any_call(tmp_path):
    model = ScriptedModel([])
    runtime = make(tmp_path, model)
    turn, _ = submit_with(runtime, {"dot.png": PNG}, owner="bob", refs_owner="alice")
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "attachment_error")
    assert "not found" in turn.error
    assert model.calls == []


def test_another_owner_cannot_fetch_by_hash(tmp_path):
    runtime = make(tmp_path, ScriptedModel([]))
    inbox = runtime.open_inbox()
    try:
        store = AttachmentStore.of(runtime.config, inbox.store)
        ref = store.put(PNG, name="dot.png", owner="alice")
        assert store.read(ref.sha256, owner="alice") == (ref, PNG)
        assert store.read(ref.sha256, owner=None)[1] == PNG  # the operator sees all
        with pytest.raises(AttachmentNotFound, match="not found"):
            store.read(ref.sha256, owner="bob")
        # bob giving the same bytes makes them his too; alice's name stays hers
        mine = store.put(PNG, name="mine.png", owner="bob")
        assert store.ref(ref.sha256, owner="bob").name == "mine.png"
        assert store.ref(ref.sha256, owner="alice").name == "dot.png"
        assert mine.sha256 == ref.sha256
    finally:
        inbox.store.close()


def test_over_the_limit_is_refused_naming_the_file_and_the_limit(tmp_path):
    store = _store(tmp_path, max_bytes=10)
    with pytest.raises(AttachmentError, match=r"'big.png': 70 bytes is over the limit of 10"):
        store.put(PNG, name="big.png", owner=None)
    path = tmp_path / "big.png"
    path.write_bytes(PNG)
    with pytest.raises(AttachmentError, match=r"max_bytes"):
        store.put_file(path, owner=None)
    assert not (tmp_path / "att").exists()


def test_the_type_comes_from_the_bytes_not_the_name(tmp_path):
    store = _store(tmp_path)
    ref = store.put(PNG, name="notes.txt", owner=None)
    assert ref.media_type == "image/png"
    with pytest.raises(AttachmentError, match=r"'photo.png': its bytes are application/octet"):
        store.put(b"\x00\x01\x02binary", name="photo.png", owner=None)
    only_text = _store(tmp_path, types=("text/plain",))
    with pytest.raises(AttachmentError, match=r"image/png, which is not accepted"):
        only_text.put(PNG, name="dot.png", owner=None)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (PNG, "image/png"),
        (b"GIF89a\x01\x00\x01\x00", "image/gif"),
        (b"%PDF-1.7\n", "application/pdf"),
        (b"RIFF\x24\x00\x00\x00WAVEfmt ", "audio/wav"),
        ("grüße\n".encode(), "text/plain"),
        (b"\xff\xfe\x00\x00junk", "application/octet-stream"),
    ],
)
def test_sniffing_tells_the_accepted_types(data, expected):
    assert sniff(data) == expected


def test_an_unreadable_path_is_named(tmp_path):
    store = _store(tmp_path)
    with pytest.raises(AttachmentError, match=r"missing.png'.*cannot be read"):
        store.put_file(tmp_path / "missing.png", owner=None)
    with pytest.raises(AttachmentError, match="not a file"):
        store.put_file(tmp_path, owner=None)


@pytest.mark.parametrize("bad", ["../../etc/passwd", "ABC", "a" * 63, "A" * 64, 42, None])
def test_a_hash_that_is_not_one_never_reaches_a_path(tmp_path, bad):
    store = _store(tmp_path)
    with pytest.raises(AttachmentError, match="is not an attachment hash"):
        store.ref(bad, owner=None)
    with pytest.raises(AttachmentError, match="sha256"):
        AttachmentRef.from_json({"sha256": bad, "media_type": "image/png", "size": 1})


def test_a_text_attachments_content_reaches_no_step_and_no_log(tmp_path, caplog):
    model = ScriptedModel([text("noted")])
    with caplog.at_level(logging.DEBUG):
        turn, steps = submit_with(make(tmp_path, model), {"key.txt": SECRET_NOTE})
    assert turn.status is TurnStatus.COMPLETED
    assert model.attachments[0].read_bytes() == SECRET_NOTE  # the model gets it whole
    stored = json.dumps([s.data for s in steps]) + json.dumps(dict(turn.meta))
    assert "sk-proj" not in stored and "the key is" not in stored
    assert "sk-proj" not in caplog.text


def test_a_bad_types_entry_is_a_config_error_naming_the_key(tmp_path):
    (tmp_path / "toolang.toml").write_text('[attachments]\ntypes = ["image/png", "png"]\n')
    with pytest.raises(ConfigError, match=r"attachments\.types\[1\].*'png'"):
        load_config(tmp_path / "toolang.toml")


def _store(tmp_path, **config):
    from toolang_core.store.sqlite import SQLiteStore

    return AttachmentStore(
        tmp_path / "att", AttachmentsConfig(**config), SQLiteStore(tmp_path / "s.db")
    )

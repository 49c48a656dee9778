"""A fallback model that does not take a turn's attachments is skipped, with the reason
in the trace and the log — never asked without them (docs/attachments.md); ``toolang
doctor`` names such a fallback when the models say what they accept."""

from __future__ import annotations

import asyncio

from test_attachments import PNG

from toolang_core.attachments import AttachmentStore, with_attachments
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelRetryConfig, ModelsConfig, RuntimeConfig
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, error, text
from toolang_core.turn.timeline import timeline

ONCE = ModelRetryConfig(attempts=1)


def make(tmp_path, models, fallback):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted", fallback=tuple(fallback), retry=ONCE),
    )
    plugins = [(name, model.plugin(name)) for name, model in models.items()]
    return Runtime.with_plugins(config, plugins, env={})


def run_with_image(runtime):
    inbox = runtime.open_inbox()
    try:
        ref = AttachmentStore.of(runtime.config, inbox.store).put(PNG, name="dot.png", owner=None)
        turn_id = inbox.submit(
            NewTurnRequest(
                source="chat", thread_id="cli:f", input="look", meta=with_attachments({}, [ref])
            )
        ).id
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        return inbox.get(turn_id), inbox.store.steps(turn_id)
    finally:
        inbox.store.close()


def test_a_text_only_fallback_is_skipped_for_an_image_and_the_next_one_answers(tmp_path):
    primary = ScriptedModel([error("overloaded", kind="overloaded")])
    text_only = ScriptedModel([], attachment_types=("text/plain",))
    seeing = ScriptedModel([text("a red dot")], attachment_types=("image/*",))
    runtime = make(
        tmp_path,
        {"scripted": primary, "textonly": text_only, "seeing": seeing},
        ["textonly", "seeing"],
    )
    turn, steps = run_with_image(runtime)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "a red dot")
    assert text_only.calls == []  # never asked without the image
    assert seeing.calls[0].messages[-1].attachments  # the image went with the call
    built = next(s for s in steps if s.kind == "prompt_build")
    [reason] = built.data["fallbacks_skipped"]
    assert "'textonly'" in reason and "image/png" in reason and "dot.png" in reason
    assert "fallback skipped" in "\n".join(timeline(turn, steps))


def test_with_only_text_only_fallbacks_the_turn_fails_with_the_models_error(tmp_path):
    primary = ScriptedModel([error("overloaded", kind="overloaded")])
    text_only = ScriptedModel([], attachment_types=("text/plain",))
    runtime = make(tmp_path, {"scripted": primary, "textonly": text_only}, ["textonly"])
    turn, steps = run_with_image(runtime)
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "overloaded" in (turn.error or "")
    assert text_only.calls == []
    built = next(s for s in steps if s.kind == "prompt_build")
    assert "'textonly'" in built.data["fallbacks_skipped"][0]


def test_a_turn_without_attachments_keeps_every_fallback(tmp_path):
    primary = ScriptedModel([error("overloaded", kind="overloaded")])
    text_only = ScriptedModel([text("plain")], attachment_types=("text/plain",))
    runtime = make(tmp_path, {"scripted": primary, "textonly": text_only}, ["textonly"])
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:g", input="hi")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert inbox.get(turn_id).output == "plain"
    inbox.store.close()


def test_doctor_warns_of_a_fallback_that_takes_fewer_attachment_types(tmp_path):
    from toolang_core.doctor import DoctorContext
    from toolang_core.doctor.attachments import check_fallback_attachments

    seeing = ScriptedModel([], attachment_types=("image/*", "text/plain"))
    text_only = ScriptedModel([], attachment_types=("text/plain",))
    runtime = make(tmp_path, {"scripted": seeing, "textonly": text_only}, ["textonly"])
    ctx = DoctorContext(env={}, config_path=None, config=runtime.config, runtime=runtime)
    ctx.host = runtime.host
    [found] = check_fallback_attachments(ctx)
    assert (found.area, found.status) == ("attachments", "warn")
    [problem] = found.details
    assert "[models] fallback[0] = 'textonly'" in problem and "image/*" in problem
    assert "'scripted'" in problem


def test_doctor_is_quiet_when_the_fallbacks_take_what_their_model_takes(tmp_path):
    from toolang_core.doctor import DoctorContext
    from toolang_core.doctor.attachments import check_fallback_attachments

    seeing = ScriptedModel([], attachment_types=("image/png",))
    other = ScriptedModel([], attachment_types=("image/*",))
    runtime = make(tmp_path, {"scripted": seeing, "other": other}, ["other"])
    ctx = DoctorContext(env={}, config_path=None, config=runtime.config, runtime=runtime)
    ctx.host = runtime.host
    assert list(check_fallback_attachments(ctx)) == []

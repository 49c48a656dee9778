"""Real agent turns answered by llm's echo model (the llm-echo plugin)."""

from __future__ import annotations

import asyncio
import base64
import json

from model_llm_kit import BumpTool, agent_runtime, echo_script, run_turn

from toolang_core import AttachmentStore, NewTurnRequest, TurnStatus, with_attachments


def test_echo_answers_a_plain_turn_with_the_prompt_and_system_prompt(toolang_runtime):
    turn, steps = run_turn(agent_runtime(toolang_runtime, "llm/echo"), "hello there")
    assert turn.status is TurnStatus.COMPLETED, turn.error
    answer = json.loads(turn.output)
    assert answer["prompt"] == "hello there"
    assert answer["system"].startswith("You are the test agent.")
    assert [s.kind for s in steps] == ["prompt_build", "model_call"]
    assert steps[1].data["response"]["model"] == "echo"


def test_token_counts_are_recorded_on_the_model_call(toolang_runtime):
    _, steps = run_turn(agent_runtime(toolang_runtime, "llm/echo"), "count these words")
    usage = steps[1].data["response"]["usage"]
    assert set(usage) == {"input_tokens", "output_tokens"}
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0


def test_a_tool_call_echo_asks_for_runs_through_the_chain_and_its_result_goes_back(
    toolang_runtime,
):
    tools = BumpTool()
    runtime = agent_runtime(toolang_runtime, "llm/echo", tools=tools)
    script = echo_script("bump a", tool_calls=[{"name": "bump", "arguments": {"label": "a"}}])
    turn, steps = run_turn(runtime, script)
    assert turn.status is TurnStatus.COMPLETED, turn.error
    assert tools.calls == ["a"]
    tool_step = next(s for s in steps if s.kind == "tool_call")
    assert [s["stage"] for s in tool_step.data["chain"]][:3] == [
        "SecurityFilter",
        "ApprovalGate",
        "execute",
    ]
    (result,) = json.loads(turn.output)["tool_results"]
    assert result["name"] == "bump"
    assert result["tool_call_id"] == tool_step.data["call"]["id"]
    assert json.loads(result["output"]) == {"ok": True, "output": "bumped a"}


def test_several_tool_calls_in_one_answer_each_run_once_and_return_with_their_ids(
    toolang_runtime,
):
    tools = BumpTool()
    runtime = agent_runtime(toolang_runtime, "llm/echo", tools=tools)
    calls = [{"name": "bump", "arguments": {"label": label}} for label in ("x", "y")]
    turn, steps = run_turn(runtime, echo_script(tool_calls=calls))
    assert turn.status is TurnStatus.COMPLETED, turn.error
    assert tools.calls == ["x", "y"]
    ran = {
        s.data["call"]["id"]: s.data["call"]["params"]["label"]
        for s in steps
        if s.kind == "tool_call"
    }
    returned = {
        r["tool_call_id"]: json.loads(r["output"])["output"]
        for r in json.loads(turn.output)["tool_results"]
    }
    assert returned == {call_id: f"bumped {label}" for call_id, label in ran.items()}


def test_a_raw_script_answers_with_exactly_that_text(toolang_runtime):
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/echo"), echo_script(raw="Exactly."))
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "Exactly.")


def test_an_llm_alias_names_the_model_too(toolang_runtime, llm_home):
    (llm_home / "aliases.json").write_text(json.dumps({"parrot": "echo"}))
    turn, steps = run_turn(agent_runtime(toolang_runtime, "llm/parrot"), "x")
    assert turn.status is TurnStatus.COMPLETED, turn.error
    assert steps[1].data["response"]["model"] == "echo"


def test_an_unknown_model_id_fails_the_turn_naming_it_and_ids_that_exist(toolang_runtime):
    turn, steps = run_turn(agent_runtime(toolang_runtime, "llm/ecko"), "hello")
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "llm has no model 'ecko'" in turn.error
    assert "echo" in turn.error.split("it has:")[1]
    assert steps[-1].kind == "model_call" and steps[-1].status == "failed"


def test_a_model_without_its_key_names_the_key_to_set(toolang_runtime):
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/echo-needs-key"), "hello")
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "llm keys set echo-needs-key" in turn.error
    assert "LLM_ECHO_NEEDS_KEY_KEY" in turn.error


def test_a_key_from_the_environment_is_found_by_llm(toolang_runtime, monkeypatch):
    monkeypatch.setenv("LLM_ECHO_NEEDS_KEY_KEY", "from-the-env")
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/echo-needs-key"), "hello")
    assert turn.status is TurnStatus.COMPLETED, turn.error
    assert json.loads(turn.output)["key"] == "from-the-env"


def test_settings_can_name_another_key_of_llms_key_store(toolang_runtime, llm_home):
    (llm_home / "keys.json").write_text(json.dumps({"work": "the-work-key"}))
    extra = '\n[plugins.model-llm]\nkeys = { "echo-needs-key" = "work" }\n'
    runtime = agent_runtime(toolang_runtime, "llm/echo-needs-key", extra=extra)
    turn, _ = run_turn(runtime, "hello")
    assert turn.status is TurnStatus.COMPLETED, turn.error
    assert json.loads(turn.output)["key"] == "the-work-key"


def test_a_key_name_missing_from_the_key_store_is_a_clear_error(toolang_runtime):
    extra = '\n[plugins.model-llm]\nkeys = { "echo-needs-key" = "work" }\n'
    runtime = agent_runtime(toolang_runtime, "llm/echo-needs-key", extra=extra)
    turn, _ = run_turn(runtime, "hello")
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "[plugins.model-llm] keys.echo-needs-key" in turn.error
    assert "llm keys set work" in turn.error


def test_options_from_settings_reach_the_model(toolang_runtime):
    extra = "\n[plugins.model-llm]\noptions = { echo = { example_bool = true } }\n"
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/echo", extra=extra), "hello")
    assert turn.status is TurnStatus.COMPLETED, turn.error
    assert json.loads(turn.output)["options"] == {"example_bool": True}


def test_an_option_the_model_does_not_take_is_a_clear_error(toolang_runtime):
    extra = "\n[plugins.model-llm]\noptions = { echo = { temprature = 0.2 } }\n"
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/echo", extra=extra), "hello")
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "model_error")
    assert "[plugins.model-llm] options.echo: temprature" in turn.error
    assert "llm models --options -m echo" in turn.error


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _turn_with(runtime, name: str, data: bytes):
    """Store ``data`` as an attachment, submit a request bringing it, run until idle."""
    inbox = runtime.open_inbox()
    try:
        ref = AttachmentStore.of(runtime.config, inbox.store).put(data, name=name, owner=None)
        turn_id = inbox.submit(
            NewTurnRequest(
                source="chat",
                thread_id="cli:a",
                input="what is this?",
                meta=with_attachments({}, [ref]),
            )
        ).id
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
        return ref, inbox.get(turn_id), inbox.store.steps(turn_id)
    finally:
        inbox.store.close()


def test_an_image_reaches_the_llm_model_as_an_llm_attachment(toolang_runtime):
    ref, turn, _ = _turn_with(agent_runtime(toolang_runtime, "llm/echo"), "dot.png", PNG)
    assert turn.status is TurnStatus.COMPLETED, turn.error
    (seen,) = json.loads(turn.output)["attachments"]
    assert seen["type"] == "image/png"
    assert seen["path"].endswith(ref.sha256[2:])  # the stored file, not a copy


def test_a_type_the_llm_model_does_not_take_is_refused_before_the_call(toolang_runtime):
    _, turn, steps = _turn_with(
        agent_runtime(toolang_runtime, "llm/echo"), "paper.pdf", b"%PDF-1.7\n%%EOF\n"
    )
    assert (turn.status, turn.outcome) == (TurnStatus.FAILED, "attachment_refused")
    assert "model 'llm/echo'" in turn.error and "application/pdf" in turn.error
    assert "image/png" in turn.error  # what it does take
    assert [s.kind for s in steps if s.kind == "model_call"] == []

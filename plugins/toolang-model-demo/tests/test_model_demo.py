"""toolang-model-demo, alone."""

from __future__ import annotations

import asyncio
import json

import toolang_model_demo as plugin
from toolang_core import Tool
from toolang_core.models import Message, ModelRequest, ToolSpec

ENV = {"TOOLANG_LOAD_PLUGINS": "model-demo"}


def complete(*messages, tools=()):
    request = ModelRequest(messages=tuple(messages), tools=tuple(tools))
    return asyncio.run(plugin.DemoProvider().model(None).complete(request))


def test_it_says_it_is_a_stand_in():
    response = complete(Message("user", "hello"))
    assert response.text == "(demo model) You said: hello"


def test_it_calls_a_tool_when_asked_and_reports_the_result():
    spec = ToolSpec("fs_list", "list files", {"type": "object"})
    asked = complete(Message("user", 'please /tool fs_list {"path": "."}'), tools=[spec])
    (call,) = asked.tool_calls
    assert (call.name, dict(call.params)) == ("fs_list", {"path": "."})
    reported = complete(
        Message("user", "x"),
        Message("assistant", tool_calls=asked.tool_calls),
        Message("tool", '{"ok": true}', tool_call_id="c", name="fs_list"),
    )
    assert reported.text == '(demo model) fs_list returned {"ok": true}'


def test_answer_makes_it_answer_exactly_the_text_after_it():
    response = complete(Message("user", 'report /answer {"city": "Oslo"}\n'))
    assert response.text == '{"city": "Oslo"}'


def test_it_refuses_tools_it_may_not_use():
    assert "may not use 'rm_all'" in complete(Message("user", "/tool rm_all {}")).text


def test_an_agent_turn_end_to_end(toolang_runtime):
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    class Tools:
        @staticmethod
        def toolang_register_tools(register):
            register(Tool.from_function(shout))

    from toolang_core import hookimpl

    Tools.toolang_register_tools = staticmethod(hookimpl(Tools.toolang_register_tools))
    runtime = toolang_runtime(plugins={"model-demo": plugin, "tools": Tools()})
    inbox = runtime.open_inbox()
    from toolang_core.store.types import NewTurnRequest

    turn_id = inbox.submit(
        NewTurnRequest(source="chat", thread_id="cli:t", input='/tool shout {"text": "hi"}')
    ).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    turn = inbox.get(turn_id)
    assert turn.output == '(demo model) shout returned {"ok": true, "output": "HI"}'
    kinds = [s.kind for s in inbox.store.steps(turn_id)]
    assert kinds == ["prompt_build", "model_call", "tool_call", "model_call"]


def test_a_real_runtime_answers_with_the_demo_model(toolang_cli):
    submitted = toolang_cli("submit", "hello", "--thread", "cli:t", env=ENV)
    assert submitted.returncode == 0, submitted.stderr
    ran = toolang_cli("run", "--until-idle", "--no-sources", env=ENV)
    assert ran.returncode == 0, ran.stderr
    (turn,) = json.loads(toolang_cli("turns", "list", "--json", env=ENV).stdout)
    assert (turn["status"], turn["output"]) == ("completed", "(demo model) You said: hello")


def test_it_reports_an_estimated_usage_of_four_characters_a_token():
    response = complete(Message("system", "x" * 40), Message("user", "hello"))
    assert response.usage == {"input_tokens": 12, "output_tokens": 7}  # 45 chars in, 28 out


def test_it_takes_attachments_and_says_what_it_got_not_what_is_in_them(tmp_path):
    from toolang_core import Attachment, AttachmentRef

    path = tmp_path / "blob"
    path.write_bytes(b"secret words")
    got = Attachment(AttachmentRef("b" * 64, "text/plain", "notes.txt", 12), path)
    model = plugin.DemoProvider().model(None)
    assert model.attachment_types == ("*/*",)
    response = complete(Message("user", "read this", attachments=(got,)))
    assert response.text == (
        "(demo model) You said: read this [attached: notes.txt (text/plain, 12 bytes)]"
    )

"""The translation between toolang's messages and llm's, value by value."""

from __future__ import annotations

import llm
import pytest
from llm.parts import Message as LlmMessage, TextPart, ToolCallPart, ToolResultPart

from toolang_core import ToolCall
from toolang_core.models import Message, ModelError, ModelRequest, ToolSpec
from toolang_model_llm import convert

CALLS = (ToolCall("c1", "fs_list", {"path": "."}), ToolCall("c2", "fs_read", {"path": "a"}))
CONVERSATION = (
    Message("system", "Be brief."),
    Message("user", "What is here?"),
    Message("assistant", "Looking.", tool_calls=CALLS),
    Message("tool", '{"ok": true, "output": ["a"]}', tool_call_id="c1", name="fs_list"),
    Message("tool", '{"ok": true, "output": "x"}', tool_call_id="c2", name="fs_read"),
)


def test_every_message_maps_to_its_llm_message_with_tool_ids():
    assert convert.to_llm_messages(CONVERSATION) == [
        llm.system("Be brief."),
        llm.user("What is here?"),
        LlmMessage(
            "assistant",
            [
                TextPart("Looking."),
                ToolCallPart("fs_list", {"path": "."}, "c1"),
                ToolCallPart("fs_read", {"path": "a"}, "c2"),
            ],
        ),
        LlmMessage(
            "tool",
            [
                ToolResultPart("fs_list", '{"ok": true, "output": ["a"]}', "c1"),
                ToolResultPart("fs_read", '{"ok": true, "output": "x"}', "c2"),
            ],
        ),
    ]


def test_trailing_tool_results_are_this_calls_input_and_fold_back_in_order():
    arguments = convert.prompt_arguments(ModelRequest(CONVERSATION), with_tools=True)
    assert arguments["prompt"] is None
    assert [r.tool_call_id for r in arguments["tool_results"]] == ["c1", "c2"]
    assert len(arguments["messages"]) == 3
    model = llm.get_model("echo")
    prompted = model.prompt(**arguments).prompt.messages
    assert prompted == convert.to_llm_messages(CONVERSATION)


def test_a_user_message_after_tool_results_is_the_prompt():
    messages = (*CONVERSATION, Message("user", "And now?"))
    arguments = convert.prompt_arguments(ModelRequest(messages), with_tools=True)
    assert arguments["prompt"] == "And now?"
    assert len(arguments["tool_results"]) == 2
    prompted = llm.get_model("echo").prompt(**arguments).prompt.messages
    assert prompted == convert.to_llm_messages(messages)


def test_the_system_prompt_is_also_given_to_plugins_that_read_prompt_system():
    arguments = convert.prompt_arguments(ModelRequest(CONVERSATION[:2]), with_tools=True)
    assert arguments["system"] == "Be brief."


def test_tools_are_definitions_without_implementations():
    spec = ToolSpec("fs_list", "List files.", {"type": "object", "properties": {}})
    request = ModelRequest((Message("user", "hi"),), tools=(spec,))
    (tool,) = convert.prompt_arguments(request, with_tools=True)["tools"]
    assert (tool.name, tool.description, tool.input_schema, tool.implementation) == (
        "fs_list",
        "List files.",
        {"type": "object", "properties": {}},
        None,
    )
    assert "tools" not in convert.prompt_arguments(request, with_tools=False)


def test_llm_tool_calls_map_back_with_their_ids_and_usage():
    response = convert.to_model_response(
        text="",
        tool_calls=[llm.ToolCall(name="fs_list", arguments={"path": "."}, tool_call_id="t1")],
        usage=llm.Usage(input=3, output=None),
        model="echo",
    )
    assert response.tool_calls == (ToolCall("t1", "fs_list", {"path": "."}),)
    assert response.usage == {"input_tokens": 3}


@pytest.mark.parametrize(
    "details",
    [
        {"prompt_tokens_details": {"cached_tokens": 8}},  # OpenAI chat, as llm keeps it
        {"input_tokens_details": {"cached_tokens": 8}},  # OpenAI responses
        {"cache_read_input_tokens": 8},  # Anthropic
    ],
)
def test_cached_input_tokens_are_read_from_llms_usage_details(details):
    usage = llm.Usage(input=10, output=2, details=details)
    response = convert.to_model_response(text="hi", tool_calls=[], usage=usage, model="m")
    assert response.usage == {"input_tokens": 10, "output_tokens": 2, "cached_tokens": 8}


def test_arguments_left_as_json_text_are_parsed():
    call = llm.ToolCall(name="fs_list", arguments='{"path": "."}')  # type: ignore[arg-type]
    response = convert.to_model_response(text="", tool_calls=[call], usage=llm.Usage(), model="m")
    assert response.tool_calls[0].params == {"path": "."}


def test_arguments_that_are_not_an_object_are_a_model_error():
    call = llm.ToolCall(name="fs_list", arguments="[1, 2]")  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="'fs_list' with arguments that are not a JSON object"):
        convert.to_model_response(text="", tool_calls=[call], usage=llm.Usage(), model="m")


def _attachment(tmp_path, name: str, media_type: str):
    from toolang_core import Attachment, AttachmentRef

    path = tmp_path / name
    path.write_bytes(b"bytes")
    return Attachment(AttachmentRef("a" * 64, media_type, name, 5), path)


def test_the_newest_messages_attachments_go_in_attachments_and_earlier_ones_as_parts(tmp_path):
    from llm.parts import AttachmentPart

    earlier = _attachment(tmp_path, "old.png", "image/png")
    newest = _attachment(tmp_path, "new.jpg", "image/jpeg")
    request = ModelRequest(
        messages=(
            Message("user", "first", attachments=(earlier,)),
            Message("assistant", "seen"),
            Message("user", "and this?", attachments=(newest,)),
        )
    )
    arguments = convert.prompt_arguments(request, with_tools=False)
    (sent,) = arguments["attachments"]
    assert (sent.type, sent.path) == ("image/jpeg", str(newest.path))
    first = arguments["messages"][0]
    assert first.parts[0] == TextPart("first")
    assert isinstance(first.parts[1], AttachmentPart)
    assert (first.parts[1].attachment.type, first.parts[1].attachment.path) == (
        "image/png",
        str(earlier.path),
    )


def test_a_tool_results_files_go_with_that_result_trailing_or_earlier(tmp_path):
    chart = _attachment(tmp_path, "chart.png", "image/png")
    answered = Message(
        "tool", '{"ok": true}', tool_call_id="c1", name="chart", attachments=(chart,)
    )
    called = Message("assistant", "", tool_calls=(ToolCall("c1", "chart", {}),))
    # The trailing result: this call's input, its files on llm's ToolResult.
    arguments = convert.prompt_arguments(
        ModelRequest((Message("user", "plot"), called, answered)), with_tools=False
    )
    [result] = arguments["tool_results"]
    [sent] = result.attachments
    assert (sent.type, sent.path) == ("image/png", str(chart.path))
    # An earlier result: its files on its ToolResultPart.
    later = (Message("user", "plot"), called, answered, Message("assistant", "done"))
    [*_, tool_message, _] = convert.to_llm_messages(later)
    [part] = tool_message.parts
    [kept] = part.attachments
    assert (kept.type, kept.path) == ("image/png", str(chart.path))

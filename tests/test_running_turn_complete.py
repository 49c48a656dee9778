"""RunningTurn.complete: a tool asks the calling agent's own model one question — no
tools, no history — and gets its text; a model failure is the tool's error."""

from __future__ import annotations

import asyncio

from toolang_core import NewTurnRequest, Tool, ToolCallContext, TurnStatus, hookimpl
from toolang_core.testing.models import ScriptedModel, error, text, tool_call


async def summarise(words: str, context: ToolCallContext | None = None) -> str:
    """Summarise WORDS with your own model.

    :param words: what to summarise
    """
    assert context is not None and context.turn is not None
    return await context.turn.complete(context, "Summarise in three words.", words)


class SummaryTool:
    @staticmethod
    @hookimpl
    def toolang_register_tools(register):
        register(Tool.from_function(summarise))


def run(toolang_runtime, script):
    model = ScriptedModel(script)
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n',
        plugins={"summary": SummaryTool(), "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input="go")).id
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    assert inbox.get(turn_id).status is TurnStatus.COMPLETED
    (result,) = [s.data["result"] for s in inbox.store.steps(turn_id) if "result" in s.data]
    return model, result


def test_a_tool_gets_one_answer_of_the_calling_agents_model(toolang_runtime):
    model, result = run(
        toolang_runtime,
        [tool_call("summarise", {"words": "a long story"}), text("short story here"), text("ok")],
    )
    assert result["output"] == "short story here"
    asked = model.calls[1]
    assert [(m.role, m.content) for m in asked.messages] == [
        ("system", "Summarise in three words."),
        ("user", "a long story"),
    ]
    assert asked.tools == ()


def test_a_failing_model_is_the_tools_error(toolang_runtime):
    _, result = run(
        toolang_runtime,
        [tool_call("summarise", {"words": "x"}), error("quota exceeded"), text("ok")],
    )
    assert result["ok"] is False
    assert result["error_type"] == "DelegationError"
    assert "the model of agent 'assistant' failed" in result["error"]
    assert "quota exceeded" in result["error"]

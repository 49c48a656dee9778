"""A NUL character (U+0000) is written out as the four characters ``\\x00`` wherever a
store keeps text: PostgreSQL's ``jsonb`` and ``text`` cannot hold one (a turn whose
tool returned one failed there, or stayed running), so no store does, and every turn
finishes the same way on both. The escaped text ``\\u0000`` is kept as it is."""

from __future__ import annotations

import asyncio
import json

import pytest
import test_approvals as approvals
import test_questions as questions

from toolang_core import NewTurnRequest, Tool, hookimpl
from toolang_core.store.json_text import check, dumps
from toolang_core.store.types import TurnStatus
from toolang_core.testing.models import ScriptedModel, text, tool_call


class Binary:
    """A tool reading a binary file (its NULs in the text), one failing naming one,
    and prompt notes holding one."""

    @hookimpl
    def toolang_register_tools(self, register):
        def read(path: str) -> object:
            """Read a file.

            :param path: which
            """
            return {"path": path, "text": "PK\x03\x04\x00\x00", "k\x00": 1}

        def fail(path: str) -> object:
            """Fail naming a file.

            :param path: which
            """
            raise ValueError(f"no such file: {path}\x00.bin")

        register(Tool.from_function(read, blocking=False))
        register(Tool.from_function(fail, blocking=False))

    @hookimpl
    def toolang_prompt_notes(self, agent, thread_id, runtime):
        return "note \x00 from a plugin"


def serve(toolang_runtime, model, *inputs):
    """Serve ``inputs`` as turns of one thread, one after the other: the inbox and ids."""
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n',
        plugins={"binary": Binary(), "scripted": model.plugin()},
    )
    inbox = runtime.open_inbox()
    ids = []
    for said in inputs:
        ids.append(inbox.submit(NewTurnRequest(source="chat", thread_id="cli:a", input=said)).id)
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    return inbox, ids


def test_a_tool_output_an_error_an_answer_and_notes_holding_nul_are_kept_written_out(
    toolang_runtime,
):
    model = ScriptedModel(
        [
            tool_call("read", {"path": "a.zip"}),
            tool_call("fail", {"path": "b"}),
            text("the zip starts PK\x03\x04\x00"),
            text("and the next turn on the thread reads it back"),
        ]
    )
    inbox, (first, second) = serve(toolang_runtime, model, "read a.zip", "again")
    turn = inbox.get(first)
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "the zip starts PK\x03\x04\\x00")
    assert inbox.get(second).status is TurnStatus.COMPLETED
    calls = [s for s in inbox.store.steps(first) if s.kind == "tool_call"]
    read, fail = (c.data["result"] for c in calls)
    assert read["output"] == {"path": "a.zip", "text": "PK\x03\x04\\x00\\x00", "k\\x00": 1}
    assert "no such file: b\\x00.bin" in fail["error"]
    assert "\x00" not in (calls[1].error or "")
    # the model was given the tool's own output; the history the second turn read is
    # the stored answer
    told = json.loads(model.calls[1].messages[-1].content)["output"]
    assert told["text"] == "PK\x03\x04\x00\x00"
    assert model.calls[3].messages[-2].content == "the zip starts PK\x03\x04\\x00"
    inbox.store.close()


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ({"text": "a\x00b"}, {"text": "a\\x00b"}),
        ({"a\x00": 1}, {"a\\x00": 1}),
        (["\\\x00"], ["\\\\x00"]),  # a backslash, then a NUL
        (["\x00\x00", "x\x00"], ["\\x00\\x00", "x\\x00"]),
        ({"text": "\\u0000"}, {"text": "\\u0000"}),  # the six characters: not a NUL
        ({"text": "\\\\u0000"}, {"text": "\\\\u0000"}),
        ({"text": "nul \\\\\\u0000 here"}, {"text": "nul \\\\\\u0000 here"}),
    ],
)
def test_the_encoder_writes_out_each_nul_and_keeps_the_escaped_text(value, stored):
    assert json.loads(dumps(value)) == stored


@pytest.mark.parametrize(
    "value",
    [
        {"k\x00": 1, "k\\x00": 2},
        [{"\\x00": "a", "x": {"\x00": "b", "\\x00": "c"}}],
    ],
)
def test_two_keys_the_same_once_a_nul_is_written_out_are_refused_not_one_lost(value):
    with pytest.raises(ValueError, match=r"two keys of one object are '.*x00' once a NUL"):
        dumps(value)
    with pytest.raises(ValueError, match="two keys of one object"):
        check(value, mappings=True)
    assert json.loads(dumps({"\x00": 1, "x00": 2})) == {"\\x00": 1, "x00": 2}  # no clash


def test_a_person_answering_or_denying_with_a_nul_is_heard(tmp_path):
    """A decision is sealed as it is stored: before, the seal was made over the NUL
    and the stored record held it written out, so the answer read back as forged and
    the turn waited for a person who had answered."""
    model = ScriptedModel([tool_call("ask_person", {"question": "Name?"}), text("ok")])
    runtime = questions.make(tmp_path / "q", model)
    turn = asyncio.run(
        questions.serve_until(
            runtime,
            questions.submit(runtime),
            lambda book, q: book.answer(q.id, "a\x00b", by="cli:alice"),
            deadline=60,
        )
    )
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "ok")
    assert questions.result(model) == {"ok": True, "output": "a\\x00b"}

    model = ScriptedModel([tool_call("touch", {"name": "x"}), text("done")])
    runtime = approvals.make(tmp_path / "a", model, approvals.AskEveryTime())
    turn = asyncio.run(
        approvals.serve_until(
            runtime,
            approvals.submit(runtime),
            lambda book, a: book.decide(a.id, approved=False, by="cli:alice", reason="no\x00"),
            deadline=60,
        )
    )
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "done")
    told = json.loads(model.calls[1].messages[-1].content)["error"]
    assert told == "cli:alice denied touch: no\\x00; it was not run"


def test_a_tool_call_id_holding_a_nul_is_kept_written_out(toolang_runtime):
    model = ScriptedModel([tool_call("read", {"path": "a"}, call_id="c\x001"), text("done")])
    inbox, (first,) = serve(toolang_runtime, model, "read a")
    assert inbox.get(first).status is TurnStatus.COMPLETED
    (call,) = [s for s in inbox.store.steps(first) if s.kind == "tool_call"]
    assert call.idempotency_key is not None and call.idempotency_key.endswith(":c\\x001")
    inbox.store.close()

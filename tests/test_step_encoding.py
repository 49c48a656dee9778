"""A step's data as the SQLite store encodes it: a loop's prompt is masked and encoded
once (each model call's prompt repeats the last one and adds to it), and the text
stored is the text a plain encoding of the policy's walk gives."""

from __future__ import annotations

import json

from toolang_core.models.types import Message
from toolang_core.redaction import Masked, MaskedMap, RedactionPolicy, redact, use_detectors
from toolang_core.store.json_text import dumps, dumps_data
from toolang_core.tools.types import ToolCall
from toolang_core.turn.memory import _step_data
from toolang_core.turn.trace import TEXT_LIMIT, MaskedMessages, messages_json

SECRET = "EMP-123456"


def employee_ids() -> dict[str, object]:
    return {"acme": lambda t: t.replace(SECRET, "[employee]")}


def a_prompt(turn: int) -> list[Message]:
    return [
        Message(role="system", content=f"You help {SECRET}. Turn {turn}."),
        Message(role="user", content=f"my key is sk-proj-{'b' * 30}"),
        Message(role="assistant", content=f"noted, {SECRET} — ünïcode kept"),
        Message(role="user", content="x" * (TEXT_LIMIT - 3) + f" {SECRET}"),
        Message(role="user", content=f"now {turn}"),
    ]


def test_a_masked_list_with_its_json_is_spliced_into_the_same_text_a_plain_encoding_gives():
    items = [{"role": "user", "content": 'hé "quoted"\n'}, {"role": "tool", "content": ""}]
    masked = Masked(items, dumps(items))
    chain = Masked([{"stage": "execute"}], dumps([{"stage": "execute"}]))
    for data in (
        {"messages": masked},
        {"model": "m", "messages": masked},
        {"messages": masked, "truncated": False, "response": {"text": "ö", "n": [1, 2.5]}},
        {"model": "m", "agent": "a", "messages": masked, "truncated": True, "response": {}},
        {"call": {"id": "c1"}, "chain": chain, "agent": "a", "messages": masked},
        {"chain": chain, "messages": masked},
    ):
        plain = {k: list(v) if type(v) is Masked else v for k, v in data.items()}
        assert dumps_data(data) == dumps(plain)
        assert json.loads(dumps_data(data)) == data


def test_a_masked_list_without_json_and_data_without_one_are_encoded_as_ever():
    data = {"model": "m", "messages": Masked([{"role": "user"}]), "n": 1}
    assert dumps_data(data) == dumps(data) == '{"model":"m","messages":[{"role":"user"}],"n":1}'


def test_a_masked_map_with_its_json_is_spliced_and_kept_by_the_walk():
    summary = {"plugin": "p", "request": {"query": 'hé "q"'}, "items": [{"id": 1}], "ok": True}
    masked = MaskedMap(summary, dumps(summary))
    for data in (
        {"memory": masked},
        {"agent": "a", "memory": masked, "degraded": False},
        {"agent": "a", "memory": masked, "notes": [], "model_calls": 2},
    ):
        plain = {k: dict(v) if type(v) is MaskedMap else v for k, v in data.items()}
        assert dumps_data(data) == dumps(plain)
    undo = use_detectors(employee_ids())
    try:
        raw = MaskedMap({"who": SECRET})  # as its maker vouches: not walked again
        assert redact({"memory": raw})["memory"] is raw
        assert redact([raw])[0] is raw
    finally:
        undo()
    assert dumps_data({"memory": MaskedMap({"a": 1})}) == '{"memory":{"a":1}}'


def test_a_memory_recalls_step_is_masked_and_encoded_once_as_the_walk_would():
    policy = RedactionPolicy(employee_ids())
    summary = {
        "operation": "recall",
        "request": {"query": f"who is {SECRET}?", "max_items": 8},
        "diagnostics": {"mode": "bm25", "note": f"saw {SECRET}"},
        "items": [{"id": "7", "score": 0.5, "key": f"id-{SECRET}", "kind": "note"}],
        "ok": True,
        "error": None,
    }
    lines = (f"{SECRET} likes tea (remembered 2026-01-02)", 'a "quoted" ünïcode line')
    step, alone = _step_data(policy, summary, lines)
    walked = policy.value({**summary, "rendered": list(lines)})
    assert SECRET not in dumps(walked)
    # the step's data is the walk's, stored as the same text, and never walked again
    assert dict(step) == walked and dumps_data(step) == dumps(walked)
    assert policy.value(step) is step and policy.value({"d": step})["d"] is step
    # the summary alone (the prompt build's and the prompt trace's) likewise
    without = {k: v for k, v in walked.items() if k != "rendered"}
    assert dict(alone) == without and alone.json == dumps(without)
    assert dumps_data({"memory": alone}) == dumps({"memory": without})


def test_a_loops_prompts_carry_the_json_of_the_policys_walk():
    prompt = a_prompt(1)
    call = ToolCall("c1", "lookup", {"who": SECRET, "api_key": "k", "n": 1})
    answered = [
        *prompt,
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content=f'{{"output": "{SECRET}"}}', tool_call_id="c1"),
    ]
    masked = MaskedMessages()
    undo = use_detectors(employee_ids())
    try:
        for messages in (prompt, answered, answered):  # the second adds to the first
            got, truncated = masked.json(messages)
            walked, cut = messages_json(messages)
            expected = redact(walked)
            assert (list(got), truncated) == (expected, cut) and cut
            assert got.json == dumps(expected)
            assert SECRET not in got.json
    finally:
        undo()


def test_a_prompt_whose_first_message_changed_is_walked_again():
    masked = MaskedMessages()
    prompt = a_prompt(1)
    masked.json(prompt)
    prompt[0] = Message(role="system", content="Another agent now.")  # a transfer
    got, _ = masked.json(prompt)
    assert list(got) == redact(messages_json(prompt)[0])
    assert got.json == dumps(list(got))

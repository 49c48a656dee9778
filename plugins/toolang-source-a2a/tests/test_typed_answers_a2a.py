"""Typed answers over A2A (a real `toolang run` serving A2A, a plain JSON-RPC client):
the answer's JSON Schema comes as a data part (or message metadata) and the answer goes
back as a data part; a bad schema is the spec's invalid-params error, nothing stored."""

from __future__ import annotations

import httpx
import pytest
from a2a_kit import Runtime, install_kit

from toolang_core import TurnFilter
from toolang_core.store.sqlite import SQLiteStore

CONFIG = """
[plugins.source-a2a]
listen = "127.0.0.1:{port}"
tokens = { alice = "alice-token" }
"""
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("typed")
    install_kit(root / "site")
    runtime = Runtime(root / "b", root / "site", CONFIG, plugins="source-a2a,echo-model").start()
    yield runtime
    runtime.stop()


def send(runtime: Runtime, text: str, message_id: str, *, parts=(), metadata=None):
    message = {
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": [{"text": text}, *parts],
        **({"metadata": metadata} if metadata else {}),
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return httpx.post(
        runtime.url + "/a2a/assistant",
        json=body,
        headers={"Authorization": "Bearer alice-token", "A2A-Version": "1.0"},
        timeout=120,
    ).json()


def schema_part(schema):
    return {"data": schema, "mediaType": "application/schema+json"}


def test_a_schema_in_a_data_part_gets_the_answer_as_a_data_part(served):
    task = send(served, 'json:{"n": 3}', "m-typed", parts=[schema_part(SCHEMA)])["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    (part,) = task["artifacts"][0]["parts"]
    assert part["mediaType"] == "application/json"
    assert part["data"] == {"n": 3}
    turn = SQLiteStore(served.home / ".toolang" / "toolang.db").get(task["id"])
    assert turn.meta["output_schema"] == SCHEMA
    assert turn.output == '{"n": 3}'


def test_a_schema_in_the_metadata_works_the_same_and_failures_say_invalid_output(served):
    task = send(served, "no json", "m-meta", metadata={"toolang.output_schema": SCHEMA})["result"][
        "task"
    ]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    (part,) = task["status"]["message"]["parts"]
    assert "the answer did not match the output schema of the request after 3" in part["text"]


@pytest.mark.parametrize(
    ("parts", "metadata", "expected"),
    [
        ([schema_part({"type": "strng"})], None, "not a valid JSON Schema"),
        ([], {"toolang.output_schema": "not an object"}, "expected a JSON Schema object"),
        ([schema_part(SCHEMA), schema_part(SCHEMA)], None, "give the answer's JSON Schema once"),
    ],
)
def test_a_bad_schema_is_invalid_params_and_nothing_is_stored(served, parts, metadata, expected):
    store = SQLiteStore(served.home / ".toolang" / "toolang.db")
    before = len(store.list_turns(TurnFilter(limit=10_000)))
    answer = send(
        served, "x", f"m-bad-{len(parts)}-{bool(metadata)}", parts=parts, metadata=metadata
    )
    assert answer["error"]["code"] == -32602
    assert expected in answer["error"]["message"]
    assert len(store.list_turns(TurnFilter(limit=10_000))) == before

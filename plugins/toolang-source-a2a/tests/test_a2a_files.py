"""A2A file parts as attachments, against a real `toolang run` served over A2A and a
plain a2a-sdk client: the bytes reach the agent's model and its answer comes back; a
part too large, of a type not taken, of a type the model does not take, or by url is
refused with the spec's error object, with nothing stored."""

from __future__ import annotations

import asyncio
import base64

import pytest
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, TaskState
from a2a_kit import Runtime, install_kit
from test_serving import client_for, rpc, store_of

from toolang_core import TurnFilter, attachment_refs

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
CONFIG = """
[plugins.source-a2a]
listen = "127.0.0.1:{port}"
tokens = { alice = "alice-token", bob = "bob-token" }

[attachments]
max_bytes = 1000
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("files")
    install_kit(root / "site")
    runtime = Runtime(
        root / "b", root / "site", CONFIG, plugins="source-a2a,echo-model,source-chat"
    ).start()
    yield runtime
    runtime.stop()


def test_a_file_part_reaches_the_model_and_the_answer_comes_back(served):
    async def scenario():
        _http, pending = client_for(served, "alice-token")
        client = await pending
        async with client:
            message = Message(
                message_id="m-file-1",
                role=Role.ROLE_USER,
                context_id="files-1",
                parts=[
                    Part(text="what is this?"),
                    Part(raw=PNG, filename="dot.png", media_type="text/plain"),  # a lie
                ],
            )
            events = [e async for e in client.send_message(SendMessageRequest(message=message))]
            return events[-1].task

    task = asyncio.run(scenario())
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
    assert task.artifacts[0].parts[0].text == f"echo: what is this? [dot.png image/png {len(PNG)}]"
    turn = store_of(served).get(task.id)
    (ref,) = attachment_refs(turn.meta)
    assert (ref.name, ref.media_type, ref.size) == ("dot.png", "image/png", len(PNG))
    stored = served.home / ".toolang" / "attachments" / ref.sha256[:2] / ref.sha256[2:]
    assert stored.read_bytes() == PNG


def file_body(message_id: str, part: dict) -> dict:
    message = {
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": [{"text": "look"}, part],
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("part", "code", "said"),
    [
        ({"raw": b64(PNG * 20), "filename": "big.png"}, -32602, "over the limit of 1000 bytes"),
        ({"raw": b64(b"\x00\x01junk"), "filename": "x.png"}, -32602, "application/octet-stream"),
        (
            {"raw": b64(b"%PDF-1.7\n"), "filename": "paper.pdf"},
            -32005,
            "model 'echo' does not accept attachment 'paper.pdf' of type application/pdf",
        ),
        ({"url": "http://127.0.0.1:9/x.png"}, -32005, "a file by url is not fetched"),
    ],
)
def test_a_bad_file_part_is_refused_and_nothing_is_stored(served, part, code, said):
    before = len(store_of(served).list_turns(TurnFilter(limit=10_000)))
    answer = rpc(served, file_body(f"m-bad-{code}-{len(str(part))}", part)).json()
    assert answer["error"]["code"] == code, answer
    assert said in answer["error"]["message"], answer
    assert len(store_of(served).list_turns(TurnFilter(limit=10_000))) == before

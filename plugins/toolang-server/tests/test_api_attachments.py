"""Attachments over the HTTP API, against a real ``toolang run`` with the server on:
base64 parts and uploads reach the model, the owner rule holds on fetch by hash, and
bad parts are refused at the door naming the field, with nothing submitted."""

from __future__ import annotations

import base64

from server_helpers import ANSWER_WAIT, TOKENS, open_runtime_store

from toolang_core import TurnFilter

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def no_turns(server) -> bool:
    _runtime, store = open_runtime_store(server)
    try:
        return store.list_turns(TurnFilter()) == []
    finally:
        store.close()


def test_a_base64_image_part_reaches_the_model_and_the_owner_fetches_it(token_server):
    with token_server.client(TOKENS["alice"]) as alice, token_server.client(TOKENS["bob"]) as bob:
        done = alice.post(
            "/api/turns",
            json={
                "input": "what is this?",
                "wait": ANSWER_WAIT,
                "attachments": [{"name": "dot.png", "data": b64(PNG)}],
            },
        )
        assert done.status_code == 200, done.text
        turn = done.json()
        assert turn["output"] == f"echo: what is this? [dot.png image/png {len(PNG)}]"
        (ref,) = turn["meta"]["attachments"]
        got = alice.get(f"/api/attachments/{ref['sha256']}")
        assert (got.status_code, got.content) == (200, PNG)
        assert got.headers["content-type"] == "image/png"
        refused = bob.get(f"/api/attachments/{ref['sha256']}")
        assert refused.status_code == 404
        assert "alice" not in refused.text
        # bob cannot reference alice's hash in a request of his either
        borrowed = bob.post(
            "/api/turns", json={"input": "x", "attachments": [{"sha256": ref["sha256"]}]}
        )
        assert borrowed.status_code == 404
        assert borrowed.json()["error"]["field"] == "attachments[0].sha256"


def test_an_upload_is_referenced_by_hash_and_stored_once(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        first = alice.post("/api/attachments?name=a.png", content=PNG)
        again = alice.post("/api/attachments?name=b.png", content=PNG)
        assert (first.status_code, again.status_code) == (201, 201)
        assert first.json()["sha256"] == again.json()["sha256"]
        assert first.json()["media_type"] == "image/png"
        done = alice.post(
            "/api/turns",
            json={
                "input": "and this?",
                "wait": ANSWER_WAIT,
                "attachments": [{"sha256": first.json()["sha256"]}],
            },
        )
        assert done.status_code == 200, done.text
        assert done.json()["output"].endswith(f"[b.png image/png {len(PNG)}]")  # alice's name
    stored = [p for p in (token_server.home / ".toolang" / "attachments").rglob("*") if p.is_file()]
    assert len(stored) == 1


def test_bad_parts_are_refused_naming_the_field_and_nothing_is_submitted(live_server):
    server = live_server("[attachments]\nmax_bytes = 64\n")
    with server.client() as client:
        cases = {
            "attachments[0].data": [{"name": "x.png", "data": "not base64!"}],
            "attachments[1].data": [
                {"name": "ok.png", "data": b64(PNG[:8])},
                {"name": "x.png", "data": b64(b"\x00\x01 junk")},
            ],
            "attachments[0].sha256": [{"sha256": "../../etc/passwd"}],
            "attachments[0]": [{"url": "http://example.invalid/x.png"}],
            "attachments": [{"name": "note.txt", "data": b64(b"a note\n")}],  # model: images
        }
        for field, parts in cases.items():
            refused = client.post("/api/turns", json={"input": "x", "attachments": parts})
            assert refused.status_code in (400, 404), (field, refused.text)
            assert refused.json()["error"]["field"] == field, refused.text
        over = client.post(
            "/api/turns",
            json={"input": "x", "attachments": [{"name": "big.png", "data": b64(PNG)}]},
        )
        assert over.status_code == 400
        assert "over the limit of 64 bytes" in over.json()["error"]["message"]
        too_big = client.post("/api/attachments?name=big.png", content=PNG)
        assert too_big.status_code == 413
        assert client.get("/api/attachments/nothex").status_code == 400
    assert no_turns(server)

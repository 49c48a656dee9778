"""The JSON API against a real ``toolang run`` with the server on."""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from server_helpers import (
    ANSWER_WAIT,
    TOKENS,
    last_call_text,
    open_runtime_store,
    spawn_run,
    wait_for,
)

from toolang_core import AFTER_KIND, ApprovalBook, Inbox, NewTurnRequest, TurnFilter
from toolang_core.store.backend import not_thread_owner
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.testing.live_server import parse_sse


def open_store(server):
    return open_runtime_store(server)


# -- auth ------------------------------------------------------------------------------


def test_without_a_token_the_api_refuses_and_health_stays_open(token_server):
    with token_server.client() as anonymous:
        refused = anonymous.get("/api/turns")
        assert refused.status_code == 401
        assert refused.json()["error"]["field"] == "Authorization"
        assert anonymous.get("/api/health").json()["ok"] is True
    with token_server.client("not-a-token-at-all") as wrong:
        assert wrong.get("/api/status").status_code == 401
        assert wrong.post("/api/turns", json={"input": "x"}).status_code == 401
    _runtime, store = open_store(token_server)
    try:
        assert store.list_turns(TurnFilter()) == []  # nothing stored for a refused write
    finally:
        store.close()


def test_a_server_without_tokens_says_it_serves_loopback_only(open_server):
    with open_server.client() as client:
        assert client.get("/api/status").json()["admitting"] is True
    assert "no tokens: loopback callers only" in open_server.stop()


# -- turns -------------------------------------------------------------------------------


def test_submit_wait_show_steps_trace_and_list_a_chat_turn(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        done = alice.post("/api/turns", json={"input": "hello there", "wait": ANSWER_WAIT})
        assert done.status_code == 200, done.text
        turn = done.json()
        assert turn["status"] == "completed"
        assert turn["output"] == "echo: hello there"
        assert (turn["sender"], turn["owner"], turn["channel"]) == ("http:alice", "alice", "http")
        assert alice.get(f"/api/turns/{turn['id']}").json()["output"] == "echo: hello there"
        kinds = [s["kind"] for s in alice.get(f"/api/turns/{turn['id']}/steps").json()]
        assert "model_call" in kinds
        trace = alice.get(f"/api/turns/{turn['id']}/trace").json()
        assert [s["stage"] for s in trace["after"]] == [
            "turn_state",
            "prompt_trace",
            "memory_write",
            "events",
            "delivery",
        ]
        listed = alice.get("/api/turns", params={"thread_id": "http:alice"}).json()
        assert [t["id"] for t in listed] == [turn["id"]]
        threads = alice.get("/api/threads").json()
        assert [t["thread_id"] for t in threads] == ["http:alice"]
        history = alice.get("/api/threads/http:alice").json()
        assert [t["input"] for t in history["turns"]] == ["hello there"]
    with token_server.client(TOKENS["bob"]) as bob:
        assert bob.get(f"/api/turns/{turn['id']}").status_code == 404
        assert bob.get("/api/turns").json() == []
        assert bob.get("/api/threads/http:alice").status_code == 404


def test_a_submitters_w3c_trace_context_is_kept_with_the_turn_request(token_server):
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    with token_server.client(TOKENS["alice"]) as alice:
        traced = alice.post(
            "/api/turns",
            json={"input": "traced", "wait": 20},
            headers={"traceparent": parent, "tracestate": "vendor=abc"},
        ).json()
        assert traced["meta"]["trace_context"] == {
            "traceparent": parent,
            "tracestate": "vendor=abc",
        }
        malformed = alice.post(
            "/api/turns",
            json={"input": "malformed", "wait": 20},
            headers={"traceparent": parent.replace("00f067aa0ba902b7", "0" * 16)},
        ).json()
        assert "trace_context" not in malformed["meta"]


def test_submit_without_wait_is_accepted_then_cancel_of_a_finished_turn_changes_nothing(
    token_server,
):
    with token_server.client(TOKENS["alice"]) as alice:
        accepted = alice.post("/api/turns", json={"input": "later", "thread_id": "chat:x"})
        assert accepted.status_code == 202
        turn_id = accepted.json()["turn_id"]
        wait_for(lambda: alice.get(f"/api/turns/{turn_id}").json()["status"] == "completed")
        canceled = alice.post(f"/api/turns/{turn_id}/cancel").json()
        assert canceled["changed"] == {}


def test_cancel_a_running_turn(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        turn_id = alice.post(
            "/api/turns", json={"input": '/tool slow_wait {"seconds": 60}'}
        ).json()["turn_id"]
        wait_for(lambda: alice.get(f"/api/turns/{turn_id}").json()["status"] == "running")
        alice.post(f"/api/turns/{turn_id}/cancel").raise_for_status()
        wait_for(lambda: alice.get(f"/api/turns/{turn_id}").json()["status"] == "canceled")


# -- streaming ---------------------------------------------------------------------------


def test_streamed_text_joins_to_the_stored_output_and_events_come_in_order(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        # Longer than the redaction's hold (64 characters): it streams in many deltas.
        words = " ".join(f"word{i}" for i in range(30))
        with alice.stream("POST", "/api/turns", json={"input": words, "stream": True}) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            turn_id = response.headers["x-toolang-turn"]
            events = parse_sse(response.read().decode())
        kinds = [k for k, _ in events]
        assert kinds[0] == "admitted" and kinds[-1] == "finished"
        assert kinds.index("text") < kinds.index("finished")
        assert sum(k == "text" for k in kinds) >= 4  # word by word, a few words behind
        stored = alice.get(f"/api/turns/{turn_id}").json()["output"]
        assert last_call_text(events) == stored == f"echo: {words}"


def test_a_disconnecting_client_does_not_cancel_and_a_second_one_can_attach(live_server):
    server = live_server(env={"TL_WORD_DELAY": "0.05"})
    words = " ".join(f"w{i}" for i in range(40))
    body = {"input": words, "stream": True}
    with server.client() as first, first.stream("POST", "/api/turns", json=body) as r:
        turn_id = r.headers["x-toolang-turn"]
        for line in r.iter_lines():
            if line.startswith("event: text"):
                break  # leave mid-stream: the connection closes
    with server.client() as second:
        with second.stream("GET", f"/api/turns/{turn_id}/events") as r:
            events = parse_sse(r.read().decode())
        stored = second.get(f"/api/turns/{turn_id}").json()
    assert stored["status"] == "completed"
    assert events[-1][1]["status"] == "completed"
    assert last_call_text(events) == stored["output"] == f"echo: {words}"


# -- approvals ---------------------------------------------------------------------------


def test_a_pending_tool_call_is_approved_over_http_and_the_turn_completes(token_server):
    with token_server.client(TOKENS["alice"]) as alice, token_server.client(TOKENS["bob"]) as bob:
        turn_id = alice.post(
            "/api/turns", json={"input": '/tool guarded_write {"name": "a.txt", "text": "hi"}'}
        ).json()["turn_id"]
        pending = wait_for(lambda: alice.get("/api/approvals", params={"status": "pending"}).json())
        (approval,) = pending
        assert approval["tool"] == "guarded_write" and approval["turn_id"] == turn_id
        assert bob.get("/api/approvals").json() == []  # not bob's turn
        assert bob.post(f"/api/approvals/{approval['id']}/approve").status_code == 404
        decided = alice.post(
            f"/api/approvals/{approval['id']}/approve", json={"reason": "fine"}
        ).json()
        assert (decided["status"], decided["decided_by"]) == ("approved", "token:alice")
        again = alice.post(f"/api/approvals/{approval['id']}/deny")
        assert again.status_code == 409 and again.json()["error"]["field"] == "approval_id"
        wait_for(lambda: alice.get(f"/api/turns/{turn_id}").json()["status"] == "completed")
    assert (token_server.home / "out" / "a.txt").read_text() == "hi"
    _runtime, store = open_store(token_server)
    try:
        (stored,) = ApprovalBook(store).list()
        assert stored.decided_by == "token:alice"
    finally:
        store.close()


def test_deny_tells_the_model_and_the_turn_goes_on(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        turn_id = alice.post(
            "/api/turns", json={"input": '/tool guarded_write {"name": "b.txt", "text": "x"}'}
        ).json()["turn_id"]
        (approval,) = wait_for(lambda: alice.get("/api/approvals?status=pending").json())
        assert alice.post(f"/api/approvals/{approval['id']}/deny").json()["status"] == "denied"
        turn = wait_for(
            lambda: (t := alice.get(f"/api/turns/{turn_id}").json())["status"] == "completed" and t
        )
        assert "denied" in turn["output"]
    assert not (token_server.home / "out" / "b.txt").exists()


# -- task runs ---------------------------------------------------------------------------


def test_task_runs_are_owner_checked_listed_read_waited_and_canceled(token_server):
    run_id = spawn_run(token_server, "alice", '/tool slow_wait {"seconds": 60}')
    with token_server.client(TOKENS["alice"]) as alice, token_server.client(TOKENS["bob"]) as bob:
        assert [r["id"] for r in alice.get("/api/task-runs").json()] == [run_id]
        assert bob.get("/api/task-runs").json() == []
        for path in ("", "/transcript", "/wait?timeout=0"):
            refused = bob.get(f"/api/task-runs/{run_id}{path}")
            assert refused.status_code == 404, path
            assert refused.json()["error"]["field"] == "run_id"
        assert bob.post(f"/api/task-runs/{run_id}/cancel").status_code == 404
        wait_for(lambda: alice.get(f"/api/task-runs/{run_id}").json()["status"] == "running")
        still = alice.get(f"/api/task-runs/{run_id}/wait", params={"timeout": 0})
        assert still.status_code == 202
        transcript = alice.get(f"/api/task-runs/{run_id}/transcript").json()
        assert transcript["id"] == run_id and transcript["status"] == "running"
        assert transcript["events"][0]["content"].startswith("/tool slow_wait")
        canceled = alice.post(f"/api/task-runs/{run_id}/cancel").json()
        assert canceled["changed"] is True
        done = alice.get(f"/api/task-runs/{run_id}/wait", params={"timeout": 20})
        assert done.json()["status"] == "canceled"
    _runtime, store = open_store(token_server)
    try:
        assert store.get(run_id).status.value == "canceled"
    finally:
        store.close()


# -- catalog ----------------------------------------------------------------------------


def test_status_agents_plugins_hooks_and_memory(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        # the server listens (server.url) a moment before the runtime admits: on a busy
        # machine the first look can come in between
        status = wait_for(
            lambda: (s := alice.get("/api/status").json())["admitting"] and s,
            what="the runtime admitting",
        )
        assert status["admitting"] is True and status["run_id"]
        agents = alice.get("/api/agents").json()
        assert any(a["name"] == "assistant" and "slow_wait" in a["tools"] for a in agents)
        assert "slow_wait" in str(alice.get("/api/agents/tools").json())
        plugins = {p["name"]: p for p in alice.get("/api/plugins").json()}
        assert "toolang_register_routes" in plugins["server"]["hooks"]
        families = {f["family"]: f for f in alice.get("/api/hooks").json()}
        routes = families["routes"]["hooks"][0]
        assert routes == {"hook": "toolang_register_routes", "plugins": ["server"]}
        chain = [e.get("stage") for e in families["tool-hooks"]["hooks"] if "stage" in e]
        assert chain[:3] == ["SecurityFilter", "ApprovalGate", "execute"]
        alice.post("/api/turns", json={"input": "the parrot is called Polly", "wait": ANSWER_WAIT})
        found = alice.get("/api/memory/search", params={"q": "parrot", "thread_id": "http:alice"})
        assert found.status_code == 200, found.text
        assert any("Polly" in item["text"] for item in found.json()["items"])


def texts(found: httpx.Response) -> list[str]:
    assert found.status_code == 200, found.text
    return [item["text"] for item in found.json()["items"]]


def test_each_owner_searches_their_own_memory_and_never_the_others(token_server):
    """Memory belongs to an owner: a token user finds what their own turns left, with
    or without naming a thread, and nothing of another owner's — whose thread they may
    not name either (the owner rule's one refusal, 403)."""
    with token_server.client(TOKENS["alice"]) as alice, token_server.client(TOKENS["bob"]) as bob:
        said = alice.post(
            "/api/turns", json={"input": "the parrot is called Polly", "wait": ANSWER_WAIT}
        )
        assert said.json()["status"] == "completed", said.text
        said = bob.post(
            "/api/turns", json={"input": "the parrot is called Rex", "wait": ANSWER_WAIT}
        )
        assert said.json()["status"] == "completed", said.text
        search = "/api/memory/search"
        for params in ({"q": "parrot"}, {"q": "parrot", "thread_id": "http:alice"}):
            mine = texts(alice.get(search, params=params))
            assert any("Polly" in t for t in mine) and not any("Rex" in t for t in mine)
        for params in ({"q": "parrot"}, {"q": "parrot", "thread_id": "http:bob"}):
            mine = texts(bob.get(search, params=params))
            assert any("Rex" in t for t in mine) and not any("Polly" in t for t in mine)
        theirs = bob.get(search, params={"q": "parrot", "thread_id": "http:alice"})
        assert theirs.status_code == 403, theirs.text
        assert theirs.json()["error"]["field"] == "thread_id"
        assert "thread 'http:alice' belongs to another owner" in theirs.json()["error"]["message"]


def test_every_route_is_in_the_openapi_document(token_server):
    with token_server.client() as anonymous:
        document = anonymous.get("/api/openapi.json").json()
    with token_server.client(TOKENS["alice"]) as alice:
        plugins = alice.get("/api/plugins").json()
    assert document["openapi"].startswith("3.")
    import re

    from toolang_server import toolang_register_routes

    registered = []
    toolang_register_routes(
        lambda path, endpoint, methods=("GET",), **kw: registered.append(
            (re.sub(r"\{(\w+)(:\w+)?\}", r"{\1}", path), methods)
        )
    )
    assert registered
    for path, methods in registered:
        assert path in document["paths"], path
        for method in methods:
            assert method.lower() in document["paths"][path], (method, path)
            assert document["paths"][path][method.lower()]["summary"], (method, path)
    assert plugins


def test_the_api_url_run_prints_answers_with_the_routes_not_a_404(token_server):
    with token_server.client() as anonymous:
        index = anonymous.get("/api")
    assert index.status_code == 200, index.text
    assert index.json()["openapi"] == "/api/openapi.json"
    routes = index.json()["routes"]
    assert "POST /api/turns" in routes and "GET /api/openapi.json" in routes
    assert not [r for r in routes if not r.split(" ", 1)[1].startswith("/api")]


# -- bad input --------------------------------------------------------------------------


BAD_SUBMISSIONS = [
    ({}, "input"),
    ({"input": 3}, "input"),
    ({"input": "   "}, "input"),
    ({"input": "x", "thread_id": "bad thread id!"}, "thread_id"),
    ({"input": "x", "source": "task"}, "source"),
    ({"input": "x", "source": "will"}, "source"),
    ({"input": "x", "agent": "nobody"}, "agent"),
    ({"input": "x", "strategy": "sometimes"}, "strategy"),
    ({"input": "x", "stream": "yes"}, "stream"),
    ({"input": "x", "wait": -1}, "wait"),
    ({"input": "x", "wait": 10_000}, "wait"),
    ({"input": "x", "stream": True, "wait": 5}, "wait"),
    ({"input": "x", "colour": "blue"}, "colour"),
    ({"input": "x", "timeout_seconds": "soon"}, "timeout_seconds"),
]


def test_bad_submissions_are_refused_naming_the_field_and_nothing_is_stored(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        for body, field in BAD_SUBMISSIONS:
            response = alice.post("/api/turns", json=body)
            assert response.status_code == 400, (body, response.text)
            error = response.json()["error"]
            assert error["field"] == field, (body, error)
            assert error["expected"] and error["message"], (body, error)
        not_json = alice.post(
            "/api/turns", content=b"{nope", headers={"content-type": "application/json"}
        )
        assert not_json.status_code == 400 and not_json.json()["error"]["field"] == "body"
        a_list = alice.post("/api/turns", json=["input"])
        assert a_list.status_code == 400 and "not an object" in a_list.json()["error"]["message"]
        for raw, field, said in [
            (b'{"input": "x", "meta": {"rate": NaN}}', "body", "NaN is not a JSON value"),
            (b'{"input": "x", "timeout_seconds": Infinity}', "body", "Infinity is not a JSON"),
            (b'{"input": "a\\u0000b"}', "input", "input: the text holds a NUL character"),
            (b'{"input": "x", "meta": {"k": ["ok", "\\u0000"]}}', "meta", "meta.k[1]: the"),
        ]:
            refused = alice.post(
                "/api/turns", content=raw, headers={"content-type": "application/json"}
            )
            assert refused.status_code == 400, (raw, refused.text)
            error = refused.json()["error"]
            assert (error["field"], said in error["message"]) == (field, True), (raw, error)
        # the six characters \u0000 are text, not a NUL
        escaped = alice.post("/api/turns", json={"input": "\\u0000", "wait": ANSWER_WAIT})
        assert escaped.status_code == 200, escaped.text
        huge = alice.post("/api/turns", json={"input": "x" * 1_100_000})
        assert huge.status_code == 413 and huge.json()["error"]["field"] == "body"
        for path, field in [
            ("/api/turns/nope", "id"),
            ("/api/task-runs/nope", "run_id"),
            ("/api/nowhere", "path"),
            ("/api/threads/chat:none", "thread_id"),
        ]:
            missing = alice.get(path)
            assert missing.status_code == 404, path
            assert missing.json()["error"]["field"] == field, path
        assert (
            alice.get("/api/turns", params={"status": "sleepy"}).json()["error"]["field"]
            == "status"
        )
        assert alice.get("/api/turns", params={"limit": "many"}).json()["error"]["field"] == "limit"
        assert alice.delete("/api/turns").status_code == 405
        # nothing was stored but the one turn whose input was the escape's six characters
        assert [t["input"] for t in alice.get("/api/turns").json()] == ["\\u0000"]


DEEP_JSON = ("[" * 100_000 + "]" * 100_000).encode()
"""A body nested 100,000 deep: past the JSON decoder's depth, and under the size limit."""


def test_a_body_nested_100000_deep_is_a_400_on_every_json_route(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        for path in ("/api/turns", "/api/approvals/x/approve", "/api/approvals/x/deny"):
            for body in (DEEP_JSON, b'{"input": ' + DEEP_JSON + b"}"):
                refused = alice.post(
                    path, content=body, headers={"content-type": "application/json"}
                )
                assert refused.status_code == 400, (path, refused.text)
                error = refused.json()["error"]
                assert error["field"] == "body" and "nested too deeply" in error["message"]
        assert alice.get("/api/turns").json() == []  # nothing was stored


# -- concurrency ------------------------------------------------------------------------


def test_twenty_concurrent_clients_lose_nothing(token_server):
    def client_work(index: int) -> list[str]:
        with httpx.Client(
            base_url=token_server.url,
            timeout=ANSWER_WAIT + 30,
            headers={"Authorization": f"Bearer {TOKENS['alice']}"},
        ) as client:
            ids = []
            for n in range(5):
                r = client.post(
                    "/api/turns",
                    json={
                        "input": f"c{index} m{n}",
                        "thread_id": f"chat:c{index}",
                        "wait": ANSWER_WAIT,
                    },
                )
                assert r.status_code == 200, r.text
                ids.append(r.json()["id"])
            return ids

    with ThreadPoolExecutor(20) as pool:
        ids = [i for batch in pool.map(client_work, range(20)) for i in batch]
    assert len(set(ids)) == 100
    _runtime, store = open_store(token_server)
    try:
        turns = store.list_turns(TurnFilter(owner="alice", limit=1000))
    finally:
        store.close()
    assert len(turns) == 100
    assert all(t.status.value == "completed" for t in turns)
    assert {t.output for t in turns} == {f"echo: c{i} m{n}" for i in range(20) for n in range(5)}
    assert json.dumps(sorted(t.id for t in turns)) == json.dumps(sorted(ids))


def test_an_owner_cannot_submit_to_another_owners_thread(token_server):
    with token_server.client(TOKENS["alice"]) as alice, token_server.client(TOKENS["bob"]) as bob:
        alice.post(
            "/api/turns",
            json={"input": "my secret plan", "thread_id": "chat:a", "wait": ANSWER_WAIT},
        )
        refused = bob.post(
            "/api/turns", json={"input": "what was said here?", "thread_id": "chat:a"}
        )
        assert refused.status_code == 403
        assert refused.json()["error"]["field"] == "thread_id"
        assert bob.get("/api/turns").json() == []  # nothing stored for bob
        assert len(alice.get("/api/turns", params={"thread_id": "chat:a"}).json()) == 1


def test_the_operator_is_refused_an_owners_thread_with_the_same_403(open_server):
    """The one owner rule: the operator (a caller without a token) is an owner of its
    own, refused an owner's thread with the status and message every door gives."""
    runtime, store = open_store(open_server)
    try:
        Inbox(store, runtime.policy).submit(
            NewTurnRequest(source="chat", thread_id="chat:ada", input="mine", owner="ada")
        )
    finally:
        store.close()
    with open_server.client() as operator:
        refused = operator.post("/api/turns", json={"input": "hello", "thread_id": "chat:ada"})
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["message"] == str(not_thread_owner("chat:ada", None))
        assert refused.json()["error"]["field"] == "thread_id"
        assert [t["owner"] for t in operator.get("/api/turns").json()] == ["ada"]


def test_the_operator_reads_every_owners_threads_and_an_owner_only_its_own(token_server):
    """The read rule on every route that reads a thread (toolang_core.store.owners):
    the thread list, a thread's page, a memory search of it and its console page. The
    operator (the local credential) reads every owner's; an owner only its own — another
    owner's thread is not listed, not found, and refused to a search or a page (403)."""
    with token_server.client(TOKENS["alice"]) as alice, token_server.client(TOKENS["bob"]) as bob:
        for caller, thread in ((alice, "chat:a"), (bob, "chat:b")):
            said = caller.post(
                "/api/turns", json={"input": "hello", "thread_id": thread, "wait": ANSWER_WAIT}
            )
            assert said.json()["status"] == "completed", said.text
        with token_server.client(token_server.operator_credential()) as operator:
            listed = {
                name: sorted(t["thread_id"] for t in caller.get("/api/threads").json())
                for name, caller in (("alice", alice), ("bob", bob), ("operator", operator))
            }
            assert listed == {
                "alice": ["chat:a"],
                "bob": ["chat:b"],
                "operator": ["chat:a", "chat:b"],
            }
            assert operator.get("/api/threads/chat:a").status_code == 200
            assert alice.get("/api/threads/chat:a").json()["thread"]["owner"] == "alice"
            assert bob.get("/api/threads/chat:a").status_code == 404
            search = {"q": "hello", "thread_id": "chat:a"}
            assert operator.get("/api/memory/search", params=search).status_code == 200
            assert alice.get("/api/memory/search", params=search).status_code == 200
            refused = bob.get("/api/memory/search", params=search)
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"]["message"] == str(not_thread_owner("chat:a", "bob"))
            assert operator.get("/chat/chat:a").status_code == 200
            assert bob.get("/chat/chat:a").status_code == 403


def test_cors_is_off_and_console_refusals_are_pages(open_server):
    with open_server.client() as client:
        preflight = client.options(
            "/api/turns",
            headers={
                "Origin": "https://elsewhere.example",
                "Access-Control-Request-Method": "POST",
            },
        )
        assert "access-control-allow-origin" not in preflight.headers
        answer = client.get("/api/status", headers={"Origin": "https://elsewhere.example"})
        assert "access-control-allow-origin" not in answer.headers
        page = client.get("/turns/nope")
        assert page.status_code == 404
        assert page.headers["content-type"].startswith("text/html")
        assert "no turn request with id &#39;nope&#39;" in page.text


def test_a_web_page_of_another_site_cannot_drive_the_local_runtime(open_server):
    with open_server.client() as client:
        forged = client.post(
            "/api/turns",
            content=b'{"input": "rm -rf"}',
            headers={"Origin": "https://evil.example", "Content-Type": "text/plain"},
        )
        assert forged.status_code == 403 and forged.json()["error"]["field"] == "Origin"
        rebound = client.get("/api/status", headers={"Host": "evil.example"})
        assert rebound.status_code == 403 and rebound.json()["error"]["field"] == "Host"
        with_port = client.get("/api/status", headers={"Host": "evil.example:80"})
        assert with_port.status_code == 403, with_port.text
        for name in ("LOCALHOST:1", "[::1]:8765", "127.0.0.1"):
            named = client.get("/api/status", headers={"Host": name})
            assert named.status_code == 200, (name, named.text)
        same_site = client.post(
            "/api/turns",
            json={"input": "fine", "wait": ANSWER_WAIT},
            headers={"Origin": open_server.url},
        )
        assert same_site.status_code == 200, same_site.text
        inputs = [t["input"] for t in client.get("/api/turns").json()]
    assert inputs == ["fine"]  # nothing was stored for the forged request


def test_the_console_shows_all_five_after_turn_stages_the_skipped_ones_with_why(live_server):
    # A turn with no event subscriber records no `events` stage (the runtime records only
    # the stages that had something to do); the console still shows the five in order,
    # that one marked skipped and why — docs/console.md promised five and showed four.
    server = live_server(env={"TL_NO_SUBSCRIBER": "1"})
    with server.client() as client:
        turn = client.post("/api/turns", json={"input": "trace me", "wait": ANSWER_WAIT}).json()
        trace = f"/api/turns/{turn['id']}/trace"

        def recorded():
            after = client.get(trace).json()["after"]
            return None if any(s.get("unknown") for s in after) else after

        stages = wait_for(recorded, what="the after-turn stages recorded")
        assert [s["stage"] for s in stages] == [
            "turn_state",
            "prompt_trace",
            "memory_write",
            "delivery",
        ]
        page = client.get(f"/turns/{turn['id']}").text
        # The after-record as the turn's commit left it, before stages 3-5 (a crash
        # after it): they show as not recorded, never as having had nothing to do.
        store = SQLiteStore(server.home / ".toolang" / "toolang.db")
        try:
            begun = {"stages": stages[:2], "unfinished": ["memory_write", "delivery"]}
            store.put_record(AFTER_KIND, turn["id"], begun, now=time.time())
        finally:
            store.close()
        after = client.get(trace).json()["after"]
        assert [(s["stage"], s.get("unknown", False)) for s in after] == [
            ("turn_state", False),
            ("prompt_trace", False),
            ("memory_write", True),
            ("delivery", True),
        ]
        unknown_page = client.get(f"/turns/{turn['id']}").text
    unknown = re.findall(r'<tr data-stage="(\w+)">(.*?)</tr>', unknown_page, flags=re.S)
    assert [stage for stage, html in unknown if ">unknown<" in html] == ["memory_write", "delivery"]
    assert all("not recorded" in html for stage, html in unknown if ">unknown<" in html)
    rows = re.findall(r'<tr data-stage="(\w+)"( data-skipped)?>(.*?)</tr>', page, flags=re.S)
    assert [stage for stage, _, _ in rows] == [
        "turn_state",
        "prompt_trace",
        "memory_write",
        "events",
        "delivery",
    ]
    assert [stage for stage, skipped, _ in rows if skipped] == ["events"]
    (events,) = [html for stage, _, html in rows if stage == "events"]
    assert "skipped" in events and "no event subscriber (toolang_on_event) in this run" in events


def test_a_chosen_id_shows_only_ones_own_turn(token_server):
    """An id sent again answers with the turn that has it: the caller's own, never
    another owner's (its state, answer or events)."""
    with token_server.client(TOKENS["alice"]) as alice, token_server.client(TOKENS["bob"]) as bob:
        made = alice.post(
            "/api/turns", json={"input": "my PIN plan", "id": "plan-1", "wait": ANSWER_WAIT}
        )
        assert made.status_code == 200, made.text
        again = alice.post("/api/turns", json={"input": "my PIN plan", "id": "plan-1"})
        assert again.json()["status"] == "exists"
        for body in (
            {"input": "x", "id": "plan-1"},
            {"input": "x", "id": "plan-1", "wait": ANSWER_WAIT},
            {"input": "x", "id": "plan-1", "stream": True},
        ):
            refused = bob.post("/api/turns", json=body)
            assert refused.status_code == 409, refused.text
            assert refused.json()["error"]["field"] == "id"
            assert "PIN" not in refused.text
        assert bob.get("/api/turns").json() == []  # nothing stored for bob
        shown = alice.get("/api/turns/plan-1").json()
        assert (shown["owner"], shown["input"]) == ("alice", "my PIN plan")


def test_a_chosen_id_may_not_take_a_prefix_the_runtime_derives_per_owner(token_server):
    with token_server.client(TOKENS["bob"]) as bob:
        for chosen in ("idem-0123", "a2a-0123", "mcp-0123"):
            refused = bob.post("/api/turns", json={"input": "x", "id": chosen})
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["field"] == "id"
        assert bob.get("/api/turns").json() == []

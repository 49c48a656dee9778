"""Spend limits over HTTP: a request's own ``limits``, the turn they stop, and
``GET /api/usage`` under the owner rule (the test model reports 12 tokens an answer)."""

from __future__ import annotations

from server_helpers import ANSWER_WAIT, TOKEN_CONFIG, TOKENS, spawn_run


def test_usage_is_each_owners_own_and_a_request_limit_stops_its_turn(live_server):
    server = live_server(TOKEN_CONFIG, env={"BOB_TOKEN": TOKENS["bob"]})
    with server.client(TOKENS["alice"]) as alice, server.client(TOKENS["bob"]) as bob:
        said = alice.post("/api/turns", json={"input": "hello", "wait": ANSWER_WAIT}).json()
        assert said["status"] == "completed"
        bobs = bob.post("/api/turns", json={"input": "hi", "wait": ANSWER_WAIT}).json()
        assert bobs["status"] == "completed"

        mine = alice.get("/api/usage").json()
        assert (mine["total_tokens"], mine["input_tokens"], mine["model_calls"]) == (12, 10, 1)
        assert "owners" not in mine  # the operator's view only
        assert alice.get("/api/usage", params={"turn_id": said["id"]}).json()["total_tokens"] == 12
        # another owner's turn or thread adds nothing to what alice can read
        theirs = alice.get("/api/usage", params={"thread_id": bobs["thread_id"]}).json()
        assert (theirs["total_tokens"], theirs["model_calls"]) == (0, 0)
        assert alice.get("/api/usage", params={"since": "2e9"}).json()["model_calls"] == 0

        stopped = alice.post(
            "/api/turns",
            json={
                "input": '/tool slow_wait {"seconds": 60}',
                "limits": {"max_model_calls": 1},
                "wait": ANSWER_WAIT,
            },
        ).json()
        assert (stopped["status"], stopped["outcome"]) == ("failed", "usage_limit")
        assert "(max_model_calls = 1)" in stopped["error"]
        assert alice.get("/api/usage").json()["model_calls"] == 2
        assert bob.get("/api/usage").json()["total_tokens"] == 12


def test_bad_limits_and_times_are_refused_naming_the_field(live_server):
    server = live_server()
    with server.client() as operator:
        for limits, message in (
            ({"max_model_calls": 0}, "limits.max_model_calls: expected an integer >= 1"),
            ({"max_tokens_per_turn": "9"}, "limits.max_tokens_per_turn: expected an integer"),
            ({"owner_daily_tokens": 9}, "limits.owner_daily_tokens: unknown limit"),
            ([1], "limits: expected a table"),
        ):
            refused = operator.post("/api/turns", json={"input": "x", "limits": limits})
            assert refused.status_code == 400
            error = refused.json()["error"]
            assert (error["field"], error["message"].startswith(message)) == ("limits", True)
        bad = operator.get("/api/usage", params={"since": "yesterday"})
        assert (bad.status_code, bad.json()["error"]["field"]) == (400, "since")


def test_the_operator_sees_every_owners_usage(live_server):
    server = live_server()
    with server.client() as operator:
        said = operator.post("/api/turns", json={"input": "hello", "wait": ANSWER_WAIT})
        assert said.json()["status"] == "completed"
        seen = operator.get("/api/usage").json()
        assert seen["total_tokens"] == 12
        assert list(seen["owners"]) == [""]  # the operator's own turns have no owner
        assert seen["owners"][""]["total_tokens"] == 12


def test_a_task_runs_usage_shows_on_the_run_and_in_usage_for_its_owner_only(token_server):
    run_id = spawn_run(token_server, "alice", "hello")
    with token_server.client(TOKENS["alice"]) as alice, token_server.client(TOKENS["bob"]) as bob:
        done = alice.get(f"/api/task-runs/{run_id}/wait", params={"timeout": ANSWER_WAIT})
        assert done.json()["status"] == "completed"
        run = alice.get(f"/api/task-runs/{run_id}").json()
        assert (run["usage"]["total_tokens"], run["usage"]["model_calls"]) == (12, 1)
        assert done.json()["usage"] == run["usage"]
        summed = alice.get("/api/usage", params={"task_run": run_id, "since": "0"}).json()
        assert {k: summed[k] for k in run["usage"]} == run["usage"]
        assert bob.get(f"/api/task-runs/{run_id}").status_code == 404
        theirs = bob.get("/api/usage", params={"task_run": run_id, "since": "0"}).json()
        assert (theirs["total_tokens"], theirs["model_calls"]) == (0, 0)
        assert "usage" not in alice.get("/api/task-runs").json()[0]  # the single run's view

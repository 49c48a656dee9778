"""Fork and replay over HTTP: ``POST /api/turns/{id}/fork`` and ``/replay`` on a real
``toolang run``, owner-checked with tokens."""

from __future__ import annotations

from server_helpers import ANSWER_WAIT, TOKENS

RECORDED = '/tool slow_wait {"seconds": 0}'


def test_fork_and_replay_a_turn_over_http_and_other_owners_are_refused(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        turn = alice.post("/api/turns", json={"input": RECORDED, "wait": ANSWER_WAIT}).json()
        assert turn["status"] == "completed", turn
        thread = turn["thread_id"]

        with token_server.client(TOKENS["bob"]) as bob:  # another owner: not even seen
            for action in ("fork", "replay"):
                refused = bob.post(f"/api/turns/{turn['id']}/{action}", json={"model": "testmodel"})
                assert refused.status_code == 404, refused.text
        with token_server.client(token_server.operator_credential()) as operator:
            refused = operator.post(f"/api/turns/{turn['id']}/replay", json={"model": "testmodel"})
            assert refused.status_code == 403, refused.text  # seen, not the operator's to use

        bad = alice.post(f"/api/turns/{turn['id']}/replay", json={"model": "nope"})
        assert (bad.status_code, bad.json()["error"]["field"]) == (400, "model")

        replayed = alice.post(
            f"/api/turns/{turn['id']}/replay", json={"model": "testmodel", "wait": ANSWER_WAIT}
        )
        assert replayed.status_code == 200, replayed.text
        report = replayed.json()
        assert report["status"] == "completed"
        assert [(c["name"], c["answer"]) for c in report["calls"]] == [("slow_wait", "recorded")]
        assert report["thread_id"].startswith("replay:") and report["stopped"] == []

        forked = alice.post(
            f"/api/turns/{turn['id']}/fork", json={"input": "hello again", "wait": ANSWER_WAIT}
        )
        assert forked.status_code == 200, forked.text
        shown = forked.json()
        assert shown["turn"]["output"] == "echo: hello again"
        assert shown["turn"]["owner"] == "alice"
        assert shown["fork"]["origin"] == thread and shown["fork"]["at_turn"] == turn["id"]

        original = alice.get(f"/api/threads/{thread}").json()
        assert [t["id"] for t in original["turns"]] == [turn["id"]]  # untouched

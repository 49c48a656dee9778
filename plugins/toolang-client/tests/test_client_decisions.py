"""Approvals inline in a stream, and task runs cancelled, through the client."""

from __future__ import annotations

from server_helpers import TOKENS, spawn_run, wait_for

from toolang_client import Client, models


def test_approve_inline_from_the_stream(served):
    with Client(served.url, token=TOKENS["alice"]) as client:
        asked = '/tool guarded_write {"name": "inline.txt", "text": "hi"}'
        approved = []
        with client.stream(asked, thread_id="chat:ok") as stream:
            for event in stream:
                if isinstance(event, models.ApprovalEvent):
                    approved.append(client.approve(event.approval_id, reason="fine"))
        assert [(a.status, a.decided_by) for a in approved] == [("approved", "token:alice")]
        assert stream.finished is not None and stream.finished.status == "completed"
        assert (served.home / "out" / "inline.txt").read_text() == "hi"


def test_a_task_run_is_cancelled(served):
    run_id = spawn_run(served, "alice", '/tool slow_wait {"seconds": 60}')
    with Client(served.url, token=TOKENS["alice"]) as client:
        wait_for(lambda: client.task_run(run_id).status == "running", what="the run runs")
        canceled = client.cancel_task_run(run_id)
        assert canceled.changed and canceled.run.id == run_id
        final = wait_for(
            lambda: (run := client.wait_task_run(run_id, timeout=5)).status == "canceled" and run,
            what="the run is canceled",
        )
        assert final.status == "canceled"
        assert [r.id for r in client.task_runs(status="canceled")] == [run_id]

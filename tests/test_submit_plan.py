"""The backend-neutral submit decisions both store backends carry out (the store
conformance suite checks the backends do; these check the decisions themselves)."""

from __future__ import annotations

import pytest

from toolang_core.store import NewTurnRequest, SubmitRejected, SubmitRules
from toolang_core.store.backend import ThreadState, plan_submit

REQUEST = NewTurnRequest(source="chat", thread_id="t1", input="hi", owner="ann")


def rules(strategy: str) -> SubmitRules:
    return SubmitRules(thread_group="chat", priority=0, strategy=strategy)  # type: ignore[arg-type]


def thread(running: str | None = None, head: str | None = None, **kw: str | None) -> ThreadState:
    return ThreadState(kw.get("group", "chat"), kw.get("owner", "ann"), running, head)


def test_a_new_thread_is_queued_plainly_whatever_the_strategy():
    for strategy in ("enqueue", "steer", "interrupt", "reject"):
        plan = plan_submit(REQUEST, rules(strategy), None)
        assert (plan.coalesce, plan.interrupt, plan.steer) == (False, None, False)


def test_another_groups_or_owners_thread_is_refused_naming_it():
    with pytest.raises(SubmitRejected, match="belongs to group 'mail'") as wrong:
        plan_submit(REQUEST, rules("enqueue"), thread(group="mail"))
    assert wrong.value.reason == "wrong_group"
    with pytest.raises(SubmitRejected) as owner:
        plan_submit(REQUEST, rules("enqueue"), thread(owner="bob"))
    assert owner.value.reason == "wrong_owner"


def test_reject_refuses_a_busy_thread_and_names_what_it_is_busy_with():
    with pytest.raises(SubmitRejected, match="busy with request r1") as busy:
        plan_submit(REQUEST, rules("reject"), thread(running="r1"))
    assert busy.value.reason == "thread_busy"
    assert plan_submit(REQUEST, rules("reject"), thread()).coalesce is False


def test_coalesce_keys_by_the_dedupe_key_or_else_the_source():
    assert plan_submit(REQUEST, rules("coalesce"), thread()).dedupe_key == "chat"
    keyed = NewTurnRequest(source="chat", thread_id="t1", dedupe_key="k", owner="ann")
    assert plan_submit(keyed, rules("coalesce"), thread()) == plan_submit(
        keyed, rules("coalesce"), None
    )
    assert plan_submit(keyed, rules("coalesce"), None).dedupe_key == "k"


def test_interrupt_and_steer_act_only_on_a_running_request():
    assert plan_submit(REQUEST, rules("interrupt"), thread(running="r1")).interrupt == "r1"
    assert plan_submit(REQUEST, rules("interrupt"), thread(head="q1")).interrupt is None
    assert plan_submit(REQUEST, rules("steer"), thread(running="r1")).steer is True
    assert plan_submit(REQUEST, rules("steer"), thread(head="q1")).steer is False

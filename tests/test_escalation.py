"""Capability escalation (issue 37, item 7): ``request_tool`` asks for a tool the agent's
role allows but its turn was not given; only the approval gate's grant widens the turn,
for that turn only, never past the role's maximum scope nor past a parent's tools."""

from __future__ import annotations

import asyncio
import json
import time

from toolang_core import ApprovalBook, Granted, NewTurnRequest, TurnStatus, hookimpl
from toolang_core.agents.types import AgentDefinition
from toolang_core.testing.approvals import ask_a_person
from toolang_core.testing.cast import Cast, last_output, position, user_text
from toolang_core.testing.delegation import DEFAULT_AGENTS, make_runtime, results
from toolang_core.testing.models import text, tool_call

NARROW = {"allowed_tools": ["lookup_fact"]}
"""A researcher turn narrowed to lookup_fact; its role also has lookup_source."""


class AskForEscalations:
    """A gate that asks a person about request_tool and abstains on every other tool."""

    @hookimpl
    def toolang_approve_tool_call(self, call, ctx):
        if call.name == "request_tool":
            return ask_a_person(call, ctx, prompt="grant it?", requester="tester")
        return None


class GrantEscalations:
    """A policy: every request_tool inside the role's scope is granted without asking."""

    @hookimpl
    def toolang_approve_tool_call(self, call, ctx):
        return Granted("policy: escalations granted") if call.name == "request_tool" else None


def turns(**scripts):
    """A cast whose scripts may differ per turn: ``{agent: {user text: steps}}``."""

    def by_turn(steps_by_text):
        def answer(request):
            return steps_by_text[user_text(request)][position(request)]

        return answer

    return Cast(**{agent: by_turn(s) for agent, s in scripts.items()})


def submit(runtime, words, *, agent="researcher", meta=None, thread="chat:e"):
    inbox = runtime.open_inbox()
    try:
        request = NewTurnRequest(
            source="chat", thread_id=thread, input=words, agent=agent, meta=meta or {}
        )
        return inbox.submit(request).id
    finally:
        inbox.store.close()


async def serve_deciding(runtime, turn_id, decide=None, *, deadline=60.0):
    """Serve until ``turn_id`` ends, calling ``decide(book, approval)`` on each pending
    approval once; the finished turn and every approval made."""
    inbox = runtime.open_inbox()
    stop = asyncio.Event()
    serving = asyncio.create_task(runtime.serve(stop, sources=()))
    book = ApprovalBook(inbox.store)
    decided: set[str] = set()
    try:
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            turn = inbox.get(turn_id)
            if turn.status.is_terminal:
                return turn, book.list()
            for pending in book.list("pending"):
                if decide is not None and pending.id not in decided:
                    decided.add(pending.id)
                    decide(book, pending)
            await asyncio.sleep(0.02)
        raise AssertionError(f"turn still {inbox.get(turn_id).status} after {deadline} s")
    finally:
        stop.set()
        await serving
        inbox.store.close()


def offered(cast, agent="researcher"):
    """The tool names each of ``agent``'s model requests offered, in order."""
    return [sorted(t.name for t in r.tools) for r in cast.requests_of(agent)]


def test_a_granted_tool_is_usable_for_the_rest_of_the_turn_and_not_the_next(tmp_path):
    cast = turns(
        researcher={
            "first": [
                tool_call("lookup_source", {"topic": "tides"}),
                tool_call("request_tool", {"name": "lookup_source", "reason": "cite it"}),
                tool_call("lookup_source", {"topic": "tides"}),
                text("cited"),
            ],
            "again": [tool_call("lookup_source", {"topic": "tides"}), text("not mine now")],
        }
    )
    runtime = make_runtime(tmp_path, cast, plugins=[("gate", AskForEscalations())])
    first = submit(runtime, "first", meta=NARROW)

    def grant(book, pending):
        book.decide(pending.id, approved=True, by="alice")

    turn, approvals = asyncio.run(serve_deciding(runtime, first, grant))
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "cited")
    # one ordinary approval request, shown like any other (toolang approvals, console, API)
    (approval,) = approvals
    assert (approval.tool, approval.status, dict(approval.params)) == (
        "request_tool",
        "approved",
        {"name": "lookup_source", "reason": "cite it"},
    )
    before, asked, granted = results(cast, "researcher")
    assert before["error_type"] == "not_allowed"
    assert asked["ok"] and asked["output"]["granted"] == "lookup_source"
    assert granted == {"ok": True, "output": "source for tides"}
    tools = offered(cast)
    assert tools[0] == ["lookup_fact", "request_tool"]  # something to ask for: offered
    assert "lookup_source" in cast.requests_of("researcher")[0].tools[1].description
    assert tools[2] == ["lookup_fact", "lookup_source"]  # granted; nothing left to ask
    # the next turn starts from the narrowed set again
    again = submit(runtime, "again", meta=NARROW)
    turn, _ = asyncio.run(serve_deciding(runtime, again))
    assert turn.status is TurnStatus.COMPLETED
    assert results(cast, "researcher")[-1]["error_type"] == "not_allowed"
    assert offered(cast)[-2] == ["lookup_fact", "request_tool"]


def test_outside_the_role_is_refused_at_once_and_a_denial_grants_nothing(tmp_path):
    cast = turns(
        researcher={
            "go": [
                tool_call("request_tool", {"name": "draft_text", "reason": "write it up"}),
                tool_call("request_tool", {"name": "lookup_source", "reason": "cite it"}),
                tool_call("lookup_source", {"topic": "tides"}),
                text("without it"),
            ]
        }
    )
    runtime = make_runtime(tmp_path, cast, plugins=[("gate", AskForEscalations())])
    turn_id = submit(runtime, "go", meta=NARROW)

    def deny(book, pending):
        book.decide(pending.id, approved=False, by="bob", reason="not today")

    turn, approvals = asyncio.run(serve_deciding(runtime, turn_id, deny))
    assert turn.status is TurnStatus.COMPLETED
    outside, denied, after = results(cast, "researcher")
    assert outside["error_type"] == "not_allowed"
    assert "'draft_text' is outside agent 'researcher''s maximum scope" in outside["error"]
    assert "Tools you may ask for: lookup_source" in outside["error"]
    assert denied["error_type"] == "denied"
    assert "bob denied request_tool: not today" in denied["error"]
    assert after["error_type"] == "not_allowed"
    # only the request inside the role's scope reached a person
    assert [(a.tool, a.params["name"]) for a in approvals] == [("request_tool", "lookup_source")]
    store = runtime.open_store()
    (refused,) = [
        s
        for s in store.steps(turn_id)
        if s.kind == "tool_call" and s.data["call"]["params"].get("name") == "draft_text"
    ]
    assert [(c["stage"], c["verdict"]) for c in refused.data["chain"]] == [("scope", "refused")]
    store.close()


def test_only_a_grant_widens_a_turn_a_policy_may_give_it(tmp_path):
    steps = {
        "go": [
            tool_call("request_tool", {"name": "lookup_source", "reason": "cite it"}),
            tool_call("lookup_source", {"topic": "tides"}),
            text("done"),
        ]
    }
    nobody = turns(researcher=steps)  # no approval gate at all: nobody can grant
    runtime = make_runtime(tmp_path / "a", nobody)
    turn, _ = asyncio.run(serve_deciding(runtime, submit(runtime, "go", meta=NARROW)))
    assert turn.status is TurnStatus.COMPLETED
    asked, used = results(nobody, "researcher")
    assert "needs a grant from the approval gate" in asked["error"]
    assert used["error_type"] == "not_allowed"

    policy = turns(researcher=steps)
    runtime = make_runtime(tmp_path / "b", policy, plugins=[("gate", GrantEscalations())])
    turn, approvals = asyncio.run(serve_deciding(runtime, submit(runtime, "go", meta=NARROW)))
    assert (turn.status, approvals) == (TurnStatus.COMPLETED, [])
    asked, used = results(policy, "researcher")
    assert used == {"ok": True, "output": "source for tides"}


def test_a_delegated_child_cannot_escalate_beyond_its_parents_tools(tmp_path):
    lead = AgentDefinition(
        name="lead", tools=("lookup_*", "agent_spawn", "agent_wait"), description="leads"
    )
    cast = Cast(
        lead=[
            tool_call(
                "agent_spawn",
                {"instruction": "tides?", "agent": "researcher", "allowed_tools": ["lookup_fact"]},
            ),
            lambda r: tool_call("agent_wait", {"agent_id": last_output(r)["agent_id"]}),
            text("done"),
        ],
        researcher=[
            tool_call("request_tool", {"name": "lookup_source", "reason": "cite it"}),
            text("the parent lacks it"),
        ],
    )
    runtime = make_runtime(
        tmp_path,
        cast,
        agents=(*DEFAULT_AGENTS, lead),
        plugins=[("gate", GrantEscalations())],  # a policy that would grant it
    )
    # the parent itself is narrowed: it lacks lookup_source, which both roles allow
    parent = submit(
        runtime,
        "go",
        agent="lead",
        meta={"allowed_tools": ["lookup_fact", "agent_spawn", "agent_wait"]},
    )
    turn, approvals = asyncio.run(serve_deciding(runtime, parent))
    assert (turn.status, approvals) == (TurnStatus.COMPLETED, [])
    (refused,) = results(cast, "researcher")
    assert refused["error_type"] == "not_allowed"
    assert "'lookup_source' is outside agent 'researcher''s maximum scope" in refused["error"]
    spawned = results(cast, "lead")[0]["output"]["agent_id"]
    store = runtime.open_store()
    child = store.get(spawned)
    store.close()
    assert child.meta["allowed_tools"] == ["lookup_fact"]
    assert child.meta["tool_ceiling"] == [
        "agent_spawn",
        "agent_wait",
        "lookup_fact",
        "request_tool",
    ]
    assert json.dumps(child.meta)  # recorded with the run, as a resumed turn reads it

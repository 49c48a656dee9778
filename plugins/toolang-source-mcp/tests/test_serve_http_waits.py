"""How a call over the HTTP endpoint waits for its turn: woken when the turn ends (not
at the next look at the store), and, for a turn that waits for a person's approval,
progress first, then ``waiting for approval <id>`` past ``approval_wait_seconds``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from source_mcp_kit import Home, http_session

from toolang_core import ApprovalBook, ApprovalKeyFile, TurnFilter

HANG_GUARD = 600.0
"""Not a bound on speed: a call not woken by its turn's end would wait the hour of its
``served_poll_seconds``; this only stops such a test from hanging."""


def test_a_call_is_woken_when_its_turn_ends(tmp_path: Path, site: Path) -> None:
    # The store is looked at once an hour: only the turn's end can answer the call.
    home = Home(
        tmp_path / "home",
        site,
        mcp="poll_seconds = 3600\nserved_poll_seconds = 3600\nwait_seconds = 7200\n",
    ).start()
    try:

        async def run() -> None:
            with anyio.fail_after(HANG_GUARD):
                async with http_session(home) as mcp:
                    for n in range(3):
                        result = await mcp.call_tool("ask_assistant", {"text": f"wake {n}"})
                        assert not result.is_error
                        assert result.content[0].text == f"echo: wake {n}"  # type: ignore[union-attr]
                        assert (result.structured_content or {})["status"] == "completed"

        anyio.run(run)
    finally:
        home.stop()


def test_sessions_opened_at_once_on_a_fresh_runtime_all_answer(tmp_path: Path, site: Path) -> None:
    # One MCP server for the runtime however many first requests arrive together (each
    # building its own would leave sessions on a server the next request never reaches).
    home = Home(tmp_path / "home", site).start()
    try:

        async def one(n: int, answers: list[str]) -> None:
            async with http_session(home) as mcp:
                result = await mcp.call_tool("ask_assistant", {"text": f"at once {n}"})
                answers.append(result.content[0].text)  # type: ignore[union-attr]

        async def run() -> list[str]:
            answers: list[str] = []
            async with anyio.create_task_group() as group:
                for n in range(8):
                    group.start_soon(one, n, answers)
            return answers

        answers = anyio.run(run)
        assert sorted(answers) == [f"echo: at once {n}" for n in range(8)]
    finally:
        home.stop()


def test_a_turn_waiting_for_approval_reports_progress_then_its_approval(
    tmp_path: Path, site: Path
) -> None:
    home = Home(tmp_path / "home", site, mcp="approval_wait_seconds = 1.0\n").start()
    asked = {"text": "gated one", "thread": "gate", "request_id": "ap-1"}
    told: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        told.append(message or "")

    try:

        async def first() -> Any:
            async with http_session(home) as mcp:
                return await mcp.call_tool("ask_assistant", asked, progress_callback=on_progress)

        waiting = anyio.run(first)
        key = ApprovalKeyFile(home.home / ".toolang" / "approval.key")
        (approval,) = home.stored(lambda store: ApprovalBook(store, key=key).list("pending"))
        facts = waiting.structured_content or {}
        assert not waiting.is_error
        assert facts["status"] == "awaiting_approval"
        assert facts["approvals"] == [approval.id]
        assert facts["turn_id"] == approval.turn_id
        text = waiting.content[0].text
        assert text.startswith(f"waiting for approval {approval.id}:")
        assert "same request_id" in text
        assert told == [f"waiting for approval {approval.id}"]  # reported once, first

        # A person says yes (the command comes with the approval-gate plugin).
        home.env["TOOLANG_LOAD_PLUGINS"] += ",hook-approval-gate"
        decided = home.cli("approvals", "approve", approval.id)
        assert decided.returncode == 0, decided.stderr

        async def again() -> Any:
            async with http_session(home) as mcp:
                return await mcp.call_tool("ask_assistant", asked)

        done = anyio.run(again)  # the same request_id: the same turn, waited for on
        assert not done.is_error
        assert done.content[0].text == 'done: {"ok": true, "output": "ran"}'
        assert (done.structured_content or {})["turn_id"] == facts["turn_id"]
        turns = home.stored(lambda store: store.list_turns(TurnFilter(thread_id="mcp:gate")))
        assert [t.status.value for t in turns] == ["completed"]
        assert home.received() == ["gated one"]
    finally:
        home.stop()

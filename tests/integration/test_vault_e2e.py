"""The vault through the whole hook chain (SecurityFilter, ApprovalGate, execute,
LearningObserver, KnowledgeSaver, memory), in a real runtime with the built-in roles
and a scripted model: the `vault` agent sets, uses and lists secrets, a person approves
each vault call (the gate's default), and afterwards no file under the home — the
store, the memory database, the plugins' databases, their write-ahead logs, the
config — nor the log holds the raw value; the model was handed it only by the
secrets_get it asked for."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import toolang_agents_builtin
import toolang_hook_approval_gate
import toolang_hook_knowledge_saver
import toolang_hook_learning_observer
import toolang_hook_security_filter
import toolang_memory_sqlite
import toolang_tools_vault
from toolang_core import NewTurnRequest, TurnStatus
from toolang_core.testing.models import ScriptedModel, Step, text, tool_call
from toolang_core.testing.runtimes import tool_results
from toolang_core.tools.approvals import ApprovalBook
from toolang_hook_approval_gate.policy import ApprovalGateSettings
from toolang_tools_vault.tools import TOOLS as VAULT_TOOLS

SECRET = "Quillfeather-7c1e9a44-horse-battery"
"""No detector knows its shape: only the vault can have it masked."""

SCRIPTS: dict[str, list[Step]] = {
    "keep my database password": [
        tool_call("secrets_set", {"name": "db", "secret": SECRET}),
        text("Kept as 'db'."),
    ],
    "encrypt and sign the launch note": [
        tool_call("crypto_encrypt", {"plaintext": "launch at dawn"}),
        tool_call("crypto_sign", {"message": "launch at dawn"}),
        text("Encrypted and signed."),
    ],
    "what is my database password?": [
        tool_call("secrets_get", {"name": "db"}),
        text(f"Your database password is {SECRET}."),
    ],
    "which secrets do I have?": [tool_call("secrets_list", {}), text("You have 'db'.")],
    "bob wants the password": [tool_call("secrets_get", {"name": "db"}), text("none for bob")],
}


class Model:
    """Plays ``SCRIPTS[the user's words]``; keeps every tool result it was handed."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, request: Any) -> Step:
        messages = list(request.messages)
        last = max(i for i, m in enumerate(messages) if m.role == "user")
        self.seen += [m.content for m in messages if m.role == "tool"]
        done = sum(1 for m in messages[last:] if m.role == "assistant")
        return SCRIPTS[messages[last].content][done]


def vault_runtime(toolang_runtime: Callable[..., Any], home: Path, model: Model) -> Any:
    key = base64.urlsafe_b64encode(os.urandom(32)).decode()
    return toolang_runtime(
        '[models]\ndefault = "scripted"\n'
        '[memory]\nplugin = "sqlite"\n'
        '[plugins.tools-vault]\nkey = "${TOOLANG_VAULT_KEY}"\nuse_keyring = false\n'
        "[plugins.hook-knowledge-saver]\nflush_seconds = 0\n"
        "[plugins.hook-learning-observer]\nflush_seconds = 0\n",
        plugins={
            "agents-builtin": toolang_agents_builtin,
            "hook-security-filter": toolang_hook_security_filter,
            "hook-approval-gate": toolang_hook_approval_gate,
            "hook-knowledge-saver": toolang_hook_knowledge_saver,
            "hook-learning-observer": toolang_hook_learning_observer,
            "memory-sqlite": toolang_memory_sqlite,
            "tools-vault": toolang_tools_vault,
            "scripted": ScriptedModel(model).plugin(),
        },
        env={"HOME": str(home), "TOOLANG_VAULT_KEY": key},
    )


def converse(runtime: Any, *turns: tuple[str, str, str]) -> list[tuple[str, int]]:
    """Serve ``runtime`` once through ``turns`` — each (words, owner, agent), one after
    another — approving (as a person, from the test) every request a turn parks on;
    each turn's id and how many approvals it asked for."""

    async def serve() -> list[tuple[str, int]]:
        stop = asyncio.Event()
        serving = asyncio.create_task(runtime.serve(stop, sources=()))
        try:
            while not runtime.admitting:
                assert not serving.done(), serving
                await asyncio.sleep(0.01)
            return [await one(*turn) for turn in turns]
        finally:
            stop.set()
            await serving

    async def one(words: str, owner: str, agent: str) -> tuple[str, int]:
        inbox = runtime.inbox
        turn_id = inbox.submit(
            NewTurnRequest(
                source="chat", thread_id=f"chat:{owner}:{agent}", input=words,
                owner=owner, agent=agent,
            )
        ).id  # fmt: skip
        book = ApprovalBook(inbox.store)
        asked = 0
        deadline = asyncio.get_running_loop().time() + 120
        while not inbox.get(turn_id).status.is_terminal:
            assert asyncio.get_running_loop().time() < deadline, inbox.get(turn_id)
            for request in book.list("pending"):
                book.decide(request.id, approved=True, by="ada")
                asked += 1
            await asyncio.sleep(0.02)
        assert inbox.get(turn_id).status is TurnStatus.COMPLETED, inbox.get(turn_id)
        return turn_id, asked

    return asyncio.run(serve())


def test_every_vault_tool_asks_a_person_by_default_and_the_policy_can_say_otherwise():
    tools = [tool.name for tool in VAULT_TOOLS]
    assert {ApprovalGateSettings().verdict(t).action for t in tools} == {"ask"}
    relaxed = ApprovalGateSettings(auto_approve=("crypto_hash",))
    assert relaxed.verdict("crypto_hash").action == "auto_approve"
    assert relaxed.verdict("secrets_get").action == "ask"


def test_a_conversation_with_the_vault_leaves_no_raw_secret_in_any_file_of_the_home(
    toolang_runtime, toolang_home, capfd
):
    model = Model()
    runtime = vault_runtime(toolang_runtime, toolang_home.path, model)
    turns = converse(
        runtime,
        ("keep my database password", "ada", "vault"),
        ("encrypt and sign the launch note", "ada", "vault"),
        ("what is my database password?", "ada", "vault"),
        ("which secrets do I have?", "ada", "vault"),
        ("bob wants the password", "bob", "vault"),
    )
    (set_turn, asked_set), (_, asked_crypto), (get_turn, asked_get) = turns[:3]
    (list_turn, _), (bob_turn, _) = turns[3:]
    assert (asked_set, asked_crypto, asked_get) == (1, 2, 1)

    # The SecurityFilter let the value into secrets_set whole (the tool declares it),
    # and the model was handed it by the secrets_get it asked for, and by nothing else.
    handed = [seen for seen in model.seen if SECRET in seen]
    assert handed and all('"value"' in seen for seen in handed)
    assert tool_results(runtime, set_turn)[0]["ok"]
    (got,) = tool_results(runtime, get_turn)
    assert got["ok"] and got["output"] == {"name": "db", "value": "********"}  # as recorded
    (listed,) = tool_results(runtime, list_turn)
    assert [item["name"] for item in listed["output"]] == ["db"]
    (bobs,) = tool_results(runtime, bob_turn)
    assert not bobs["ok"] and "no secret 'db' in your vault (yours: none)" in bobs["error"]
    # The turn's answer repeated the value: masked as stored.
    assert runtime.open_inbox().get(get_turn).output == "Your database password is ********."

    home = toolang_home.path
    files = [p for p in home.rglob("*") if p.is_file()]
    names = {str(p.relative_to(home)) for p in files}
    for name in (
        ".toolang/toolang.db",
        ".toolang/plugins/memory-sqlite.db",
        ".toolang/plugins/hook-knowledge-saver.db",
        ".toolang/plugins/hook-learning-observer.db",
        ".toolang/plugins/tools-vault.db",
    ):
        assert name in names, sorted(names)
    assert {n for n in names if n.endswith("-wal")}, "no write-ahead log to look through"
    needle = SECRET.encode()
    assert [str(p.relative_to(home)) for p in files if needle in p.read_bytes()] == []
    out, err = capfd.readouterr()
    assert SECRET not in out and SECRET not in err
    assert "turn.finished" in out + err


def test_other_roles_cannot_reach_the_vaults_tools(toolang_runtime, toolang_home):
    """The vault's tools land with the vault role (prefixes secrets_* and crypto_*):
    another agent asking for one is refused before any hook runs."""
    model = Model()
    runtime = vault_runtime(toolang_runtime, toolang_home.path, model)
    SCRIPTS["operator wants it"] = [tool_call("secrets_get", {"name": "db"}), text("no")]
    _, (turn_id, _) = converse(
        runtime,
        ("keep my database password", "ada", "vault"),
        ("operator wants it", "ada", "operator"),
    )
    (refused,) = tool_results(runtime, turn_id)
    assert refused["error_type"] in ("not_allowed", "unknown_tool"), json.dumps(refused)

"""One owner rule, decided in one place (issue #32, item 5).

``toolang_core.store.owners`` decides who may use and who may see what belongs to an
owner; every door — the server and its console, A2A, the task source, the tools, task
runs, teams, memory — asks it and answers in its own terms. The first test reads the
doors' sources and fails on a comparison of owners written anywhere else (the copies it
found when written: the server's "threads of my recent turns", the A2A task lookup, the
operator short-cuts in front of ``check_thread`` and ``visible``, the task source's,
the teams' and the task runs' own visibility checks, memory's and the tools' own
equality). The others pin the rule down for the three kinds of caller a door meets: the
operator (``None``), an owner, and an A2A caller (``a2a:<name>``, a namespace of its
own), on a real SQLite store.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from toolang_core import (
    NewTurnRequest,
    NotThreadOwner,
    check_thread,
    is_own,
    may_see,
    threads_seen_by,
)
from toolang_core.store.backend import not_thread_owner
from toolang_core.store.sqlite import SQLiteStore
from toolang_core.store.types import SubmitRules

ROOT = Path(__file__).resolve().parents[1]
OWNER_WORDS = {"owner", "requester", "viewer"}
RULES = (ROOT / "toolang_core" / "store", ROOT / "plugins" / "toolang-store-postgres")
"""The rule itself (owners.py) and the backends that keep it in their SQL."""
KIT = ROOT / "toolang_core" / "testing"
"""The plugin-author kit: a fake memory plugin and the conformance suites' assertions."""
NOT_A_DECISION = {
    (
        "toolang_core/turn/usage.py",
        "owner is None",
    ): "owner_daily_tokens counts per named owner: the operator's turns have no daily limit",
    # (file, comparison): why it decides nothing about whose something is.
    (
        "plugins/toolang-hook-event-publisher/toolang_hook_event_publisher/settings.py",
        "owner != self.type",
    ): "which publisher type a settings key belongs to",
    (
        "plugins/toolang-server/toolang_server/settings.py",
        "owner == OPERATOR",
    ): "a token's owner may not be named 'operator' (a name check)",
    (
        "toolang_core/tools/process_ledger.py",
        "owner is None",
    ): "the process that owns a tool's program group, not a person",
    (
        "plugins/toolang-memory-sqlite/toolang_memory_sqlite/search.py",
        "owner is None",
    ): "the key an owner's memory is kept under (the operator's: the agent id alone)",
    (
        "plugins/toolang-server/toolang_server/auth.py",
        "owner is not None",
    ): "whether a bearer token is an owner's (who the caller is, not what it may do)",
    (
        "plugins/toolang-server/toolang_server/console/signin.py",
        "owner is not None",
    ): "whether a sign-in token is an owner's (who the caller is)",
    (
        "toolang_core/sandbox/policy.py",
        "owner is None",
    ): "where an owner's work directory is (the operator's: the root)",
}


def _ownerish(node: ast.expr) -> bool:
    """An expression naming an owner: ``owner``, ``x.owner``, ``x.get("owner")``,
    ``caller_of(...)`` (A2A's caller), ``owners.of(...)`` (a turn's owner)."""
    if isinstance(node, ast.Name):
        return node.id in OWNER_WORDS
    if isinstance(node, ast.Attribute):
        return node.attr in OWNER_WORDS
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id == "caller_of"
        if isinstance(func, ast.Attribute):
            if func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant):
                return node.args[0].value in OWNER_WORDS
            return (
                func.attr == "of" and isinstance(func.value, ast.Name) and func.value.id == "owners"
            )
    return False


def _owner_decisions(path: Path) -> list[tuple[int, str]]:
    """Comparisons of owners (``==``/``!=``), and ``owner is None`` tests that choose
    what happens (in ``and``/``or`` or as a condition: the operator's "sees all"
    written again)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    choosing = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BoolOp):
            choosing.update(id(value) for value in node.values)
        elif isinstance(node, ast.If | ast.IfExp | ast.While):
            choosing.add(id(node.test))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        if not any(_ownerish(o) for o in [node.left, *node.comparators]):
            continue
        equality = any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops)
        short_cut = id(node) in choosing and any(
            isinstance(op, ast.Is | ast.IsNot) for op in node.ops
        )
        if equality or short_cut:
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_door_compares_owners_itself():
    doors = sorted(ROOT.glob("plugins/*/toolang_*/**/*.py")) + sorted(
        p for p in (ROOT / "toolang_core").rglob("*.py") if KIT not in p.parents
    )
    doors = [p for p in doors if not any(rule in p.parents for rule in RULES)]
    assert len(doors) > 100, "no sources found"
    own_rules, excused = [], set()
    for path in doors:
        where = str(path.relative_to(ROOT))
        for line, text in _owner_decisions(path):
            if (where, text) in NOT_A_DECISION:
                excused.add((where, text))
            else:
                own_rules.append(f"{where}:{line}: {text}")
    assert excused == set(NOT_A_DECISION), "an excuse for a comparison that is gone"
    assert own_rules == [], (
        "these doors decide ownership themselves; ask toolang_core.store.owners (is_own, "
        "may_see, sees_every_owner, check_thread, threads_seen_by) instead:\n"
        + "\n".join(own_rules)
    )


def test_the_scan_finds_a_door_deciding_for_itself(tmp_path):
    door = tmp_path / "door.py"
    door.write_text(
        "def visible(turn, caller):\n"
        "    return caller.owner is None or turn.owner == caller.owner\n"
        "def mine(records, owner):\n"
        "    return [r for r in records if r.data.get('owner') != owner]\n"
        "def page(caller, check):\n"
        "    if caller.owner is not None:\n"
        "        check()\n"
    )
    assert sorted(text for _, text in _owner_decisions(door)) == [
        "caller.owner is None",
        "caller.owner is not None",
        "r.data.get('owner') != owner",
        "turn.owner == caller.owner",
    ]


# -- the rule, for the three kinds of caller -------------------------------------------

OPERATOR, OWNER, A2A = None, "ada", "a2a:peer"


@pytest.fixture
def store(tmp_path):
    store = SQLiteStore(tmp_path / "toolang.db")
    rules = SubmitRules(thread_group="chat", priority=40)
    for thread, owner in (("chat:operator", OPERATOR), ("chat:ada", OWNER), ("a2a:ctx", A2A)):
        store.submit(
            NewTurnRequest(source="chat", thread_id=thread, input="hi", owner=owner), rules, now=1.0
        )
    yield store
    store.close()


def test_what_is_own_belongs_to_exactly_one_owner_the_operator_included():
    assert is_own(OWNER, OWNER) and is_own(OPERATOR, OPERATOR) and is_own(A2A, A2A)
    assert not is_own(OWNER, OPERATOR)
    assert not is_own(OPERATOR, OWNER)
    assert not is_own(OWNER, A2A)


def test_the_operator_sees_every_owners_and_an_owner_only_its_own():
    for item in (OPERATOR, OWNER, A2A):
        assert may_see(item, OPERATOR)
    assert [may_see(item, OWNER) for item in (OPERATOR, OWNER, A2A)] == [False, True, False]
    assert [may_see(item, A2A) for item in (OPERATOR, OWNER, A2A)] == [False, False, True]


def test_each_caller_lists_the_threads_it_may_see(store):
    def seen(viewer):
        return sorted(t.thread_id for t in threads_seen_by(store, viewer, limit=10))

    assert seen(OPERATOR) == ["a2a:ctx", "chat:ada", "chat:operator"]
    assert seen(OWNER) == ["chat:ada"]
    assert seen(A2A) == ["a2a:ctx"]
    assert seen("bob") == []
    assert len(threads_seen_by(store, OPERATOR, limit=2)) == 2


def test_using_a_thread_is_for_its_owner_alone_reading_one_also_for_the_operator(store):
    for thread, owner in (("chat:operator", OPERATOR), ("chat:ada", OWNER), ("a2a:ctx", A2A)):
        check_thread(store, thread, owner)
        check_thread(store, thread, owner, reading=True)
        check_thread(store, thread, OPERATOR, reading=True)  # the operator reads all
    for thread, intruder in (("chat:ada", OPERATOR), ("chat:ada", A2A), ("a2a:ctx", OWNER)):
        with pytest.raises(NotThreadOwner) as refused:
            check_thread(store, thread, intruder)
        assert str(refused.value) == str(not_thread_owner(thread, intruder))
    for thread, intruder in (("chat:operator", OWNER), ("chat:ada", A2A), ("a2a:ctx", OWNER)):
        with pytest.raises(NotThreadOwner):
            check_thread(store, thread, intruder, reading=True)
    check_thread(store, "chat:new", A2A)  # a new thread is anyone's
    check_thread(store, "chat:new", OWNER, reading=True)

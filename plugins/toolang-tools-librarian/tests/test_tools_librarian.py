"""toolang-tools-librarian, alone: each tool driven by the scripted model through the
whole tool chain, against the KnowledgeSaver's and LearningObserver's documented tables
(written here in their documented layout: the plugins themselves are not installed in
this plugin's tox env; tests/integration/test_librarian_e2e.py runs them for real)."""

from __future__ import annotations

import os
import sqlite3
import types
from pathlib import Path

import pytest

import toolang_tools_librarian as plugin
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.races import swapping_for_a_link
from toolang_core.testing.runtimes import run_turn, tool_call_context, tool_results

KNOWLEDGE = """
CREATE TABLE knowledge (id INTEGER PRIMARY KEY, agent TEXT NOT NULL, tool TEXT NOT NULL,
  params TEXT NOT NULL, content TEXT NOT NULL, content_chars INTEGER NOT NULL,
  content_hash TEXT NOT NULL, thread_id TEXT NOT NULL, turn_id TEXT NOT NULL,
  call_id TEXT NOT NULL, created_at REAL NOT NULL, last_seen_at REAL NOT NULL,
  times_seen INTEGER NOT NULL DEFAULT 1)
"""
OUTCOMES = """
CREATE TABLE tool_outcomes (id INTEGER PRIMARY KEY, at REAL NOT NULL, agent TEXT NOT NULL,
  tool TEXT NOT NULL, ok INTEGER NOT NULL, error_type TEXT, error TEXT,
  duration_ms REAL NOT NULL, turn_id TEXT NOT NULL, thread_id TEXT NOT NULL,
  call_id TEXT NOT NULL)
"""


@pytest.fixture
def librarian(toolang_runtime, toolang_scripted_model, tmp_path):
    """``run(steps, owner=…)``: one turn whose model plays ``steps`` then says done."""
    docs = tmp_path / "docs"
    docs.mkdir()

    def run(steps, *, owner="alice"):
        model = toolang_scripted_model([*steps, text("done")])
        runtime = toolang_runtime(
            '[models]\ndefault = "scripted"\n'
            f'[plugins.tools-librarian]\nrag_root = "{docs}"\nchunk_lines = 4\n',
            plugins={"tools-librarian": plugin, "scripted": model.plugin()},
        )
        turn_id = run_turn(runtime, owner=owner)
        return runtime, turn_id, tool_results(runtime, turn_id)

    run.docs = docs
    return run


def _documented_db(runtime, name: str, ddl: str) -> sqlite3.Connection:
    path = Path(runtime.config.home) / "plugins" / f"{name}.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(ddl)
    return conn


def test_search_finds_what_the_knowledge_saver_kept_for_the_same_owner_only(librarian):
    runtime, alice_turn, _ = librarian([])
    _, bob_turn, _ = librarian([], owner="bob")
    conn = _documented_db(runtime, "hook-knowledge-saver", KNOWLEDGE)
    for turn, content in (
        (alice_turn, "The staging database listens on port 6543."),
        (bob_turn, "Bob's staging database password hint is blue."),
    ):
        conn.execute(
            "INSERT INTO knowledge (agent, tool, params, content, content_chars, content_hash, "
            "thread_id, turn_id, call_id, created_at, last_seen_at) "
            "VALUES ('operator', 'fs_read', '{}', ?, 10, ?, 't', ?, 'c', 1, 1)",
            [content, content, turn],
        )
    _, _, results = librarian([tool_call("search_knowledge", {"query": "staging database"})])
    hits = results[0]["output"]
    assert [(h["source"], h["tool"], h["content"]) for h in hits] == [
        ("kept", "fs_read", "The staging database listens on port 6543.")
    ]
    _, _, results = librarian(
        [tool_call("search_knowledge", {"query": "staging password"})], owner="bob"
    )
    assert [h["content"] for h in results[0]["output"]] == [
        "Bob's staging database password hint is blue."
    ]


def test_saved_knowledge_is_found_kept_once_and_private_to_its_owner(librarian):
    fact = {"content": "Invoices are archived on the 3rd of each month.", "topic": "billing"}
    _, _, results = librarian(
        [
            tool_call("save_knowledge", fact),
            tool_call("save_knowledge", fact),
            tool_call("search_knowledge", {"query": "when are invoices archived"}),
        ]
    )
    first, again, search = (r["output"] for r in results)
    assert first["saved"] is True and again == {
        "id": first["id"],
        "saved": False,
        "reason": "already saved",
    }
    assert [(h["source"], h["topic"]) for h in search] == [("saved", "billing")]
    _, _, results = librarian([tool_call("search_knowledge", {"query": "invoices"})], owner="bob")
    assert results[0]["output"] == []


def test_learning_tools_report_the_failing_tool_and_the_saved_lesson(librarian):
    runtime, alice_turn, _ = librarian([])
    _, bob_turn, _ = librarian([], owner="bob")
    conn = _documented_db(runtime, "hook-learning-observer", OUTCOMES)
    rows = [
        (1.0, "fs_read", 1, None, None, alice_turn),
        (2.0, "fs_write", 0, "PermissionError", "denied: out.txt", alice_turn),
        (3.0, "fs_write", 0, "PermissionError", "denied: out2.txt", alice_turn),
        (4.0, "fs_write", 1, None, None, alice_turn),
        (5.0, "exec_run", 0, "TimeoutError", "bob's secret command", bob_turn),
    ]
    conn.executemany(
        "INSERT INTO tool_outcomes (at, agent, tool, ok, error_type, error, duration_ms, "
        "turn_id, thread_id, call_id) VALUES (?, 'operator', ?, ?, ?, ?, 5.0, ?, 't', 'c')",
        rows,
    )
    _, _, results = librarian(
        [
            tool_call(
                "save_learning", {"lesson": "Write under tmp/, not /", "tool": "save_knowledge"}
            ),
            tool_call("learning_stats", {}),
            tool_call("learning_failures", {"limit": 5}),
        ]
    )
    saved, stats, failures = (r["output"] for r in results)
    assert saved["saved"] is True
    assert [(s["tool"], s["calls"], s["failures"]) for s in stats] == [
        ("fs_write", 3, 2),
        ("fs_read", 1, 0),
    ]
    assert stats[0]["last_error"] == "PermissionError: denied: out2.txt"
    assert [f["error"] for f in failures] == [
        "PermissionError: denied: out2.txt",
        "PermissionError: denied: out.txt",
    ]


def test_rag_indexes_a_directory_and_answers_with_file_and_line(librarian):
    docs = librarian.docs
    (docs / "guide").mkdir()
    (docs / "guide" / "deploy.md").write_text(
        "# Deploy\n\nRun make release.\n\n## Rollback\n\nTo roll back, run make rollback\n"
        "with the previous tag.\n"
    )
    (docs / "guide" / "notes.txt").write_text("line one\nline two\nthe kraken sleeps here\n")
    (docs / "guide" / "image.png").write_bytes(b"\x89PNG")
    outside = docs.parent / "outside.md"
    outside.write_text("the kraken is outside\n")
    os.symlink(outside, docs / "guide" / "link.md")
    _, _, results = librarian(
        [
            tool_call("rag_index", {"directory": "guide", "index": "guide"}),
            tool_call("rag_query", {"query": "how do I roll back", "index": "guide"}),
            tool_call("rag_query", {"query": "kraken", "index": "guide"}),
            tool_call("rag_index", {"directory": "guide", "index": "guide"}),
        ]
    )
    indexed, rollback, kraken, again = (r["output"] for r in results)
    assert (indexed["files"], indexed["chunks"]) == (2, 3)
    assert indexed["skipped"] == ["guide/link.md: a link out of the documents root"]
    assert (rollback[0]["path"], rollback[0]["line"], rollback[0]["end_line"]) == (
        "guide/deploy.md",
        5,
        8,
    )
    assert [(h["path"], h["line"]) for h in kraken] == [("guide/notes.txt", 1)]
    assert (again["files"], again["chunks"]) == (2, 3)  # replaced, not doubled
    _, _, results = librarian(
        [tool_call("rag_query", {"query": "kraken", "index": "guide"})], owner="bob"
    )
    assert results[0]["ok"] is False and "no index 'guide'" in results[0]["error"]


BAD_INPUTS = [
    ("search_knowledge", {}, "query"),
    ("search_knowledge", {"query": ""}, "query"),
    ("search_knowledge", {"query": "!!!"}, "query"),
    ("search_knowledge", {"query": "x", "limit": 0}, "limit"),
    ("search_knowledge", {"query": "x", "agent": "Bad Agent"}, "agent"),
    ("search_knowledge", {"query": "x", "extra": 1}, "extra"),
    ("save_knowledge", {"content": "   "}, "content"),
    ("save_knowledge", {"content": "x" * 20_001}, "content"),
    ("save_knowledge", {"content": "ok", "topic": "t" * 201}, "topic"),
    ("save_learning", {"lesson": "ok", "tool": "no_such_tool"}, "tool"),
    ("save_learning", {"lesson": "ok", "tool": "bad tool!"}, "tool"),
    ("learning_stats", {"since_hours": -1}, "since_hours"),
    ("learning_failures", {"limit": 1000}, "limit"),
    ("rag_index", {"directory": "../.."}, "directory"),
    ("rag_index", {"directory": "/etc"}, "directory"),
    ("rag_index", {"directory": "missing"}, "directory"),
    ("rag_index", {"index": "Bad Name"}, "index"),
    ("rag_query", {"query": "x", "index": "nope"}, "index"),
]


def test_bad_inputs_are_tool_errors_naming_the_field_and_change_nothing(librarian):
    runtime, _, _ = librarian([tool_call("save_knowledge", {"content": "a first fact"})])
    db = Path(runtime.config.home) / "plugins" / "tools-librarian.db"

    def snapshot():
        conn = sqlite3.connect(db)
        try:
            return [
                conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                for t in ("saved_knowledge", "learnings", "rag_files", "rag_chunks")
            ]
        finally:
            conn.close()

    kept = snapshot()
    _, _, results = librarian([tool_call(name, params) for name, params, _ in BAD_INPUTS])
    assert len(results) == len(BAD_INPUTS) >= 10
    for (name, params, field), result in zip(BAD_INPUTS, results, strict=True):
        assert result["ok"] is False, (name, params, result)
        assert field in result["error"], (name, params, result["error"])
    assert snapshot() == kept


def test_a_name_swapped_for_a_link_out_is_never_indexed(librarian, tmp_path):
    """A thread swaps ``x.md`` between a file and a link to a secret outside the
    documents root as fast as it can while rag_index reads the directory: the secret
    is never read (checking the resolved path, then reading it by name, read it now
    and then)."""
    from toolang_tools_librarian import rag

    runtime, _, _ = librarian([])
    context = tool_call_context(runtime, "rag_index", {}, turn=types.SimpleNamespace(owner="alice"))
    docs = librarian.docs
    secret = tmp_path / "credential.md"
    secret.write_text("SECRET-VALUE\n")
    seen: set[str] = set()
    with swapping_for_a_link(docs / "x.md", secret, "benign\n"):
        for _ in range(1000):
            files, _skipped = rag._files(docs.resolve(), ".", context)
            seen.update(read.text for read in files)
    assert "benign\n" in seen
    assert not [s for s in seen if "SECRET" in s], seen


def test_a_text_name_that_is_a_directory_is_skipped_and_leaves_no_descriptor(librarian):
    """``guide.md`` a link to a directory inside the root: not a file to index (the
    whole call failed with the descriptor left open), and files sort as paths do."""
    from toolang_tools_librarian import rag

    runtime, _, _ = librarian([])
    context = tool_call_context(runtime, "rag_index", {}, turn=types.SimpleNamespace(owner="alice"))
    docs = librarian.docs
    (docs / "guide").mkdir()
    (docs / "guide" / "x.md").write_text("x\n")
    os.symlink("guide", docs / "guide.md")
    (docs / "a").mkdir()
    (docs / "a" / "x.md").write_text("ax\n")
    (docs / "a-b.md").write_text("ab\n")
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        files, skipped = rag._files(docs.resolve(), ".", context)
    assert len(os.listdir("/proc/self/fd")) == before
    # as Path sorts ("a/x.md" before "a-b.md": what max_files keeps when it is reached)
    assert [read.path for read in files] == ["a/x.md", "a-b.md", "guide/x.md"]
    assert skipped == []


def test_a_rag_root_configured_as_a_link_takes_absolute_paths_written_through_it(
    toolang_runtime, toolang_scripted_model, tmp_path
):
    """``rag_root`` names a link to the documents (a common way to point at a share):
    the model sees and writes paths through it; they are inside the root, and
    nothing written through it leads out."""
    real = tmp_path / "share" / "docs"
    (real / "guide").mkdir(parents=True)
    (real / "guide" / "notes.txt").write_text("the kraken sleeps here\n")
    (tmp_path / "secret.md").write_text("the kraken is a secret\n")
    docs = tmp_path / "docs"
    docs.symlink_to(real)
    model = toolang_scripted_model(
        [
            tool_call("rag_index", {"directory": f"{docs}/guide", "index": "guide"}),
            tool_call("rag_query", {"query": "kraken", "index": "guide"}),
            tool_call("rag_index", {"directory": f"{docs}/..", "index": "out"}),
            text("done"),
        ]
    )
    runtime = toolang_runtime(
        f'[models]\ndefault = "scripted"\n[plugins.tools-librarian]\nrag_root = "{docs}"\n',
        plugins={"tools-librarian": plugin, "scripted": model.plugin()},
    )
    indexed, kraken, out = tool_results(runtime, run_turn(runtime))
    assert indexed["ok"] and indexed["output"]["files"] == 1, indexed
    assert [h["path"] for h in kraken["output"]] == ["guide/notes.txt"]
    assert out["ok"] is False and "is outside the documents root" in out["error"], out


def test_a_rag_root_whose_words_lead_elsewhere_takes_only_its_real_path(
    toolang_runtime, toolang_scripted_model, tmp_path
):
    """``docs/..`` past a link to ``share/docs`` is ``share``, not the directory its words
    name: an absolute path is taken only through the real root then, never mapped
    from where the words point (``tmp/guide`` is not ``share/guide``)."""
    real = tmp_path / "share" / "docs"
    real.mkdir(parents=True)
    (tmp_path / "share" / "guide").mkdir()
    (tmp_path / "share" / "guide" / "notes.txt").write_text("the kraken sleeps here\n")
    (tmp_path / "docs").symlink_to(real)
    model = toolang_scripted_model(
        [
            tool_call("rag_index", {"directory": f"{tmp_path}/guide", "index": "a"}),
            tool_call("rag_index", {"directory": f"{tmp_path}/share/guide", "index": "b"}),
            text("done"),
        ]
    )
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n'
        f'[plugins.tools-librarian]\nrag_root = "{tmp_path}/docs/.."\n',
        plugins={"tools-librarian": plugin, "scripted": model.plugin()},
    )
    mapped, real_path = tool_results(runtime, run_turn(runtime))
    assert mapped["ok"] is False and "outside the documents root" in mapped["error"], mapped
    assert real_path["ok"] and real_path["output"]["files"] == 1, real_path

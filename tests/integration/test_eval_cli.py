"""``toolang eval`` as a person meets it, in real processes: a bad dataset is refused
with its file and line (exit 2) before anything runs, and one owner cannot evaluate
another owner's recorded turns (exit 5 naming the owner, exit 6 for a turn id). The
walkthrough of docs/evals.md (test_docs_shell_walkthroughs.py) covers a run, a missed
threshold and a comparison."""

from __future__ import annotations

import json

import pytest

from toolang_core.testing.cli import assert_no_traceback, run_toolang


@pytest.mark.slow  # real toolang processes
def test_bad_datasets_and_other_owners_turns_are_refused_at_the_command_line(tmp_path):
    def toolang(*args: str, owner: str | None = None):
        env = {"HOME": str(tmp_path)} | ({"TOOLANG_OWNER": owner} if owner else {})
        done = run_toolang(*args, cwd=tmp_path, env=env, timeout=120)
        assert_no_traceback(done)
        return done

    assert toolang("init", "--exist-ok").returncode == 0
    (tmp_path / "cases.jsonl").write_text('{"input": "hi"}\n{"input": "hi", "expected": 3}\n')
    bad = toolang("eval", "cases.jsonl")
    assert bad.returncode == 2
    assert "cases.jsonl:2: expected: expected a text, found 3" in bad.stderr
    assert toolang("eval", "list", "--json").stdout.strip() == "[]"  # nothing ran

    submitted = toolang("submit", "my locker code", "--thread", "cli:ada", "--owner", "ada")
    ada_turn = json.loads(submitted.stdout)["id"]
    by_id = toolang("eval", "--from-turns", f"turn={ada_turn} status=queued", owner="bob")
    assert by_id.returncode == 6
    assert f"turn={ada_turn}: no turn request with this id" in by_id.stderr
    by_owner = toolang("eval", "--from-turns", "owner=ada", owner="bob")
    assert by_owner.returncode == 5
    assert "owner 'bob' may not evaluate another owner's turns" in by_owner.stderr

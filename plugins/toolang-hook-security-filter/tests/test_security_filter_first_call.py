"""The first tool call of a fresh process pays only for what it checks: the policy's
expressions are compiled when a string's hints call for them, and bashlex (whose import
builds its parser tables) only when shell text is parsed. Counted in work, not time."""

from __future__ import annotations

import json
import subprocess
import sys

FIRST_CALLS = """
import json, sys
from toolang_core import ToolCall
from toolang_hook_security_filter.lazy_regex import LazyPattern
from toolang_hook_security_filter.policy import Policy
from toolang_hook_security_filter.settings import FilterSettings

policy = Policy(FilterSettings())
lazy = [r for rule in policy.rules for r, _ in rule.alternatives if isinstance(r, LazyPattern)]
def compiled():
    return sum("search" in vars(r) for r in lazy)
seen = {"patterns": len(lazy), "after_build": compiled()}
verdict = policy.check_call(ToolCall("c1", "fs_read", {"path": "notes.txt"}))
seen.update(path_verdict=repr(verdict), after_path=compiled())
seen.update(bashlex_after_path="bashlex" in sys.modules)
verdict = policy.check_call(ToolCall("c2", "exec_run", {"command": "rm -rf /"}))
seen.update(shell_verdict=type(verdict).__name__, bashlex_after_shell="bashlex" in sys.modules)
print(json.dumps(seen))
"""


def test_a_first_call_compiles_only_what_it_checks_and_parses_shell_only_when_there_is_some():
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALLS], capture_output=True, text=True, check=True
    )
    seen = json.loads(done.stdout)
    assert seen["patterns"] > 150  # the default policy's built-in expressions
    assert seen["after_build"] == 0  # building the policy compiles none
    assert seen["path_verdict"] == "None"  # a plain path passes
    assert seen["after_path"] < seen["patterns"] / 4  # only the hinted and hintless ones
    assert seen["bashlex_after_path"] is False  # no shell text: no parser tables built
    assert seen["shell_verdict"] == "Block"  # and shell text is still judged in full
    assert seen["bashlex_after_shell"] is True

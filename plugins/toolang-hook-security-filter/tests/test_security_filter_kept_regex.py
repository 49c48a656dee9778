"""The policy's expressions are compiled by the first process and their engine code read
back by the next (:mod:`toolang_hook_security_filter.kept_regex`): every pattern read
back is the one ``re.compile`` makes (same flags, code, groups); a damaged file is
compiled as usual and replaced; nothing is kept where bytecode is not written. Real
interpreters, each with its own bytecode folder (``PYTHONPYCACHEPREFIX``)."""

from __future__ import annotations

import marshal
import sys
from pathlib import Path

import pytest
from kept_kit import kept_files, run_kept

from toolang_core import KeptFiles

SCRIPT = """
import json, re
from toolang_core import kept

reads, writes = [], []  # of the expressions' files (attrs' code is kept the same way)
read, write = kept.KeptFiles.read, kept.KeptFiles.write
def counted_read(self, key):
    data = read(self, key)
    if self.where.name.startswith("regex-code"):
        reads.append(data is not None)
    return data
def counted_write(self, key, data):
    if self.where.name.startswith("regex-code"):
        writes.append(key)
    return write(self, key, data)
kept.KeptFiles.read, kept.KeptFiles.write = counted_read, counted_write

from toolang_hook_security_filter import kept_regex
from toolang_hook_security_filter.policy import Policy
from toolang_hook_security_filter.settings import FilterSettings

policy = Policy(FilterSettings())
patterns = sorted({regex.pattern for rule in policy.rules for regex, _ in rule.alternatives})
patterns += [r"(?P<user>\\w+)@(?P<host>[\\w.]+)", r"(?i)ünïcode|\\bRM\\s+-rf\\b"]
differ = []
for pattern in patterns:
    mine, theirs = kept_regex.compile(pattern), re.compile(pattern)
    if not (mine == theirs and mine.groupindex == theirs.groupindex
            and mine.groups == theirs.groups and mine.flags == theirs.flags):
        differ.append(pattern)
probe = kept_regex.compile(r"(?P<user>\\w+)@(?P<host>[\\w.]+)").search("mail ada@example.org now")
print(json.dumps({"patterns": len(patterns), "read": sum(reads), "missed": len(reads) - sum(reads),
                  "writes": len(writes), "differ": differ, "probe": probe.groupdict()}))
"""


def test_every_expression_read_back_is_the_one_re_compiles(tmp_path: Path) -> None:
    first = run_kept(SCRIPT, tmp_path)
    count, kept = first["patterns"], first["writes"]
    assert isinstance(count, int) and count > 150  # the default policy's and two more
    # each compiled and kept (the module-level ones kept too, on import); the probe at
    # the end reads one of them back already
    assert isinstance(kept, int) and kept >= count
    assert (first["read"], first["missed"]) == (1, kept)
    assert first["differ"] == []
    assert len(kept_files(tmp_path, "regex-code")) == kept
    second = run_kept(SCRIPT, tmp_path)
    assert (second["read"], second["missed"], second["writes"]) == (kept + 1, 0, 0)
    assert second["differ"] == []  # equal to re.compile's: flags, code, groups
    assert second["probe"] == {"user": "ada", "host": "example.org"}


def test_a_damaged_file_is_compiled_as_usual_and_replaced(tmp_path: Path) -> None:
    run_kept(SCRIPT, tmp_path)
    files = kept_files(tmp_path, "regex-code")
    for file, damage in zip(files, (b"", b"\x00garbage", files[2].read_bytes()[:5]), strict=False):
        file.write_bytes(damage)
    again = run_kept(SCRIPT, tmp_path)
    assert again["writes"] == 3  # the three compiled again, and kept again
    assert again["differ"] == []
    assert run_kept(SCRIPT, tmp_path)["writes"] == 0


def test_nothing_is_kept_where_bytecode_is_not_written(tmp_path: Path) -> None:
    seen = run_kept(SCRIPT, tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert seen["differ"] == []
    assert kept_files(tmp_path, "regex-code") == []


def test_whole_arguments_of_another_shape_are_compiled_as_usual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file written whole (its digest holds) whose arguments are not of the shape
    written (groups that disagree with their names, code out of range): not handed to
    the engine; compiled as usual and replaced."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # this process writes too
    run_kept(SCRIPT, tmp_path)
    files = kept_files(tmp_path, "regex-code")
    kept = KeptFiles(files[0].parent)
    wrongs = ((0, [1, 2], 5, {}, ()), (0, [-1], 0, {}, (None,)), ("0", [], 0, {}, (None,)))
    for file, wrong in zip(files, wrongs, strict=False):
        kept.write(file.name, marshal.dumps(wrong))
    again = run_kept(SCRIPT, tmp_path)
    assert again["writes"] == len(wrongs)
    assert again["differ"] == []

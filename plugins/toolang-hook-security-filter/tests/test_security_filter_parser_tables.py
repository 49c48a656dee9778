"""bashlex's parser tables are built by the first process and read back by the next
(:mod:`toolang_hook_security_filter.analysis.tables`), kept where bytecode is: the
same tables, the same verdicts, nothing built again; a damaged file is built again,
and nothing is written where bytecode is not. Real interpreters, each with its own
bytecode folder (``PYTHONPYCACHEPREFIX``)."""

from __future__ import annotations

import marshal
import sys
from pathlib import Path

import pytest
from kept_kit import kept_files, run_kept

from toolang_core import KeptFiles
from toolang_hook_security_filter.analysis import tables

SCRIPT = """
import hashlib, json, sys
from toolang_core import kept

reads, writes = [], []  # of the tables' files (attrs' code is kept the same way)
read, write = kept.KeptFiles.read, kept.KeptFiles.write
def counted_read(self, key):
    data = read(self, key)
    if "bashlex-tables" in self.where.name:
        reads.append(data is not None)
    return data
def counted_write(self, key, data):
    if "bashlex-tables" in self.where.name:
        writes.append(key)
    return write(self, key, data)
kept.KeptFiles.read, kept.KeptFiles.write = counted_read, counted_write

from toolang_core import ToolCall
from toolang_hook_security_filter.analysis import shell
from toolang_hook_security_filter.policy import Policy
from toolang_hook_security_filter.settings import FilterSettings

shell.warm()
import bashlex.parser
tables = bashlex.parser.yaccparser
digest = hashlib.sha256(
    repr((sorted((k, sorted(v.items())) for k, v in tables.action.items()),
          sorted((k, sorted(v.items())) for k, v in tables.goto.items()))).encode()
).hexdigest()
policy = Policy(FilterSettings())
verdicts = [
    type(policy.check_call(ToolCall("c", "exec_run", {"command": text}))).__name__
    for text in ("ls -la | grep x", "rm -rf / --no-preserve-root", "echo $(cat ~/.ssh/id_rsa)")
]
script = shell.parse("a=1; ls -l | wc -l && for f in *; do rm $f; done")
commands = [c.argv for c in script.commands]
print(json.dumps({"reads": reads, "writes": len(writes), "digest": digest,
                  "verdicts": verdicts, "commands": commands}))
"""


def test_the_tables_are_built_once_then_read_back_the_same(tmp_path: Path) -> None:
    first = run_kept(SCRIPT, tmp_path)
    assert first["reads"] == [False]  # nothing kept yet: built
    assert first["writes"] == 1
    (table,) = kept_files(tmp_path, "bashlex-tables")
    assert not table.name.startswith(".")  # written whole, under its key
    second = run_kept(SCRIPT, tmp_path)
    assert second["reads"] == [True]  # read back
    assert second["writes"] == 0  # so not built (a build writes what it built)
    for same in ("digest", "verdicts", "commands"):
        assert second[same] == first[same]
    assert first["verdicts"] == ["NoneType", "Block", "Block"]


def test_a_damaged_file_is_built_again_and_replaced(tmp_path: Path) -> None:
    first = run_kept(SCRIPT, tmp_path)
    (table,) = kept_files(tmp_path, "bashlex-tables")
    for damage in (b"", b"\x00garbage", table.read_bytes()[:100]):
        table.write_bytes(damage)
        again = run_kept(SCRIPT, tmp_path)
        assert again["writes"] == 1  # built again, and kept
        assert again["digest"] == first["digest"]
        assert again["verdicts"] == first["verdicts"]
    assert run_kept(SCRIPT, tmp_path)["writes"] == 0


def test_nothing_is_kept_where_bytecode_is_not_written(tmp_path: Path) -> None:
    seen = run_kept(SCRIPT, tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert seen["verdicts"] == ["NoneType", "Block", "Block"]
    assert kept_files(tmp_path, "bashlex-tables") == []


def test_whole_but_inconsistent_tables_are_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file written whole (its digest holds) whose tables lead nowhere: built again."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # this process writes too
    first = run_kept(SCRIPT, tmp_path)
    (table,) = kept_files(tmp_path, "bashlex-tables")
    files = KeptFiles(table.parent)
    for wrong in (({0: {"WORD": 99_999}}, {}), ({0: {}}, {5: {"list": 0}}), ({1: {}}, {})):
        files.write(table.name, marshal.dumps(wrong))
        again = run_kept(SCRIPT, tmp_path)
        assert again["reads"] == [True]  # read whole,
        assert again["writes"] == 1  # but not taken: built (and kept) again
        assert again["digest"] == first["digest"]
        assert again["verdicts"] == first["verdicts"]


def test_the_key_names_every_productions_precedence() -> None:
    """``%prec`` settles conflicts: the same productions with another precedence are
    another grammar."""

    class Production:
        def __init__(self, name: str, prod: tuple[str, ...], prec: tuple[str, int]) -> None:
            self.name, self.prod, self.prec = name, prod, prec

    class Grammar:
        def __init__(self, prec: tuple[str, int]) -> None:
            self.Productions = [Production("list", ("list", "AND", "list"), prec)]
            self.Precedence = {"AND": ("left", 1)}
            self.Start = "list"

    assert tables._key("src", Grammar(("left", 1))) != tables._key("src", Grammar(("right", 1)))
    assert tables._key("src", Grammar(("left", 1))) == tables._key("src", Grammar(("left", 1)))
    assert tables._key("src", Grammar(("left", 1))) != tables._key("other", Grammar(("left", 1)))

"""toolang_core.KeptFiles and after_import: files kept by key with a digest of what was
written, keys that are names and nothing else, the bound sparing files being written,
and a module reached into as it is first imported."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from pathlib import Path

import pytest

from toolang_core import KeptFiles, after_import


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KeptFiles:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as a user's Python writes
    return KeptFiles(tmp_path / "kept", most=8)


def test_what_is_read_back_is_what_was_written_under_that_key(kept: KeptFiles) -> None:
    assert kept.read("a1") is None
    kept.write("a1", b"tables")
    assert kept.read("a1") == b"tables"
    file = kept.where / "a1"
    whole = file.read_bytes()
    for damaged in (whole[:-1], whole[:-1] + b"T", whole[:10], b"", b"tables"):
        file.write_bytes(damaged)
        assert kept.read("a1") is None  # cut short, changed, or not written here
    file.write_bytes(whole)
    (kept.where / "b2").write_bytes(whole)  # the right content under another key
    assert kept.read("b2") is None
    assert kept.read("a1") == b"tables"


@pytest.mark.parametrize("key", ["../x", "/etc/hostname", "a/b", "a\0b", "", "x" * 129, "é"])
def test_a_key_is_a_name_in_the_folder_and_nothing_else(kept: KeptFiles, key: str) -> None:
    with pytest.raises(ValueError, match="letters, digits"):
        kept.read(key)
    with pytest.raises(ValueError, match="letters, digits"):
        kept.write(key, b"x")
    kept.write("fine-key_1", b"x")  # a refused key turned nothing off
    assert kept.read("fine-key_1") == b"x"


def test_nothing_is_written_where_bytecode_is_not(
    kept: KeptFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not kept.writable
    kept.write("a1", b"x")
    assert not kept.where.exists()


def test_a_folder_that_cannot_be_written_is_known_before_any_work_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert KeptFiles(tmp_path / "not" / "yet" / "made").writable  # a parent may be written
    (tmp_path / "taken").write_text("a file where the folder must go")
    for where in (tmp_path / "taken", tmp_path / "taken" / "kept"):
        files = KeptFiles(where)
        assert not files.writable  # known at once: no work done only to be kept
        files.write("a1", b"x")
        assert files.read("a1") is None
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o555)
    try:
        assert KeptFiles(read_only / "kept").writable == os.access(read_only, os.W_OK)
    finally:
        read_only.chmod(0o755)


def test_the_bound_spares_files_other_processes_are_writing(kept: KeptFiles) -> None:
    for n in range(8):
        kept.write(f"k{n}", b"x")
    writing = kept.where / ".in-progress.tmp"
    writing.write_bytes(b"half")
    for age, file in enumerate(sorted(kept.where.iterdir())):
        os.utime(file, (1_000_000 + age, 1_000_000 + age))
    os.utime(writing, (1, 1))  # the oldest of all
    later = KeptFiles(kept.where, most=8)
    later.write("new", b"y")  # 9 kept files: over the bound
    assert writing.exists()
    assert len([f for f in kept.where.iterdir() if not f.name.startswith(".")]) == 6
    assert later.read("new") == b"y"


def test_after_import_reaches_into_a_module_once_as_it_is_first_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kept_probe_mod.py").write_text("VALUE = 1\n\ndef f():\n    return VALUE\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: list[int] = []

    def then(module: object) -> None:
        seen.append(module.VALUE)  # type: ignore[attr-defined]
        module.VALUE = 2  # type: ignore[attr-defined]

    after_import("kept_probe_mod", then)
    try:
        module = importlib.import_module("kept_probe_mod")
        assert seen == [1]  # after its code ran, before the importer goes on
        assert module.f() == 2
        assert "return VALUE" in inspect.getsource(module.f)  # its loader still answers
        del sys.modules["kept_probe_mod"]
        importlib.import_module("kept_probe_mod")
        assert seen == [1]  # once
        after_import("kept_probe_mod", then)  # imported already: at once
        assert seen == [1, 1]
    finally:
        sys.modules.pop("kept_probe_mod", None)


def test_what_after_import_calls_may_fail_without_failing_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kept_probe_fails.py").write_text("VALUE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def then(module: object) -> None:
        raise LookupError("not here")

    after_import("kept_probe_fails", then)
    try:
        with pytest.warns(RuntimeWarning, match="not here"):
            module = importlib.import_module("kept_probe_fails")
        assert module.VALUE == 3
    finally:
        sys.modules.pop("kept_probe_fails", None)

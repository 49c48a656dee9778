"""Expressions modules compile as they load, kept and seeded into ``re``'s cache
(toolang_core.regex_code): real interpreter processes, each with its own bytecode
folder (``PYTHONPYCACHEPREFIX``); nothing an expression was built from at run time (a
secret a redactor hides) is ever kept."""

from __future__ import annotations

import json
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolang_core import KeptFiles, regex_code, regex_engine_code, regex_from_engine_code

MODULE = r"""
import re

WORD = re.compile(r"(?P<word>[a-z]+)-(\d+)", re.IGNORECASE)


class Reader:
    SPACE = re.compile(rb"\s+")


def search(secret):
    return re.compile(re.escape(secret)).search("no " + secret)


NEEDLE = None  # set at run time, from what the program was given


class Settings:
    pattern = None


def remember(secret):
    global NEEDLE
    NEEDLE = re.compile(re.escape(secret))
    Settings.pattern = re.compile(re.escape(secret) + "-in-a-class")


class Guarded(type):  # a metaclass whose attribute lookup must never run at exit
    def __getattribute__(cls, name):
        if name == "__dict__":
            raise RuntimeError("the exit scan ran a metaclass's code")
        return super().__getattribute__(name)


class Guards(metaclass=Guarded):
    GUARD = re.compile("guard-[0-9]+")


WARNS = re.compile("[[a]b]")  # a FutureWarning as it is compiled: never kept
"""

SCRIPT = r"""
import json, re, sys
import toolang_core  # seeds re's cache with what earlier processes kept

def cached(kind, text, flags):
    return re._cache.get((kind, text, flags))

before = {
    "word": cached(str, r"(?P<word>[a-z]+)-(\d+)", re.IGNORECASE) is not None,
    "space": cached(bytes, rb"\s+", 0) is not None,
}
sys.path.insert(0, sys.argv[1])
import held
found = held.search("hunter2-very-secret")
held.remember("hunter3-kept-in-a-global")
MAIN = re.compile("a-script-s-own-[0-9]+")  # __main__'s: never kept
fresh = re._compiler.compile(held.WORD.pattern, held.WORD.flags)
print(json.dumps({
    "before": before,
    "seeded_is_held": held.WORD is cached(str, held.WORD.pattern, re.IGNORECASE),
    "same": [held.WORD == fresh, held.WORD.groupindex == fresh.groupindex,
             held.WORD.groups == fresh.groups],
    "match": held.WORD.match("Ada-1815").groupdict(),
    "space": [part.decode() for part in held.Reader.SPACE.split(b"a  b")],
    "secret": found is not None,
}))
"""


def run(prefix: Path, modules: Path, **env: str) -> dict[str, object]:
    """SCRIPT in a new interpreter writing bytecode under ``prefix`` (as a user's
    does), with the module ``held`` from ``modules``."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("TOOLANG_")
    }
    environ.update(PYTHONPYCACHEPREFIX=str(prefix), **env)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(modules)],
        check=False,
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
    return {**json.loads(done.stdout.splitlines()[-1]), "warned": done.stderr.count("nested set")}


def kept_file(prefix: Path) -> Path | None:
    files = [p for p in prefix.rglob("module-regex.*/*") if p.is_file()]
    assert len(files) <= 1
    return files[0] if files else None


@pytest.fixture
def modules(tmp_path: Path) -> Path:
    folder = tmp_path / "modules"
    folder.mkdir()
    (folder / "held.py").write_text(MODULE)
    return folder


def test_a_modules_expressions_are_kept_and_seeded_and_a_secrets_never(
    tmp_path: Path, modules: Path
) -> None:
    prefix = tmp_path / "pycache"
    first = run(prefix, modules)
    assert first["before"] == {"word": False, "space": False}
    assert first["secret"] is True
    kept = kept_file(prefix)
    assert kept is not None
    data, written = kept.read_bytes(), kept.stat().st_mtime_ns
    assert b"[a-z]+" in data and b"guard-" in data  # the module's global, a class's
    for never in (b"hunter2", b"hunter3", b"a-script-s-own", b"[[a]b]"):
        assert never not in data  # run time's (a global or not), __main__'s, one that warns
    assert first["warned"] == 1

    second = run(prefix, modules)
    assert second["before"] == {"word": True, "space": True}
    assert second["seeded_is_held"] is True  # the module's re.compile found it
    assert second["same"] == [True, True, True]  # as re compiles it: code, groups
    assert second["match"] == {"word": "Ada"}
    assert second["space"] == ["a", "b"]
    assert second["warned"] == 1  # not seeded: compiled, and it warns as it did
    # no module loaded that the first process had not: not looked at, not written
    assert (kept.read_bytes(), kept.stat().st_mtime_ns) == (data, written)


def test_nothing_is_kept_or_seeded_when_turned_off_or_bytecode_is_not_written(
    tmp_path: Path, modules: Path
) -> None:
    prefix = tmp_path / "pycache"
    run(prefix, modules, PYTHONDONTWRITEBYTECODE="1")
    assert kept_file(prefix) is None
    run(prefix, modules, TOOLANG_REGEX_CODE_CACHE="0")
    assert kept_file(prefix) is None
    run(prefix, modules)
    assert run(prefix, modules, TOOLANG_REGEX_CODE_CACHE="0")["before"] == {
        "word": False,
        "space": False,
    }


def test_a_damaged_file_seeds_nothing_and_is_written_again(tmp_path: Path, modules: Path) -> None:
    prefix = tmp_path / "pycache"
    run(prefix, modules)
    kept = kept_file(prefix)
    assert kept is not None
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])
    again = run(prefix, modules)
    assert again["before"] == {"word": False, "space": False}
    assert again["same"] == [True, True, True]
    assert kept.read_bytes() == whole  # looked at again (nothing was kept): written
    assert run(prefix, modules)["before"] == {"word": True, "space": True}


def test_past_its_bound_what_is_kept_starts_again_from_the_process_writing(
    tmp_path: Path, modules: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # (this process writes it)
    prefix = tmp_path / "pycache"
    run(prefix, modules)
    kept = kept_file(prefix)
    assert kept is not None
    # As if earlier processes had filled it with expressions no module compiles now.
    fillers = [re.compile(f"filler-{n}-[0-9]+") for n in range(regex_code.MOST_PATTERNS)]
    records = [(False, p.pattern, p.flags, regex_engine_code(p)) for p in fillers]
    files = KeptFiles(kept.parent)
    files.write(kept.name, marshal.dumps((["only-this-module"], records)))
    full = run(prefix, modules)
    assert full["before"] == {"word": False, "space": False}  # no room was left for them
    data = kept.read_bytes()
    assert b"[a-z]+" in data and b"filler-" not in data
    assert run(prefix, modules)["before"] == {"word": True, "space": True}


@pytest.mark.parametrize(
    ("pattern", "flags"),
    [
        (r"(?P<user>\w+)@(?P<host>[\w.]+)", 0),
        (r"^ a \s+ b # comment", re.VERBOSE | re.MULTILINE),
        (r"(?i)ünïcode|\bRM\s+-rf\b", 0),
        (r"[a-z]+", re.ASCII | re.IGNORECASE),
        (rb"\w+(?=\d)", re.LOCALE),
        (rb"(?s)a.b", 0),
    ],
)
def test_the_engine_makes_the_same_pattern_from_its_kept_code(
    pattern: str | bytes, flags: int
) -> None:
    compiled = re.compile(pattern, flags)
    code = regex_engine_code(compiled)
    assert code is not None
    made = regex_from_engine_code(pattern, code)
    assert made is not None and made is not compiled
    assert (made, made.flags, made.groups, made.groupindex) == (
        compiled,
        compiled.flags,
        compiled.groups,
        compiled.groupindex,
    )


@pytest.mark.parametrize(
    "code",
    [None, (), (0, [1, 2], 0, {}), (0, ["x"], 0, {}, (None,)), (0, [1], 3, {}, (None,))],
)
def test_code_not_of_the_kept_shape_makes_no_pattern(code: object) -> None:
    assert regex_from_engine_code("a", code) is None

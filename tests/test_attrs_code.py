"""The code attrs and cattrs generate, kept beside the bytecode (toolang_core.attrs_code): real
interpreter processes, each with its own bytecode folder (``PYTHONPYCACHEPREFIX``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = """
import builtins, json, sys
import toolang_core
from toolang_core import attrs_code
import attrs

if sys.argv[1] == "refuse-to-compile":  # every generated method must come from the files
    compile_ = builtins.compile

    def refuse(source, filename, *args, **kwargs):
        if str(filename).startswith(("<attrs generated", "<cattrs generated")):
            raise AssertionError(f"compiled {filename}")
        return compile_(source, filename, *args, **kwargs)

    builtins.compile = refuse


@attrs.frozen
class Point:
    x: int
    y: int = 0
    EXTRA


@attrs.define
class Box:
    items: list[int] = attrs.field(factory=list)


p = Point(1)
import cattrs  # its structuring functions are generated code too
made = cattrs.Converter().structure({"items": ["2"]}, Box)
print(json.dumps({
    "structured": repr(made),
    "repr": repr(p),
    "equal": p == Point(1, 0) and p != Point(2),
    "hash": hash(p) == hash(Point(1)),
    "set": len({p, Point(1), Point(2)}),
    "box": repr(Box([1])),
    "where": str(attrs_code.directory()),
}))
"""


def python(
    prefix: Path, mode: str, extra: str = "", *, attrs_first: bool = False, **env: str
) -> subprocess.CompletedProcess[str]:
    """The script in a new interpreter whose bytecode (and so the kept code) goes under
    ``prefix``; ``extra`` is a line added to ``Point``; ``attrs_first``: attrs is imported
    before toolang_core."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "TOOLANG_ATTRS_CODE_CACHE")
    }
    environ.update(PYTHONPYCACHEPREFIX=str(prefix), **env)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            ("import attrs\n" if attrs_first else "") + SCRIPT.replace("EXTRA", extra or "pass"),
            mode,
        ],
        env=environ,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run(
    prefix: Path, mode: str = "compile", *, extra: str = "", attrs_first: bool = False, **env: str
) -> dict[str, Any]:
    """:func:`python`, which must succeed with classes that behave as attrs makes them."""
    done = python(prefix, mode, extra, attrs_first=attrs_first, **env)
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    assert answer["repr"] == ("Point(x=1, y=0, z=0)" if extra else "Point(x=1, y=0)")
    assert answer["equal"] and answer["hash"] and answer["set"] == 2
    assert answer["box"] == "Box(items=[1])"
    assert answer["structured"] == "Box(items=[2])"
    return answer


def kept(where: str) -> list[Path]:
    folder = Path(where)
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_a_later_process_loads_the_generated_code_instead_of_compiling_it(
    tmp_path: Path,
) -> None:
    first = run(tmp_path, PYTHONHASHSEED="1")
    assert first["where"].startswith(str(tmp_path))
    files = kept(first["where"])
    assert files, "nothing was kept"
    # Another process, another string-hash seed (attrs seeds __hash__ with one): no
    # generated method is compiled, and the classes behave as attrs made them.
    run(tmp_path, "refuse-to-compile", PYTHONHASHSEED="2")
    assert kept(first["where"]) == files


def test_attrs_imported_before_toolang_core_is_given_the_kept_code_too(tmp_path: Path) -> None:
    where = run(tmp_path, attrs_first=True)["where"]
    assert kept(where)
    run(tmp_path, "refuse-to-compile", attrs_first=True)


def test_a_changed_class_is_compiled_not_served_the_old_code(tmp_path: Path) -> None:
    run(tmp_path)
    changed = "z: int = 0"  # Point grows a field: its methods' source changes
    failed = python(tmp_path, "refuse-to-compile", changed)
    assert failed.returncode != 0
    assert "compiled <attrs generated methods __main__.Point>" in failed.stderr
    run(tmp_path, extra=changed)  # compiled and kept beside the first
    run(tmp_path, "refuse-to-compile", extra=changed)


def test_a_file_that_does_not_load_is_compiled_again(tmp_path: Path) -> None:
    where = run(tmp_path)["where"]
    for file in kept(where):
        file.write_bytes(b"\xe3 not marshalled code")
    run(tmp_path)  # loads nothing, compiles, and puts good files back
    run(tmp_path, "refuse-to-compile")


def test_nothing_is_kept_without_bytecode_or_when_turned_off(tmp_path: Path) -> None:
    where = run(tmp_path / "b", PYTHONDONTWRITEBYTECODE="1")["where"]
    assert kept(where) == []
    where = run(tmp_path / "off", TOOLANG_ATTRS_CODE_CACHE="0")["where"]
    assert kept(where) == []


def test_a_folder_that_cannot_be_written_changes_nothing_but_speed(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")  # (root may write anywhere: a file stops mkdir)
    where = run(blocked)["where"]
    assert kept(where) == []
    assert blocked.read_text() == "not a folder"


def test_past_its_bound_the_folder_keeps_the_code_written_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolang_core.attrs_code import CachedCompile

    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as a user's Python writes

    where = tmp_path / "kept"
    compile_ = CachedCompile(where, most=8)
    for n in range(8):  # one process fills the folder to its bound
        compile_(f"x = {n}\n", f"<attrs generated methods m.C{n}>", "exec")
    files = sorted(where.iterdir(), key=lambda f: f.stat().st_mtime_ns)
    assert len(files) == 8
    for age, file in enumerate(files):  # written at distinct times, oldest first
        os.utime(file, (1_000_000 + age, 1_000_000 + age))
    later = CachedCompile(where, most=8)  # the next process adds one: 9, over the bound
    code = later("x = 'new'\n", "<attrs generated methods m.New>", "exec")
    left = set(where.iterdir())
    assert len(left) == 6  # three quarters of the bound
    assert not left & set(files[:3])  # the oldest went
    namespace: dict[str, object] = {}
    exec(code, namespace)
    assert namespace["x"] == "new"
    # a file that went is compiled again, and the rest still load
    again: dict[str, object] = {}
    exec(later("x = 0\n", "<attrs generated methods m.C0>", "exec"), again)
    assert again["x"] == 0


def test_generated_code_compiles_with_the_future_imports_of_the_code_asking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The builtin ``compile`` takes the ``from __future__`` imports of the code calling
    it (attrs' module), so the cached one does too, not this package's — from the kept
    file as well."""
    import __future__

    from toolang_core.attrs_code import CachedCompile

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    source = "def f(x: Undefined) -> None:\n    pass\n"
    name = "<attrs generated methods m.Annotated>"

    def asked_by(compile_: CachedCompile, flags: int) -> object:
        caller = compile("code = compile_(source, name, 'exec')", "<caller>", "exec", flags, True)
        scope = {"compile_": compile_, "source": source, "name": name}
        exec(caller, scope)
        return scope["code"]

    postponed = __future__.annotations.compiler_flag
    for compile_ in (CachedCompile(tmp_path / "kept"), CachedCompile(tmp_path / "kept")):
        with pytest.raises(NameError):  # annotations evaluated as the function is made
            exec(asked_by(compile_, 0), {})
        namespace: dict[str, Any] = {}
        exec(asked_by(compile_, postponed), namespace)
        assert namespace["f"].__annotations__ == {"x": "Undefined", "return": "None"}
    assert len(list((tmp_path / "kept").iterdir())) == 2


def test_flags_that_ask_for_no_code_go_to_the_builtin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ast

    from toolang_core.attrs_code import CachedCompile

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    compile_ = CachedCompile(tmp_path / "kept")
    tree = compile_("x = 1\n", "<attrs generated methods m.Tree>", "exec", ast.PyCF_ONLY_AST)
    assert isinstance(tree, ast.Module)
    assert not (tmp_path / "kept").exists() or not list((tmp_path / "kept").iterdir())

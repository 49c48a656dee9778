"""The fs_* tools open what they read and write beneath the workspace: links are
followed only while they stay in it, and a name swapped for a link between a check and
its use never leads out (the race a program in the sandbox could run)."""

from __future__ import annotations

import contextlib
import os

import pytest

import toolang_tools_operator as plugin
from toolang_core.testing.races import swapping_for_a_link
from toolang_tools_operator import tools
from toolang_tools_operator.workspace import OutsideWorkspace


class Ctx:
    def __init__(self, runtime):
        self.runtime = runtime


@pytest.fixture
def ctx(toolang_runtime, tmp_path):
    runtime = toolang_runtime(
        f'[plugins.tools-operator]\nworkspace = "{tmp_path / "ws"}"\n',
        plugins={"tools-operator": plugin},
    )
    (tmp_path / "ws").mkdir()
    return Ctx(runtime)


def test_a_name_swapped_for_a_link_out_is_never_read_or_written_through(ctx, tmp_path):
    """A thread swaps ``x`` between a file and a link to a secret outside, as fast as
    it can, while the tools read, list, search and write ``x``: the secret is never
    read, never listed as a file of the workspace, never written to."""
    workspace = tmp_path / "ws"
    secret = tmp_path / "credential"
    secret.write_text("SECRET-VALUE\n")
    seen: set[str] = set()
    with swapping_for_a_link(workspace / "x", secret, "benign\n"):
        for _ in range(1500):
            try:
                seen.add(tools.fs_read("x", context=ctx))
            except OSError:  # refused (a link out), or missing for an instant
                seen.add("refused")
            with contextlib.suppress(OSError):
                seen.update(str(hit) for hit in tools.fs_search("SECRET", context=ctx))
            with contextlib.suppress(OSError):
                tools.fs_write("x", "overwritten\n", context=ctx)
    assert not [s for s in seen if "SECRET" in s], seen
    assert secret.read_text() == "SECRET-VALUE\n"


def test_links_inside_the_workspace_are_followed(ctx, tmp_path):
    workspace = tmp_path / "ws"
    tools.fs_write("docs/real.txt", "inside\n", context=ctx)
    os.symlink("docs/real.txt", workspace / "relative")
    os.symlink(workspace / "docs", workspace / "absolute")
    os.symlink("../docs", workspace / "docs" / "up")
    assert tools.fs_read("relative", context=ctx) == "inside\n"
    assert tools.fs_read("absolute/real.txt", context=ctx) == "inside\n"
    assert tools.fs_read("docs/up/real.txt", context=ctx) == "inside\n"
    written = tools.fs_write("absolute/new.txt", "made\n", context=ctx)
    assert written == {"path": "docs/new.txt", "bytes": 5}
    assert (workspace / "docs" / "new.txt").read_text() == "made\n"
    listed = {e["name"]: e["type"] for e in tools.fs_list(".", context=ctx)}
    assert (listed["docs"], listed["relative"], listed["absolute"]) == ("dir", "link", "link")


def test_links_out_loops_and_pipes_are_refused_without_touching_anything(ctx, tmp_path):
    workspace = tmp_path / "ws"
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    os.symlink(outside, workspace / "out")
    os.symlink("../outside.txt", workspace / "out-relative")
    os.symlink("loop-b", workspace / "loop-a")
    os.symlink("loop-a", workspace / "loop-b")
    os.mkfifo(workspace / "pipe")
    for name in ("out", "out-relative"):
        with pytest.raises(OutsideWorkspace, match="outside the workspace"):
            tools.fs_write(name, "clobbered", context=ctx)
        with pytest.raises(OutsideWorkspace):
            tools.fs_read(name, context=ctx)
    assert outside.read_text() == "keep me\n"
    with pytest.raises(OSError, match="too many symbolic links"):
        tools.fs_read("loop-a", context=ctx)
    with pytest.raises(OSError, match="not a regular file"):
        tools.fs_read("pipe", context=ctx)  # returns at once: no writer is waited for
    with pytest.raises(OSError, match="No such device"):
        tools.fs_write("pipe", "x", context=ctx)  # no reader: refused, not blocked
    with pytest.raises(IsADirectoryError):
        tools.fs_read(".", context=ctx)


def test_fs_search_matches_globs_as_rglob_does_and_skips_what_is_not_a_file(ctx, tmp_path):
    workspace = tmp_path / "ws"
    for name in ("a.py", "b.txt", "src/c.py", "src/pkg/d.py", "x/src/f.py"):
        tools.fs_write(name, "needle\n", context=ctx)
    os.mkfifo(workspace / "src" / "pipe.py")  # opened without blocking, then skipped

    def found(glob: str) -> list[str]:
        return sorted(hit["path"] for hit in tools.fs_search("needle", glob=glob, context=ctx))

    everywhere = ["a.py", "src/c.py", "src/pkg/d.py", "x/src/f.py"]
    assert found("*.py") == everywhere
    assert found("**/*.py") == everywhere  # ** is any number of directories, none too
    assert found("src/*.py") == ["src/c.py", "x/src/f.py"]
    assert found("src/**/*.py") == ["src/c.py", "src/pkg/d.py", "x/src/f.py"]
    assert found("[!a]?py") == ["src/c.py", "src/pkg/d.py", "x/src/f.py"]  # not a.py
    assert found("**") == []  # directories only, as rglob has it
    assert found("*") == sorted([*everywhere, "b.txt"])


def test_reading_a_directory_names_the_path_and_leaves_no_descriptor(ctx, tmp_path):
    tools.fs_write("docs/a.txt", "x\n", context=ctx)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        with pytest.raises(IsADirectoryError, match="'docs'"):
            tools.fs_read("docs", context=ctx)
    assert len(os.listdir("/proc/self/fd")) == before

"""toolang_core.files_beneath: every non-directory under a directory, walked by
descriptors, holding one descriptor per level however wide the tree."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from toolang_core import files_beneath


def test_a_wide_tree_is_listed_whole_with_few_descriptors(tmp_path):
    """1,500 directories side by side, with 100 descriptors to spare: each directory
    found was held open until walked, so the walk ran out and dropped the rest."""
    for n in range(1500):
        (tmp_path / f"d{n}").mkdir()
        (tmp_path / f"d{n}" / "f.md").write_text("x")
    (tmp_path / "d7" / "deeper").mkdir()
    (tmp_path / "d7" / "deeper" / "g.md").write_text("y")
    script = textwrap.dedent(
        f"""
        import os, resource
        from toolang_core import files_beneath
        open_now = len(os.listdir("/proc/self/fd"))
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_now + 100, resource.getrlimit(
            resource.RLIMIT_NOFILE)[1]))
        fd = os.open({str(tmp_path)!r}, os.O_RDONLY | os.O_DIRECTORY)
        found = files_beneath(fd)
        os.close(fd)
        print(len(found), len(os.listdir("/proc/self/fd")) - open_now)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    found, left_open = map(int, done.stdout.split())
    assert found == 1501
    assert left_open <= 1  # (listdir's own)


def test_links_pipes_and_files_are_listed_directories_walked(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_text("x")
    (tmp_path / "top.txt").write_text("y")
    os.symlink(tmp_path / "a", tmp_path / "link-to-dir")  # listed, never walked
    os.mkfifo(tmp_path / "pipe")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    before = len(os.listdir("/proc/self/fd"))
    try:
        found = files_beneath(fd)
    finally:
        os.close(fd)
    assert sorted(found) == ["a/b/f.txt", "link-to-dir", "pipe", "top.txt"]
    assert len(os.listdir("/proc/self/fd")) == before - 1

"""How a ``toolang`` process ends (toolang_core/cli/quick_exit.py): the exit status
``sys.exit`` would give, the threads joined, the ``atexit`` handlers run, the files left
open closed with their buffers written, standard output complete — without the
interpreter's teardown."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

from toolang_core.testing.cli import run_toolang

PROBE = """
import atexit, sys, threading, time
from toolang_core.cli.quick_exit import exit_without_teardown

out = open({path!r} + ".left-open", "w")  # buffered, never closed by this code
out.write("written before exit")
raw = open({path!r} + ".binary", "wb")
raw.write(b"bytes too")
import gzip
packed = gzip.open({path!r} + ".gz", "wt")  # text over gzip over a buffered file
packed.write("packed")

def late():  # a non-daemon thread still working at exit: joined, as always
    time.sleep(0.2)
    with open({path!r} + ".thread", "w") as f:
        f.write("thread done")

threading.Thread(target=late).start()
atexit.register(lambda: print("atexit ran", flush=False))
print("x" * 100_000, end="|")  # more than one buffer of stdout
exit_without_teardown({code})
"""


def _probe(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    path = str(tmp_path / "probe")
    return subprocess.run(
        [sys.executable, "-c", PROBE.format(path=path, code=code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_process_ends_as_sys_exit_would_and_leaves_no_buffer_unwritten(tmp_path: Path):
    done = _probe(tmp_path, "3")
    assert done.returncode == 3
    assert done.stdout == "x" * 100_000 + "|atexit ran\n"
    assert (tmp_path / "probe.left-open").read_text() == "written before exit"
    assert (tmp_path / "probe.binary").read_bytes() == b"bytes too"
    assert gzip.decompress((tmp_path / "probe.gz").read_bytes()) == b"packed"
    assert (tmp_path / "probe.thread").read_text() == "thread done"

    assert _probe(tmp_path, "None").returncode == 0
    told = _probe(tmp_path, "'a message'")
    assert told.returncode == 1
    assert told.stderr.strip() == "a message"


def test_the_cli_keeps_its_exit_statuses_and_output(tmp_path: Path):
    version = run_toolang("--version", cwd=tmp_path)
    assert version.returncode == 0
    assert version.stdout.startswith("toolang ")
    wrong = run_toolang("no-such-command", cwd=tmp_path)
    assert wrong.returncode == 2
    assert "No such command" in wrong.stderr

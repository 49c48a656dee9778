"""The ``toolang`` process's garbage-collector pace (toolang_core/cli/collector.py): young
collections are rare while a command starts, and ``toolang run`` goes back to the usual
pace once started; the library itself never changes it."""

from __future__ import annotations

import gc
import subprocess
import sys

from toolang_core.cli.cmd_run import freeze_heap
from toolang_core.cli.collector import YOUNG_THRESHOLD, collect_as_usual, collect_less

PROBE = """
import atexit, gc, sys
atexit.register(lambda: print(*gc.get_threshold()))
from toolang_core.cli.main import main
sys.argv = ["toolang", "--version"]
main()
"""


def test_the_console_script_collects_young_garbage_rarely_and_keeps_the_older_pace():
    usual = gc.get_threshold()
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.split()[-3:] == [str(YOUNG_THRESHOLD), str(usual[1]), str(usual[2])]
    # Importing the CLI (as tests and embedding programs do) changes nothing.
    imported = subprocess.run(
        [sys.executable, "-c", "import gc, toolang_core.cli.main; print(*gc.get_threshold())"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert imported.stdout.split() == [str(n) for n in usual]


def test_a_started_run_goes_back_to_the_usual_pace():
    usual = gc.get_threshold()
    collect_as_usual()  # without collect_less: nothing to undo
    assert gc.get_threshold() == usual
    collect_less()
    try:
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *usual[1:])
        freeze_heap()  # what `toolang run` calls once started
        assert gc.get_threshold() == usual
    finally:
        collect_as_usual()
        gc.unfreeze()
    assert gc.get_threshold() == usual

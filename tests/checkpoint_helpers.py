"""What the checkpoint tests share (the store's thread and plugins' own)."""

from __future__ import annotations

import time


def wait_until_copied(checkpointer) -> None:
    """Until a checkpoint run after this call found the log copied to its end, so that
    the next commit starts it over (however slowly a busy machine lets the thread run:
    nothing is written meanwhile)."""
    since = checkpointer.looks
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        last = checkpointer.last
        if checkpointer.looks > since and last is not None and last[0] == last[1]:
            return
        time.sleep(0.01)
    raise AssertionError(
        f"the checkpointer never copied the log to its end: {checkpointer.looks - since} "
        f"checkpoints since, the last found {checkpointer.last} (frames, copied)"
    )

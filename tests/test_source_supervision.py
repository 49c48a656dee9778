"""A turn source is supervised: a failing run is retried, one without ``run`` is refused."""

from __future__ import annotations

import asyncio

from structlog.testing import capture_logs

from toolang_core.runtime.sources import supervise


class NoRun:
    """What the old scaffold's source stub was: a class with no ``run``."""


def test_a_source_without_run_is_logged_once_and_not_retried():
    stop = asyncio.Event()
    with capture_logs() as logs:
        asyncio.run(asyncio.wait_for(supervise("stub", NoRun(), object(), stop), 5))  # type: ignore[arg-type]
    assert not stop.is_set()  # it returned by itself, not because it was stopped
    (event,) = logs
    assert (event["event"], event["source"]) == ("source.invalid", "stub")
    assert "NoRun has no run(inbox, stop) method" in event["error"]

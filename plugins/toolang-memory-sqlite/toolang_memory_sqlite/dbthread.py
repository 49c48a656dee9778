"""The plugin's database thread: one thread running the jobs handed to it, in order.

A ``ThreadPoolExecutor`` of one thread does the same with a ``Future`` per job, a work
item and a check of its pool on every submit, and its caller learns of the end through
the future's callbacks. The runtime's recalls and writes need none of that: a job is a
plain callable that hands its own outcome back (:mod:`.group`), so handing one over is
one put on a queue, and its end one ``call_soon_threadsafe`` of the job itself.
:meth:`DatabaseThread.submit` keeps the ``Executor`` interface for the rest (scripts,
tests).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, Final, TypeVar

T = TypeVar("T")

_STOP: Final = None
"""Put after the last job by :meth:`DatabaseThread.shutdown`."""


class DatabaseThread(Executor):
    """A thread named ``name`` that runs :meth:`post`-ed jobs one after another.

    It is a daemon thread: a process that exits without closing the plugin does not
    wait for it (a transaction it leaves unfinished is rolled back by SQLite)."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def post(self, job: Callable[[], object]) -> None:
        """Run ``job`` after the jobs posted before it, in the context it was posted from
        (as ``asyncio.to_thread`` does: the serving runtime's redaction policy is the one
        in effect for it); what it raises is its own business (it must hand its outcome
        back itself).

        :raises RuntimeError: after :meth:`shutdown`."""
        if self._stopped:
            raise RuntimeError("the memory-sqlite database thread was shut down")
        self._jobs.put(functools.partial(contextvars.copy_context().run, job))

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """``fn(*args, **kwargs)`` in the thread, as a future (``Executor``)."""
        future: Future[T] = Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except Exception as exc:
                future.set_exception(exc)

        self.post(job)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Run the jobs posted so far, then end the thread (waited for with ``wait``)."""
        if not self._stopped:
            self._stopped = True
            self._jobs.put(_STOP)
        if wait and threading.current_thread() is not self._thread:
            self._thread.join()

    def _run(self) -> None:
        jobs = self._jobs
        while (job := jobs.get()) is not _STOP:
            with contextlib.suppress(Exception):  # a job hands back its own errors
                job()
            # Not kept while waiting for the next one: a job holds what it was posted
            # with (the plugin, through its group's call), which must be free to go.
            job = None

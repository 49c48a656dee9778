"""BatchWriter: rows written in batches, on a timer, on demand, and never raising."""

from __future__ import annotations

import asyncio

from toolang_core import BatchWriter


def test_a_full_batch_is_written_at_once_in_one_call():
    batches = []
    writer = BatchWriter(batches.append, flush_seconds=3600, batch_size=3)
    asyncio.run(_add(writer, *"abc"))
    assert batches == [["a", "b", "c"]]
    assert len(writer) == 0


async def _add(writer, *rows):
    for row in rows:
        writer.add(row)


def test_a_partial_batch_is_written_when_its_timer_fires():
    batches = []

    async def main():
        writer = BatchWriter(batches.append, flush_seconds=0.01, batch_size=100)
        writer.add("x")
        writer.add("y")
        assert batches == []
        for _ in range(500):
            if batches:
                break
            await asyncio.sleep(0.01)

    asyncio.run(main())
    assert batches == [["x", "y"]]


def test_outside_an_event_loop_rows_are_written_at_once():
    batches = []
    writer = BatchWriter(batches.append, flush_seconds=60, batch_size=100)
    writer.add(1)
    assert batches == [[1]]


def test_flush_writes_what_waits_and_reports_how_many():
    batches = []

    async def main():
        writer = BatchWriter(batches.append, flush_seconds=3600, batch_size=100)
        writer.add(1)
        writer.add(2)
        return writer.flush(), writer.flush()

    assert asyncio.run(main()) == (2, 0)
    assert batches == [[1, 2]]


def test_a_batch_that_cannot_be_written_is_dropped_and_logged_without_raising():
    from structlog.testing import capture_logs

    def broken(rows):
        raise OSError("disk full")

    writer = BatchWriter(broken, flush_seconds=3600, batch_size=2, name="demo-plugin")
    with capture_logs() as logs:
        asyncio.run(_add(writer, "a", "b"))
    assert (len(writer), writer.flush()) == (0, 0)
    assert [(e["event"], e["writer"], e["dropped"]) for e in logs] == [
        ("batch.write_failed", "demo-plugin", 2)
    ]
    assert "disk full" in logs[0]["error"]

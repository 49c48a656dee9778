"""Turn signals between two stores of one schema, over ``NOTIFY`` (the bus that lets a
node's doors follow turns running on another node: docs/store-postgres.md)."""

from __future__ import annotations

import asyncio

from toolang_core import TurnSignal, TurnSignalBus
from toolang_store_postgres.store import PostgresStore


def test_signals_cross_stores_in_order_cut_to_payloads_and_never_wake_the_scheduler(
    toolang_pg_dsn, toolang_pg_schema
):
    sender = PostgresStore(toolang_pg_dsn, schema_name=toolang_pg_schema)
    listener = PostgresStore(toolang_pg_dsn, schema_name=toolang_pg_schema)
    assert isinstance(sender, TurnSignalBus)
    got: list[tuple[str, TurnSignal]] = []
    listener.receive_turn_signals(lambda node, signals: got.extend((node, s) for s in signals))
    waker = listener.listen()
    long_text = "".join(f"{n:05d}é " for n in range(3000))  # far over one payload
    sent = [
        TurnSignal("watch", "t1"),
        TurnSignal("text", "t1", "c1", 0, "same "),
        TurnSignal("text", "t1", "c1", 5, "same "),  # equal payloads are not folded
        TurnSignal("text", "t1", "c2", 0, long_text),
        TurnSignal("finished", "t1"),
    ]

    async def exchange() -> list[bool]:
        woken = [await waker.wait(0.2)]  # connects: a (re)connect counts as a wake-up
        sender.send_turn_signals("node-a", sent)
        deadline = asyncio.get_running_loop().time() + 60
        while (not got or got[-1][1].kind != "finished") and (
            asyncio.get_running_loop().time() < deadline
        ):
            woken.append(await waker.wait(0.2))
        return woken

    try:
        woken = asyncio.run(exchange())
    finally:
        waker.close()
        sender.close()
        listener.close()
    assert not any(woken[1:]), "turn signals must not wake the scheduler"
    assert {node for node, _ in got} == {"node-a"}
    signals = [s for _, s in got]
    assert [s.kind for s in signals[:3]] == ["watch", "text", "text"]
    assert signals[-1] == TurnSignal("finished", "t1")
    parts = [s for s in signals if s.call == "c2"]
    assert len(parts) > 1  # cut into several payloads, each with its offset
    assert "".join(p.text for p in parts) == long_text
    assert [p.at for p in parts] == [sum(len(q.text) for q in parts[:i]) for i in range(len(parts))]

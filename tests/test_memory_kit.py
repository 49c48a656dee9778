"""toolang_core.memory.kit on its own, as a third-party memory plugin would use it (the
built-in plugins' suites run it against SQLite and PostgreSQL)."""

from __future__ import annotations

import sqlite3

import pytest

from toolang_core.memory import MemoryEntry, MemoryLimits, MemoryRecallRequest, MemoryWriteBatch
from toolang_core.memory.kit import (
    DAY,
    Failures,
    PendingUses,
    RankingSettings,
    Recalling,
    checked,
    query_terms,
    rank,
    usages,
)


def test_a_recall_ranks_by_relevance_recency_and_uses_within_the_limits():
    now = 100 * DAY
    found = [  # id, rank negated, updated_at, length
        (1, -2.0, now, 10),
        (2, -1.6, now, 10),
        (3, -2.0, now - 365 * DAY, 10),
    ]
    settings = RankingSettings()
    request = MemoryRecallRequest(
        agent_uri="a", agent_id="a", query_text="the cats of Orla 🍕", limits=MemoryLimits(2, 25)
    )
    recalling = Recalling.of(request, settings.max_query_terms)
    assert recalling.terms == [("cats",), ("Orla",), ("sym127829",)]  # stopwords dropped
    ranked = rank(found, request.limits, settings, now=now, usages=None)
    assert [r.candidate[0] for r in ranked] == [1, 2]  # the old one ranks last, past max_items
    assert [r.keep_chars for r in ranked] == [10, 10]
    # entry 2, recalled often and lately, closes in on entry 1 but does not pass it
    worth = usages([(1, 0, None), (2, 20, now)], {}, now=now, threshold=3, saturation=16,
                   half_life_days=30.0)  # fmt: skip
    assert worth == {2: 1.0}
    boosted = rank(found, request.limits, settings, now=now, usages=worth)
    assert [r.candidate[0] for r in boosted] == [1, 2]
    assert boosted[0].score - boosted[1].score < ranked[0].score - ranked[1].score
    result = recalling.result("kit", (), boosted)
    assert result.diagnostics["terms"] == 3 and result.diagnostics["returned"] == 0


def test_query_terms_cut_scripts_without_spaces_into_phrases():
    assert query_terms("喫茶店 in Tokyo", 16) == [("喫", "茶", "店"), ("Tokyo",)]


def test_pending_uses_are_put_back_when_their_write_fails():
    pending = PendingUses()
    pending.add([1, 2], 5.0)
    seen: list[set[int]] = []

    def failing_write() -> None:
        with pending.taken() as taken:
            seen.append(set(taken))
            assert len(pending) == 0
            raise RuntimeError("the write failed")

    with pytest.raises(RuntimeError, match="the write failed"):
        failing_write()
    assert seen == [{1, 2}]
    assert pending.get([1, 2]) == {1: (1, 5.0), 2: (1, 5.0)}


def test_a_preview_of_uses_is_what_adding_them_gives_and_adds_nothing():
    pending = PendingUses()
    pending.add([1], 5.0)
    assert pending.preview([1, 2, 2], 6.0) == {1: (2, 6.0), 2: (2, 6.0)}
    assert pending.get([1, 2]) == {1: (1, 5.0)}
    assert pending.add([1, 2, 2], 6.0) == pending.get([1, 2]) == {1: (2, 6.0), 2: (2, 6.0)}


class KitMemoryError(RuntimeError):
    pass


def test_failures_name_the_plugin_operation_and_database_and_count_for_health():
    clock = [1000.0]
    failures = Failures(
        plugin="memory-kit",
        where="/data/m.db",
        database_errors=(sqlite3.Error,),
        error=KitMemoryError,
        clock=lambda: clock[0],
    )
    assert failures.health("kit", "fine").status == "ok"
    with pytest.raises(KitMemoryError) as raised, failures.guard("recall"):
        raise sqlite3.OperationalError("database is locked ")
    assert str(raised.value) == "memory-kit: recall on /data/m.db failed: database is locked"
    health = failures.health("kit", "3 entries", entries=3)
    assert (health.status, health.last_error, health.entries) == ("degraded", str(raised.value), 3)
    clock[0] += 301
    assert failures.health("kit", "3 entries").status == "ok"
    batch = MemoryWriteBatch(
        agent_uri="a", agent_id="a", entries=(MemoryEntry(text="x" * 11, ttl_seconds=-1),)
    )
    with pytest.raises(ValueError, match=r"memory-kit: entry 1 of 1 for agent 'a': has 11 char"):
        checked(batch, 0, batch.entries[0], max_chars=10, failures=failures)
    with pytest.raises(ValueError, match="ttl_seconds must be a positive number"):
        checked(batch, 0, batch.entries[0], max_chars=100, failures=failures)

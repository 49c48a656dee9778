"""The post-turn records: the prompt trace committed with the turn's terminal state, what
ran after each turn written by the scheduler's next commit pass."""

from __future__ import annotations

from toolang_core import hookimpl
from toolang_core.config import ToolangConfig
from toolang_core.config.model import RuntimeConfig
from toolang_core.execution.seam import AfterTurn, TurnContext, TurnOutcome
from toolang_core.runtime import Runtime
from toolang_core.runtime.after_turn import AFTER_KIND, PROMPT_TRACE_KIND
from toolang_core.store.types import TurnStatus
from toolang_core.testing.runtimes import serve_turns


class TracingExecutor:
    """Answers with the input and hands the post-turn stages a prompt trace of its own
    (not masked yet): ``{"input": …}``, or one that cannot be stored for input "bad"."""

    async def execute(self, ctx: TurnContext) -> TurnOutcome:
        trace = {"input": ctx.turn.input, "token": "sk-proj-" + "a" * 24}
        if ctx.turn.input == "bad":
            trace["when"] = object()  # not JSON
        return TurnOutcome.completed(ctx.turn.input, after=AfterTurn(prompt_trace=trace))


class Delivery:
    def __init__(self, seen: dict[str, object]) -> None:
        self.seen = seen

    @hookimpl
    def toolang_deliver_turn(self, turn, runtime):
        # stage 5: the trace (stage 2) is durable already, with the state (stage 1)
        store = runtime.open_store()
        try:
            self.seen[turn.id] = (
                store.get(turn.id).status,
                store.get_record(PROMPT_TRACE_KIND, turn.id),
            )
        finally:
            store.close()


def make(tmp_path, seen):
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(poll_seconds=0.02, shutdown_grace_seconds=0),
    )
    runtime = Runtime.with_plugins(config, [("delivery", Delivery(seen))], env={})
    runtime.make_executor = TracingExecutor  # type: ignore[method-assign]
    return runtime


def records(runtime, kind, keys):
    store = runtime.open_store()
    try:
        return [store.get_record(kind, key) for key in keys]
    finally:
        store.close()


def test_the_prompt_trace_is_committed_with_the_turn_state_masked(tmp_path):
    seen: dict[str, object] = {}
    runtime = make(tmp_path, seen)
    ids = serve_turns(runtime, "one", "two", "three", thread="chat:1")
    for turn_id, trace in zip(ids, records(runtime, PROMPT_TRACE_KIND, ids), strict=True):
        status, at_delivery = seen[turn_id]
        assert status is TurnStatus.COMPLETED
        assert at_delivery is not None and at_delivery.data == trace.data
        assert trace.data["token"] == "********"
    assert [t.data["input"] for t in records(runtime, PROMPT_TRACE_KIND, ids)] == [
        "one",
        "two",
        "three",
    ]


def test_every_turn_gets_its_after_record_from_the_next_commit_pass(tmp_path):
    runtime = make(tmp_path, {})
    ids = serve_turns(runtime, *[f"turn {n}" for n in range(12)], thread="chat:1")
    for after in records(runtime, AFTER_KIND, ids):
        assert after is not None
        stages = [(s["stage"], s["ok"]) for s in after.data["stages"]]
        assert stages == [("turn_state", True), ("prompt_trace", True), ("delivery", True)]


def test_a_prompt_trace_that_cannot_be_stored_fails_its_stage_not_the_turn(tmp_path):
    seen: dict[str, object] = {}
    runtime = make(tmp_path, seen)
    bad, good = serve_turns(runtime, "bad", "good", thread="chat:1")
    status, trace = seen[bad]
    assert status is TurnStatus.COMPLETED and trace is None
    (after,) = records(runtime, AFTER_KIND, [bad])
    stage = next(s for s in after.data["stages"] if s["stage"] == "prompt_trace")
    assert stage["ok"] is False
    assert "JSON serializable" in stage["detail"]["error"]
    assert seen[good][1] is not None  # the next turn's trace is stored as ever


def test_records_handed_in_ride_with_the_next_finish_and_outlive_its_fencing(tmp_path):
    import asyncio

    from toolang_core.redaction import RedactionPolicy
    from toolang_core.runtime.commits import TurnCommits
    from toolang_core.store.sqlite import SQLiteStore
    from toolang_core.store.types import Finish, NewTurnRequest, SubmitRules

    now = 1_800_000_000.0
    store = SQLiteStore(tmp_path / "toolang.db")
    request = NewTurnRequest(source="chat", thread_id="chat:1", input="hi")
    turn_id = store.submit(request, SubmitRules(thread_group="chat", priority=40), now=now).id
    assert store.claim(run_id="run-a", limit=1, now=now, lease_seconds=30, caps={})

    def commits(run_id):
        return TurnCommits(
            store,
            run_id=run_id,
            clock=lambda: now,
            free=lambda _: None,
            wake=asyncio.Event(),
            turns={},
            redaction=RedactionPolicy(),
        )

    zombie = commits("zombie")  # another runtime's commits: its finish is fenced
    zombie.later("after", "a", {"stages": ["a"]})
    zombie.hand_in(Finish(turn_id, "zombie", 1, TurnStatus.COMPLETED, now, output="no"))
    zombie.record()
    assert store.get(turn_id).status is TurnStatus.RUNNING
    assert store.get_record("after", "a").data == {"stages": ["a"]}  # written on its own

    owner = commits("run-a")
    owner.later("after", "b", {"stages": ["b"]})
    owner.later("after", "c", {"stages": [object()]})  # cannot be stored: dropped, logged
    # only the parts a plugin handed in are checked: here they cannot be stored
    owner.later("after", "d", {"stages": [{"detail": {"n": object()}}]}, foreign=[{"n": object()}])
    owner.later("after", "e", {"stages": [{"detail": {"n": 1}}]}, foreign=[{"n": 1}])
    owner.hand_in(Finish(turn_id, "run-a", 1, TurnStatus.COMPLETED, now, output="yes"))
    owner.record()
    assert store.get(turn_id).output == "yes"
    assert store.get_record("after", "b").data == {"stages": ["b"]}
    assert store.get_record("after", "c") is None
    assert store.get_record("after", "d") is None
    assert store.get_record("after", "e").data == {"stages": [{"detail": {"n": 1}}]}
    store.close()


class Revealing:
    """Answers with a key in its output (and fails, with one in its error, on "fail")."""

    async def execute(self, ctx: TurnContext) -> TurnOutcome:
        key = "sk-proj-" + "b" * 24
        if ctx.turn.input == "fail":
            return TurnOutcome.failed(f"broke on {key}", outcome="error")
        return TurnOutcome.completed(f"the key is {key}")


class Keeping:
    def __init__(self) -> None:
        self.delivered: dict[str, object] = {}

    @hookimpl
    def toolang_deliver_turn(self, turn, runtime):
        self.delivered[turn.id] = turn


def test_a_turn_is_delivered_masked_exactly_as_it_was_stored(tmp_path):
    keeping = Keeping()
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(poll_seconds=0.02, shutdown_grace_seconds=0),
    )
    runtime = Runtime.with_plugins(config, [("keeping", keeping)], env={})
    runtime.make_executor = Revealing  # type: ignore[method-assign]
    ids = serve_turns(runtime, "ok", "fail", thread="chat:1")
    store = runtime.open_store()
    try:
        for turn_id in ids:
            stored, delivered = store.get(turn_id), keeping.delivered[turn_id]
            assert (delivered.output, delivered.error) == (stored.output, stored.error)
            assert "sk-proj-" not in f"{delivered.output} {delivered.error}"
    finally:
        store.close()
    assert [keeping.delivered[i].status for i in ids] == [TurnStatus.COMPLETED, TurnStatus.FAILED]


NOW = 1_800_000_000.0


def three_claimed(store):
    """Three turns of ``store`` submitted and claimed by ``run-a``, and the commits of
    that run: ``(ids, commits, freed)`` (``freed``: the slots freed, in order)."""
    import asyncio

    from toolang_core.redaction import RedactionPolicy
    from toolang_core.runtime.commits import TurnCommits
    from toolang_core.store.types import NewTurnRequest, SubmitRules

    rules = SubmitRules(thread_group="chat", priority=40)
    ids = [
        store.submit(
            NewTurnRequest(source="chat", thread_id=f"chat:{n}", input="x"), rules, now=NOW
        ).id
        for n in range(3)
    ]
    assert len(store.claim(run_id="run-a", limit=3, now=NOW, lease_seconds=30, caps={})) == 3
    freed: list[str] = []
    commits = TurnCommits(
        store,
        run_id="run-a",
        clock=lambda: NOW,
        free=freed.append,
        wake=asyncio.Event(),
        turns={},
        redaction=RedactionPolicy(),
    )
    return ids, commits, freed


def hand_in_one_refused(commits, ids, refused: int, data) -> None:
    """A completed finish for each of ``ids``; the one at ``refused`` carries a step of
    ``data`` the store cannot write."""
    from toolang_core.store.types import Finish, StepRecord

    bad = StepRecord(ids[refused], 0, 1, "model_call", "completed", NOW, NOW, data)
    for n, turn_id in enumerate(ids):
        steps = (bad,) if n == refused else ()
        finish = Finish(
            turn_id, "run-a", 1, TurnStatus.COMPLETED, NOW, output=f"out {n}", steps=steps
        )
        commits.hand_in(finish)


def test_a_finish_the_store_refuses_fails_alone_not_the_turns_committed_with_it(tmp_path):
    """One commit pass writes the terminal states of every turn that ended meanwhile in
    one transaction. One that cannot be stored (a step holding ``NaN``, which no JSON
    reader takes) fails alone: the others are committed, each on its own."""
    import math

    from toolang_core.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "toolang.db")
    ids, commits, freed = three_claimed(store)
    commits.later("after", "kept", {"stages": ["kept"]})
    commits.later("after", "nan", {"n": math.nan})  # refused when handed in: logged
    commits.later("after", "surrogate", {"error": "bad \ud800"})  # refused too
    # only the plugin's part is checked: this one is refused by the store, with the
    # first finish it rides with; it must not fail the finishes committed alone after
    commits.later("after", "rides", {"error": "bad \ud800"}, foreign=[])
    hand_in_one_refused(commits, ids, 1, {"usage": {"cost": math.nan}})
    commits.record()
    assert [store.get(t).status for t in ids] == [
        TurnStatus.COMPLETED,
        TurnStatus.RUNNING,  # its lease runs out; recovery takes it up again
        TurnStatus.COMPLETED,
    ]
    assert [store.get(t).output for t in (ids[0], ids[2])] == ["out 0", "out 2"]
    assert sorted(freed) == sorted(ids)  # every slot freed, the refused one's too
    assert store.get_record("after", "kept").data == {"stages": ["kept"]}
    assert store.get_record("after", "nan") is None
    assert store.get_record("after", "surrogate") is None
    assert store.get_record("after", "rides") is None  # dropped alone, logged
    store.close()


def test_a_store_error_while_finishes_are_committed_alone_keeps_the_rest(tmp_path):
    """The store becomes unreachable while a refused batch is committed turn by turn:
    what was committed stays committed, the rest is kept for the next pass (their
    slots taken still), and that pass commits them."""
    import math

    from toolang_core.store import StoreUnavailable
    from toolang_core.store.sqlite import SQLiteStore

    class Flaky(SQLiteStore):
        """The real store, unreachable for the third ``finish_many`` (the second turn
        committed alone)."""

        calls = 0

        def finish_many(self, items):
            Flaky.calls += 1
            if Flaky.calls == 3:
                raise StoreUnavailable("the store went away")
            return super().finish_many(items)

    store = Flaky(tmp_path / "toolang.db")
    ids, commits, freed = three_claimed(store)
    hand_in_one_refused(commits, ids, 0, {"n": math.nan})
    try:
        commits.record()
    except StoreUnavailable:
        pass
    else:
        raise AssertionError("the store's failure was not raised")
    assert freed == [ids[0]]  # refused: failed alone; the others wait for the store
    assert [store.get(t).status for t in ids[1:]] == [TurnStatus.RUNNING] * 2
    commits.record()
    assert [store.get(t).status for t in ids[1:]] == [TurnStatus.COMPLETED] * 2
    assert sorted(freed) == sorted(ids)
    store.close()

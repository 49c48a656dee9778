"""Long conversations that fit: history by a token budget, older turns compacted into a
running summary (docs/long-conversations.md)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest
from kill_helpers import install_kit, kit_environment

from toolang_core.agents.types import AgentDefinition
from toolang_core.config import ToolangConfig, parse_config
from toolang_core.config.model import AgentsConfig, ModelsConfig, RuntimeConfig
from toolang_core.errors import ConfigError
from toolang_core.models.types import ModelError, ModelRequest, ModelResponse
from toolang_core.runtime import Runtime
from toolang_core.store.types import NewTurnRequest, TurnStatus
from toolang_core.testing.agents import AgentsPlugin
from toolang_core.testing.models import ScriptedModel
from toolang_core.testing.processes import KILL_AND_RESUME_CONFIG
from toolang_core.turn.compaction import INSTRUCTION, SUMMARY_KIND
from toolang_core.turn.timeline import timeline
from toolang_core.turn.tokens import TokenCounter, estimate_tokens

SUMMARISER = INSTRUCTION.split("{", 1)[0]
THREAD = "cli:long"


class WordModel(ScriptedModel):
    """A scripted model that counts tokens as words (as a provider's tokenizer would
    count them its own way): the budget is checked with the model's own count."""

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def is_summary_call(request: ModelRequest) -> bool:
    return request.messages[0].content.startswith(SUMMARISER)


def condense(request: ModelRequest) -> str:
    """The scripted summariser: the facts of the summary so far, then the facts of the
    conversation it is given (lines with ``FACT``), one per line — so the summary holds
    what it was sent and nothing else."""
    text = request.messages[-1].content
    before, _, added = text.partition("\n\nConversation to add, oldest first:\n")
    old = before.removeprefix("Summary so far:\n")
    facts = [line for line in old.splitlines() if "FACT" in line]
    facts += [line.removeprefix("user: ") for line in added.splitlines() if "FACT" in line]
    return "\n".join(facts) or "nothing to keep"


def answer(request: ModelRequest) -> ModelResponse:
    if is_summary_call(request):
        return ModelResponse(text=condense(request))
    number = re.search(r"message (\d+)", request.messages[-1].content)
    return ModelResponse(text=f"noted {number.group(1) if number else '?'}")


def make(tmp_path: Path, model: ScriptedModel, **agents: object) -> Runtime:
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        agents=AgentsConfig(**agents),  # type: ignore[arg-type]
    )
    return Runtime.with_plugins(config, [("scripted", model.plugin())], env={})


def say(number: int) -> str:
    if number == 3:
        return "message 3: FACT the launch code word is marmalade"
    return f"message {number}: " + " ".join(f"filler{number}x{k}" for k in range(30))


def run_thread(runtime: Runtime, inputs: list[str]) -> list[str]:
    """Submit ``inputs`` as one thread's turns, in order, and run them all."""
    inbox = runtime.open_inbox()
    ids = [
        inbox.submit(NewTurnRequest(source="chat", thread_id=THREAD, input=text)).id
        for text in inputs
    ]
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    inbox.store.close()
    return ids


def agent_calls(model: ScriptedModel) -> list[ModelRequest]:
    return [c for c in model.calls if not is_summary_call(c)]


@pytest.mark.slow
def test_a_500_turn_thread_stays_under_budget_and_its_summary_keeps_turn_3s_fact(tmp_path):
    model = WordModel(answer)
    runtime = make(tmp_path, model, context_tokens=600)
    ids = run_thread(runtime, [say(n) for n in range(1, 501)])

    store = runtime.open_inbox().store
    assert all(store.get(i).status is TurnStatus.COMPLETED for i in ids)
    calls = agent_calls(model)
    assert len(calls) == 500
    counter = TokenCounter(model)
    sizes = [counter.messages(c.messages) for c in calls]
    assert max(sizes) <= 600
    summary = store.get_record(SUMMARY_KIND, THREAD)
    assert summary is not None
    assert "marmalade" in summary.data["text"]
    last = calls[-1].messages
    assert "marmalade" in last[0].content  # the summary, in the system message
    assert last[-1].content == say(500)
    assert last[-2].content == "noted 499"  # the recent turns follow it, word for word
    # Incremental: each summarising call is sent only turns no earlier call was sent.
    summary_calls = [c for c in model.calls if is_summary_call(c)]
    assert 10 < len(summary_calls) < 250
    sent = [
        int(m)
        for c in summary_calls
        for m in re.findall(r"^user: message (\d+)", c.messages[-1].content, re.M)
    ]
    assert sent == sorted(set(sent)) == list(range(1, len(sent) + 1))
    assert summary.data["turns"] == len(sent)
    store.close()


def test_each_compaction_is_a_step_shown_in_the_trace(tmp_path):
    model = WordModel(answer)
    runtime = make(tmp_path, model, context_tokens=300)
    ids = run_thread(runtime, [say(n) for n in range(1, 9)])
    store = runtime.open_inbox().store
    compacting = [i for i in ids if any(s.kind == "compaction" for s in store.steps(i))]
    assert compacting
    turn = store.get(compacting[0])
    steps = store.steps(turn.id)
    kinds = [s.kind for s in steps]
    folded = kinds.count("compaction")
    assert kinds == ["compaction"] * folded + ["prompt_build", "model_call"]
    step = steps[folded - 1]
    assert step.data["summarised_turns"] >= 1
    assert steps[0].data["previous_summary"] is False
    assert "marmalade" in step.data["summary"]
    built = steps[folded].data["context"]
    assert built["budget"] == 300 and built["counted_by"] == "model"
    assert built["summary"]["turns"] == step.data["turns_in_summary"]
    text = "\n".join(timeline(turn, steps))
    assert "compaction" in text and "summarised" in text and "marmalade" in text
    assert re.search(r"\d+/300 tokens \(model\), \d+ recent turn\(s\) after a summary", text)
    store.close()


def test_a_thread_under_budget_gets_no_summary_and_the_same_prompt_as_before(tmp_path):
    inputs = [f"message {n}: hello there" for n in range(1, 5)]
    plain, budgeted = WordModel(answer), WordModel(answer)
    run_thread(make(tmp_path / "plain", plain), inputs)
    runtime = make(tmp_path / "budget", budgeted, context_tokens=5_000)
    run_thread(runtime, inputs)

    def shown(call: ModelRequest) -> list[tuple[str, str]]:
        no_clock = re.sub(r"- time: .*", "", call.messages[0].content)
        return [("system", no_clock)] + [(m.role, m.content) for m in call.messages[1:]]

    assert [shown(c) for c in budgeted.calls] == [shown(c) for c in plain.calls]
    assert len(budgeted.calls) == 4 and len(budgeted.calls[-1].messages) == 8
    store = runtime.open_inbox().store
    assert store.get_record(SUMMARY_KIND, THREAD) is None
    store.close()


def test_history_turns_still_bounds_the_turns_kept_word_for_word(tmp_path):
    model = WordModel(answer)
    runtime = make(tmp_path, model, context_tokens=5_000, history_turns=4)
    run_thread(runtime, [say(n) for n in range(1, 7)])
    calls = agent_calls(model)
    assert max(len(c.messages) for c in calls) == 1 + 2 * 4 + 1
    last = calls[-1].messages
    # at most four turns word for word; folding leaves two, so it is not done every turn
    assert [m.content for m in last[1:]] == [say(4), "noted 4", say(5), "noted 5", say(6)]
    assert "marmalade" in last[0].content  # turns 1 to 3 were compacted, not dropped
    store = runtime.open_inbox().store
    assert store.get_record(SUMMARY_KIND, THREAD).data["turns"] == 3
    store.close()


def test_without_a_tokenizer_the_estimate_counts_and_errs_high(tmp_path):
    assert estimate_tokens("abcdef") == 2 and estimate_tokens("") == 0
    assert estimate_tokens("日本語") == 3  # nine bytes of UTF-8: a token a character
    model = ScriptedModel(answer)
    assert TokenCounter(model).by == "estimate"
    runtime = make(tmp_path, model, context_tokens=900)
    ids = run_thread(runtime, [say(n) for n in range(1, 16)])
    store = runtime.open_inbox().store
    built = next(s for s in store.steps(ids[-1]) if s.kind == "prompt_build").data["context"]
    assert built["counted_by"] == "estimate" and built["prompt_tokens"] <= 900
    counter = TokenCounter(model)
    assert max(counter.messages(c.messages) for c in agent_calls(model)) <= 900
    store.close()


def test_a_failed_compaction_degrades_the_turn_and_the_next_turn_compacts_again(tmp_path):
    failures = [1]

    def flaky(request: ModelRequest) -> ModelResponse:
        if is_summary_call(request) and failures:
            failures.pop()
            raise ModelError("the summariser is down")
        return answer(request)

    model = WordModel(flaky)
    runtime = make(tmp_path, model, context_tokens=300)
    ids = run_thread(runtime, [say(n) for n in range(1, 13)])
    store = runtime.open_inbox().store
    turns = [store.get(i) for i in ids]
    assert all(t.status is TurnStatus.COMPLETED for t in turns)
    failed = [t for t in turns if t.outcome == "degraded"]
    assert len(failed) == 1
    after = ids[ids.index(failed[0].id) + 1]
    assert store.steps(after)[0].kind == "compaction"
    built = next(s for s in store.steps(failed[0].id) if s.kind == "prompt_build").data
    assert "the summariser is down" in built["context"]["compaction_failed"]
    assert max(TokenCounter(model).messages(c.messages) for c in agent_calls(model)) <= 300
    summary = store.get_record(SUMMARY_KIND, THREAD)
    assert summary is not None and "marmalade" in summary.data["text"]
    store.close()


def test_the_summary_is_masked_before_it_is_stored(tmp_path):
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz123456"
    model = WordModel(answer)
    runtime = make(tmp_path, model, context_tokens=300)
    inputs = [say(n) for n in range(1, 9)]
    inputs[2] = f"message 3: FACT the key is {secret}"
    run_thread(runtime, inputs)
    store = runtime.open_inbox().store
    summary = store.get_record(SUMMARY_KIND, THREAD)
    assert summary is not None and "FACT the key is" in summary.data["text"]
    assert secret not in summary.data["text"]
    assert all(secret not in c.messages[0].content for c in agent_calls(model))
    store.close()


def test_a_summary_model_writes_the_summary(tmp_path):
    agent_model = WordModel(answer)
    cheap = WordModel(answer)
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        agents=AgentsConfig(context_tokens=300, summary_model="cheap/small"),
    )
    runtime = Runtime.with_plugins(
        config,
        [("scripted", agent_model.plugin()), ("cheap", cheap.plugin("cheap"))],
        env={},
    )
    run_thread(runtime, [say(n) for n in range(1, 9)])
    assert not any(is_summary_call(c) for c in agent_model.calls)
    assert any(is_summary_call(c) for c in cheap.calls)
    assert {c.model_id for c in cheap.calls} == {"small"}
    store = runtime.open_inbox().store
    assert store.get_record(SUMMARY_KIND, THREAD).data["model"] == "cheap/small"
    store.close()


# -- bad configuration ------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_context_budget_that_is_not_positive_is_refused_at_load_naming_the_key(value):
    with pytest.raises(ConfigError) as info:
        parse_config(f"[agents]\ncontext_tokens = {value}\n", file=Path("toolang.toml"), env={})
    assert info.value.problems == [
        f"toolang.toml: agents.context_tokens: expected a number >= 1, found {value}"
    ]


def test_a_malformed_summary_model_is_refused_at_load_naming_the_key():
    with pytest.raises(ConfigError) as info:
        parse_config('[agents]\nsummary_model = "No Such!"\n', file=Path("toolang.toml"), env={})
    (line,) = info.value.problems
    assert line.startswith("toolang.toml: agents.summary_model: expected a model name")


def test_an_unknown_summary_model_stops_the_runtime_at_start_naming_the_key(tmp_path):
    model = WordModel(answer)
    runtime = make(tmp_path, model, context_tokens=300, summary_model="nowhere/x")
    with pytest.raises(ConfigError) as info:
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    (line,) = info.value.problems
    assert line.startswith("[agents] summary_model = 'nowhere/x': ")
    assert "nowhere" in line


def test_doctor_names_an_unknown_summary_model(tmp_path):
    # a real installed model plugin (the kit's scripted model), so that only the summary
    # model is unknown
    site = tmp_path / "site"
    install_kit(site)
    (tmp_path / "script.json").write_text("[]")
    (tmp_path / "toolang.toml").write_text(
        KILL_AND_RESUME_CONFIG + '\n[agents]\ncontext_tokens = 4000\nsummary_model = "nowhere/x"\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "toolang_core", "doctor"],
        cwd=tmp_path,
        env=kit_environment(tmp_path, site),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    out = result.stdout + result.stderr
    assert "[agents] summary_model" in out and "nowhere/x" in out
    assert "no installed plugin" not in out  # the scripted model was there


def test_an_agent_md_context_budget_must_be_positive():
    from toolang_core.agents.agentmd import parse_agent_md

    text = "---\nname: talker\ncontext_tokens: 0\n---\nTalk.\n"
    load = parse_agent_md(text, origin="agents/talker/AGENT.md", source="user")
    assert list(load.definitions) == []
    assert any("context_tokens" in str(d) for d in load.diagnostics)
    good = parse_agent_md(text.replace(": 0", ": 2000"), origin="x/AGENT.md", source="user")
    assert good.definitions[0].context_tokens == 2000


def test_an_agents_own_budget_overrides_the_runtimes(tmp_path):
    model = WordModel(answer)
    config = ToolangConfig(
        base_dir=tmp_path,
        home=tmp_path / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.05, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
        agents=AgentsConfig(default="talker"),
    )
    talker = AgentDefinition(name="talker", instruction="Talk.", context_tokens=300)
    runtime = Runtime.with_plugins(
        config, [("scripted", model.plugin()), ("agents", AgentsPlugin(talker))], env={}
    )
    run_thread(runtime, [say(n) for n in range(1, 9)])
    assert any(is_summary_call(c) for c in model.calls)
    assert max(TokenCounter(model).messages(c.messages) for c in agent_calls(model)) <= 300


def test_task_run_notes_are_compacted_with_the_turns_around_them(tmp_path):
    import time

    from toolang_core.taskruns.merge import MergedNote, add_note

    model = WordModel(answer)
    runtime = make(tmp_path, model, context_tokens=300)
    run_thread(runtime, ["message 1: hello", "message 2: hello again"])
    store = runtime.open_inbox().store
    note = MergedNote("run-1", "helper", "completed", "FACT the report says 42", time.time())
    add_note(store, THREAD, note, now=time.time())
    store.close()
    run_thread(runtime, [say(n) for n in range(4, 14)])
    store = runtime.open_inbox().store
    summary = store.get_record(SUMMARY_KIND, THREAD)
    assert summary is not None and "the report says 42" in summary.data["text"]
    assert summary.data["notes"] == 1
    assert all("report says" not in m.content for m in agent_calls(model)[-1].messages[1:])
    assert max(TokenCounter(model).messages(c.messages) for c in agent_calls(model)) <= 300
    store.close()


def test_a_summary_longer_than_a_quarter_of_the_budget_is_cut_to_fit(tmp_path):
    def wordy(request: ModelRequest) -> ModelResponse:
        if is_summary_call(request):
            return ModelResponse(text=condense(request) + " and" * 1_000)
        return answer(request)

    model = WordModel(wordy)
    runtime = make(tmp_path, model, context_tokens=300)
    ids = run_thread(runtime, [say(n) for n in range(1, 13)])
    store = runtime.open_inbox().store
    steps = [s for i in ids for s in store.steps(i) if s.kind == "compaction"]
    assert steps and all(s.data["cut"] for s in steps)
    assert all(s.data["summary_tokens"] <= 300 // 4 for s in steps)
    assert "marmalade" in store.get_record(SUMMARY_KIND, THREAD).data["text"]
    assert max(TokenCounter(model).messages(c.messages) for c in agent_calls(model)) <= 300
    store.close()


def test_doctor_names_a_context_budget_that_is_not_positive(cli_run, tmp_path):
    (tmp_path / "toolang.toml").write_text("[agents]\ncontext_tokens = 0\n")
    result = cli_run("doctor", env={"TOOLANG_LOAD_PLUGINS": "model-demo"})
    assert result.returncode != 0
    out = result.stdout + result.stderr
    assert "agents.context_tokens: expected a number >= 1, found 0" in out
    assert "Traceback" not in out


def test_a_budget_set_on_a_long_thread_folds_its_backlog_in_calls_that_fit(tmp_path):
    before = WordModel(answer)
    run_thread(make(tmp_path, before), [say(n) for n in range(1, 31)])
    model = WordModel(answer)
    run_thread(make(tmp_path, model, context_tokens=400), [say(31)])
    summary_calls = [c for c in model.calls if is_summary_call(c)]
    assert len(summary_calls) > 1  # one call would be sent about 30 x 40 words
    counter = TokenCounter(model)
    assert all(counter.messages(c.messages) <= 400 + 400 // 4 for c in summary_calls)
    store = make(tmp_path, model).open_inbox().store
    summary = store.get_record(SUMMARY_KIND, THREAD)
    assert "marmalade" in summary.data["text"]
    kept = agent_calls(model)[-1].messages
    assert summary.data["turns"] + (len(kept) - 2) // 2 == 30  # each turn once: folded or kept
    assert counter.messages(kept) <= 400
    store.close()

"""Each runtime masks with its own redaction policy: two runtimes in one process, each
with a detector the other lacks, never mask with each other's detectors — at the inbox,
in the steps and terminal state their turns store, in what their tool calls record,
and in the logs written while each serves."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
import structlog

from toolang_core import NewTurnRequest, Tool, hookimpl, redact_text
from toolang_core.config import ToolangConfig
from toolang_core.config.model import ModelsConfig, RuntimeConfig
from toolang_core.logs import configure_logging
from toolang_core.runtime import Runtime
from toolang_core.testing.models import ScriptedModel, text, tool_call

EMPLOYEE = "EMP-123456"
CUSTOMER = "CUST-654321"
BOTH = f"{EMPLOYEE} and {CUSTOMER}"


class Detector:
    """Registers one detector masking ``secret`` as ``label``."""

    def __init__(self, name: str, secret: str, label: str) -> None:
        self.name, self.secret, self.label = name, secret, label

    @hookimpl
    def toolang_register_redactors(self, register):
        register(self.name, lambda context: lambda t: t.replace(self.secret, self.label))


class Lookup:
    """A tool that logs what it was given and answers with it."""

    @hookimpl
    def toolang_register_tools(self, register):
        def lookup(who: str) -> str:
            """Look someone up."""
            structlog.get_logger("test.lookup").info("lookup.called", who=who)
            return f"found {who}"

        register(Tool.from_function(lookup, blocking=False))


def make(tmp_path, name, detector, model):
    config = ToolangConfig(
        base_dir=tmp_path / name,
        home=tmp_path / name / ".toolang",
        runtime=RuntimeConfig(executor="agent", poll_seconds=0.02, shutdown_grace_seconds=0),
        models=ModelsConfig(default="scripted"),
    )
    plugins = [("scripted", model.plugin()), ("acme", detector), ("tools", Lookup())]
    return Runtime.with_plugins(config, plugins, env={})


def employees(tmp_path, model=None):
    detector = Detector("employees", EMPLOYEE, "[employee]")
    return make(tmp_path, "a", detector, model or ScriptedModel([]))


def customers(tmp_path, model=None):
    detector = Detector("customers", CUSTOMER, "[customer]")
    return make(tmp_path, "b", detector, model or ScriptedModel([]))


def submit(runtime, input_text):
    inbox = runtime.open_inbox()
    try:
        return inbox.submit(NewTurnRequest(source="chat", thread_id="chat:1", input=input_text)).id
    finally:
        inbox.store.close()


def stored(runtime, turn_id):
    """The turn as stored, and everything stored of it as one JSON text."""
    store = runtime.open_store()
    try:
        turn = store.get(turn_id)
        steps = [[s.data, s.error] for s in store.steps(turn_id)]
    finally:
        store.close()
    return turn, json.dumps([turn.input, turn.output, turn.error, steps])


def test_building_a_runtime_leaves_the_module_level_policy_as_it_was(tmp_path):
    employees(tmp_path)
    customers(tmp_path)
    assert redact_text(f"I am {BOTH}") == f"I am {BOTH}"


def test_each_runtimes_inbox_masks_with_its_own_detectors(tmp_path):
    a, b = employees(tmp_path), customers(tmp_path)  # b built last
    a_turn, _ = stored(a, submit(a, f"I am {BOTH}"))
    b_turn, _ = stored(b, submit(b, f"I am {BOTH}"))
    assert a_turn.input == f"I am [employee] and {CUSTOMER}"
    assert b_turn.input == f"I am {EMPLOYEE} and [customer]"


def test_two_runtimes_serving_together_each_store_and_log_with_their_own(tmp_path):
    def script():
        return ScriptedModel([tool_call("lookup", {"who": BOTH}), text(f"it is {BOTH}")])

    a, b = employees(tmp_path, script()), customers(tmp_path, script())
    a_id, b_id = submit(a, f"who is {BOTH}?"), submit(b, f"who is {BOTH}?")
    logs = io.StringIO()
    configure_logging(fmt="json", stream=logs)
    try:

        async def both() -> None:
            await asyncio.gather(
                a.serve(asyncio.Event(), until_idle=True, sources=()),
                b.serve(asyncio.Event(), until_idle=True, sources=()),
            )

        asyncio.run(both())
    finally:
        structlog.reset_defaults()
    a_turn, a_all = stored(a, a_id)
    b_turn, b_all = stored(b, b_id)
    assert a_turn.output == f"it is [employee] and {CUSTOMER}"
    assert b_turn.output == f"it is {EMPLOYEE} and [customer]"
    assert EMPLOYEE not in a_all and CUSTOMER in a_all  # the tool call's step included
    assert CUSTOMER not in b_all and EMPLOYEE in b_all
    lookups = sorted(
        event["who"]
        for event in map(json.loads, logs.getvalue().splitlines())
        if event["event"] == "lookup.called"
    )
    assert lookups == sorted([f"[employee] and {CUSTOMER}", f"{EMPLOYEE} and [customer]"])


def test_a_value_registered_as_secret_is_masked_from_then_on_even_in_a_text_seen_clean():
    from toolang_core import MASK, RedactionPolicy

    policy = RedactionPolicy()
    said = "the vault code is wobbegong-4711, keep it"
    assert policy.text(said) == said  # remembered as clean
    assert policy.composed(said, [said]) == said
    assert policy.mask_values(["wobbegong-4711", "wobbegong-4711"]) == 1
    assert policy.text(said) == f"the vault code is {MASK}, keep it"
    assert policy.value({"note": said}) == {"note": f"the vault code is {MASK}, keep it"}
    assert policy.known_value_count == 1
    assert policy.mask_values(["wobbegong-4711"]) == 0
    # Another runtime's policy knows nothing of it.
    assert RedactionPolicy().text(said) == said


def test_a_value_too_short_to_mask_is_refused():
    from toolang_core import RedactionPolicy

    with pytest.raises(ValueError, match="at least 6 characters long, found 3"):
        RedactionPolicy().mask_values(["abc"])


def test_a_secret_parameter_must_be_named_so_the_policy_masks_it_where_recorded():
    from toolang_core import Tool

    def keep(name: str, secret: str, label: str) -> str:
        """Keep it."""
        return name

    assert Tool.from_function(keep, secret_params=("secret",)).secret_params == ("secret",)
    with pytest.raises(ValueError, match="secret_params names 'label'"):
        Tool.from_function(keep, secret_params=("label",))


def test_a_short_text_seen_clean_outlives_many_long_ones_and_is_forgotten_with_a_new_secret():
    # A remembered exchange is recalled hundreds of turns after it was written; each
    # turn's long texts (its system prompt) must not push it out of the clean texts.
    from toolang_core import MASK, RedactionPolicy

    policy = RedactionPolicy()
    exchange = "user: my code is wobbegong-4711 adder: noted"
    policy.composed(exchange, ["user", "my code is wobbegong-4711", "adder", "noted"])
    for n in range(3_000):
        prompt = f"you are the adder, turn {n}\n" + "instructions " * 200
        policy.composed(prompt, [prompt])
    assert policy.known_clean(exchange)
    assert not policy.known_clean("you are the adder, turn 0\n" + "instructions " * 200)
    policy.mask_values(["wobbegong-4711"])
    assert not policy.known_clean(exchange)
    assert policy.text(exchange) == f"user: my code is {MASK} adder: noted"

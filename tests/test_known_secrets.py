"""What a runtime holds as secrets — every ``Secret`` of its plugins' settings and the
operator's credential — is masked wherever it turns up in text: a tool that echoes it,
a turn's input, the log."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Mapping

import attrs
import structlog

from toolang_core import NewTurnRequest, Tool, hookimpl
from toolang_core.config.types import Secret
from toolang_core.credential import ensure_credential
from toolang_core.logs import configure_logging
from toolang_core.runtime.redactors import known_secrets
from toolang_core.testing.models import ScriptedModel, text, tool_call

TOKEN = "bob-token-0123456789ab"
SHORT = "abc"  # too short to be masked as a known value: left alone, never refused


@attrs.frozen
class ApiSettings:
    tokens: Mapping[str, Secret] = attrs.field(factory=dict)
    fallback: Secret | None = None


class Api:
    """A plugin with secret settings and a tool that repeats what it is told."""

    @hookimpl
    def toolang_register_settings(self, register):
        register(ApiSettings)

    @hookimpl
    def toolang_register_tools(self, register):
        def echo(said: str) -> str:
            """Say it back."""
            return f"you said {said}"

        register(Tool.from_function(echo, blocking=False))


def test_secrets_are_found_in_nested_settings():
    settings = {
        "api": ApiSettings({"bob": Secret(TOKEN), "al": Secret(SHORT)}, Secret("k" * 12)),
        "otel": {"headers": {"X-Scope-OrgID": Secret("tenant1")}},  # a word, not masked
    }
    assert sorted(known_secrets(settings)) == sorted([TOKEN, "k" * 12])


def test_a_plugins_token_and_the_operators_credential_are_masked_in_a_turn(
    toolang_runtime, toolang_home
):
    credential_path = toolang_home.path / ".toolang" / "credential"
    ensure_credential(credential_path)
    credential = credential_path.read_text().strip()
    said = f"{TOKEN} and {credential}"
    model = ScriptedModel([tool_call("echo", {"said": said}), text(f"done: {said}")])
    runtime = toolang_runtime(
        f'[models]\ndefault = "scripted"\n[plugins.api]\ntokens = {{ bob = "{TOKEN}" }}\n',
        plugins={"api": Api(), "scripted": model.plugin()},
    )
    log = io.StringIO()
    inbox = runtime.open_inbox()
    turn_id = inbox.submit(NewTurnRequest(source="chat", thread_id="cli:t", input=said)).id
    configure_logging(level="debug", fmt="json", stream=log)
    try:
        asyncio.run(runtime.serve(asyncio.Event(), until_idle=True, sources=()))
    finally:
        structlog.reset_defaults()
    assert "turn.finished" in log.getvalue()
    turn = inbox.get(turn_id)
    stored = [turn.input, turn.output or "", *(str(s.data) for s in inbox.store.steps(turn_id))]
    inbox.store.close()
    assert "you said" in " ".join(stored)  # the tool ran and its output was recorded
    for text_ in [*stored, log.getvalue()]:
        assert TOKEN not in text_
        assert credential not in text_

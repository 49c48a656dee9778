"""toolang-source-chat, alone: the source, its settings and `toolang chat`."""

from __future__ import annotations

import asyncio
import json

import toolang_source_chat as plugin

ECHO = '[runtime]\nexecutor = "echo"\n'
ENV = {"TOOLANG_LOAD_PLUGINS": "source-chat"}


def test_registers_the_chat_source_and_its_command(toolang_host, toolang_register):
    record = toolang_register(plugin, "source-chat")
    assert set(record.hooks) == {
        "toolang_register_commands",
        "toolang_register_settings",
        "toolang_register_turn_sources",
    }
    assert "chat" in toolang_host.components.of_kind("turn source")


def test_chat_source_has_no_background_work(toolang_runtime):
    runtime = toolang_runtime(ECHO, plugins={"source-chat": plugin})
    source = runtime.turn_sources(["chat"])["chat"]
    assert asyncio.run(source.run(runtime.open_inbox(), asyncio.Event())) is None


def test_chat_answers_without_a_running_runtime(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    result = toolang_cli("chat", "hello there", env=ENV)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello there\n"  # the echo executor answers with the input
    turns = json.loads(toolang_cli("turns", "list", "--json", env=ENV).stdout)
    (turn,) = turns
    assert (turn["thread_id"], turn["channel"], turn["source"]) == ("cli:default", "cli", "chat")


def test_threads_keep_the_conversation(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    for text in ("one", "two"):
        assert toolang_cli("chat", "--thread", "work", text, env=ENV).returncode == 0
    shown = toolang_cli("threads", "show", "cli:work", env=ENV)
    assert shown.stdout.count("[completed]") == 2


def test_no_wait_prints_the_request_id(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    result = toolang_cli("chat", "--no-wait", "later", env=ENV)
    assert result.returncode == 0
    turn_id = result.stdout.strip()
    shown = json.loads(toolang_cli("turns", "show", turn_id, "--json", env=ENV).stdout)
    assert shown["turn"]["status"] == "queued"


def test_interactive_session_on_one_thread(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    result = toolang_cli("chat", "-i", "--thread", "talk", env=ENV, input="first\nsecond\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("first") == 1
    assert "second" in result.stdout
    assert "chatting on cli:talk" in result.stderr


def test_a_missing_message_is_a_usage_error(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    toolang_home.write_config("[plugins.source-chat]\nwait_seconds = 0.5\n")
    missing = toolang_cli("chat", env=ENV)
    assert missing.returncode == 2
    assert "give a MESSAGE" in missing.stderr


def test_settings_are_validated(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO + '[plugins.source-chat]\nwait_seconds = "soon"\n')
    result = toolang_cli("chat", "x", env=ENV)
    assert result.returncode == 2
    assert "plugins.source-chat.wait_seconds: expected a number" in result.stderr

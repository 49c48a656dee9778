"""`toolang chat --schema FILE` (a real CLI subprocess, the script-file model): a typed
answer, validated and asked again when invalid; `--json` prints it as a JSON value."""

from __future__ import annotations

import json

import pytest

AGENT = '[runtime]\nexecutor = "agent"\npoll_seconds = 0.05\n[models]\ndefault = "scripted"\n'
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
}


@pytest.fixture
def scripted(toolang_distribution, toolang_home, tmp_path):
    """The script-file model and a schema file; returns (environment, script path)."""
    toolang_distribution(
        "toolang-test-chat-scripted",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
    (tmp_path / "weather.json").write_text(json.dumps(SCHEMA))
    toolang_home.write_config(AGENT)
    script = tmp_path / "script.json"
    env = {
        "TOOLANG_LOAD_PLUGINS": "source-chat,scripted",
        "TOOLANG_SCRIPT": str(script),
        "PYTHONPATH": str(toolang_distribution.root),
    }
    return env, script


def test_chat_schema_retries_an_invalid_answer_and_json_prints_the_value(
    toolang_cli, scripted, tmp_path
):
    env, script = scripted
    script.write_text(
        json.dumps([{"text": "Oslo, 4.5 C"}, {"text": '{"city": "Oslo", "celsius": 4.5}'}])
    )
    result = toolang_cli(
        "chat", "--schema", str(tmp_path / "weather.json"), "--json", "weather in Oslo?", env=env
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["status"] == "completed"
    assert shown["output"] == {"city": "Oslo", "celsius": 4.5}  # data, not a string
    trace = toolang_cli("turns", "trace", shown["turn_id"], env=env)
    assert "answer 1 of 3 rejected: the answer is not JSON" in trace.stdout
    assert "answer 2 of 3 matches the schema of the request" in trace.stdout


def test_chat_schema_without_json_prints_the_json_text(toolang_cli, scripted, tmp_path):
    env, script = scripted
    script.write_text(json.dumps([{"text": '{"city": "Oslo", "celsius": 4.5}'}]))
    result = toolang_cli("chat", "--schema", str(tmp_path / "weather.json"), "hi", env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"city": "Oslo", "celsius": 4.5}


def test_chat_an_answer_never_valid_fails_invalid_output(toolang_cli, scripted, tmp_path):
    env, script = scripted
    script.write_text(json.dumps([{"text": "[]"}] * 3))
    result = toolang_cli(
        "chat", "--schema", str(tmp_path / "weather.json"), "--json", "hi", env=env
    )
    assert result.returncode == 1
    shown = json.loads(result.stdout)
    assert (shown["status"], shown["outcome"]) == ("failed", "invalid_output")
    assert "attempt 3: answer must be object" in shown["error"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "--schema: schema file '{path}' does not exist"),
        ("{not json", "--schema: schema file '{path}' is not JSON (line 1, column 2"),
        ('{"type": "strng"}', "--schema (file '{path}'): not a valid JSON Schema"),
    ],
)
def test_chat_a_bad_schema_file_is_refused_before_anything_is_submitted(
    toolang_cli, scripted, tmp_path, content, expected
):
    env, _ = scripted
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    result = toolang_cli("chat", "--schema", str(path), "hi", env=env)
    assert result.returncode != 0
    assert expected.format(path=path) in result.stderr
    assert "Traceback" not in result.stderr
    listed = toolang_cli("turns", "list", "--json", env=env)
    assert json.loads(listed.stdout or "[]") == [], listed.stderr  # no store, or no turn

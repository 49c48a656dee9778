"""`exec_run` sees an allow-list of the runtime's environment, never the rest (API keys),
plus `env_set` and the `TOOLANG_TOOL_CALL` marker. Real `toolang run`, real shell."""

from __future__ import annotations

from pathlib import Path

from operator_kit import CONFIG, ServedHome, exec_step, install_scripted_model


def env_seen_by_exec_run(tmp_path: Path, config: str) -> dict[str, str]:
    site = tmp_path / "site"
    install_scripted_model(site)
    home = ServedHome(tmp_path / "home", site, [exec_step("env"), {"text": "done"}], config)
    home.start({"OPENAI_API_KEY": "sk-runtime-secret", "OPERATOR_TEST_ALLOWED": "yes"})
    try:
        turn_id = home.submit("show the environment", "--thread", "chat:env")
        shown = home.wait_until_ended(turn_id)
    finally:
        home.stop()
    assert shown["turn"]["status"] == "completed", shown["turn"]
    (call,) = [s for s in shown["steps"] if s["kind"] == "tool_call"]
    stdout = call["data"]["result"]["output"]["stdout"]
    env = dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)
    env["_turn"] = turn_id
    return env


def test_exec_run_does_not_see_the_runtimes_variables_unless_allowed(tmp_path):
    env = env_seen_by_exec_run(tmp_path, CONFIG)
    assert "OPENAI_API_KEY" not in env
    assert "OPERATOR_TEST_ALLOWED" not in env
    assert "PYTHONPATH" not in env and not any(k.startswith("TOOLANG_S") for k in env)
    assert env["PATH"]  # the default allow-list: PATH, HOME, LANG, LC_*, …
    assert env["TOOLANG_TOOL_CALL"].startswith(env["_turn"] + ":")


def test_env_allow_and_env_set_choose_what_it_sees(tmp_path):
    config = CONFIG + 'env_allow = ["PATH", "OPERATOR_TEST_*"]\nenv_set = { MODE = "ci" }\n'
    env = env_seen_by_exec_run(tmp_path, config)
    assert env["OPERATOR_TEST_ALLOWED"] == "yes"
    assert env["MODE"] == "ci"
    assert "OPENAI_API_KEY" not in env and "HOME" not in env
    assert "TOOLANG_TOOL_CALL" in env  # always added

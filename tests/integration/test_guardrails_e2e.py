"""Model guardrails in real `toolang chat` processes, with the guard plugins installed as
distributions: toolang-hook-security-filter with `redact_answers` on masks the answer
(the chat prints the masked one), and a topic guard of its own distribution refuses a
question before the model is asked — the turn ends `failed` / `guardrail`, and
`toolang turns` and `toolang turns trace` say which plugin and rule refused it."""

from __future__ import annotations

import json
from pathlib import Path

from toolang_core.testing import make_distribution
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.runtimes import SCRIPTED_AGENT_CONFIG

EMAIL = "ann.smith@example.com"
CONFIG = SCRIPTED_AGENT_CONFIG + "\n[plugins.hook-security-filter]\nredact_answers = true\n"

TOPICS = """
from toolang_core import Refuse, hookimpl


@hookimpl
def toolang_check_model_input(messages, ctx):
    if "diagnose" in messages[-1].content:
        return Refuse("no-medical-advice", "asks for a diagnosis")
    return None
"""


def test_guards_mask_an_answer_and_refuse_a_question_end_to_end(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-scripted",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
    make_distribution(
        site,
        "toolang-test-topics",
        entry_points={"toolang": {"topics": "topics_guard"}},
        modules={"topics_guard": TOPICS},
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": f"Write to {EMAIL}."}]))
    home = tmp_path / "home"
    home.mkdir()
    (home / "toolang.toml").write_text(CONFIG)

    def toolang(*args: str):
        return run_toolang(
            *args, cwd=home, env={"TOOLANG_SCRIPT": str(script)}, pythonpath=[site], timeout=120
        )

    answered = toolang("chat", "how do I reach Ann?", "--thread", "a")
    assert answered.returncode == 0, answered.stderr
    assert "Write to " in answered.stdout and EMAIL not in answered.stdout

    refused = toolang("chat", "please diagnose this rash", "--thread", "b")
    assert refused.returncode != 0
    assert "guardrail 'no-medical-advice' of plugin 'topics'" in refused.stdout + refused.stderr

    listed = toolang("turns", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    by_thread = {t["thread_id"]: t for t in json.loads(listed.stdout)}
    assert by_thread["cli:a"]["status"] == "completed"
    assert (by_thread["cli:b"]["status"], by_thread["cli:b"]["outcome"]) == ("failed", "guardrail")
    shown = json.loads(toolang("turns", "show", by_thread["cli:a"]["id"], "--json").stdout)
    (masked,) = [s for s in shown["steps"] if s["kind"] == "guardrail"]
    assert masked["data"]["rewritten_by"][0]["plugin"] == "hook-security-filter"
    traced = toolang("turns", "trace", by_thread["cli:b"]["id"]).stdout
    assert "failed (guardrail)" in traced
    assert "refused by topics, rule no-medical-advice: asks for a diagnosis" in traced
    assert "model_call" not in traced  # refused before the model was asked

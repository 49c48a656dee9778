"""The provider as a plugin: cheap to load, found by entry point, never blocking."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import llm
import pytest
from model_llm_kit import agent_runtime, run_turn

from toolang_core import TurnStatus


class SyncOnlyModel(llm.Model):
    """An llm model with no async version; records the thread it ran on."""

    model_id = "sync-only"

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []

    def execute(self, prompt, stream, response, conversation=None):
        self.threads.append(threading.current_thread())
        yield "from a thread"


@pytest.fixture
def sync_only_model():
    model = SyncOnlyModel()

    class Plugin:
        @staticmethod
        @llm.hookimpl
        def register_models(register):
            register(model)

    plugin = Plugin()
    llm.plugins.pm.register(plugin, name="toolang-test-sync-only")
    yield model
    llm.plugins.pm.unregister(plugin)


def test_importing_the_plugin_does_not_import_llm():
    probe = "import sys, toolang_model_llm; print('llm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert out.stdout.strip() == "False", out.stderr


def test_a_sync_only_model_runs_in_a_worker_thread_not_on_the_event_loop(
    toolang_runtime, sync_only_model
):
    extra = '\n[plugins.model-llm]\noffline_models = ["sync-only"]\n'
    turn, _ = run_turn(agent_runtime(toolang_runtime, "llm/sync-only", extra=extra), "hi")
    assert (turn.status, turn.output) == (TurnStatus.COMPLETED, "from a thread")
    (thread,) = sync_only_model.threads
    assert thread is not threading.main_thread()


def test_a_real_runtime_finds_the_plugin_by_entry_point_and_answers_with_echo(
    toolang_cli, toolang_home
):
    toolang_home.write_config('[models]\ndefault = "llm/echo"\n')
    env = {"TOOLANG_LOAD_PLUGINS": "model-llm"}
    submitted = toolang_cli("submit", "hello", "--thread", "cli:t", env=env)
    assert submitted.returncode == 0, submitted.stderr
    ran = toolang_cli("run", "--until-idle", "--no-sources", env=env)
    assert ran.returncode == 0, ran.stderr
    (turn,) = json.loads(toolang_cli("turns", "list", "--json", env=env).stdout)
    assert turn["status"] == "completed", turn
    assert json.loads(turn["output"])["prompt"] == "hello"

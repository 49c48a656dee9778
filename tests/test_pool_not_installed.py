"""The agent pool is a plugin (toolang-agent-pool): a runtime without it delegates as
before and reports no outcome; asking for the pool, ``toolang agents pool`` and a
configuration naming it say which distribution to install. "Not installed" is made
real by loading from no entry point at all (or an allow-list without it), so the tests
hold in the integration env too, where toolang-agent-pool is installed."""

from __future__ import annotations

import pytest

from toolang_core import PoolNotInstalled
from toolang_core.config import load_config
from toolang_core.config.settings import unowned_sections
from toolang_core.plugins import PluginHost
from toolang_core.testing.cli import run_toolang
from toolang_core.testing.delegation import asking_cast, make_runtime, run_turn
from toolang_core.testing.pool import POOL_AGENTS_PLUGIN, install_pool_agents

HINT = "(it comes with toolang-agent-pool: pip install toolang-agent-pool)"


def test_ask_agent_works_without_the_pool_and_nothing_is_recorded(tmp_path):
    runtime = make_runtime(tmp_path, asking_cast())
    turn = run_turn(runtime, "ask")
    assert turn.status == "completed"
    store = runtime.open_store()
    try:
        assert store.get_record("agent_pool", "researcher") is None
        with pytest.raises(PoolNotInstalled) as raised:
            runtime.agents.pool(store)
    finally:
        store.close()
    assert str(raised.value).endswith(HINT)


def test_a_pool_section_says_which_distribution_to_install(tmp_path):
    (tmp_path / "toolang.toml").write_text("[plugins.agent-pool]\nping_seconds = 5\n")
    config = load_config(tmp_path / "toolang.toml", env={})
    host = PluginHost.from_config(config, {}, entry_points=[])
    errors, warnings = unowned_sections(config, host)
    assert errors == []
    assert warnings == [
        f"{config.display_name}: plugins.agent-pool: no installed plugin is named "
        f"'agent-pool' {HINT}; section ignored until one is installed"
    ]


@pytest.mark.slow
def test_agents_pool_without_the_plugin_names_its_distribution(tmp_path, toolang_distribution):
    install_pool_agents(tmp_path, toolang_distribution)
    result = run_toolang(
        "agents",
        "pool",
        cwd=tmp_path,
        env={"TOOLANG_LOAD_PLUGINS": POOL_AGENTS_PLUGIN},
        pythonpath=[toolang_distribution.root],
    )
    assert result.returncode == 2, result.stdout
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        f"error: the agent pool is not installed: no plugin answers toolang_agent_pool {HINT}"
    )

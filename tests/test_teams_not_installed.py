"""Teams are a plugin (toolang-teams): a runtime whose configuration names it runs
without it, and every place the configuration names it says which distribution to
install. "Not installed" is made real by loading from no entry point at all, so the
tests hold in the integration env too, where toolang-teams is installed."""

from __future__ import annotations

from pathlib import Path

from toolang_core.cli.group import PLUGIN_COMMANDS
from toolang_core.config import load_config
from toolang_core.config.settings import unowned_sections
from toolang_core.plugins import PluginHost
from toolang_core.runtime import Runtime
from toolang_core.testing.runtimes import run_turn

HINT = "(it comes with toolang-teams: pip install toolang-teams)"
RUNTIME = '[runtime]\nexecutor = "echo"\npoll_seconds = 0.05\n'


def host_without_plugins(tmp_path: Path, toml: str) -> tuple[PluginHost, object]:
    (tmp_path / "toolang.toml").write_text(RUNTIME + toml)
    config = load_config(tmp_path / "toolang.toml", env={})
    return PluginHost.from_config(config, {}, entry_points=[]), config


def test_a_load_list_naming_teams_says_which_distribution_to_install(tmp_path):
    host, _ = host_without_plugins(tmp_path, '[plugins]\nload = ["teams"]\n')
    (warning,) = [w for w in host.warnings if "'teams'" in w]
    assert warning.endswith(
        f"names 'teams', but no installed plugin has that entry-point or distribution name {HINT}"
    )


def test_requiring_teams_says_which_distribution_to_install(tmp_path):
    host, _ = host_without_plugins(tmp_path, '[plugins]\nrequired = ["teams"]\n')
    (problem,) = host.required_problems()
    assert f"required plugin 'teams' ([plugins] required) is not installed {HINT}" in (
        problem.message
    )


def test_a_teams_section_says_which_distribution_to_install(tmp_path):
    host, config = host_without_plugins(tmp_path, "[plugins.teams]\nsweep = true\n")
    errors, warnings = unowned_sections(config, host)  # type: ignore[arg-type]
    assert errors == []
    assert warnings == [
        f"{config.display_name}: plugins.teams: no installed plugin is named 'teams' "
        f"{HINT}; section ignored until one is installed"
    ]


def test_a_runtime_whose_config_names_teams_runs_without_it(tmp_path):
    host, config = host_without_plugins(
        tmp_path, '[plugins]\nload = ["teams"]\n\n[plugins.teams]\nsweep = true\n'
    )
    runtime = Runtime(config, host, env={})  # type: ignore[arg-type]
    assert "team_form" not in runtime.host.components.tools
    run_turn(runtime, "hello")  # served, completed (checked by run_turn)


def test_the_teams_command_names_its_distribution():
    assert PLUGIN_COMMANDS["teams"] == "toolang-teams"

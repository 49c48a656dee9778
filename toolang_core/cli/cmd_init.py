"""``toolang init``: write a commented starter configuration."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolang_core.cli.state import CliState, pass_state
from toolang_core.errors import UsageError

if TYPE_CHECKING:
    from toolang_core.config.model import ToolangConfig


@click.command()
@click.option(
    "--path",
    "path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Where to write it (default: ./toolang.toml or --config).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.option("--exist-ok", is_flag=True, help="Keep an existing file and succeed.")
@pass_state
def init(state: CliState, *, path: Path | None, force: bool, exist_ok: bool) -> None:
    """Write a commented starter toolang.toml that loads as-is."""
    from toolang_core.config.loader import CONFIG_NAME, parse_config
    from toolang_core.config.starter import starter_config
    from toolang_core.plugins.loader import scan_entry_points

    target = path or state.config_path or Path(CONFIG_NAME)
    if target.exists() and not force:
        if exist_ok:
            click.echo(f"keeping {target}")
            _make_secrets(state, target)
            _path_hint()
            return
        raise UsageError(f"{target} already exists; pass --force to overwrite it")
    policy = state.policy()  # installed and allowed plugins only
    text = starter_config({i.name for i in scan_entry_points() if policy.refusal(i) is None})
    config = parse_config(text, file=target, env=state.env)  # the starter must always load
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    click.echo(f"wrote {target}")
    _make_secrets(state, target, config)
    click.echo("next: `toolang doctor` checks it; `toolang plugins` lists what is installed")
    _path_hint()


def _make_secrets(state: CliState, target: Path, config: ToolangConfig | None = None) -> None:
    """Make the operator's credential and the approval key in the home (mode 0600,
    kept when they exist); a configuration that does not load is left to the commands
    that use it to report."""
    from toolang_core.config.loader import load_config
    from toolang_core.credential import ensure_credential
    from toolang_core.errors import ConfigError
    from toolang_core.tools.approval_seal import ApprovalKeyFile

    if config is None:
        try:
            config = load_config(target, env=state.env)
        except ConfigError:
            return
    ensure_credential(config.credential_path)
    key = ApprovalKeyFile(config.approval_key_path)
    if not key.exists():
        key.create()


def _path_hint() -> None:
    """Say how to reach this toolang by name when the shell's PATH finds another (or
    none) — e.g. right after README command 1 installed it into ``.venv``."""
    from toolang_core.cli.hints import path_hint

    how = path_hint()
    if how is not None:
        click.echo(f"`toolang` is not on your PATH in this shell: run `{how}` in each terminal")

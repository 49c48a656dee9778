"""``toolang doctor``: check the configuration, plugins and state; exit 1 on failure."""

from __future__ import annotations

import json
import sys

import click

from toolang_core.cli.state import CliState, pass_state

_MARK = {"ok": "ok  ", "info": "info", "warn": "warn", "fail": "FAIL"}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@pass_state
def doctor(state: CliState, as_json: bool) -> None:
    """Run real checks and exit non-zero when any of them fails."""
    from toolang_core.cli.group import ToolangGroup
    from toolang_core.cli.main import BUILTIN_COMMANDS
    from toolang_core.doctor import run_checks

    commands = ToolangGroup(name="toolang", lazy_commands=BUILTIN_COMMANDS)
    findings = run_checks(state.config_path, env=state.env, commands=commands)
    failed = [f for f in findings if f.status == "fail"]
    if as_json:
        click.echo(json.dumps([f.to_json() for f in findings], indent=2))
    else:
        for finding in findings:
            click.echo(f"{_MARK[finding.status]}  {finding.area:<10} {finding.summary}")
            for line in finding.details:
                click.echo(f"{'':16}{line}")
        click.echo(f"{len(failed)} problem(s) found" if failed else "no problems found")
    if failed:
        sys.exit(1)

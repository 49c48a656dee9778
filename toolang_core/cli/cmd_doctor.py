"""``toolang doctor``: check the configuration, plugins and state; exit 1 on failure."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from toolang_core.cli.state import CliState, pass_state

if TYPE_CHECKING:
    from toolang_core.doctor.check import DoctorCheck

_MARK = {"ok": "ok  ", "info": "info", "warn": "warn", "fail": "FAIL"}


def _colour(finding: DoctorCheck) -> str | None:
    # A tool sandbox that is off is only a warning (the operator chose it), but one
    # nobody may overlook: red like a failure.
    if finding.status == "fail" or (finding.area == "sandbox" and finding.status == "warn"):
        return "red"
    return "yellow" if finding.status == "warn" else None


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
            line = f"{_MARK[finding.status]}  {finding.area:<10} {finding.summary}"
            click.secho(line, fg=_colour(finding))  # no colour unless on a terminal
            for detail in finding.details:
                click.echo(f"{'':16}{detail}")
        click.echo(f"{len(failed)} problem(s) found" if failed else "no problems found")
    if failed:
        sys.exit(1)

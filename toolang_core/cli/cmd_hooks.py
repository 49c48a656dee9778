"""``toolang hooks``: every hook family and the implementations actually registered."""

from __future__ import annotations

import json
from typing import Any

import click

from toolang_core.cli.state import CliState, pass_state


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@pass_state
def hooks(state: CliState, as_json: bool) -> None:
    """Show each hook family and the plugins implementing each hook, in call order.

    The tool-call chain is shown in its fixed order (SecurityFilter → ApprovalGate →
    execute → LearningObserver → KnowledgeSaver → EventPublisher) with the plugins
    registered at each stage — what will really run, not what is configured.
    """
    from toolang_core.hookspecs import FAMILIES

    host = state.host
    host.components  # noqa: B018 - a plugin failing its registration hooks is dropped first
    facade = host.hooks
    families: list[dict[str, Any]] = []
    for family in FAMILIES:
        if family.key == "tool-hooks":
            entries: list[dict[str, Any]] = [
                {"stage": stage, "hook": hook, "plugins": impls}
                for stage, hook, impls in facade.chain()
            ]
            in_chain = {entry["hook"] for entry in entries}
            entries += [
                {"hook": hook, "plugins": facade.implementations(hook)}
                for hook in family.hook_names
                if hook not in in_chain
            ]
        else:
            entries = [
                {"hook": hook, "plugins": facade.implementations(hook)}
                for hook in family.hook_names
            ]
        families.append({"family": family.key, "title": family.title, "hooks": entries})
    if as_json:
        click.echo(json.dumps(families, indent=2))
        return
    for fam in families:
        click.echo(f"{fam['title']} ({fam['family']})")
        for entry in fam["hooks"]:
            label = f"{entry['stage']:<16} " if "stage" in entry else ""
            if entry["hook"] == "execute":
                click.echo(f"  {label}(the tool runs here)")
                continue
            impls = ", ".join(entry["plugins"]) or "-"
            click.echo(f"  {label}{entry['hook']:<30} {impls}")

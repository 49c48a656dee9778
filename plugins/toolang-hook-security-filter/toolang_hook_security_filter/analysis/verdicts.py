"""What a judgement finds: a risk level, the rule that found it and why."""

from __future__ import annotations

from typing import Final, Literal

import attrs

Risk = Literal["block", "approve"]
CommandRuleName = Literal[
    "fs-wipe", "fs-permissions", "data-dir-delete", "credential-delete", "dynamic-delete",
    "disk-destroy", "log-wipe", "privesc", "persistence", "reverse-shell", "credential-exfil",
    "dns-exfil", "container-escape", "kernel-module", "kernel-setting", "security-off",
    "system-halt", "git-force-push", "git-rewrite", "cloud-teardown", "destructive-sql",
    "sql-privilege", "download-exec", "piped-script", "fork-bomb", "log-delete",
    "secret-read", "obfuscated-script",
]  # fmt: skip
"""The names of the parsing rules (:mod:`.programs`, :mod:`.programs_net`,
:mod:`.cloud_judge`, :mod:`.python_judge`, :mod:`.script_judge`, :mod:`.sql_judge`): a
name in ``disable_rules`` switches that rule off."""
RISKS: Final = ("block", "approve")


@attrs.frozen
class Finding:
    """A rule's verdict on what a call would do.

    ``block``: never legitimate from an agent (wiping ``/``, a reverse shell);
    ``approve``: sometimes legitimate, never unattended (``terraform destroy``).
    """

    risk: Risk
    rule: str
    reason: str


def block(rule: str, reason: str) -> Finding:
    return Finding("block", rule, reason)


def approve(rule: str, reason: str) -> Finding:
    return Finding("approve", rule, reason)


def worst(findings: list[Finding]) -> Finding | None:
    """The first blocking finding, else the first asking one."""
    for finding in findings:
        if finding.risk == "block":
            return finding
    return findings[0] if findings else None

"""The default rules: named regular expressions matched against every string of a call.

Each rule has a name (what ``disable_rules`` takes), the reason the model is told and
one or more alternatives: a pattern and its *hints*, words or symbols of which every
match holds one (see :mod:`.hints`). A string that holds none of an alternative's hints
is never run through its pattern. Patterns are compiled once per runtime, never at
import, with their literals lowercased, and run on the lowercased string: matching is
case-insensitive. The pieces they are built from, and why they are shaped as they are,
are in :mod:`.fragments`; what a rule is made of, in :mod:`.spec`. The blocking rules
live in :mod:`.rules_damage` and :mod:`.rules_intrusion`; this module puts them in the
order they are tried, with the warning rules, and names them all.

The patterns are written against POSIX shell syntax, plus the Windows, PowerShell,
Python and Node forms agents actually produce. They judge text, not intent: a command
quoted in a document matches the same as a command about to run (see the README).
"""

from __future__ import annotations

from typing import Final

from toolang_hook_security_filter.fragments import (
    END,
    FIND,
    RM,
    WORLD_WRITABLE,
    Q,
    later,
    recursive,
    upto,
    w,
)
from toolang_hook_security_filter.rule_names import RuleName
from toolang_hook_security_filter.rules_damage import DAMAGE
from toolang_hook_security_filter.rules_intrusion import INTRUSION
from toolang_hook_security_filter.rules_self_approval import SELF_APPROVAL
from toolang_hook_security_filter.spec import Alternative, RuleSpec, alt, spec

__all__ = ["DANGEROUS", "OBSERVED", "Alternative", "RuleName", "RuleSpec"]

DANGEROUS: Final[tuple[RuleSpec, ...]] = (*DAMAGE, *INTRUSION, SELF_APPROVAL)
"""Rules whose match blocks the call."""

OBSERVED: Final[tuple[RuleSpec, ...]] = (
    spec(
        "recursive-delete-of-working-directory",
        "recursively deletes everything in the working directory",
        alt(
            rf"{RM}{recursive('rm')}{later('rm')}(?:--\s+)?{Q}(?:\.|\./|\./\*|\*|\.\*){Q}{END}",
            "rm",
        ),
        alt(rf"{FIND}\s+{Q}\.?/?{Q}\s+-delete\b", "find"),
    ),
    spec(
        "inline-interpreter",
        "runs inline interpreter code (often used to hide intent)",
        alt(
            w("python", "python2", "python3", "perl", "ruby", "node", "php") + r"\s+-[ce]\s",
            *("python", "perl", "ruby", "node", "php"),
        ),
    ),
    spec("sudo", "asks for elevated privileges", alt(rf"{w('sudo')}\s", "sudo")),
    spec(
        "chmod-world-writable",
        "makes files writable by everyone",
        alt(rf"{w('chmod')}\s+(?:-\S+\s+)*{WORLD_WRITABLE}\s", "chmod"),
    ),
    spec(
        "destructive-sql",
        "drops or empties a table, or deletes every row",
        alt(rf"{w('drop')}\s+table\b", "drop"),
        alt(rf"{w('truncate')}\s+(?:table\s+)?\w", "truncate"),
        alt(rf"{w('delete')}\s+from\s+[\w.\"`]+\s*(?:;|$)", "delete"),
    ),
    spec(
        "cloud-mass-delete",
        "deletes cloud resources in bulk",
        alt(rf"{w('terraform')}\s+destroy\b", "terraform"),
        alt(
            rf"{w('kubectl')}\s+delete\b{upto('kubectl')}(?:--all\b|\bnamespaces?\b|\bns\b)",
            "kubectl",
        ),
        alt(
            rf"{w('aws')}\s+s3\s+(?:rm\b{upto('aws')}--recursive|rb\b{upto('aws')}--force)",
            "aws",
        ),
        alt(rf"{w('gcloud')}\s+projects\s+delete\b", "gcloud"),
        alt(rf"{w('gsutil')}\s+(?:-m\s+)?rm\s+-r\b", "gsutil"),
    ),
    spec(
        "force-push",
        "rewrites the history of a remote branch",
        alt(
            rf"{w('git')}\s+push\b{upto('git')}\s(?:--force\b|-f\b|--force-with-lease\b|\+\w)",
            "push",
        ),
    ),
)
"""Rules whose match lets the call through with a recorded warning."""

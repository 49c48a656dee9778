"""The blocking rule against an agent deciding approvals: only people decide them.

The approval path refuses a decision from a process a tool started (the runtime marks
them with ``TOOLANG_TOOL_CALL``); this rule stops the obvious attempt before it runs,
and says why, whatever tool carries it. See :mod:`.rules` for how rules are written."""

from __future__ import annotations

from typing import Final

from toolang_hook_security_filter.spec import RuleSpec, alt, spec

SELF_APPROVAL: Final[RuleSpec] = spec(
    "self-approval",
    "decides a toolang approval request; only a person may approve or deny one",
    # `toolang approvals approve|deny ID`, also through `python -m toolang_core`
    alt(r"\bapprovals\s+(?:approve|deny)\b", "approvals"),
    # the same from code: ApprovalBook(…).decide(…) or .grant(…)
    alt(r"\bapprovalbook\b[\s\S]{0,200}?\.\s*(?:decide|grant)\s*\(", "approvalbook"),
)

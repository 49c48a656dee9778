"""``[plugins.hook-security-filter]``: the settings, validated when the runtime starts."""

from __future__ import annotations

import re
from typing import Any, Literal

import attrs

from toolang_hook_security_filter.analysis.verdicts import CommandRuleName
from toolang_hook_security_filter.pii import PII_KINDS, PiiKind
from toolang_hook_security_filter.rule_names import RuleName

AnyRuleName = Literal[RuleName, CommandRuleName]


@attrs.frozen
class FilterSettings:
    """``[plugins.hook-security-filter]`` (the README documents each key)."""

    block_patterns: tuple[str, ...] = ()
    """Extra regular expressions: a string of a call that matches one blocks the call."""
    observe_patterns: tuple[str, ...] = ()
    """Extra regular expressions: a match lets the call through with a recorded warning."""
    disable_rules: tuple[AnyRuleName, ...] = ()
    """Default rules to switch off, by name (pattern rules and parsing rules alike)."""
    parse_commands: bool = True
    """Parse commands, inline code and SQL and judge what they do (block / approve)."""
    redact_params: bool = True
    """Mask personal data in the parameters before the tool runs."""
    redact_results: bool = True
    """Mask personal data in results before anyone (observers, traces, the model) sees them."""
    redact_answers: bool = False
    """Mask personal data in agents' final answers (the output guardrail) before they are
    stored and returned."""
    pii_kinds: tuple[PiiKind, ...] = PII_KINDS
    """Which kinds of personal data to mask."""
    exempt_tools: tuple[str, ...] = ()
    """Tools (names or ``fnmatch`` globs such as ``mail_*``) this filter leaves alone."""

    def __attrs_post_init__(self) -> None:
        problems = [
            problem
            for key in ("block_patterns", "observe_patterns")
            if (problem := _bad_patterns(key, getattr(self, key))) is not None
        ]
        if problems:
            from cattrs.errors import ClassValidationError

            # cattrs' own error shapes, so the config loader reports each bad pattern at
            # its key path (plugins.hook-security-filter.block_patterns[1]: …) exactly as
            # it reports a wrong type, and all of them at once.
            raise ClassValidationError(
                "invalid [plugins.hook-security-filter] settings", problems, type(self)
            )


def _bad_patterns(key: str, patterns: tuple[str, ...]) -> Exception | None:
    """A cattrs ``IterableValidationError`` naming each pattern that does not compile."""
    from cattrs.errors import (
        AttributeValidationNote,
        IterableValidationError,
        IterableValidationNote,
    )

    errors: list[Exception] = []
    for index, pattern in enumerate(patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            error = ValueError(f"{pattern!r} is not a valid regular expression ({exc})")
            error.__notes__ = [IterableValidationNote(f"@ index {index}", index, str)]
            errors.append(error)
    if not errors:
        return None
    problem = IterableValidationError(f"invalid {key}", errors, tuple[str, ...])
    note: Any = AttributeValidationNote(f"Structuring {key}", key, tuple[str, ...])
    problem.__notes__ = [note]
    return problem

"""What a default rule is made of: a name, a reason and alternatives (see :mod:`.rules`)."""

from __future__ import annotations

import attrs


@attrs.frozen
class Alternative:
    """One way a rule can match: a pattern and the hints any of whose match holds."""

    pattern: str
    hints: tuple[str, ...]
    """One of these is in every match (empty: always run). A hint is a *word* (lowercase
    letters: a whole run of letters of the lowercased string) or a *symbol* (a literal
    that does not start with a letter); see :mod:`.hints`."""


@attrs.frozen
class RuleSpec:
    """One default rule, uncompiled: it matches when any of its alternatives does."""

    name: str
    reason: str
    alternatives: tuple[Alternative, ...]
    tools: str | None = None
    """A regex over tool names: the rule applies only to the tools it matches."""
    written_path: bool = False
    """The rule looks only at the path of a file write (a mapping holding a path and a
    content), the whole string: see :data:`~.params.PATH_KEYS`."""


def alt(pattern: str, *hints: str) -> Alternative:
    """An alternative: ``pattern`` and the hints any of whose match holds."""
    return Alternative(pattern, hints)


def spec(
    name: str,
    reason: str,
    *alternatives: Alternative,
    tools: str | None = None,
    written_path: bool = False,
) -> RuleSpec:
    """A rule named ``name`` that matches when any of ``alternatives`` does."""
    return RuleSpec(name, reason, alternatives, tools, written_path)

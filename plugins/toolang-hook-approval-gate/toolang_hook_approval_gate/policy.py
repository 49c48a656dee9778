"""Which tool calls need a person's approval: ``[plugins.hook-approval-gate]``.

A pattern is either a tool's exact name (``fs_write``) or a prefix: a pattern ending
with ``_`` matches every tool whose name starts with it (``exec_`` matches
``exec_run``), and a trailing ``*`` is a prefix too (``fs*`` matches ``fs_read``; ``*``
alone matches every tool).

When a tool matches both lists, the most specific pattern wins — an exact name beats
any prefix, a longer prefix beats a shorter one — so ``require = ["exec_"]`` with
``auto_approve = ["exec_status"]`` asks for every ``exec_`` tool but ``exec_status``.
Equally specific patterns in both lists ask (the safe side). The same pattern may not
be in both lists; but when ``require`` is left out, naming one of its defaults in
``auto_approve`` takes it out of the defaults. A tool matching neither list follows
``default``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

if TYPE_CHECKING:
    from toolang_core import AskApproval, RuntimeView

NAME = "hook-approval-gate"
VERDICTS: Final = f"{NAME}.verdicts"
"""Plugin-state key: tool name → the policy's :class:`Verdict` on it."""
SECTION = f"[plugins.{NAME}]"
DEFAULT_REQUIRE = ("exec_", "fs_write", "secrets_", "crypto_", "request_tool")
"""Asked about without a `require` setting: programs, file writes, the vault's
secrets and keys (toolang-tools-vault), and an agent's request for a tool its role allows
but its turn was not given (``request_tool``: capability escalation, granted for the
turn only when this gate grants it)."""

Action = Literal["ask", "auto_approve", "abstain"]


def is_prefix(pattern: str) -> bool:
    return pattern.endswith(("_", "*"))


def matches(pattern: str, tool: str) -> bool:
    """Whether ``pattern`` — an exact name, or a prefix ending with ``_`` or ``*`` —
    names ``tool``."""
    if pattern.endswith("*"):
        return tool.startswith(pattern[:-1])
    if pattern.endswith("_"):
        return tool.startswith(pattern)
    return tool == pattern


def specificity(pattern: str) -> tuple[int, int]:
    """How specific a pattern is: exact names first, then longer prefixes."""
    stem = pattern.rstrip("*")
    return (0 if is_prefix(pattern) else 1, len(stem))


def _check_patterns(instance: object, attribute: Any, value: tuple[str, ...] | None) -> None:
    """Each pattern is a non-empty name or prefix; ``*`` may only end it."""
    for index, pattern in enumerate(value or ()):
        where = f"{attribute.name}[{index}]"
        if not pattern.strip():
            raise ValueError(f"{where}: expected a tool name or prefix, found an empty string")
        if "*" in pattern[:-1]:
            raise ValueError(
                f"{where}: '*' may only end a pattern (e.g. 'fs_*'), found {pattern!r}"
            )


def _check_timeout(
    instance: object, attribute: attrs.Attribute[float | None], value: float | None
) -> None:
    if value is not None and value <= 0:
        raise ValueError(
            f"{attribute.name}: expected a number of seconds > 0 (leave it out to wait "
            f"without limit), found {value}"
        )


@attrs.frozen
class Verdict:
    """What the policy says about one tool, and the pattern that said it — or, with
    ``asked_by``, the security filter rules that asked a person to decide."""

    action: Action
    pattern: str | None = None
    asked_by: str | None = None

    def describe(self) -> str:
        if self.asked_by is not None:
            return f"security filter {self.asked_by}"
        if self.pattern is None:
            return f"{SECTION} default = {'ask' if self.action == 'ask' else 'allow'!r}"
        listed = "require" if self.action == "ask" else "auto_approve"
        return f"{SECTION} {listed} {self.pattern!r}"


@attrs.frozen
class ApprovalGateSettings:
    """``[plugins.hook-approval-gate]``: the approval policy.

    ``require`` and ``auto_approve`` hold tool names or prefixes (see the module
    docstring for the matching rule); ``default`` decides for a tool matching neither:
    ``"allow"`` lets it run without asking, ``"ask"`` asks. ``timeout_seconds`` is how
    long a request waits for a decision before it is denied (leave it out to wait without
    limit — the turn's own ``[agents] turn_timeout_seconds`` still applies).
    """

    require: tuple[str, ...] | None = attrs.field(default=None, validator=_check_patterns)
    auto_approve: tuple[str, ...] = attrs.field(default=(), validator=_check_patterns)
    default: Literal["allow", "ask"] = "allow"
    timeout_seconds: float | None = attrs.field(default=None, validator=_check_timeout)

    def __attrs_post_init__(self) -> None:
        both = sorted(set(self.require or ()) & set(self.auto_approve))
        if both:
            raise ValueError(
                f"require and auto_approve both list {', '.join(map(repr, both))}; "
                "keep each pattern in one list"
            )

    @property
    def required(self) -> tuple[str, ...]:
        """``require``, or the defaults less what ``auto_approve`` names."""
        if self.require is not None:
            return self.require
        return tuple(p for p in DEFAULT_REQUIRE if p not in self.auto_approve)

    def verdict(self, tool: str) -> Verdict:
        """Ask, auto-approve or abstain for ``tool`` (the most specific pattern wins)."""
        required = _best(self.required, tool)
        approved = _best(self.auto_approve, tool)
        if required is not None and (
            approved is None or specificity(required) >= specificity(approved)
        ):
            return Verdict("ask", required)
        if approved is not None:
            return Verdict("auto_approve", approved)
        return Verdict("ask" if self.default == "ask" else "abstain")


def _best(patterns: tuple[str, ...], tool: str) -> str | None:
    found = [p for p in patterns if matches(p, tool)]
    return max(found, key=specificity) if found else None


def settings_of(runtime: RuntimeView | None) -> ApprovalGateSettings:
    """The validated ``[plugins.hook-approval-gate]`` section (defaults when absent)."""
    if runtime is None:
        return ApprovalGateSettings()
    return runtime.settings_for(NAME, ApprovalGateSettings)


def verdict_for(runtime: RuntimeView | None, tool: str) -> Verdict:
    """The policy's verdict on ``tool``, kept per runtime: asked on every tool call."""
    if runtime is None:
        return settings_of(None).verdict(tool)
    verdicts: dict[str, Verdict] = runtime.plugin_state(VERDICTS, dict)
    found = verdicts.get(tool)
    if found is None:
        found = verdicts[tool] = settings_of(runtime).verdict(tool)
    return found


def asked_verdict(asked: tuple[AskApproval, ...]) -> Verdict:
    """Ask, naming the rules: a filter's :class:`~toolang_core.AskApproval` overrides
    ``auto_approve``, ``default = "allow"`` and grants made with ``--always``."""
    rules = "; ".join(f"rule {a.rule!r}: {a.reason}" for a in asked)
    return Verdict("ask", asked_by=rules)

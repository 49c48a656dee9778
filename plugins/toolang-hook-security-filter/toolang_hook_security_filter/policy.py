"""The settings compiled into one policy per runtime, and the verdicts it reaches.

Built once (``runtime.plugin_state``) and then only read, so one policy serves every
concurrent turn of its runtime. Per call it walks the parameters once, runs a rule's
regex only on strings that contain one of the rule's hints, and scrubs personal data
only in strings that could hold some.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from typing import Any, Final

import attrs

from toolang_core import AskApproval, Block, Modify, Observe, ToolCall, ToolResult
from toolang_hook_security_filter.analysis import kinds as string_kinds
from toolang_hook_security_filter.analysis.verdicts import Finding
from toolang_hook_security_filter.normalise import normalised
from toolang_hook_security_filter.params import MAX_DEPTH, ParamsTooDeep, strings_of
from toolang_hook_security_filter.pii import Scrubber
from toolang_hook_security_filter.rule_set import (
    Check,
    Hit,
    Rule,
    RuleSet,
    configured,
    distinct,
    first_block,
    first_hit,
)
from toolang_hook_security_filter.rules import DANGEROUS, OBSERVED
from toolang_hook_security_filter.settings import FilterSettings

ASKING_PATTERNS: Final = frozenset(
    {"drop-database", "kill-everything", "defences-off", "crontab-wipe"}
)
"""Pattern rules for what is sometimes the job (dropping a database, a reboot, a firewall
flush, replacing the crontab): a match sends the call to a person instead of blocking."""


class Policy:
    """What the filter does, compiled from :class:`FilterSettings`."""

    def __init__(self, settings: FilterSettings) -> None:
        disabled = set(settings.disable_rules)
        self.disabled = frozenset(disabled)
        self.parse_commands = settings.parse_commands
        self.rules = (
            *(Rule.from_spec(s, blocks=True) for s in DANGEROUS if s.name not in disabled),
            *configured(settings.block_patterns, "block_patterns", blocks=True),
            *(Rule.from_spec(s, blocks=False) for s in OBSERVED if s.name not in disabled),
            *configured(settings.observe_patterns, "observe_patterns", blocks=False),
        )
        needed = settings.pii_kinds and (
            settings.redact_params or settings.redact_results or settings.redact_answers
        )
        self.scrubber = Scrubber(settings.pii_kinds) if needed else None
        self.redact_params = settings.redact_params
        self.redact_results = settings.redact_results
        self.redact_answers = settings.redact_answers
        self.exempt = (
            re.compile("|".join(fnmatch.translate(t) for t in settings.exempt_tools))
            if settings.exempt_tools
            else None
        )
        self._rule_sets: dict[str, RuleSet] = {}
        self.configured: list[Check] = [
            (rule, regex)
            for rule in self.rules
            if not rule.on_lowered and rule.blocks
            for regex, _ in rule.alternatives
        ]

    def warm(self) -> None:
        """Compile every expression and import the shell parser now (a long-lived
        runtime's start-up), instead of on the calls that first need them."""
        for rule in self.rules:
            for regex, _ in rule.alternatives:
                regex.search("")
        if self.parse_commands:
            from toolang_hook_security_filter.analysis.shell import warm

            warm()

    def rule_set(self, tool: str) -> RuleSet:
        """The rules that apply to ``tool`` (built once per tool name)."""
        rule_set = self._rule_sets.get(tool)
        if rule_set is None:
            rule_set = RuleSet(
                tuple(r for r in self.rules if r.tools is None or r.tools.search(tool))
            )
            self._rule_sets[tool] = rule_set  # a benign race: both threads build the same
        return rule_set

    # -- the two hooks ---------------------------------------------------------------

    def check_call(
        self, call: ToolCall, keep: tuple[str, ...] = ()
    ) -> Block | Modify | Observe | AskApproval | None:
        """The verdict on ``call``: block, mask its personal data, warn, or abstain.
        ``keep``: the parameters the tool declares carry a secret into it
        (``Tool.secret_params``): judged, never masked."""
        if self.exempt is not None and self.exempt.match(call.name):
            return None
        written: list[tuple[str, str]] = []
        try:
            texts = strings_of(call.params, written)
        except ParamsTooDeep:
            return Block(f"parameters nested deeper than {MAX_DEPTH} levels cannot be checked")
        rules = self.rule_set(call.name)
        observed: list[Hit] = []
        for where, path in written:
            blocked = first_block(rules.written_path, path.lower(), path, where, observed)
            if blocked is not None:
                return blocked
        asked: Asked | None = None
        for where, text in texts:
            kinds = string_kinds.kinds_of(call.name, where, text) if self.parse_commands else ()
            if kinds:
                verdict = self._judge_parsed(rules, kinds, (where, text), observed)
            else:
                verdict = self._judge_free_text(rules, where, text, observed)
            if isinstance(verdict, Block):
                return verdict
            asked = asked or verdict
        return self._verdict(call.params, asked, observed, keep)

    def _judge_parsed(
        self, rules: RuleSet, kinds: tuple[str, ...], string: tuple[str, str], observed: list[Hit]
    ) -> Block | Asked | None:
        """A command, inline code or SQL (``string``: where it sits, and its text),
        judged by what it does, once parsed (:mod:`.analysis.dispatcher`).

        The pattern rules see what the text runs (data handed to echo or grep left out),
        then the parse judges what it does."""
        # Loaded with the first string to parse: see the dispatcher's docstring.
        from toolang_hook_security_filter.analysis import dispatcher

        where, text = string
        blocked = first_block(self.configured, text, text, where, observed)
        if blocked is not None:
            return blocked
        shown = dispatcher.rendered(kinds, text)
        hit = self._pattern_hit(rules, shown, where, observed)
        if hit is not None and hit.rule.name not in ASKING_PATTERNS:
            return Block(f"this call {hit.describe()}")
        finding = dispatcher.judge(kinds, text)
        if finding is not None and finding.rule in self.disabled:
            finding = None
        # The text as written: a pattern there names what the parse found in the
        # established vocabulary, and what the parse took for data (a comment, a quoted
        # string) still goes to a person, never unattended.
        raw = hit
        if raw is None and kinds != ("sql",):  # SQL's parse knows comments and literals
            raw = self._pattern_hit(rules, text, where, [])
        return _decided(finding, raw, where)

    def _judge_free_text(
        self, rules: RuleSet, where: str, text: str, observed: list[Hit]
    ) -> Block | Asked | None:
        """A string that is not run as it stands (a message, a file's content)."""
        hit = self._pattern_hit(rules, text, where, observed)
        if hit is None:
            return None
        if not self.parse_commands or not hit.rule.on_lowered or hit.rule.tools is not None:
            # Configured patterns, and rules about a kind of tool (a delete tool given
            # "/"), judge what the call does: they block.
            return Block(f"this call {hit.describe()}")
        # Free text is not run as it stands: a dangerous command quoted in it is for a
        # person to judge, not a block.
        return (Finding("approve", hit.rule.name, hit.rule.reason), where)

    def _verdict(
        self,
        params: Mapping[str, Any],
        asked: Asked | None,
        observed: list[Hit],
        keep: tuple[str, ...] = (),
    ) -> Modify | Observe | AskApproval | None:
        """The verdict on a call nothing blocked: ask a person, mask, warn, or abstain."""
        notes = "; ".join(hit.describe() for hit in distinct(observed)) if observed else ""
        kept = {k: params[k] for k in keep if k in params}
        masked_params, reason = self._masked({k: v for k, v in params.items() if k not in kept})
        if masked_params is not None:
            masked_params.update(kept)
        if asked is not None:
            finding, where = asked
            why = "; ".join(x for x in (_describe(finding, where), reason, notes) if x)
            return AskApproval(f"this call {why}", finding.rule, masked_params)
        if masked_params is not None:
            return Modify(masked_params, f"{reason}; also: {notes}" if notes else reason)
        return Observe(notes) if notes else None

    def _masked(self, params: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
        """``params`` with personal data masked and what was masked, or ``(None, "")``
        when there is none (or masking the parameters is off)."""
        if not self.redact_params or self.scrubber is None:
            return None, ""
        found: dict[str, int] = {}
        masked = self.scrubber.scrub(params, found)
        if not found:
            return None, ""
        return masked, f"masked personal data in the parameters: {describe_counts(found)}"

    @staticmethod
    def _pattern_hit(rules: RuleSet, text: str, where: str, observed: list[Hit]) -> Hit | None:
        """The first blocking pattern rule matching ``text`` (or what the shell would
        run of it); warnings go to ``observed``."""
        lowered = text.lower()
        checks, signs = rules.plan(lowered)
        hit = first_hit(checks, lowered, text, where, observed)
        if hit is not None:
            return hit
        plain = normalised(lowered, signs, text)
        if plain is not None:  # what the shell would run, where it differs
            return first_hit(rules.plan(plain)[0], plain, None, where, observed)
        return None

    def filter_result(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        """``result`` with personal data masked, or ``None`` when there was none."""
        if not self.redact_results or self.scrubber is None:
            return None
        if self.exempt is not None and self.exempt.match(call.name):
            return None
        found: dict[str, int] = {}
        output = self.scrubber.scrub(result.output, found)
        error = self.scrubber.scrub_text(result.error, found) if result.error else result.error
        if not found:
            return None
        return attrs.evolve(result, output=output, error=error)

    def mask_answer(self, text: str) -> tuple[str, str] | None:
        """``(text with personal data masked, what was masked)``, or ``None`` when there
        was none or ``redact_answers`` is off."""
        if not self.redact_answers or self.scrubber is None:
            return None
        found: dict[str, int] = {}
        masked = self.scrubber.scrub_text(text, found)
        if not found:
            return None
        return masked, f"masked personal data in the answer: {describe_counts(found)}"


def _describe(finding: Finding, where: str) -> str:
    return f"{finding.reason} (rule {finding.rule}, parameter {where!r})"


def describe_counts(found: Mapping[str, int]) -> str:
    """``"2 email, 1 card"``: what was masked, never the values."""
    return ", ".join(f"{count} {kind}" for kind, count in sorted(found.items()))


Asked = tuple[Finding, str]
"""A finding that sends the call to a person, and the parameter it is about."""


def _decided(finding: Finding | None, raw: Hit | None, where: str) -> Block | Asked | None:
    """What the parse's ``finding`` and the pattern ``raw`` matched in the text as
    written decide about a parsed string."""
    if finding is not None and finding.risk == "block":
        return Block(f"this call {raw.describe() if raw else _describe(finding, where)}")
    if finding is not None and raw is not None and raw.rule.name not in ASKING_PATTERNS:
        return Block(f"this call {raw.describe()}")
    if raw is not None:
        finding = Finding("approve", raw.rule.name, raw.rule.reason)
    return (finding, where) if finding is not None else None

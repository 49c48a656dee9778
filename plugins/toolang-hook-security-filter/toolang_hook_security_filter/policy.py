"""The settings compiled into one policy per runtime, and the verdicts it reaches.

Built once (``runtime.plugin_state``) and then only read, so one policy serves every
concurrent turn of its runtime. Per call it walks the parameters once, runs a rule's
regex only on strings that contain one of the rule's hints, and scrubs personal data
only in strings that could hold some.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from toolang_core import AskApproval, Block, Modify, Observe, ToolCall, ToolResult
from toolang_hook_security_filter.analysis import kinds as string_kinds
from toolang_hook_security_filter.analysis.verdicts import Finding
from toolang_hook_security_filter.hints import HintIndex, lower_literals
from toolang_hook_security_filter.lazy_regex import LazyPattern, Searches
from toolang_hook_security_filter.normalise import SIGN_WORDS, Sign, normalised
from toolang_hook_security_filter.pii import Scrubber, is_plain_name
from toolang_hook_security_filter.rules import DANGEROUS, OBSERVED, RuleSpec
from toolang_hook_security_filter.settings import FilterSettings

_NAMEABLE: Final = re.compile(r"[A-Za-z_][\w-]{0,31}")
"""Keys shown in a reason; others (an address used as a key …) are shown as "…"."""

MAX_DEPTH: Final = 32
"""Parameters nested deeper than this are refused: they cannot be checked cheaply."""

PATH_KEYS: Final = frozenset(
    {"path", "file", "filepath", "file_path", "filename", "file_name", "target"}
    | {"target_file", "target_path", "dest", "destination", "dst", "output", "output_path"}
    | {"output_file", "outfile"}
)
CONTENT_KEYS: Final = frozenset(
    {"content", "contents", "text", "data", "body", "lines", "source", "code", "value"}
    | {"new_content", "new_str", "new_string", "new_text", "file_text", "insert_text"}
    | {"replacement", "patch", "diff", "append"}
)
"""A mapping with one key of each is a file write: its path is judged on its own too."""


@attrs.frozen
class Rule:
    """A compiled rule: a match blocks the call, or (``blocks`` false) is recorded."""

    name: str
    reason: str
    blocks: bool
    alternatives: tuple[tuple[Searches, tuple[str, ...]], ...]
    """Each alternative's regex and hints (see :class:`~.rules.Alternative`); a built-in
    one is compiled when first used (:class:`~.lazy_regex.LazyPattern`)."""
    tools: re.Pattern[str] | None = None
    on_lowered: bool = True
    """Run on the lowercased string (the default rules); configured patterns see it as is."""
    written_path: bool = False
    """Run only on the path of a file write (see :data:`PATH_KEYS`), on nothing else."""

    @classmethod
    def from_spec(cls, spec: RuleSpec, *, blocks: bool) -> Rule:
        return cls(
            spec.name,
            spec.reason,
            blocks,
            tuple((LazyPattern(a.pattern, lower_literals), a.hints) for a in spec.alternatives),
            re.compile(spec.tools) if spec.tools else None,
            written_path=spec.written_path,
        )


@attrs.frozen
class Hit:
    """A rule that matched, and the parameter it matched in."""

    rule: Rule
    where: str

    def describe(self) -> str:
        return f"{self.rule.reason} (rule {self.rule.name}, parameter {self.where!r})"


ASKING_PATTERNS: Final = frozenset(
    {"drop-database", "kill-everything", "defences-off", "crontab-wipe"}
)
"""Pattern rules for what is sometimes the job (dropping a database, a reboot, a firewall
flush, replacing the crontab): a match sends the call to a person instead of blocking."""


class ParamsTooDeep(ValueError):
    """The parameters nest deeper than :data:`MAX_DEPTH`."""


Check = tuple[Rule, Searches]
_SIGN_VALUES: Final = tuple(sorted({sign.value for sign in SIGN_WORDS.values()}))


class RuleSet:
    """The rules for one tool's calls, their alternatives indexed by hint.

    The index also files :data:`~.normalise.SIGN_WORDS`, under the negated value of
    their :class:`~.normalise.Sign`, so one lookup tells both which rules may match and
    which normalising passes the string calls for.
    """

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        # Checks are numbered in rule order (blocking rules first); the index hands
        # out numbers, which hash fast and sort back into that order.
        self._checks = [
            (rule, regex, hints)
            for rule in rules
            if not rule.written_path
            for regex, hints in rule.alternatives
        ]
        self.written_path: list[Check] = [
            (rule, regex) for rule in rules if rule.written_path for regex, _ in rule.alternatives
        ]
        self._always = [number for number, (_, _, hints) in enumerate(self._checks) if not hints]
        # What most strings get (no hint found): built once.
        self._always_checks = tuple(self._checks[number][:2] for number in self._always)
        hinted: dict[str, list[int]] = {}
        for number, (_, _, hints) in enumerate(self._checks):
            for hint in hints:
                hinted.setdefault(hint, []).append(number)
        for word, sign in SIGN_WORDS.items():
            hinted.setdefault(word, []).append(-sign.value)
        self._index = HintIndex(hinted)

    def candidates(self, lowered: str) -> Sequence[Check]:
        """The alternatives that could match a string (given lowercased), in rule order."""
        return self.plan(lowered)[0]

    def plan(self, lowered: str) -> tuple[Sequence[Check], Sign]:
        """:meth:`candidates`, and the signs for :func:`~.normalise.normalised`."""
        found = self._index.lookup(lowered)
        if not found:
            return self._always_checks, Sign.NONE
        signs = Sign.NONE
        for value in _SIGN_VALUES:
            if -value in found:
                found.discard(-value)
                signs |= value
        found.update(self._always)
        return [self._checks[number][:2] for number in sorted(found)], signs


class Policy:
    """What the filter does, compiled from :class:`FilterSettings`."""

    def __init__(self, settings: FilterSettings) -> None:
        disabled = set(settings.disable_rules)
        self.disabled = frozenset(disabled)
        self.parse_commands = settings.parse_commands
        self.rules = (
            *(Rule.from_spec(s, blocks=True) for s in DANGEROUS if s.name not in disabled),
            *_configured(settings.block_patterns, "block_patterns", blocks=True),
            *(Rule.from_spec(s, blocks=False) for s in OBSERVED if s.name not in disabled),
            *_configured(settings.observe_patterns, "observe_patterns", blocks=False),
        )
        needed = settings.pii_kinds and (settings.redact_params or settings.redact_results)
        self.scrubber = Scrubber(settings.pii_kinds) if needed else None
        self.redact_params = settings.redact_params
        self.redact_results = settings.redact_results
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

    def check_call(self, call: ToolCall) -> Block | Modify | Observe | AskApproval | None:  # noqa: PLR0912
        """The verdict on ``call``: block, mask its personal data, warn, or abstain."""
        if self.exempt is not None and self.exempt.match(call.name):
            return None
        written: list[tuple[str, str]] = []
        try:
            texts = strings_of(call.params, written)
        except ParamsTooDeep:
            return Block(f"parameters nested deeper than {MAX_DEPTH} levels cannot be checked")
        rules = self.rule_set(call.name)
        observed: list[Hit] = []
        asked: tuple[Finding, str] | None = None
        for where, path in written:
            blocked = _first_block(rules.written_path, path.lower(), path, where, observed)
            if blocked is not None:
                return blocked
        for where, text in texts:
            kinds = string_kinds.kinds_of(call.name, where, text) if self.parse_commands else ()
            if kinds:
                from toolang_hook_security_filter.analysis import dispatcher as dispatch

                # A command, inline code or SQL: judged by what it does, once parsed.
                # The pattern rules see what the text runs (data handed to echo or grep
                # left out), then the parse judges what it does.
                blocked = _first_block(self.configured, text, text, where, observed)
                if blocked is not None:
                    return blocked
                shown = dispatch.rendered(kinds, text)
                hit = self._pattern_hit(rules, shown, where, observed)
                if hit is not None and hit.rule.name not in ASKING_PATTERNS:
                    return Block(f"this call {hit.describe()}")
                finding = dispatch.judge(kinds, text)
                if finding is not None and finding.rule in self.disabled:
                    finding = None
                # The text as written: a pattern there names what the parse found in
                # the established vocabulary, and what the parse took for data (a
                # comment, a quoted string) still goes to a person, never unattended.
                raw = hit
                if raw is None and kinds != ("sql",):  # SQL's parse knows comments and literals
                    raw = self._pattern_hit(rules, text, where, [])
                if finding is not None and finding.risk == "block":
                    return Block(
                        f"this call {raw.describe() if raw else _describe(finding, where)}"
                    )
                if finding is not None and raw is not None and raw.rule.name not in ASKING_PATTERNS:
                    return Block(f"this call {raw.describe()}")
                if raw is not None:
                    finding = Finding("approve", raw.rule.name, raw.rule.reason)
                if finding is not None:
                    asked = asked or (finding, where)
                continue
            hit = self._pattern_hit(rules, text, where, observed)
            if hit is None:
                continue
            if not self.parse_commands or not hit.rule.on_lowered or hit.rule.tools is not None:
                # Configured patterns, and rules about a kind of tool (a delete tool
                # given "/"), judge what the call does: they block.
                return Block(f"this call {hit.describe()}")
            # Free text (a message, a file's content) is not run as it stands: a
            # dangerous command quoted in it is for a person to judge, not a block.
            asked = asked or (Finding("approve", hit.rule.name, hit.rule.reason), where)
        notes = "; ".join(hit.describe() for hit in _distinct(observed)) if observed else ""
        masked_params: dict[str, Any] | None = None
        reason = ""
        if self.redact_params and self.scrubber is not None:
            found: dict[str, int] = {}
            masked = self.scrubber.scrub(call.params, found)
            if found:
                masked_params = masked
                reason = f"masked personal data in the parameters: {describe_counts(found)}"
        if asked is not None:
            finding, where = asked
            why = "; ".join(x for x in (_describe(finding, where), reason, notes) if x)
            return AskApproval(f"this call {why}", finding.rule, masked_params)
        if masked_params is not None:
            return Modify(masked_params, f"{reason}; also: {notes}" if notes else reason)
        return Observe(notes) if notes else None

    @staticmethod
    def _pattern_hit(rules: RuleSet, text: str, where: str, observed: list[Hit]) -> Hit | None:
        """The first blocking pattern rule matching ``text`` (or what the shell would
        run of it); warnings go to ``observed``."""
        lowered = text.lower()
        checks, signs = rules.plan(lowered)
        hit = _first_hit(checks, lowered, text, where, observed)
        if hit is not None:
            return hit
        plain = normalised(lowered, signs, text)
        if plain is not None:  # what the shell would run, where it differs
            return _first_hit(rules.plan(plain)[0], plain, None, where, observed)
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


def _describe(finding: Finding, where: str) -> str:
    return f"{finding.reason} (rule {finding.rule}, parameter {where!r})"


def describe_counts(found: Mapping[str, int]) -> str:
    """``"2 email, 1 card"``: what was masked, never the values."""
    return ", ".join(f"{count} {kind}" for kind, count in sorted(found.items()))


def _first_block(
    checks: Sequence[Check], lowered: str, text: str | None, where: str, observed: list[Hit]
) -> Block | None:
    """The block of the first blocking check that matches ``lowered`` (configured
    patterns: ``text``, skipped when it is ``None``); warnings found before it go to
    ``observed``."""
    hit = _first_hit(checks, lowered, text, where, observed)
    return Block(f"this call {hit.describe()}") if hit is not None else None


def _first_hit(
    checks: Sequence[Check], lowered: str, text: str | None, where: str, observed: list[Hit]
) -> Hit | None:
    for rule, regex in checks:
        if rule.on_lowered:
            matched = regex.search(lowered) is not None
        else:
            matched = text is not None and regex.search(text) is not None
        if not matched:
            continue
        if rule.blocks:
            return Hit(rule, where)
        observed.append(Hit(rule, where))
    return None


def strings_of(
    params: Mapping[str, Any], written: list[tuple[str, str]] | None = None
) -> list[tuple[str, str]]:
    """Every string in ``params`` with where it sits (``args[2]``, ``options.script``).

    Mapping keys count as strings, except short identifiers (parameter names). A list
    of strings is also checked joined with spaces (``["rm", "-rf", "/"]`` is one
    command), and so is each bare word next to such a list in the same mapping
    (``{"program": "rm", "args": ["-rf", "/"]}``). The path of each file write (a
    mapping with a :data:`PATH_KEYS` and a :data:`CONTENT_KEYS` key) is also added to
    ``written``.

    :raises ParamsTooDeep: past :data:`MAX_DEPTH` levels.
    """
    found: list[tuple[str, str]] = []
    _collect(params, "", 0, found, [] if written is None else written)
    return found


_NO_TEXT: Final = frozenset({int, float, bool, type(None)})
"""JSON values that hold no string (told by their exact type, before the slower ABC
checks): numbers are most tools' parameters."""


def _collect(
    value: Any,
    where: str,
    depth: int,
    found: list[tuple[str, str]],
    written: list[tuple[str, str]],
) -> None:
    if isinstance(value, str):
        found.append((where or "(value)", value))
    elif depth > MAX_DEPTH:
        raise ParamsTooDeep(where)
    elif type(value) in _NO_TEXT:
        return
    elif isinstance(value, dict | Mapping):
        _collect_mapping(value, where, depth, found, written)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _collect(item, f"{where}[{index}]", depth + 1, found, written)
        if _is_argv(value):
            found.append((f"{where or '(value)'} (joined)", " ".join(value)))


def _collect_mapping(
    value: Mapping[Any, Any],
    where: str,
    depth: int,
    found: list[tuple[str, str]],
    written: list[tuple[str, str]],
) -> None:
    argvs: list[tuple[str, list[str]]] = []
    paths: list[tuple[str, str]] = []
    content = False
    for key, item in value.items():
        if isinstance(key, str):
            name, plain, path_key, content_key = _key_facts(key)
            place = f"{where}.{name}" if where else name
            if not plain:
                found.append((f"{place} (key)", key))
            if path_key and isinstance(item, str):
                paths.append((place, item))
            content = content or content_key
        else:
            place = f"{where}.…" if where else "…"
        if isinstance(item, str):  # the usual case, without the recursion
            found.append((place, item))
            continue
        if type(item) in _NO_TEXT and depth < MAX_DEPTH:  # deeper: too deep, as any value
            continue
        _collect(item, place, depth + 1, found, written)
        if _is_argv(item):
            argvs.append((place, item))
    if content:
        written.extend(paths)
    if argvs:
        words = [v for v in value.values() if isinstance(v, str) and len(v.split()) == 1]
        found.extend(
            (f"{place} (after {word!r})", " ".join([word, *argv]))
            for place, argv in argvs
            for word in words
        )


@functools.lru_cache(maxsize=4096)
def _key_facts(key: str) -> tuple[str, bool, bool, bool]:
    """How a mapping key is shown in a reason, whether it is a plain name (not checked
    itself), and whether it names a written path or written content. Keys repeat from
    call to call (parameter names), so the answers are kept."""
    lowered = key.lower()
    return (
        key if _NAMEABLE.fullmatch(key) else "…",
        is_plain_name(key),
        lowered in PATH_KEYS,
        lowered in CONTENT_KEYS,
    )


def _is_argv(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) > 1
        and all(isinstance(item, str) for item in value)
    )


def _configured(patterns: tuple[str, ...], key: str, *, blocks: bool) -> tuple[Rule, ...]:
    return tuple(
        Rule(
            f"{key}[{index}]",
            f"matches the configured pattern {pattern!r}",
            blocks,
            ((re.compile(pattern), ()),),
            on_lowered=False,
        )
        for index, pattern in enumerate(patterns)
    )


def _distinct(hits: list[Hit]) -> list[Hit]:
    seen: dict[str, Hit] = {}
    for hit in hits:
        seen.setdefault(hit.rule.name, hit)
    return list(seen.values())

"""The pattern rules compiled: each rule's expressions, and one tool's rules indexed by
their hints so a string is matched only against the rules it could match."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import attrs

from toolang_core import Block
from toolang_hook_security_filter.hints import HintIndex, lower_literals
from toolang_hook_security_filter.lazy_regex import LazyPattern, Searches
from toolang_hook_security_filter.normalise import SIGN_WORDS, Sign
from toolang_hook_security_filter.rules import RuleSpec


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
    """Run only on the path of a file write (see :data:`~.params.PATH_KEYS`), on nothing else."""

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


def first_block(
    checks: Sequence[Check], lowered: str, text: str | None, where: str, observed: list[Hit]
) -> Block | None:
    """The block of the first blocking check that matches ``lowered`` (configured
    patterns: ``text``, skipped when it is ``None``); warnings found before it go to
    ``observed``."""
    hit = first_hit(checks, lowered, text, where, observed)
    return Block(f"this call {hit.describe()}") if hit is not None else None


def first_hit(
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


def configured(patterns: tuple[str, ...], key: str, *, blocks: bool) -> tuple[Rule, ...]:
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


def distinct(hits: list[Hit]) -> list[Hit]:
    seen: dict[str, Hit] = {}
    for hit in hits:
        seen.setdefault(hit.rule.name, hit)
    return list(seen.values())

"""Find which of many hints a string holds, in one fast regex pass.

A hint is either a *word* — a whole run of letters in the lowercased string, so
``rm`` is found in ``/bin/rm -rf`` but not in ``format`` — or a *symbol*, a short
literal with no letters at its start (``$(``, ``%0``, ``169.254.169.254``). One
``findall`` of ``[a-z]+|<symbols>`` splits the string; a set intersection then names
the hints present. That is several times faster than a regex alternation of a
hundred words, which Python's ``re`` tries branch by branch at every position.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_WORD = re.compile(r"[a-z]+")


def trie_pattern(words: Iterable[str]) -> str:
    """A regex matching any of ``words`` (longest first), written as a trie.

    ``re`` rules out most positions on the first character of a trie, where it would
    try every branch of a flat alternation.
    """
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _branch(root)


def _branch(node: Mapping[str, Any]) -> str:
    alternatives = [
        re.escape(char) + _branch(child) for char, child in sorted(node.items()) if char
    ]
    if not alternatives:
        return ""
    body = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
    return f"(?:{body})?" if "" in node else body


@functools.lru_cache(maxsize=1024)
def lower_literals(pattern: str) -> str:
    """``pattern`` with its letters lowercased, escapes (``\\S``, ``\\A`` …) left alone.

    The default rules are compiled this way and run on the lowercased string: case-
    insensitive matching that keeps ``re``'s fast literal-prefix search, which
    ``re.IGNORECASE`` turns off. Kept: every runtime compiles the same rules (a
    character loop over a few hundred patterns, ~1 ms each time).
    """
    out: list[str] = []
    escaped = False
    for char in pattern:
        out.append(char if escaped else char.lower())
        escaped = not escaped and char == "\\"
    return "".join(out)


def is_word(hint: str) -> bool:
    """Whether ``hint`` is a word hint (only lowercase letters)."""
    return _WORD.fullmatch(hint) is not None


class HintIndex(Generic[T]):
    """Items filed under hints; :meth:`lookup` gives the items a string may need.

    :raises ValueError: for a symbol hint that starts with a letter (it would never be
        found: the word alternative takes the letters first).
    """

    def __init__(self, hinted: Mapping[str, Iterable[T]]) -> None:
        self._items = {hint: tuple(items) for hint, items in hinted.items()}
        self._hints = frozenset(self._items)
        symbols = sorted((h for h in self._items if not is_word(h)), key=len, reverse=True)
        for symbol in symbols:
            if symbol[:1].isalpha():
                raise ValueError(f"hint {symbol!r}: a symbol hint must not start with a letter")
        alternatives = [r"[a-z]+", *map(re.escape, symbols)]
        self._split = re.compile("|".join(alternatives))

    def lookup(self, lowered: str) -> set[T]:
        """The items whose hints ``lowered`` (a lowercased string) holds."""
        pieces = self._split.findall(lowered)
        if self._hints.isdisjoint(pieces):  # the usual case: nothing to look at
            return set()
        return {item for hint in self._hints.intersection(pieces) for item in self._items[hint]}

"""One redaction policy for every text toolang stores or shows.

The policy masks secrets and personal data wherever text leaves a turn's memory: turn
requests' input and output as stored, every step, prompt traces, memory entries, logs
and the CLI's views. A :class:`RedactionPolicy` is the core's own rules followed by
**detectors**:

* the core's own rules: a value stored under a secret-sounding key (``password``,
  ``api_key``, ``token`` …) is masked whole; inside any string, credentials in URLs,
  bearer/basic credentials and well-known API-key shapes are masked;
* detectors that plugins register through ``toolang_register_redactors`` (the
  SecurityFilter registers its finders of keys, cards, IBANs, emails, phones …).

**Each runtime owns its policy** (``Runtime.redaction``, built from its own plugins'
detectors; ``RuntimeView.redaction`` for plugins): two runtimes in one process never
mask with each other's detectors. The core's writers that hold the runtime (the inbox,
the scheduler's commits, the turn context's steps, the tool-call chain, the post-turn
stages, the CLI's views) use it directly.

The module-level functions (:func:`redact_text`, :func:`redact`, …; ``toolang_core.redact``
and ``redact_text`` for plugins) use **the policy in effect** (:func:`current`): a
context variable that ``Runtime.serve`` sets to its runtime's policy for the whole run
and resets when it returns, so everything that runs inside it — its turns, its turn
sources, its plugins' hooks, a server it starts, the structlog processor of
:mod:`toolang_core.logs`, which no runtime can be handed — masks with that runtime's
detectors. A context variable rather than a process-wide setting because two runtimes
may serve in one process (each ``serve`` is a task with its own context) and because
asyncio tasks and ``asyncio.to_thread`` carry it along. Outside any runtime (and in a
thread started by hand, which starts with an empty context) the policy in effect is
:data:`CORE_RULES`: the core's rules, no detector — never another runtime's.
"""

from __future__ import annotations

import contextvars
import functools
import re
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

MASK: Final = "********"

Detector = Callable[[str], str]
"""Returns its string with what it found masked (the same string when nothing was)."""

_SECRET_KEY = re.compile(
    r"(pass(word|wd|phrase)?|secret|token|api[_-]?key|apikey|authorization|auth|"
    r"credential|private[_-]?key|cookie|session[_-]?key)$",
    re.IGNORECASE,
)
_URL_CREDENTIALS = re.compile(
    r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:/@\s]+):(?P<pw>[^@/\s]+)@", re.IGNORECASE
)
_KEY_SHAPES = re.compile(
    r"\b("
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}"  # OpenAI / Anthropic style keys
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|xox[abpr]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|AKIA[0-9A-Z]{16}"  # AWS access key ids
    r"|AIza[0-9A-Za-z_-]{30,}"  # Google API keys
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWTs
    r")"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
_URL_QUERY_VALUE = re.compile(r"(?P<lead>[?&;](?P<name>[A-Za-z0-9_.~%-]{1,64})=)[^&;#\s\"'<>]+")
"""A parameter of a URL's query; its value is masked when its name names a secret
(:func:`is_secret_key`, or a key or a signature: ``?key=``, ``&sig=``,
``X-Amz-Signature=``)."""
_QUERY_SECRET_NAME = re.compile(r"(^key|sig|signature)$", re.IGNORECASE)
# An AWS secret access key (40 characters of base64, no shape of its own) is told by the
# access key id beside it, either order, at most 40 characters apart; mixed case and a
# digit, "/" or "+" (a git SHA is none). The SecurityFilter's finders mirror it.
_AWS_ID = r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"
_AWS_SECRET = (
    r"(?<![A-Za-z0-9/+=])"
    r"(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[0-9/+])"
    r"(?P<{}>[A-Za-z0-9/+]{{40}})(?![A-Za-z0-9/+=])"
)
_AWS_PAIR = re.compile(
    f"{_AWS_ID}[\\s\\S]{{0,40}}?{_AWS_SECRET.format('after')}"
    f"|{_AWS_SECRET.format('before')}[\\s\\S]{{0,40}}?{_AWS_ID}"
)


@functools.lru_cache(maxsize=4096)  # keys repeat: field and parameter names
def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a secret (``api_key``, ``DB_PASSWORD``, …)."""
    return bool(_SECRET_KEY.search(key))


_SHORTEST: Final = 6
"""No string shorter than this holds anything either the core or a detector masks."""

SHORTEST_KNOWN: Final = _SHORTEST
"""The shortest value :meth:`RedactionPolicy.mask_values` accepts (a shorter string is
never masked at all)."""

_CACHED_UP_TO: Final = 65_536
"""Strings up to this long are masked once and remembered. Text repeats a lot: a turn
stores the same instruction, history and recalled memory in each model call's step,
every turn of an agent repeats its instruction, a user's message reaches the request, the
prompt trace and the next turns' history. A detector (a plugin's finders) costs tens of
microseconds per string, a look-up a tenth of one. Longer strings are rare and would
keep megabytes alive in the cache."""
_CACHE_SIZE: Final = 8_192
_SHORT_UP_TO: Final = 2_048
"""Strings up to this long take a place among the :data:`_CACHE_SIZE` kept by count
(most strings: names, messages, results). A longer one, up to :data:`_CACHED_UP_TO`,
is kept by size: 8,192 strings of 64 KiB would keep a gigabyte alive."""
_LONG_CACHE_CHARS: Final = 2_000_000
"""The characters (each longer string, and what it was masked to when that differs)
the cache of longer strings keeps together, the least recently used dropped first."""
_COMPOSED: Final = 1_024
"""Composed texts longer than :data:`_SHORT_UP_TO` remembered as clean (a turn's system
prompt is read back by its model call steps within the turn)."""
_COMPOSED_SHORT: Final = _CACHE_SIZE
"""Composed texts up to :data:`_SHORT_UP_TO` long remembered as clean, apart from the
longer ones: an exchange remembered by memory is recalled hundreds of turns later (every
other thread's turns between), when a turn's long texts would have pushed it out of
:data:`_COMPOSED` places long before; kept by count, as :data:`_CACHE_SIZE` short strings
are."""

_PLAIN_KEYS: Final = frozenset(
    {
        *("id", "call_id", "turn_id", "thread_id", "run_id", "tool_call_id", "parent"),
        *("idempotency_key", "kind", "status", "role", "stage", "decision", "error_type"),
        *("agent", "model", "provider", "source", "channel", "started_at", "finished_at"),
    }
)
"""Keys whose string values are names and ids the runtime made: never walked."""


def _core_text(text: str) -> str:
    # Every pattern above contains one of these (lower-cased). Substring tests run at C
    # speed, and written out they skip the generator any() would run on every string.
    lowered = text.lower()
    if not (
        "://" in lowered
        or "sk-" in lowered
        or "gh" in lowered
        or "xox" in lowered
        or "akia" in lowered
        or "asia" in lowered  # a temporary key id: its secret beside it is masked
        or "aiza" in lowered
        or "eyj" in lowered
        or "bearer" in lowered
        or "basic" in lowered
    ):
        return text
    if "akia" in lowered or "asia" in lowered:  # before the key id itself is masked
        text = _aws_secret_keys(text)
    text = _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    if "://" in lowered and "=" in text:
        text = _URL_QUERY_VALUE.sub(_query_value, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    return _KEY_SHAPES.sub(MASK, text)


def _query_value(match: re.Match[str]) -> str:
    name = match["name"]
    if is_secret_key(name) or _QUERY_SECRET_NAME.search(name):
        return f"{match['lead']}{MASK}"
    return match.group(0)


def _aws_secret_keys(text: str) -> str:
    spans = [
        match.span("after" if match["after"] is not None else "before")
        for match in _AWS_PAIR.finditer(text)
    ]
    for start, end in reversed(spans):
        text = text[:start] + MASK + text[end:]
    return text


class Masked(list[Any]):
    """A list whose items this policy has masked already (each as :func:`redact`
    returns it): a walk keeps it as it is. For values stored again and again, masked
    once: a turn's prompt, in each of its model calls' steps.

    ``json`` is the list's compact JSON when its maker encoded it already (see
    :func:`toolang_core.store.json_text.dumps_data`), else ``None``; a list with a
    ``json`` is never changed after."""

    __slots__ = ("json",)

    def __init__(self, items: Iterable[Any] = (), json: str | None = None) -> None:
        super().__init__(items)
        self.json = json


class MaskedMap(dict[str, Any]):
    """A dict whose values this policy has masked already (as :func:`redact` returns
    it): a walk keeps it as it is, and ``json`` (its compact JSON, when its maker
    encoded it) is spliced where it is stored again. For a part of one step's data
    stored again in others: a turn's memory recall summary, in its prompt build and
    its prompt trace. A map with a ``json`` is never changed after."""

    __slots__ = ("json",)

    def __init__(self, items: Mapping[str, Any], json: str | None = None) -> None:
        super().__init__(items)
        self.json = json


class _SizedCache:
    """``compute(text)`` remembered by ``text`` while the texts and their results fit
    in ``limit`` characters together, the least recently used dropped first; safe to
    call from several threads (a result computed across a :meth:`clear` is not kept)."""

    __slots__ = ("_chars", "_compute", "_entries", "_generation", "_limit", "_lock")

    def __init__(self, compute: Callable[[str], str], limit: int) -> None:
        self._compute = compute
        self._limit = limit
        self._entries: OrderedDict[str, str] = OrderedDict()
        self._chars = 0
        self._generation = 0
        self._lock = threading.Lock()

    def __call__(self, text: str) -> str:
        with self._lock:
            found = self._entries.get(text)
            if found is not None:
                self._entries.move_to_end(text)
                return found
            generation = self._generation
        result = self._compute(text)
        with self._lock:
            if generation == self._generation and text not in self._entries:
                self._entries[text] = result
                self._chars += _size(text, result)
                while self._chars > self._limit:
                    old, was = self._entries.popitem(last=False)
                    self._chars -= _size(old, was)
        return result

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def chars(self) -> int:
        """The characters kept now (at most the limit)."""
        return self._chars

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._chars = 0
            self._generation += 1


def _size(text: str, result: str) -> int:
    return len(text) + (0 if result is text else len(result))


class RedactionPolicy:
    """The core's rules followed by ``detectors`` (name → detector), in their order.

    A policy's detectors never change (build another for others); it remembers what it
    masked (a cache of masked strings, and texts known clean) for itself only."""

    __slots__ = (
        "_cached",
        "_clean",
        "_clean_long",
        "_clean_short",
        "_detectors",
        "_known",
        "_known_pattern",
        "_long",
        "_names",
    )

    def __init__(self, detectors: Mapping[str, Detector] | None = None) -> None:
        found = dict(detectors or {})
        self._names: tuple[str, ...] = tuple(found)
        self._detectors: tuple[Detector, ...] = tuple(found.values())
        self._known: frozenset[str] = frozenset()
        self._known_pattern: re.Pattern[str] | None = None
        self._cached = functools.lru_cache(maxsize=_CACHE_SIZE)(self._mask)
        self._long = _SizedCache(self._mask, _LONG_CACHE_CHARS)
        self._clean: dict[str, None] = {}
        """Texts composed of parts this policy found clean (:meth:`composed`): at most
        ``_COMPOSED_SHORT`` short ones and ``_COMPOSED`` longer ones, each kind in the
        order it came (``_clean_short``, ``_clean_long``), the oldest forgotten first."""
        self._clean_short: deque[str] = deque()
        self._clean_long: deque[str] = deque()

    def __repr__(self) -> str:
        return f"RedactionPolicy(detectors={list(self._names)!r})"

    @property
    def detector_names(self) -> tuple[str, ...]:
        """The policy's detectors, as ``plugin:name``."""
        return self._names

    def mask_values(self, values: Iterable[str]) -> int:
        """Mask each of ``values`` — secrets the runtime holds, e.g. a vault's — wherever
        this policy masks text from now on, however they are named or shaped; returns
        how many were new. Values shorter than :data:`SHORTEST_KNOWN` characters are
        refused (``ValueError``): masking every ``"abc"`` would mask words, not secrets.
        Strings the policy remembered as clean are forgotten, so a value registered
        after a text was first masked is masked in it the next time. Values stay known
        for the policy's life (one run): a deleted secret was still a secret."""
        new = set()
        for value in values:
            if len(value) < SHORTEST_KNOWN:
                raise ValueError(
                    f"a known secret value must be at least {SHORTEST_KNOWN} characters "
                    f"long, found {len(value)}"
                )
            if value not in self._known:
                new.add(value)
        if not new:
            return 0
        known = self._known | new
        # Longest first, so a value that contains another is masked whole.
        pattern = "|".join(re.escape(v) for v in sorted(known, key=len, reverse=True))
        self._known_pattern = re.compile(pattern)
        self._known = known
        self._cached.cache_clear()
        self._long.clear()
        self._clean.clear()
        self._clean_short.clear()
        self._clean_long.clear()
        return len(new)

    @property
    def known_value_count(self) -> int:
        """How many values :meth:`mask_values` registered (never the values)."""
        return len(self._known)

    def composed(self, text: str, parts: Iterable[str]) -> str:
        """``text``, built of ``parts`` and of the runtime's own words (labels, a time):
        when the policy leaves every part as it is (each looked up in its cache, as most
        repeat), ``text`` is remembered as clean and later walks return it without
        running the detectors over it again. A text that changes every turn (a system
        prompt with the time and the recalled memory) is then never scanned whole.
        A part the policy would change leaves ``text`` to be masked whole, as ever."""
        if all(self.text(part) == part for part in parts) and text not in self._clean:
            self._clean[text] = None
            if len(text) <= _SHORT_UP_TO:
                order, most = self._clean_short, _COMPOSED_SHORT
            else:
                order, most = self._clean_long, _COMPOSED
            order.append(text)
            if len(order) > most:
                del self._clean[order.popleft()]
        return text

    def known_clean(self, text: str) -> bool:
        """Whether ``text`` is remembered as clean by this policy (:meth:`composed`)."""
        return text in self._clean

    def text(self, text: str) -> str:
        """``text`` with every secret and piece of personal data the policy knows masked."""
        if len(text) < _SHORTEST:
            return text
        if text in self._clean:
            return text
        if len(text) <= _SHORT_UP_TO:
            masked: str = self._cached(text)
            return masked
        if len(text) <= _CACHED_UP_TO:
            return self._long(text)
        return self._mask(text)

    def text_once(self, text: str) -> str:
        """:meth:`text` for a string not seen again (a stream's window): masked the
        same way, without taking a place in the cache."""
        if len(text) < _SHORTEST:
            return text
        return self._mask(text)

    def _mask(self, text: str) -> str:
        known = self._known_pattern
        if known is not None:  # before the rules below mask a part of a value
            text = known.sub(MASK, text)
        text = _core_text(text)
        for detector in self._detectors:
            text = detector(text)
        return text

    def value(self, value: Any, key: str | None = None, depth: int = 0) -> Any:
        """``value`` with secrets masked, recursing through mappings, lists and tuples.

        Anything under a secret-naming ``key`` is masked whole; numbers are passed to
        the detectors only when they are long enough to be a card number; other scalars
        are returned as they are.
        """
        if key is not None and _key_role(key) is _SECRET and _filled(value):
            return MASK
        if isinstance(value, str):
            return value if key in _PLAIN_KEYS else self.text(value)
        if type(value) is Masked or type(value) is MaskedMap:
            return value
        if value is None or isinstance(value, bool | float):
            return value
        if isinstance(value, int):
            return self._number(value)
        if depth > _DEEPEST:  # deeper than any real payload: mask it whole, not leak it
            return MASK
        if type(value) is dict:
            return self._dict(value, depth + 1)
        if isinstance(value, Mapping):
            return {k: self.value(v, str(k), depth + 1) for k, v in value.items()}
        if type(value) is list:
            return self._list(value, depth + 1)
        if isinstance(value, list | tuple):
            return type(value)(self.value(v, None, depth + 1) for v in value)
        return value

    def _number(self, value: int) -> int | str:
        if _CARD_SHORTEST <= value < _CARD_LONGEST and self._detectors:
            text = str(value)
            masked = self.text(text)
            return value if masked == text else masked
        return value

    # The two containers steps are made of, walked without a call per scalar or per
    # plain container: a step holds a few hundred values, most of them short names,
    # numbers and flags in dicts and lists. Each branch is what ``value`` does.

    def _dict(self, value: dict[Any, Any], depth: int) -> dict[Any, Any]:
        out = {}
        roles = _KEY_ROLES
        for k, v in value.items():
            key = k if type(k) is str else str(k)
            kind = type(v)
            role = roles.get(key)
            if role is None:
                role = _key_role(key)
            if role is _PLAIN:
                if kind is str:
                    out[k] = v
                    continue
            elif role is _SECRET and _filled(v):
                out[k] = MASK
                continue
            if kind is str:
                out[k] = v if len(v) < _SHORTEST else self.text(v)
            elif v is None or kind is bool or kind is float or kind is Masked or kind is MaskedMap:
                out[k] = v
            elif kind is int:
                out[k] = v if v < _CARD_SHORTEST else self._number(v)
            elif kind is dict:
                out[k] = self._dict(v, depth + 1) if depth <= _DEEPEST else MASK
            elif kind is list:
                out[k] = self._list(v, depth + 1) if depth <= _DEEPEST else MASK
            else:
                out[k] = self.value(v, key, depth)
        return out

    def _list(self, value: list[Any], depth: int) -> list[Any]:
        out = []
        for v in value:
            kind = type(v)
            if kind is str:
                out.append(v if len(v) < _SHORTEST else self.text(v))
            elif v is None or kind is bool or kind is float or kind is Masked or kind is MaskedMap:
                out.append(v)
            elif kind is int:
                out.append(v if v < _CARD_SHORTEST else self._number(v))
            elif kind is dict:
                out.append(self._dict(v, depth + 1) if depth <= _DEEPEST else MASK)
            elif kind is list:
                out.append(self._list(v, depth + 1) if depth <= _DEEPEST else MASK)
            else:
                out.append(self.value(v, None, depth))
        return out


_DEEPEST: Final = 32
"""Containers nested deeper than this are masked whole."""
_CARD_SHORTEST: Final = 10**12
_CARD_LONGEST: Final = 10**19
"""Numbers in ``[_CARD_SHORTEST, _CARD_LONGEST)`` are long enough to be a card number:
the detectors see them; others are kept as they are."""

_PLAIN: Final = "plain"
_SECRET: Final = "secret"
_OTHER: Final = "other"
_KEY_ROLES: dict[str, str] = dict.fromkeys(_PLAIN_KEYS, _PLAIN)
"""What each key seen so far names: one of the runtime's own names (its string values
are kept), a secret (a filled value is masked whole) or anything else. Keys repeat."""
_KEY_ROLES_KEPT: Final = 4_096


def _key_role(key: str) -> str:
    role = _KEY_ROLES.get(key)
    if role is None:
        role = _SECRET if is_secret_key(key) else _OTHER
        if len(_KEY_ROLES) < _KEY_ROLES_KEPT:
            _KEY_ROLES[key] = role
    return role


def _filled(value: Any) -> bool:
    """Whether ``value`` holds something to hide (not nothing, a flag or the mask)."""
    if value is None or isinstance(value, bool) or value == MASK:
        return False
    if isinstance(value, str | Mapping | list | tuple):
        return len(value) > 0
    return True


CORE_RULES: Final = RedactionPolicy()
"""The core's rules alone: the policy in effect outside any runtime (see the module)."""

_CURRENT: Final = contextvars.ContextVar[RedactionPolicy]("toolang_redaction", default=CORE_RULES)


def current() -> RedactionPolicy:
    """The policy in effect here: the serving runtime's (``Runtime.serve`` sets it for
    its run), else whatever :func:`use_policy` set in this context, else
    :data:`CORE_RULES`."""
    return _CURRENT.get()


def use_policy(policy: RedactionPolicy) -> Callable[[], None]:
    """Make ``policy`` the one in effect in this context (this task or thread, and the
    tasks and ``asyncio.to_thread`` calls started from it) until the returned undo is
    called — in the same context, as ``finally`` does. ``Runtime.serve`` uses it for its
    run; a program masking outside a serving runtime may use it with
    ``runtime.redaction``."""
    token = _CURRENT.set(policy)
    return lambda: _CURRENT.reset(token)


def use_detectors(detectors: Mapping[str, Detector]) -> Callable[[], None]:
    """:func:`use_policy` of a new policy of ``detectors``; returns the undo."""
    return use_policy(RedactionPolicy(detectors))


def redact_text(text: str) -> str:
    """``text`` with secrets and personal data masked by the policy in effect."""
    return _CURRENT.get().text(text)


def composed_text(text: str, parts: Iterable[str]) -> str:
    """``text`` built of ``parts`` and the runtime's own words, remembered as clean when
    every part is (see :meth:`RedactionPolicy.composed`), by the policy in effect."""
    return _CURRENT.get().composed(text, parts)


def known_clean(text: str) -> bool:
    """Whether the policy in effect remembers ``text`` as clean (see
    :meth:`RedactionPolicy.known_clean`)."""
    return _CURRENT.get().known_clean(text)


def redact(value: Any, *, key: str | None = None) -> Any:
    """``value`` with secrets masked by the policy in effect, recursing through mappings
    and lists."""
    return _CURRENT.get().value(value, key)

"""The redaction policy for text that arrives in pieces: a model's streamed answer.

Masking each delta alone would let a secret split across deltas through (a card number
streamed a group at a time, a key cut in two by the model's tokenizer), and masking
everything at the end would stop the stream. A :class:`StreamMasker` holds back a short
tail of what it was given and passes on the rest, masked:

* **what is held back**: the last word (it may still grow), the :data:`HOLD_CHARS`
  characters before it (a secret of several words — ``4539 1488 0343 6467``, an IBAN
  in groups, ``Bearer <token>``, ``DB_PASSWORD = <value>`` — and the words a detector
  reads before a value, such as an access key id beside its secret or "BSN" before a
  number, fit in them), and a PEM block from its ``-----BEGIN`` line until its
  ``-----END`` line arrives;
* **where it cuts**: only after whitespace, and only where masking the text before the
  cut and the text after it apart gives what masking them together gives — a secret or
  its context never straddles a cut; otherwise it cuts earlier, or holds more;
* **at the end** (:meth:`StreamMasker.flush`) the rest is masked and passed on.

So the joined stream equals :func:`~toolang_core.redaction.redact_text` of the joined
raw text — what the runtime stores — whenever every secret, with whatever a detector
reads around it, lies within :data:`HOLD_CHARS` characters; every detector of the
core and of the SecurityFilter does. Text arrives later by about that many characters
(the first words wait until ``HOLD_CHARS`` more have come, or the stream ends).
"""

from __future__ import annotations

from typing import Final

from toolang_core.redaction import RedactionPolicy, current

HOLD_CHARS: Final = 64
"""Characters held back before the last word (see the module's docstring)."""

_TRIES: Final = 8
"""Cuts tried, each a word earlier, before holding everything until the next piece."""
_BEGIN: Final = "-----BEGIN"
_END: Final = "-----END"


class StreamMasker:
    """Masks one stream of text pieces with the redaction policy (see the module).

    Feed it each piece with :meth:`push`, which returns what may be passed on now
    (maybe ``""``); call :meth:`flush` when the stream ends for the rest. One masker per
    stream; it is not thread-safe.
    """

    __slots__ = ("_hold", "_pending", "_policy")

    def __init__(self, policy: RedactionPolicy | None = None, *, hold: int = HOLD_CHARS) -> None:
        """``policy``: the policy in effect where the masker is made unless given
        (:func:`~toolang_core.redaction.current`: the serving runtime's); ``hold``:
        characters held back before the last word (tests use smaller ones)."""
        self._policy = policy if policy is not None else current()
        self._hold = hold
        self._pending = ""

    @property
    def held(self) -> str:
        """The raw text received and not passed on yet."""
        return self._pending

    def push(self, piece: str) -> str:
        """Take ``piece``; return the masked text that may be passed on now."""
        pending = self._pending + piece
        self._pending = pending
        cut = self._cut(pending)
        if cut <= 0:
            return ""
        mask = self._policy.text_once
        masked_all = mask(pending)
        if masked_all == pending:
            # Nothing to mask in the whole window: nor in either side of a cut after
            # whitespace (the policy's patterns see whitespace and a string's end alike).
            self._pending = pending[cut:]
            return pending[:cut]
        for _ in range(_TRIES):
            head, tail = pending[:cut], pending[cut:]
            masked_head = mask(head)
            if masked_head + mask(tail) == masked_all:
                self._pending = tail
                return masked_head
            cut = _word_start_before(pending, cut)
            if cut <= 0:
                break
        return ""  # held until more text (or the end) settles it

    def flush(self) -> str:
        """The rest, masked (the stream ended); the masker is empty after."""
        rest, self._pending = self._pending, ""
        return self._policy.text_once(rest) if rest else ""

    def _cut(self, pending: str) -> int:
        """Where the text may be cut at the latest: the start of a word at least
        ``hold`` characters before the start of the last word, and before an open PEM
        block."""
        last_word = _last_word_start(pending)
        limit = last_word - self._hold
        begin = pending.rfind(_BEGIN)
        if begin != -1:
            end = pending.find(_END, begin)
            if end == -1 or pending.find("-----", end + len(_END)) == -1:
                limit = min(limit, begin)  # until its END line is whole
        if limit <= 0:
            return 0
        return limit if pending[limit - 1].isspace() else _word_start_before(pending, limit)


def _last_word_start(text: str) -> int:
    """Where the last word starts: after the last whitespace (``len(text)`` when the
    text ends with whitespace; 0 when it has none)."""
    index = len(text)
    while index > 0 and not text[index - 1].isspace():
        index -= 1
    return index


def _word_start_before(text: str, position: int) -> int:
    """The last place to cut before ``position``: right after whitespace, or 0."""
    index = position - 1
    while index > 0 and not text[index - 1].isspace():
        index -= 1
    return max(index, 0)

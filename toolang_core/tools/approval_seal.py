"""Seals on approval decisions: a decision counts only when it carries an HMAC-SHA256
made with the runtime's **approval key**, a secret kept outside the store.

A process that can write the store's tables (a ``sqlite3`` shell, a stray SQL client)
could otherwise write ``status = approved`` into a waiting request and have a tool run
without any person deciding. With a seal, such a write is detected and ignored: the
request reads as still pending, and ``approval.decision_forged`` is logged. The seal
covers the request's id, the tool call it belongs to (turn and call id, tool, hash of
the parameters, thread), the decision, the ``always`` flag, who decided, when, and the
reason; standing grants (``approve --always``) are sealed the same way.

The key is a file (``[approvals] key_file``, default ``<home>/approval.key``), created
once with mode 0600 by ``toolang init`` or the first ``toolang run``; a tool program's
sandbox hides it with the home. Every runtime sharing one store (PostgreSQL across
nodes) must use the same key: the store keeps the key's fingerprint (an HMAC of a
constant, which reveals nothing of the key), and a runtime whose key is missing or
differs refuses to start (:func:`ensure_approval_key`) rather than accept decisions
it cannot check, or seal decisions nobody else can.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socket
import tempfile
from collections.abc import Mapping, Sequence
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final

import attrs

from toolang_core.errors import ToolangError
from toolang_core.store.errors import RecordConflict

if TYPE_CHECKING:
    from toolang_core.store.protocol import ExecutionStore

KEY_FILE: Final = "approval.key"
"""The key's file name under the runtime's home, unless ``[approvals] key_file`` says."""
CHECK_KIND: Final = "toolang.approval.key"
"""Record kind holding the fingerprint of the key a store's decisions are sealed with."""
SEAL_VERSION: Final = "v2"
"""``v2`` seals the canonical form of the fields (:func:`_canonical`); ``v1`` seals,
made before, sealed them as Python encoded them and are still checked that way."""
_FINGERPRINT_LABEL: Final = b"toolang approval key fingerprint"
_ENCODE: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
"""Built once (``json.dumps`` with options builds an encoder per call): a waiting turn
and every list of requests check seals."""
_ENCODE_SORTED: Final = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, sort_keys=True
).encode


_EXACT: Final = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[])
"""Decimals normalised exactly, whatever the thread's context says (its default
precision, 28 digits, would make 10**40 and 10**40 + 1 one number)."""


def _canonical(value: Any) -> Any:
    """``value`` as every store gives it back: PostgreSQL's ``jsonb`` orders an object's
    keys its own way (so the keys are sorted when encoded) and keeps a number's value,
    not its spelling (``1e16`` comes back ``10000000000000000``, an int): a number is
    ``["n", its normalised decimal]``. A list is ``["l", its items]``, so that no value
    a store can hold has the canonical form of another (a list ``["n", "3"]`` is not
    the number 3)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        exact = Decimal(repr(value) if isinstance(value, float) else value)
        number = exact.normalize(_EXACT)
        return ["n", str(number) if number else "0"]  # (-0.0 is 0 to a store)
    if isinstance(value, Mapping):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return ["l", [_canonical(item) for item in value]]
    return value  # (not JSON: encoding it fails, as the store's would)


class ApprovalKeyError(ToolangError):
    """The approval key is missing, unreadable, malformed or not the store's."""

    exit_code: ClassVar[int] = 2


def same_stored(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are one value as a store keeps it: a NUL written out,
    compared in the seals' canonical form (an object's keys sorted, each number by its
    value), so a value and what PostgreSQL's ``jsonb`` gives back of it are the same.
    ``False`` for a value no store can keep."""
    from toolang_core.store.json_text import dumps

    try:
        return bool(
            _ENCODE_SORTED(_canonical(json.loads(dumps(a))))
            == _ENCODE_SORTED(_canonical(json.loads(dumps(b))))
        )
    except (ValueError, TypeError, RecursionError):
        return False


@attrs.frozen(repr=False)
class ApprovalKey:
    """The secret that seals decisions (never shown: ``repr`` gives its fingerprint)."""

    secret: bytes

    @classmethod
    def generate(cls) -> ApprovalKey:
        return cls(secrets.token_bytes(32))

    @property
    def fingerprint(self) -> str:
        """An HMAC of a constant: names the key without revealing it."""
        return hmac.new(self.secret, _FINGERPRINT_LABEL, hashlib.sha256).hexdigest()[:16]

    def seal(self, fields: Sequence[Any]) -> str:
        """The seal of ``fields`` (JSON-encodable values, in a fixed order), over their
        canonical form: what any store gives back seals the same."""
        return self._seal(SEAL_VERSION, _ENCODE_SORTED(_canonical(list(fields))))

    def verify(self, fields: Sequence[Any], seal: object) -> bool:
        """Whether ``seal`` is this key's seal of ``fields`` (constant-time compare);
        a ``v1`` seal (made before ``v2``) is checked as it was made."""
        if not isinstance(seal, str) or not seal.isascii():
            return False
        try:  # a forger's value that cannot be sealed (nested too deep …) is no decision
            if seal.startswith("v1:"):
                return hmac.compare_digest(seal, self._seal("v1", _ENCODE(list(fields))))
            return hmac.compare_digest(seal, self.seal(fields))
        except (ValueError, TypeError, RecursionError):
            return False

    def _seal(self, version: str, text: str) -> str:
        digest = hmac.new(
            self.secret, text.encode("utf-8", "surrogatepass"), hashlib.sha256
        ).hexdigest()
        return f"{version}:{digest}"

    def __repr__(self) -> str:
        return f"ApprovalKey(fingerprint={self.fingerprint!r})"


def when(timestamp: float | None) -> str | None:
    """A time as sealed: fixed to microseconds, so a JSON round trip through any store
    (SQLite text, PostgreSQL ``jsonb``) gives back the same text."""
    return None if timestamp is None else f"{timestamp:.6f}"


@attrs.define
class ApprovalKeyFile:
    """Where a runtime's approval key lives; read on first use, then kept.

    Bound to every store a runtime opens (:attr:`StoreBase.approval_key
    <toolang_core.store.base.StoreBase.approval_key>`), so an
    :class:`~toolang_core.tools.approvals.ApprovalBook` over that store finds it."""

    path: Path
    _key: ApprovalKey | None = attrs.field(default=None, init=False)

    def exists(self) -> bool:
        return self.path.is_file()

    def load(self) -> ApprovalKey:
        """The key. :raises ApprovalKeyError: when the file is missing, unreadable or
        not a key."""
        if self._key is None:
            self._key = _read(self.path)
        return self._key

    def create(self) -> ApprovalKey:
        """Write a new key (mode 0600) unless one is there already; return the key."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        key = ApprovalKey.generate()
        # Written whole under a name of its own, then linked into place: a runtime
        # starting at the same moment finds no key or the whole key, never a file
        # created but not written yet (link, unlike rename, never replaces one).
        fd, draft = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as out:  # mkstemp: mode 0600
                out.write(key.secret.hex() + "\n")
            os.link(draft, self.path)
        except FileExistsError:  # another process made it first: use that one
            return self.load()
        finally:
            os.unlink(draft)
        self._key = key
        return key


def _read(path: Path) -> ApprovalKey:
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise ApprovalKeyError(
            f"no approval key at {path}: it is made by `toolang init` or the first "
            "`toolang run` in this home (or set [approvals] key_file to the key the other "
            "runtimes of this store use)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ApprovalKeyError(
            f"cannot read the approval key {path}: {reason} (only the account that runs the "
            "runtime may read it; a tool's sandbox never can)"
        ) from None
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) < 32:
        raise ApprovalKeyError(
            f"{path} is not an approval key: expected 64 or more hex digits on one line"
        )
    return ApprovalKey(secret)


def ensure_approval_key(
    source: ApprovalKeyFile, store: ExecutionStore, *, now: float
) -> tuple[ApprovalKey, bool]:
    """The key of a runtime starting on ``store``, checked against the fingerprint the
    store keeps; ``True`` with it when this start recorded the fingerprint first.

    The key file is created when missing — unless the store already holds a
    fingerprint: then decisions were sealed with a key this runtime does not have.

    :raises ApprovalKeyError: the file is missing while the store has a fingerprint, or
        its key is not the one the store's fingerprint names (another node's key).
    """
    check = store.get_record(CHECK_KIND, "check")
    if source.exists():
        key = source.load()
    elif check is not None:
        raise ApprovalKeyError(
            f"the approval key {source.path} is missing, but this store's decisions are "
            f"sealed with a key (fingerprint {check.data.get('fingerprint')}, first used on "
            f"host {check.data.get('host')!r}): copy that key file here, or point [approvals] "
            "key_file at it — every runtime of one store needs the same key"
        )
    else:
        key = source.create()
    if check is None:
        try:
            store.put_record(
                CHECK_KIND,
                "check",
                {"fingerprint": key.fingerprint, "host": socket.gethostname(), "at": now},
                now=now,
                expect_revision=0,
            )
        except RecordConflict:  # another runtime recorded its key meanwhile
            check = store.get_record(CHECK_KIND, "check")
        else:
            return key, True
    assert check is not None
    if check.data.get("fingerprint") != key.fingerprint:
        raise ApprovalKeyError(
            f"the approval key {source.path} (fingerprint {key.fingerprint}) is not the key "
            f"this store's decisions are sealed with (fingerprint "
            f"{check.data.get('fingerprint')}, first used on host {check.data.get('host')!r}): "
            "every runtime of one store needs the same key file — copy it, or point "
            "[approvals] key_file at it"
        )
    return key, False

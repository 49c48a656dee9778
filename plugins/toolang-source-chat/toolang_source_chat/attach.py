"""``toolang chat -a PATH|URL`` and ``/attach PATH|URL`` in ``chat -i``: the attachments
a chat message brings.

Every attachment is read and checked — size, type sniffed from the bytes, the model of
the agent asked takes that type — before any is kept and before the message is
submitted: a refused attachment loses nothing and submits nothing. A URL (``http`` or
``https``) is fetched only when ``[attachments] fetch_urls = true``, here, by the
person's command; never by a model. In an interactive session :class:`Pending` holds
what ``/attach`` took, checked the same way when it is given, until the next message
carries it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

import click

if TYPE_CHECKING:
    from toolang_core import AttachmentRef, AttachmentStore, ExecutionStore
    from toolang_core.cli import CliState

FETCH_TIMEOUT_SECONDS: Final = 30.0
URL_SCHEMES: Final = ("http://", "https://")
ATTACH: Final = "/attach"
"""The interactive session's command: ``/attach PATH|URL`` (``/attach`` alone lists)."""


def take(
    state: CliState,
    store: ExecutionStore,
    sources: tuple[str, ...],
    *,
    agent: str | None,
    owner: str | None,
) -> tuple[AttachmentRef, ...]:
    """Read, check and keep ``sources`` (paths or URLs) for ``owner``; their references.

    :raises AttachmentError: naming the file or URL and what was expected."""
    from toolang_core import AttachmentStore, check_attachments_accepted

    attachments = AttachmentStore.of(state.runtime.config, store)
    taken = [_read(attachments, source) for source in sources]
    refs = [attachments.check(data, name=name) for name, data in taken]
    check_attachments_accepted(state.runtime, agent, refs)
    for ref, (_, data) in zip(refs, taken, strict=True):
        attachments.keep(ref, data, owner=owner)
    return tuple(refs)


def _read(attachments: AttachmentStore, source: str) -> tuple[str, bytes]:
    """``(name, bytes)`` of a path or URL."""
    if source.lower().startswith(URL_SCHEMES):
        return _fetch(attachments, source)
    path = Path(source).expanduser()
    return path.name, attachments.read_file(path)


def _fetch(attachments: AttachmentStore, url: str) -> tuple[str, bytes]:
    # urllib.request (and the http and ssl modules under it) only for a URL: every
    # chat message passes through this module, few fetch anything.
    import urllib.error
    import urllib.parse
    import urllib.request

    from toolang_core import AttachmentError

    if not attachments.config.fetch_urls:
        raise AttachmentError(
            f"attachment {url!r}: fetching URLs is off ([attachments] fetch_urls = false); "
            "download it and attach the file, or turn fetch_urls on"
        )
    limit = attachments.config.max_bytes
    name = Path(urllib.parse.urlsplit(url).path).name or "download"
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_SECONDS) as response:
            data: bytes = response.read(limit + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise AttachmentError(f"attachment {url!r}: cannot be fetched ({reason})") from None
    attachments.check_size(len(data), url)
    return name, data


class Pending:
    """The attachments ``/attach`` took in an interactive session, for its next message.

    Each is checked (size, sniffed type, the agent's model takes it) and kept when
    ``/attach`` is given — a refusal is said at once and the session goes on — and sent
    with the next message only."""

    def __init__(self, state: CliState, *, agent: str | None, owner: str | None) -> None:
        self.state = state
        self.agent = agent
        self.owner = owner
        self.refs: tuple[AttachmentRef, ...] = ()

    def take(self, sources: tuple[str, ...]) -> None:
        """Check and keep ``sources`` for the next message.

        :raises AttachmentError: naming the file or URL; none of ``sources`` is taken."""
        if not sources:
            return
        inbox = self.state.open_inbox()
        try:
            refs = take(self.state, inbox.store, sources, agent=self.agent, owner=self.owner)
        finally:
            inbox.store.close()
        self.refs += refs
        for ref in refs:
            click.echo(
                f"attached {ref.name} ({ref.media_type}, {ref.size} bytes) to your next message",
                err=True,
            )

    def command(self, line: str) -> bool:
        """Carry out ``line`` if it is ``/attach …`` (``True``); else ``False``: a message."""
        from toolang_core import AttachmentError

        word, _, rest = line.strip().partition(" ")
        if word != ATTACH:
            return False
        source = rest.strip()
        if not source:
            names = ", ".join(ref.name for ref in self.refs) or "none"
            click.echo(f"attached to your next message: {names} (/attach PATH|URL)", err=True)
            return True
        try:
            self.take((source,))
        except AttachmentError as exc:
            click.echo(f"error: {exc}", err=True)
        return True

    def sent(self) -> None:
        """The next message carried them: start afresh."""
        self.refs = ()

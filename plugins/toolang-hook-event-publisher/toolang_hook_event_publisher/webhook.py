"""The webhook sink: POST each event as JSON, retrying what a retry can fix.

Retried: connection errors, timeouts, ``408``, ``425``, ``429`` and ``5xx`` answers, with
exponential backoff and jitter (``Retry-After`` is honoured when it asks for longer).
Not retried: other ``4xx`` answers and redirects — the request itself is wrong, and
following a redirect could carry the secret headers to another host.

Header values are secrets: they are revealed only into the HTTP client and never
logged. Only the URL's scheme, host and port are logged: webhook URLs often carry
their secret in the path (``/services/T00/B00/XXXX``) or the query.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

import structlog

from toolang_core import redact_text
from toolang_hook_event_publisher.records import record_line
from toolang_hook_event_publisher.sinks import DeliveryError, Record, Send

if TYPE_CHECKING:
    import httpx

    from toolang_hook_event_publisher.settings import SinkSettings

log = structlog.get_logger("toolang.event_publisher")

MAX_BACKOFF_SECONDS: Final = 30.0
_RETRY_STATUS: Final = frozenset({408, 425, 429})


def shown_url(url: str) -> str:
    """``url`` fit for a log line: scheme, host and port only."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]  # never the user:password@ part
    return f"{parts.scheme}://{host}"


class _HideUrl(logging.Filter):
    """Shows ``url`` as :func:`shown_url` in httpx's own request log lines (stdlib
    logging, silent unless someone configures it). Added for one session, then removed."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(str(a) == self.url for a in record.args):
            shown = shown_url(self.url)
            record.args = tuple(shown if str(a) == self.url else a for a in record.args)
        return True


def backoff(attempt: int, base: float, retry_after: float | None = None) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): doubling from
    ``base``, half of it random so that many runtimes do not retry in step."""
    ceiling = min(MAX_BACKOFF_SECONDS, base * 2 ** (attempt - 1))
    delay: float = ceiling / 2 + random.uniform(0, ceiling / 2)  # jitter, not secrecy
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_BACKOFF_SECONDS))
    return delay


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: rare for webhooks; the backoff applies


class WebhookSink:
    """``{type = "webhook", url = "...", headers = {...}}``."""

    batch_size = 1  # one event per request: receivers expect one object, not a list

    def __init__(self, settings: SinkSettings, label: str) -> None:
        assert settings.url is not None
        self.url = settings.url
        self.label = label
        self.headers = settings.headers
        self.timeout_seconds = settings.timeout_seconds
        self.max_attempts = settings.max_attempts
        self.backoff_seconds = settings.backoff_seconds

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Send]:
        import httpx

        headers = {name: secret.reveal() for name, secret in self.headers.items()}
        headers.setdefault("content-type", "application/json")
        hide = _HideUrl(str(httpx.URL(self.url)))
        httpx_log = logging.getLogger("httpx")
        httpx_log.addFilter(hide)
        try:
            async with httpx.AsyncClient(
                headers=headers, timeout=self.timeout_seconds, follow_redirects=False
            ) as client:

                async def send(batch: list[Record]) -> None:
                    for delivered, record in enumerate(batch):
                        try:
                            await self._post(client, record)
                        except DeliveryError as exc:
                            exc.delivered = delivered
                            raise

                yield send
        finally:
            httpx_log.removeFilter(hide)

    async def _post(self, client: httpx.AsyncClient, record: Record) -> None:
        import httpx

        body = record_line(record)
        for attempt in range(1, self.max_attempts + 1):
            retry_after = None
            try:
                response = await client.post(
                    self.url, content=body, headers={"idempotency-key": record["id"]}
                )
            except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                problem = f"{type(exc).__name__}: {redact_text(str(exc)) or 'no detail'}"
            except Exception as exc:
                # Not the network: our request itself is wrong. Only the type is shown, as
                # the message may quote a header value.
                raise DeliveryError(
                    f"request to {shown_url(self.url)} failed: {type(exc).__name__}; not retried"
                ) from None
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return
                problem = f"HTTP {status}"
                if not (status in _RETRY_STATUS or status >= 500):
                    raise DeliveryError(f"{problem} from {shown_url(self.url)}; not retried")
                retry_after = _retry_after(response)
            if attempt == self.max_attempts:
                raise DeliveryError(
                    f"gave up on {shown_url(self.url)} after {attempt} attempt(s); last: {problem}"
                )
            delay = backoff(attempt, self.backoff_seconds, retry_after)
            log.info(
                "event_publisher.retrying",
                sink=self.label,
                url=shown_url(self.url),
                attempt=attempt,
                problem=problem,
                delay_seconds=round(delay, 3),
            )
            await asyncio.sleep(delay)

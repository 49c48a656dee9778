"""One turn thread's browser context: its page, what it observed, and the routing that
keeps every request it makes inside the allow-list.

Every request a context makes — the first URL, redirects, link clicks, scripts, images,
fetches, websockets — is routed through :meth:`Session.route` (and
:meth:`Session.route_socket`) and aborted unless the allow-list allows its URL. The
:class:`~toolang_tools_navigator.browser.BrowserHost` makes sessions and runs their
actions on its worker thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import structlog

from toolang_tools_navigator.errors import NavigatorError, PageCrashed

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Request, Route, WebSocketRoute

    from toolang_tools_navigator.allow import AllowList

log = structlog.get_logger(__name__)
Key = tuple[str, str]
"""A session's key: the turn's owner and thread."""

MAX_REDIRECTS = 10
REDIRECTS = frozenset({301, 302, 303, 307, 308})
FINGERPRINT = ("tag", "role", "name", "field", "type", "href")
"""What identifies an element to BrowserRecovery when its reference is gone."""


class Session:
    """One turn thread's browser context, its page and what it observed."""

    def __init__(self, key: Key, context: BrowserContext, allow: AllowList) -> None:
        self.key = key
        self.context = context
        self.allow = allow
        self.page: Page | None = None
        self.last_url: str | None = None
        self.crashed = False
        self.next_ref = 1
        self.seen: dict[str, dict[str, Any]] = {}
        self.blocked: list[tuple[str, bool]] = []
        self.used = 0

    def route(self, route: Route, request: Request) -> None:
        """Every request of the context: loaded only when its URL is allowed.

        Chromium follows a redirect without asking the router again, so the router
        follows them itself, each hop checked, and hands the browser the last response:
        the browser never sees a redirect (a page reached by one keeps the URL asked for).
        """
        url = request.url
        if self.allow.refusal(url) is not None:
            self._refuse(route, request, url)
            return
        if not url.startswith(("http:", "https:")):
            route.continue_()
            return
        method: str | None = None
        try:
            for _ in range(MAX_REDIRECTS):
                hop = None if url == request.url else url
                response = route.fetch(url=hop, method=method, max_redirects=0)
                location = response.headers.get("location")
                if response.status not in REDIRECTS or not location:
                    route.fulfill(response=response)
                    return
                url = urljoin(url, location)
                if self.allow.refusal(url) is not None:
                    self._refuse(route, request, url)
                    return
                if response.status == 303 or (
                    response.status in (301, 302) and request.method == "POST"
                ):
                    method = "GET"
        except Exception as exc:  # the server is not there, or went away
            log.info("navigator.request_failed", url=url, error=str(exc))
            route.abort("connectionfailed")
            return
        log.info("navigator.too_many_redirects", url=request.url)
        route.abort("failed")

    def _refuse(self, route: Route, request: Request, url: str) -> None:
        navigation = request.is_navigation_request() and request.frame.parent_frame is None
        self.blocked.append((url, navigation))
        log.info("navigator.request_refused", url=url, reason=self.allow.refusal(url))
        route.abort("blockedbyclient")

    def route_socket(self, socket: WebSocketRoute) -> None:
        if self.allow.refusal(socket.url) is None:
            socket.connect_to_server()
        else:
            self.blocked.append((socket.url, False))
            socket.close(code=1008, reason="outside the navigator's allow-list")

    def live_page(self) -> Page:
        if self.page is None or self.page.is_closed():
            raise NavigatorError("no page is open in this thread: call browser_open first")
        if self.crashed:
            raise PageCrashed(f"the page at {self.last_url} crashed")
        return self.page

    def new_page(self) -> Page:
        page = self.context.new_page()
        self.crashed = False

        def crashed(_: object) -> None:
            self.crashed = True

        page.on("crash", crashed)
        self.page = page
        return page

"""One runtime's browser: Chromium driven by Playwright, one context per turn thread.

Playwright's synchronous API is bound to the thread that started it, and a runtime may
serve from more than one event loop, so every browser action runs on **one worker
thread** the host owns; the tools await it (:meth:`BrowserHost.run`). The browser is
launched on first use (:mod:`.launch`) and stopped with the runtime
(``toolang_shutdown``); a thread's context (a :class:`~.session.Session`, whose routing
keeps every request inside the allow-list) is closed after ``idle_seconds`` without a
call. A page a navigation takes outside the allow-list is refused here and taken back;
service workers (which would bypass routing) are blocked. BrowserRecovery
(:mod:`.recovery`) puts a session back in shape through :meth:`BrowserHost.session_of`.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import structlog

from toolang_tools_navigator import launch
from toolang_tools_navigator.allow import AllowList
from toolang_tools_navigator.errors import ElementGone, NavigationRefused, NavigatorError
from toolang_tools_navigator.scripts import EXTRACT, OBSERVE, REF_ATTRIBUTE
from toolang_tools_navigator.session import FINGERPRINT, Key, Session
from toolang_tools_navigator.settings import NavigatorSettings

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

    from toolang_core import ToolCallContext

log = structlog.get_logger(__name__)
T = TypeVar("T")


class BrowserHost:
    """The browser of one runtime (kept in its plugin state) and its sessions."""

    def __init__(self) -> None:
        self.settings = NavigatorSettings()
        self.allow = AllowList(("loopback",))
        self._lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._sessions: dict[Key, Session] = {}
        self._timers: dict[Key, threading.Timer] = {}
        self._context: ToolCallContext | None = None
        self._jail: Path | None = None

    def sandbox_from(self, context: ToolCallContext | None) -> None:
        """Remember the first tool call's context: the browser's sandbox hides what a
        program that call started would not see (the runtime's home, store, approval
        key, every working directory)."""
        if self._context is None:
            self._context = context

    def configure(self, settings: NavigatorSettings, allow: AllowList) -> None:
        self.settings, self.allow = settings, allow

    # -- running on the worker thread

    async def run(self, action: Callable[..., T], *args: Any) -> T:
        """``action(*args)`` on the browser's thread, awaited from any event loop."""
        with self._lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(1, thread_name_prefix="toolang-navigator")
            worker = self._worker
        return await asyncio.wrap_future(worker.submit(action, *args))

    def close(self) -> None:
        """Close every context, the browser and Playwright (from any thread but the
        worker's); the next call starts them again."""
        with self._lock:
            worker, self._worker = self._worker, None
            timers, self._timers = self._timers, {}
        for timer in timers.values():
            timer.cancel()
        if worker is not None:
            worker.submit(self._stop).result()
            worker.shutdown(wait=True)

    def _stop(self) -> None:
        for session in list(self._sessions.values()):
            self._close_session(session)
        browser, self._browser = self._browser, None
        if browser is not None:
            try:
                browser.close()
            except Exception as exc:  # already gone: nothing more to close
                log.info("navigator.browser_close_failed", error=str(exc))
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            playwright.stop()
        jail, self._jail = self._jail, None
        if jail is not None:
            shutil.rmtree(jail, ignore_errors=True)

    def browser_running(self) -> bool:
        """Whether the browser is up (worker thread)."""
        return self._browser is not None and self._browser.is_connected()

    def _launch(self) -> Browser:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        path = launch.chromium_of(self.settings)
        if self._playwright is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
        self._sessions.clear()  # their contexts went with the browser
        if self.settings.sandbox:
            if self._jail is None:
                self._jail = Path(tempfile.mkdtemp(prefix="toolang-navigator-"))
            wrapper, env = launch.sandboxed(path, self._jail, self.allow.files_dir, self._context)
            self._browser = self._playwright.chromium.launch(
                executable_path=wrapper, headless=True, env=env
            )
        else:
            self._browser = self._playwright.chromium.launch(executable_path=path, headless=True)
        log.info("navigator.browser_started", executable=str(path), sandbox=self.settings.sandbox)
        return self._browser

    def session(self, key: Key, *, create: bool) -> Session:
        """The thread's session (made when ``create``), its idle timer restarted."""
        session = self._sessions.get(key)
        if session is not None and (self._browser is None or not self._browser.is_connected()):
            session = None
        if session is None:
            if not create:
                raise NavigatorError("no page is open in this thread: call browser_open first")
            browser = self._launch()
            context = browser.new_context(service_workers="block", accept_downloads=False)
            context.set_default_timeout(self.settings.action_seconds * 1000)
            session = Session(key, context, self.allow)
            context.route("**/*", session.route)
            context.route_web_socket("**/*", session.route_socket)
            self._sessions[key] = session
        session.used += 1
        self._arm(session)
        return session

    def _arm(self, session: Session) -> None:
        """Close the session after ``idle_seconds`` unless it is used again first."""
        used = session.used
        timer = threading.Timer(self.settings.idle_seconds, self._idle, (session.key, used))
        timer.daemon = True
        with self._lock:
            old = self._timers.pop(session.key, None)
            self._timers[session.key] = timer
            worker = self._worker
        if old is not None:
            old.cancel()
        if worker is not None:
            timer.start()

    def _idle(self, key: Key, used: int) -> None:
        with self._lock:
            worker = self._worker
        if worker is None:
            return
        with contextlib.suppress(RuntimeError):  # the host closed meanwhile
            worker.submit(self._close_if_idle, key, used)

    def _close_if_idle(self, key: Key, used: int) -> None:
        session = self._sessions.get(key)
        if session is not None and session.used == used:
            log.info("navigator.context_idle_closed", thread=key[1])
            self._close_session(session)

    def _close_session(self, session: Session) -> bool:
        if self._sessions.get(session.key) is session:
            del self._sessions[session.key]
        try:
            session.context.close()
        except Exception as exc:  # the browser went first
            log.info("navigator.context_close_failed", error=str(exc))
        return True

    def has_session(self, key: Key) -> bool:
        return key in self._sessions

    def session_of(self, key: Key) -> Session | None:
        """The thread's session as it is (worker thread): no browser started, no idle
        timer restarted."""
        return self._sessions.get(key)

    def browser_cdp(self, method: str) -> dict[str, Any]:
        """A browser-level DevTools command (diagnostics: ``SystemInfo.getProcessInfo``
        lists the browser's processes); on the worker thread."""
        if self._browser is None or not self._browser.is_connected():
            raise NavigatorError("the browser is not running")
        answer: dict[str, Any] = self._browser.new_browser_cdp_session().send(method)
        return answer

    # -- the actions (worker thread)

    def open(self, key: Key, url: str) -> dict[str, Any]:
        refusal = self.allow.refusal(url)
        if refusal is not None:
            raise NavigationRefused(f"refused to open {url}: {refusal}")
        session = self.session(key, create=True)
        page = session.page if session.page is not None and not session.crashed else None
        if page is None or page.is_closed():
            page = session.new_page()
        return self._navigating(session, lambda: page.goto(url, wait_until="load"))

    def _navigating(self, session: Session, action: Callable[[], object]) -> dict[str, Any]:
        """Run ``action``; refuse (and go back) when it led the page outside the list."""
        session.blocked.clear()
        page = session.live_page()
        try:
            action()
        except Exception:
            if not self._refused_navigation(session):
                raise
        else:
            self._settle(page)
        self._refused_navigation(session)
        session.last_url = page.url
        return self._where(session, page)

    def _settle(self, page: Page) -> None:
        """Wait for a navigation the action started to load (a no-op without one)."""
        try:
            page.wait_for_load_state("load")
        except Exception as exc:  # slow sub-resources: the page is usable anyway
            log.info("navigator.load_wait_failed", error=str(exc))

    def _refused_navigation(self, session: Session) -> bool:
        """Raise :class:`NavigationRefused` when a top-level navigation was blocked,
        after taking the page back to the last allowed URL."""
        refused = [url for url, navigation in session.blocked if navigation]
        page = session.page
        strayed = page is not None and self.allow.refusal(page.url) is not None
        if not refused and not strayed:
            return False
        if page is not None and refused:
            # Chromium commits its error page for the blocked navigation a moment later;
            # a navigation started before that would be interrupted by it.
            try:
                page.wait_for_url(
                    lambda url: url.startswith("chrome-error:"),
                    timeout=self.settings.action_seconds * 1000,
                )
            except Exception as exc:  # no error page this time: nothing to wait for
                log.debug("navigator.no_error_page", error=str(exc))
        if page is not None and (refused or strayed):
            back = session.last_url or "about:blank"
            try:
                page.goto(back, wait_until="load")
            except Exception as exc:
                log.info("navigator.return_failed", url=back, error=str(exc))
        where = refused[0] if refused else page.url if page is not None else "?"
        raise NavigationRefused(
            f"refused navigation to {where}: {self.allow.refusal(where)}; the page stays "
            f"at {session.last_url or 'about:blank'}"
        )

    def _where(self, session: Session, page: Page) -> dict[str, Any]:
        out: dict[str, Any] = {"url": page.url, "title": page.title()}
        others = [url for url, navigation in session.blocked if not navigation]
        if others:
            out["blocked"] = others[:20]
        return out

    def observe(self, key: Key) -> dict[str, Any]:
        session = self.session(key, create=False)
        page = session.live_page()
        found = page.evaluate(OBSERVE, [session.next_ref, self.settings.max_elements])
        session.next_ref = int(found["next"])
        elements: list[dict[str, Any]] = found["elements"]
        for element in elements:
            session.seen[element["ref"]] = {k: element.get(k) for k in FINGERPRINT}
        return {"url": page.url, "title": page.title(), "elements": elements}

    def _element(self, session: Session, ref: str) -> Any:
        page = session.live_page()
        locator = page.locator(f'[{REF_ATTRIBUTE}="{ref}"]')
        if locator.count() == 0:
            raise ElementGone(
                f"no element {ref} on the page at {page.url} (it was removed, or the page "
                "changed): call browser_observe for the current references"
            )
        return locator.first

    def click(self, key: Key, ref: str) -> dict[str, Any]:
        session = self.session(key, create=False)
        element = self._element(session, ref)
        return self._navigating(session, element.click)

    def type(self, key: Key, ref: str, text: str, submit: bool) -> dict[str, Any]:
        session = self.session(key, create=False)
        element = self._element(session, ref)

        def typing() -> None:
            element.fill(text)
            if submit:
                element.press("Enter")

        return self._navigating(session, typing)

    def extract(self, key: Key) -> dict[str, Any]:
        session = self.session(key, create=False)
        content: dict[str, Any] = session.live_page().evaluate(
            EXTRACT, self.settings.max_text_chars
        )
        return content

    def screenshot(self, key: Key, path: Path, full_page: bool) -> dict[str, Any]:
        session = self.session(key, create=False)
        page = session.live_page()
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), full_page=full_page, type="png")
        return {"path": str(path), "bytes": path.stat().st_size, "url": page.url}

    def close_thread(self, key: Key) -> dict[str, Any]:
        session = self._sessions.get(key)
        if session is None:
            return {"closed": False}
        self._close_session(session)
        return {"closed": True}

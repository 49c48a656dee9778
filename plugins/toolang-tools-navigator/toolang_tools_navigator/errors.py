"""The navigator's errors: each a message to the model (or the operator) saying what
happened and what to do. :class:`NavigatorError` and its kinds are never recovered:
BrowserRecovery retries only what the browser did wrong, not what was refused."""

from __future__ import annotations


class NavigatorError(Exception):
    """A browser call that cannot succeed as asked (no page, a bad name, no Chromium)."""


class NavigationRefused(NavigatorError):
    """A URL outside the allow-list: never loaded, never retried."""


class ElementGone(Exception):
    """A reference no element of the page carries (any more): recoverable by
    observing the page again."""


class PageCrashed(Exception):
    """The thread's page crashed (its renderer died): recoverable by reopening it."""

"""Older import path of :mod:`toolang_core.inbox.inbox` (the inbox sits below the runtime)."""

from toolang_core.inbox.inbox import Inbox

__all__ = ["Inbox"]

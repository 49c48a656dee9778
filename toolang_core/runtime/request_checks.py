"""Older import path of :mod:`toolang_core.inbox.request_checks`."""

from toolang_core.inbox.request_checks import InvalidRequest, check_request

__all__ = ["InvalidRequest", "check_request"]

"""Older import path of :mod:`toolang_core.inbox.policy` (the inbox sits below the runtime)."""

from toolang_core.inbox.policy import AdmissionPolicy
from toolang_core.store.types import GroupPolicy

__all__ = ["AdmissionPolicy", "GroupPolicy"]

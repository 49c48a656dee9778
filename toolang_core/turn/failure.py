"""The error that ends a turn ``failed`` (:class:`TurnFailed`).

A leaf, so that what raises it (the compactor, a running turn's delegation) does not
import the agent loop, which re-exports it from its older place.
"""

from __future__ import annotations


class TurnFailed(Exception):
    """The turn cannot go on; ``outcome`` says why (it ends ``failed``)."""

    def __init__(self, message: str, outcome: str) -> None:
        super().__init__(message)
        self.outcome = outcome

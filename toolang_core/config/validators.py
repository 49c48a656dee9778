"""Constraints on configuration values, checked while structuring.

Write ``Annotated[int, AtLeast(1)]`` as a field's type; the converter checks the bound
together with the type, so a file with several mistakes reports all of them at once.
"""

from __future__ import annotations

from typing import Annotated

import attrs

from toolang_core.limits import PRIORITY_LIMIT


@attrs.frozen
class AtLeast:
    """The value must be ``>= minimum``."""

    minimum: float

    def check(self, value: float) -> str | None:
        if value < self.minimum:
            return f"expected a number >= {self.minimum:g}, found {value}"
        return None


@attrs.frozen
class AtMost:
    """The value must be ``<= maximum``."""

    maximum: float

    def check(self, value: float) -> str | None:
        if value > self.maximum:
            return f"expected a number <= {self.maximum:g}, found {value}"
        return None


Priority = Annotated[int, AtLeast(-PRIORITY_LIMIT), AtMost(PRIORITY_LIMIT)]
PositiveInt = Annotated[int, AtLeast(1)]
NonNegativeInt = Annotated[int, AtLeast(0)]
NonNegativeFloat = Annotated[float, AtLeast(0)]
PositiveFloat = Annotated[float, AtLeast(0.001)]

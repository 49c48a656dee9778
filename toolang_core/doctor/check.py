"""One doctor finding (:class:`Check`, public as ``toolang_core.DoctorCheck``).

A leaf module: the hook specifications name it (``toolang_doctor_checks``) without
importing the checks, which build a runtime.
"""

from __future__ import annotations

from typing import Literal

import attrs

__all__ = ["Check", "DoctorCheck", "Status"]

Status = Literal["ok", "info", "warn", "fail"]


@attrs.frozen
class Check:
    """One finding: which area, how it went, a one-line summary and detail lines."""

    area: str
    status: Status
    summary: str
    details: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


DoctorCheck = Check
"""The public name of :class:`Check`, for plugins' ``toolang_doctor_checks``."""

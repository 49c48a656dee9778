"""Settings of the automator's tests."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Hypothesis's time-based checks (a 200 ms deadline per example, "input generation is
# slow") fail when the machine is busy, and a combined run makes it busy; what these
# properties check does not depend on speed, so the suite turns both off.
settings.register_profile("toolang", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("toolang")

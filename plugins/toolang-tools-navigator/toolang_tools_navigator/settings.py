"""``[plugins.tools-navigator]``: kept apart so registering the plugin imports little."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import attrs

NAME: Final = "tools-navigator"
"""The entry-point name: the settings section, the state key and the screenshots folder."""


def above(minimum: float) -> Callable[[Any, attrs.Attribute[Any], float], None]:
    def check(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
        if value <= minimum:
            raise ValueError(f"{attribute.name}: expected a number > {minimum:g}, found {value}")

    return check


@attrs.frozen
class NavigatorSettings:
    """``[plugins.tools-navigator]``.

    ``allow_hosts``: the only hosts a page may load anything from — navigation, redirects,
    link clicks, images, scripts, fetches — each ``"loopback"`` (localhost, 127.0.0.0/8,
    ::1), a host name, or ``"*.example.org"`` (every name under the domain). ``files_dir``:
    the directory ``file://`` pages may come from (relative to toolang.toml); none by
    default. ``idle_seconds``: a turn thread's browser context is closed when it has not
    been used for this long. ``action_seconds``: how long one browser action may wait
    (for a page to load, an element to be clickable).
    """

    executable_path: Path = Path("/usr/bin/chromium")
    allow_hosts: tuple[str, ...] = ("loopback",)
    files_dir: Path | None = None
    idle_seconds: float = attrs.field(default=300.0, validator=above(0))
    action_seconds: float = attrs.field(default=15.0, validator=above(0))
    max_elements: int = attrs.field(default=200, validator=above(0))
    """The most elements ``browser_observe`` lists."""
    max_text_chars: int = attrs.field(default=8_000, validator=above(0))
    """The most page text ``browser_extract`` returns."""
    recovery: bool = True
    """BrowserRecovery: a failed browser call is recovered once and retried once."""
    sandbox: bool = True
    """Run Chromium inside bubblewrap with a tool program's file system (the host's
    network); ``false`` runs it unconfined as the runtime's user."""

"""The two pluggy markers every toolang plugin uses.

``hookimpl`` decorates a plugin's implementation of a hook; ``hookspec`` is used by
``toolang_core.hookspecs`` (and by plugins that define hooks of their own).
Both are bound to the project name ``toolang``: a manager only sees implementations
marked for its own project, so toolang can share a process with pytest or llm.
"""

from __future__ import annotations

from typing import Final

import pluggy

PROJECT_NAME: Final = "toolang"
"""The pluggy project name and the entry-point group plugins are published under."""

HOOK_PREFIX: Final = "toolang_"
"""Every toolang hook name starts with this prefix."""

hookspec: Final = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl: Final = pluggy.HookimplMarker(PROJECT_NAME)

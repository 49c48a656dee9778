"""The commented starter configuration written by ``toolang init``."""

from __future__ import annotations

STARTER_CONFIG = """\
# toolang.toml — one runtime, composed from plugins.
# Every key below shows its default; delete what you do not change.
# Relative paths are relative to this file. Paths expand ~ and ${ENV} (${ENV:-default}).

# State directory: the execution store and plugin files live here.
home = ".toolang"

[log]
level = "info"          # debug | info | warning | error
format = "auto"         # auto (console on a terminal) | console | json

[plugins]
# load = ["source-chat"]   # allow-list by entry-point or distribution name; [] loads none
disable = []               # deny-list; applied before a plugin is imported
strict = false             # any plugin failure is an error (also --strict)

# Each plugin's own settings live in a table named after it, e.g.:
# [plugins.hook-security-filter]
# redact_pii = true

[store]
backend = "sqlite"        # the embedded default; "postgres" with toolang-store-postgres
# path = ".toolang/toolang.db"

[scheduler]
max_running = 8           # turns running at once, across all groups
aging_seconds = 60.0      # a waiting request gains one priority level per this many seconds

# One table per thread group (by default a group is its source's name).
[scheduler.groups.chat]
priority = 100
max_running = 4

[scheduler.groups.task]
priority = 60
max_running = 2
max_queued = 1000
overflow = "reject"       # reject | drop_oldest | replace_pending
"""

"""The commented starter configuration written by ``toolang init``."""

from __future__ import annotations

from collections.abc import Collection

DEMO_CHORE = """
# A demo chore, so `toolang run` shows work flowing at once: every 10 seconds the
# chore source places a turn on thread chore:heartbeat. Delete it when you are done.
[plugins.source-chore]
chores = [
  { key = "heartbeat", schedule = "every 10 seconds", input = "Hello from the heartbeat chore." },
]
"""

SERVER = """
# The HTTP API and web console (toolang-server), on this machine only. `toolang run`
# prints the console's URL. Without tokens only loopback callers are served; to open it
# to the network give every caller a token and listen elsewhere:
#   tokens = { alice = "${ALICE_TOKEN}" }   # owner name = token (16+ characters)
[plugins.server]
enabled = true
host = "127.0.0.1"
port = 8765
"""


def starter_config(installed: Collection[str] = ()) -> str:
    """The starter file; sections for installed plugins are added (``installed`` holds
    entry-point names), so the file always loads as-is."""
    text = STARTER_CONFIG
    if "memory-sqlite" in installed:  # memory on from the start: it saves by itself
        text = text.replace('# [memory]\n# plugin = "sqlite"', '[memory]\nplugin = "sqlite"')
    if "source-chore" in installed:
        text += DEMO_CHORE
    if "server" in installed:
        text += SERVER
    return text


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
# redact_params = true     # mask personal data in tool parameters
# block_patterns = []      # extra regexes that block a tool call

[store]
backend = "sqlite"        # the embedded default; "postgres" with toolang-store-postgres
# path = ".toolang/toolang.db"

[scheduler]
max_running = 8           # turns running at once in this runtime, all groups together
aging_seconds = 60.0      # a waiting request gains one priority step per this many seconds

# One table per thread group (a group is its source's name unless a request says
# otherwise). Defaults: chat 40, invoke 30, task 20 (coalesce), chore 10 (coalesce),
# will 0 (coalesce, max_running 1). Strategies: enqueue | reject | coalesce | interrupt | steer.
[scheduler.groups.chat]
priority = 40
max_running = 4

[scheduler.groups.task]
max_running = 2
max_queued = 1000
overflow = "reject"       # reject | drop_oldest | replace_pending

[agents]
default = "assistant"     # answers (and routes) requests that name no agent
# dir = "agents"          # your AGENT.md files, one folder per agent (default: agents/ here)
# history_turns = 20      # earlier exchanges of the thread in each prompt (default 20)
# context_tokens = 8000   # or: history by a token budget, older turns summarised
max_steps = 20            # model calls per turn at most
loop_repeats = 3          # the same tool calls this often ends the turn: loop_detected

# [memory]
# plugin = "sqlite"       # toolang-memory-sqlite; unset: memory is off
# save_turns = ["chat", "invoke", "task"]   # sources whose exchanges are remembered

[tools]
sandbox = "required"      # tools' programs run in the OS sandbox (bubblewrap); "off": unconfined
# workdir = "workspace"   # their one writable directory (each owner gets owners/<owner> in it)
network = "off"           # "allow": only allow_hosts, through the runtime's proxy
# allow_hosts = ["pypi.org", "*.pythonhosted.org"]

[models]
default = "demo"          # the offline stand-in (toolang-model-demo); e.g. "llm/gpt-4o-mini"

[runtime]
# sources = ["chat", "task", "chore", "invoke", "will"]   # default: every installed source
executor = "agent"        # the agent loop; "echo" answers with the input (engine tests)
lease_seconds = 30.0      # a running turn's lease, renewed every third of it
max_attempts = 3          # a turn interrupted by crashes is retried at most this often
shutdown_grace_seconds = 10.0
"""

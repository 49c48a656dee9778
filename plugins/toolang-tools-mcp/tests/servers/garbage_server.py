"""Not an MCP server: answers anything with lines that are not JSON-RPC."""

from __future__ import annotations

import sys

for _line in sys.stdin:
    sys.stdout.write("hello, I am not a protocol\n")
    sys.stdout.flush()

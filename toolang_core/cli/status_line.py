"""One status line at the bottom of a terminal that log lines never write over.

``toolang run`` redraws a line of queued/running counts on stderr, and logs go to
stderr too. Logging through a :class:`StatusLine` clears the status line before each
log line and redraws it after, so a log line always starts on a clean line.
"""

from __future__ import annotations

from typing import TextIO

CLEAR = "\r\x1b[2K"


class StatusLine:
    """A text stream for the logger that shares its terminal with one status line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.text = ""
        self.drawn = False

    def show(self, text: str) -> None:
        """Replace the status line with ``text``."""
        self.text = text
        self.stream.write(f"{CLEAR}{text}")
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        """Remove the status line (at exit), leaving the cursor at its start."""
        if self.drawn:
            self.stream.write(CLEAR)
            self.stream.flush()
        self.text, self.drawn = "", False

    # -- the stream the logger writes to -------------------------------------------

    def write(self, data: str) -> int:
        if self.drawn:  # a log line begins: take the status line away first
            self.stream.write(CLEAR)
            self.drawn = False
        return self.stream.write(data)

    def flush(self) -> None:
        # The logger flushes after each whole line: put the status line back under it.
        if self.text and not self.drawn:
            self.stream.write(self.text)
            self.drawn = True
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

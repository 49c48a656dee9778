"""Errors meant for people.

Every error toolang raises on bad input derives from :class:`ToolangError`. Its
message is complete on one line: what happened, where (file, key, plugin, hook, id),
what was expected and what to do. The CLI prints the message and exits with
``exit_code``; it never shows a traceback for a ``ToolangError``.
"""

from __future__ import annotations

from typing import ClassVar, Final, Literal


class ToolangError(Exception):
    """Base class of every error toolang reports to a person."""

    exit_code: ClassVar[int] = 1

    @property
    def message(self) -> str:
        return str(self)


class ConfigError(ToolangError):
    """The configuration file (or a plugin's section of it) is invalid.

    ``problems`` holds one line per mistake, each naming the file and the key path.
    """

    exit_code: ClassVar[int] = 2

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class PluginError(ToolangError):
    """A plugin failed to import, register or run, and strict mode is on.

    The message names the distribution, its version, the entry point and, when one
    is involved, the hook.
    """

    exit_code: ClassVar[int] = 3


class UsageError(ToolangError):
    """A command was asked to do something that cannot be done as asked."""

    exit_code: ClassVar[int] = 2


PLUGIN_FAILURES: Final = (Exception, SystemExit)
"""What a plugin's code may raise that fails its own call, not the runtime: any error,
and ``sys.exit()`` (argparse on bad arguments, a click command run standalone, a library
that exits). ``KeyboardInterrupt`` is not among them: in the event loop's thread it is
the person's Ctrl-C."""


def describe_exception(exc: BaseException) -> str:
    """One line naming an exception: its type and the first line of its message.

    Used wherever a failure is recorded or logged for a person (a plugin's hook, a
    tool, a turn); it lives here, at the bottom of the package graph, so every layer
    can use it without importing the plugin host."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


ModelErrorKind = Literal[
    "rate_limit",
    "overloaded",
    "timeout",
    "server",
    "connection",
    "auth",
    "not_found",
    "refused",
    "error",
]
"""What kind of failure a model call met; ``error`` is one nobody classified."""

TRANSIENT_KINDS: Final[frozenset[str]] = frozenset(
    {"rate_limit", "overloaded", "timeout", "server", "connection"}
)
"""The kinds that may pass if the same call is made again a little later."""


class ModelError(Exception):
    """A model call failed (network, quota, bad answer); the message says what and where.

    ``kind`` classifies the failure for the agent loop's retries and fallbacks
    (``[models] retry``, ``fallback``): a model plugin raises the subclass that fits
    (:class:`ModelRateLimited`, …) or passes ``kind=``. ``transient`` kinds
    (``rate_limit``, ``overloaded``, ``timeout``, ``server``, ``connection``) are
    retried with backoff; the others (``auth``, ``not_found``, ``refused`` and the
    unclassified ``error``) never are. ``retry_after`` is the wait, in seconds, the
    service asked for (an HTTP ``Retry-After``), or ``None``.
    """

    kind: ModelErrorKind = "error"

    def __init__(
        self,
        message: str = "",
        *,
        kind: ModelErrorKind | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """Whether making the same call again later may succeed."""
        return self.kind in TRANSIENT_KINDS


class ModelRateLimited(ModelError):
    """The service refused the call for now: too many requests or tokens (HTTP 429)."""

    kind: ModelErrorKind = "rate_limit"


class ModelOverloaded(ModelError):
    """The service is overloaded or unavailable for now (HTTP 503, 529)."""

    kind: ModelErrorKind = "overloaded"


class ModelTimeout(ModelError):
    """The call took too long and was given up."""

    kind: ModelErrorKind = "timeout"


class ModelServerError(ModelError):
    """The service failed on its side (HTTP 5xx)."""

    kind: ModelErrorKind = "server"


class ModelConnectionError(ModelError):
    """The service could not be reached (DNS, refused or reset connection)."""

    kind: ModelErrorKind = "connection"


class ModelAuthError(ModelError):
    """No key, a bad key, or a key not allowed this model (HTTP 401, 403)."""

    kind: ModelErrorKind = "auth"


class ModelNotFound(ModelError):
    """The provider does not know this model (HTTP 404, an unknown model id)."""

    kind: ModelErrorKind = "not_found"


class ModelRefused(ModelError):
    """The model (or its provider's filter) refused the content of the request."""

    kind: ModelErrorKind = "refused"

"""Per-invocation CLI state: global options, the configuration and the plugin host.

Everything is built lazily, so ``toolang --help`` or ``toolang init`` never pay for
what they do not use.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from toolang_core.config.model import ToolangConfig
    from toolang_core.inbox.inbox import Inbox
    from toolang_core.plugins.host import PluginHost
    from toolang_core.plugins.loader import LoadPolicy
    from toolang_core.runtime import Runtime
    from toolang_core.store.protocol import ExecutionStore

F = TypeVar("F", bound="Callable[..., Any]")


class CliState:
    """What the root command's options resolve to, shared by every subcommand."""

    def __init__(
        self, *, config_path: Path | None, strict: bool, env: Mapping[str, str] | None = None
    ) -> None:
        self.config_path = config_path
        self.strict = strict
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.log_level: str | None = None
        self.log_format: str | None = None

    @classmethod
    def of(cls, ctx: click.Context) -> CliState:
        """The state of the current invocation (created from the root's options)."""
        root = ctx.find_root()
        if not isinstance(root.obj, CliState):
            root.obj = cls(
                config_path=root.params.get("config_path"),
                strict=bool(root.params.get("strict")),
            )
        return root.obj

    @cached_property
    def config(self) -> ToolangConfig:
        """The validated configuration. :raises ConfigError:"""
        from toolang_core.config.loader import find_config, load_config

        return load_config(find_config(self.config_path, env=self.env), env=self.env)

    def policy(self, *, config: ToolangConfig | None = None) -> LoadPolicy:
        from toolang_core.plugins.loader import LoadPolicy

        plugins = config.plugins if config is not None else None
        return LoadPolicy.resolve(
            self.env,
            config_load=plugins.load if plugins else None,
            config_disable=plugins.disable if plugins else (),
            config_strict=plugins.strict if plugins else False,
            strict_flag=self.strict,
        )

    @cached_property
    def host(self) -> PluginHost:
        """The plugin host for this invocation. :raises PluginError: in strict mode."""
        from toolang_core.plugins.host import PluginHost

        return PluginHost.from_config(self.config, self.env, strict=self.strict)

    def lenient_host(self) -> PluginHost:
        """A host even when the configuration is broken (used to list commands)."""
        from toolang_core.errors import ConfigError

        try:
            return self.host
        except ConfigError:
            from toolang_core.plugins.host import PluginHost

            self.host = PluginHost.from_config(None, self.env, strict=self.strict)
            return self.host

    @cached_property
    def runtime(self) -> Runtime:
        """A runtime built from the configuration and this invocation's host."""
        from toolang_core.runtime import Runtime

        return Runtime(self.config, self.host, env=self.env)

    def open_store(self, *, read_only: bool) -> ExecutionStore:
        """The configured store; read-only opens never create or migrate it."""
        return self.runtime.open_store(read_only=read_only)

    def open_inbox(self) -> Inbox:
        return self.runtime.open_inbox()


def pass_state(f: F) -> F:
    """Decorator: call the command with the :class:`CliState` as first argument."""

    @click.pass_context
    def wrapper(ctx: click.Context, *args: Any, **kwargs: Any) -> Any:
        return ctx.invoke(f, CliState.of(ctx), *args, **kwargs)

    return cast("F", functools.update_wrapper(wrapper, f))

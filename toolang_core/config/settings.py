"""Plugins' own configuration sections: ``[plugins.<name>]``.

A plugin declares an attrs class through ``toolang_register_settings``; its section
is validated by the same converter as the core configuration, so its errors read
the same way (``toolang.toml: plugins.chat.history_limit: expected an integer, …``).
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import structlog

from toolang_core.builtins import install_hint
from toolang_core.config.converter import ConfigConverter
from toolang_core.errors import ConfigError
from toolang_core.plugins.records import PluginStatus

if TYPE_CHECKING:
    from toolang_core.config.model import ToolangConfig
    from toolang_core.plugins.host import PluginHost

T = TypeVar("T")

log = structlog.get_logger("toolang.config")


def plugin_settings(
    config: ToolangConfig,
    name: str,
    settings_class: type[T],
    *,
    env: Mapping[str, str] | None = None,
) -> T:
    """Validate ``[plugins.<name>]`` of ``config`` into ``settings_class``.

    A missing section gives the class's defaults.

    :raises ConfigError: naming the file and each bad key as ``plugins.<name>.<key>``.
    """
    return _section(_converter(config, env), config, name, settings_class)


def _converter(config: ToolangConfig, env: Mapping[str, str] | None) -> ConfigConverter:
    return ConfigConverter(
        file=config.display_name,
        base_dir=config.base_dir,
        env=os.environ if env is None else env,
    )


def _section(
    converter: ConfigConverter, config: ToolangConfig, name: str, settings_class: type[T]
) -> T:
    raw = config.plugins.settings.get(name, {})
    if not raw and _all_defaulted(settings_class):
        # No section: the defaults, as the converter would give them, without making
        # (compiling) its structuring function for a class with nothing to structure.
        with contextlib.suppress(Exception):  # the converter reports it, as it always did
            return settings_class()
    return converter.structure(raw, settings_class, prefix=("plugins", name))


def _all_defaulted(settings_class: type[Any]) -> bool:
    return attrs.has(settings_class) and all(
        not field.init or field.default is not attrs.NOTHING
        for field in attrs.fields(settings_class)
    )


def validate_plugin_settings(
    config: ToolangConfig,
    host: PluginHost,
    *,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Validate every plugin's section; return the settings objects by plugin name.

    Sections of plugins that are installed but disabled or failed are left alone (the
    operator may re-enable them). A section that no installed plugin owns is a warning
    (the plugin was uninstalled; its section waits for it) — unless its name is a near
    miss of an installed plugin's, which is a typo and an error, as is a section for a
    plugin that takes no settings. In strict mode every such section is an error.

    :raises ConfigError: listing every problem.
    """
    declared = host.components.settings
    problems: list[str] = []
    settings: dict[str, Any] = {}
    converter = _converter(config, env)  # one for all: making a cattrs converter costs
    for name, settings_class in declared.items():
        try:
            settings[name] = _section(converter, config, name, settings_class)
        except ConfigError as exc:
            problems.extend(exc.problems)
    errors, unused = unowned_sections(config, host)
    problems.extend(errors)
    if problems:
        raise ConfigError(problems)
    for message in unused:
        log.warning("config.section_unused", problem=message)
    return settings


def unowned_sections(config: ToolangConfig, host: PluginHost) -> tuple[list[str], list[str]]:
    """``[plugins.<name>]`` sections no active plugin reads, as ``(errors, warnings)``.

    A section for a plugin that is not installed is a warning (it waits for its plugin;
    ``toolang doctor`` shows it) — an error in strict mode, or when its name is a near
    miss of an installed plugin's (a typo). A section for a plugin that takes no settings
    is an error. Sections of disabled or failed plugins are left alone."""
    declared = host.components.settings
    records = {record.name: record for record in host.records}
    errors: list[str] = []
    warnings: list[str] = []
    for name in config.plugins.settings:
        if name in declared:
            continue
        record = records.get(name)
        if record is None:
            hint = difflib.get_close_matches(name, list(records), n=1, cutoff=0.8)
            message = (
                f"{config.display_name}: plugins.{name}: no installed plugin is named {name!r}"
            )
            if hint or host.strict:
                suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
                errors.append(message + suggestion)
            else:
                warnings.append(
                    f"{message}{install_hint(name)}; section ignored until one is installed"
                )
        elif record.status in (PluginStatus.LOADED, PluginStatus.BUILTIN):
            errors.append(
                f"{config.display_name}: plugins.{name}: plugin {name!r} takes no settings"
            )
    return errors, warnings

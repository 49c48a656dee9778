"""Find, read and validate ``toolang.toml``."""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_type_hints

from cattrs.gen import make_dict_structure_fn

from toolang_core.config.converter import (
    ConfigConverter,
    ConfigTypeError,
    KeyPath,
    KeyProblems,
    describe_value,
    walk_problems,
)
from toolang_core.config.model import NOT_FROM_FILE, PluginsConfig, ToolangConfig
from toolang_core.errors import ConfigError

CONFIG_NAME = "toolang.toml"
ENV_CONFIG = "TOOLANG_CONFIG"

_PLUGIN_KEYS = ("load", "disable", "strict", "required")


def find_config(
    explicit: Path | None = None, *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Path | None:
    """Return the configuration file to use, or ``None`` to run on defaults.

    ``explicit`` (``--config``) wins, then ``TOOLANG_CONFIG``, then ``./toolang.toml``.
    A file named explicitly must exist.
    """
    env = os.environ if env is None else env
    chosen = explicit or (Path(env[ENV_CONFIG]) if env.get(ENV_CONFIG) else None)
    if chosen is not None:
        if not chosen.is_file():
            origin = "--config" if explicit else ENV_CONFIG
            raise ConfigError([f"{chosen}: no such configuration file (named by {origin})"])
        return chosen
    candidate = (cwd or Path.cwd()) / CONFIG_NAME
    return candidate if candidate.is_file() else None


def load_config(
    path: Path | None, *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> ToolangConfig:
    """Read and validate ``path``; with ``None``, return the defaults for ``cwd``.

    :raises ConfigError: listing every problem, one line each.
    """
    env = os.environ if env is None else env
    if path is None:
        base = (cwd or Path.cwd()).resolve()
        return ToolangConfig(base_dir=base, home=base / ".toolang")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{path}: cannot read the configuration file: {exc}"]) from None
    return parse_config(text, file=path, env=env)


def parse_config(text: str, *, file: Path, env: Mapping[str, str]) -> ToolangConfig:
    """Parse and validate the text of a configuration file."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([_syntax_error(file, exc)]) from None
    base_dir = file.resolve().parent
    converter = ConfigConverter(file=str(file), base_dir=base_dir, env=env)
    converter.cattrs.register_structure_hook(PluginsConfig, _plugins_hook(converter))
    fields = {
        name: tp for name, tp in get_type_hints(ToolangConfig).items() if name not in NOT_FROM_FILE
    }
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, raw in data.items():
        field_type = fields.get(key)
        if field_type is None:
            problems.append(f"{file}: {key}: unknown key{_did_you_mean(key, fields)}")
            continue
        try:
            values[key] = converter.structure(raw, field_type, prefix=(key,))
        except ConfigError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ConfigError(problems)
    home = values.pop("home", None) or base_dir / ".toolang"
    return ToolangConfig(base_dir=base_dir, source=file, home=home, **values)


def _plugins_hook(converter: ConfigConverter) -> Any:
    default = make_dict_structure_fn(
        PluginsConfig, converter.cattrs, _cattrs_forbid_extra_keys=True
    )

    def structure(value: Any, _: Any) -> PluginsConfig:
        if not isinstance(value, Mapping):
            raise ConfigTypeError("a table", value)
        known = {k: v for k, v in value.items() if k in _PLUGIN_KEYS}
        tables = {k: v for k, v in value.items() if k not in _PLUGIN_KEYS}
        problems: list[tuple[KeyPath, str]] = [
            (
                (key,),
                f"unknown key{_did_you_mean(key, _PLUGIN_KEYS)}; a plugin's settings are a "
                f"table [plugins.{key}], found {describe_value(table)}",
            )
            for key, table in tables.items()
            if not isinstance(table, Mapping)
        ]
        try:
            settings = {k: v for k, v in tables.items() if isinstance(v, Mapping)}
            result: PluginsConfig = default({**known, "settings": settings}, PluginsConfig)
        except Exception as exc:
            problems.extend(walk_problems(exc))
        if problems:
            raise KeyProblems(problems)
        return result

    return structure


def _did_you_mean(key: str, candidates: Mapping[str, Any] | tuple[str, ...]) -> str:
    hint = difflib.get_close_matches(key, list(candidates), n=1)
    return f" (did you mean {hint[0]!r}?)" if hint else f"; allowed keys: {', '.join(candidates)}"


def _syntax_error(file: Path, exc: tomllib.TOMLDecodeError) -> str:
    message = str(exc)
    match = re.search(r"\(at line (\d+), column (\d+)\)", message)
    if match:
        reason = message[: match.start()].strip()
        return f"{file}:{match.group(1)}:{match.group(2)}: invalid TOML: {reason}"
    return f"{file}: invalid TOML: {message}"

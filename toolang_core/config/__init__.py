"""Configuration: ``toolang.toml`` read with tomllib, structured by cattrs into attrs classes."""

from toolang_core.config.converter import ConfigConverter
from toolang_core.config.loader import CONFIG_NAME, find_config, load_config, parse_config
from toolang_core.config.model import (
    AgentsConfig,
    DelegationConfig,
    GroupConfig,
    LogConfig,
    ModelsConfig,
    PluginsConfig,
    RuntimeConfig,
    SchedulerConfig,
    StoreConfig,
    ToolangConfig,
    ToolsConfig,
)
from toolang_core.config.settings import plugin_settings, validate_plugin_settings
from toolang_core.config.spend import LimitsConfig
from toolang_core.config.starter import STARTER_CONFIG, starter_config
from toolang_core.config.types import EnvStr, Secret

__all__ = [
    "CONFIG_NAME",
    "STARTER_CONFIG",
    "AgentsConfig",
    "ConfigConverter",
    "DelegationConfig",
    "EnvStr",
    "GroupConfig",
    "LimitsConfig",
    "LogConfig",
    "ModelsConfig",
    "PluginsConfig",
    "RuntimeConfig",
    "SchedulerConfig",
    "Secret",
    "StoreConfig",
    "ToolangConfig",
    "ToolsConfig",
    "find_config",
    "load_config",
    "parse_config",
    "plugin_settings",
    "starter_config",
    "validate_plugin_settings",
]

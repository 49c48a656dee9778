"""``toolang plugin new``: scaffold a plugin distribution that works as generated."""

from toolang_core.scaffold.generate import FAMILIES, PluginNames, scaffold_plugin

__all__ = ["FAMILIES", "PluginNames", "scaffold_plugin"]

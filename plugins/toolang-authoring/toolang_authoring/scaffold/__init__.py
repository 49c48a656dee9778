"""``toolang plugin new``: scaffold a plugin distribution that works as generated."""

from toolang_authoring.scaffold.generate import (
    FAMILIES,
    STANDALONE_FAMILIES,
    PluginNames,
    scaffold_plugin,
)

__all__ = ["FAMILIES", "STANDALONE_FAMILIES", "PluginNames", "scaffold_plugin"]

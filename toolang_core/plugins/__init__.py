"""Plugin hosting: the manager, the entry-point loader, the host and the hook facade."""

from toolang_core.plugins.context import PluginContext
from toolang_core.plugins.host import PluginHost
from toolang_core.plugins.loader import LoadPolicy, scan_entry_points
from toolang_core.plugins.manager import ToolangPluginManager, create_plugin_manager
from toolang_core.plugins.records import PluginFailure, PluginRecord, PluginStatus

__all__ = [
    "LoadPolicy",
    "PluginContext",
    "PluginFailure",
    "PluginHost",
    "PluginRecord",
    "PluginStatus",
    "ToolangPluginManager",
    "create_plugin_manager",
    "scan_entry_points",
]

from toolang_core import PluginContext
from toolang_core.config import ToolangConfig

import toolang_store_frozen as plugin


def test_registers_its_store(toolang_host, toolang_register, tmp_path):
    toolang_register(plugin, "store-frozen")
    registration = toolang_host.components.of_kind("store")["frozen"]
    assert registration.plugin == "store-frozen"
    context = PluginContext(plugin_name="store-frozen", config=ToolangConfig(base_dir=tmp_path))
    assert isinstance(registration.factory(context), plugin.Store)

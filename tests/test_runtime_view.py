"""What a plugin reads of its runtime through ``RuntimeView`` — the registrations, the
plugins and their hooks, its routes — and that the view hands it no plugin host."""

from __future__ import annotations

import asyncio

from toolang_core import RuntimeView, hookimpl
from toolang_core.runtime_view import ComponentsReader, PluginsReader
from toolang_core.testing.runtimes import make_runtime


def _members(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")}


def test_the_view_hands_no_plugin_host_only_readers():
    assert "host" not in _members(RuntimeView)
    assert {"components", "plugins", "routes", "route_servers", "settings_for"} <= _members(
        RuntimeView
    )
    # the readers read: nothing registers a plugin, calls a hook or reaches the manager
    readers = _members(ComponentsReader) | _members(PluginsReader)
    assert not readers & {"register", "hooks", "pm", "fail", "configure", "add_commands"}


class Reader:
    def __init__(self) -> None:
        self.read: dict[str, object] = {}

    @hookimpl
    def toolang_startup(self, runtime: RuntimeView) -> None:
        self.read = {
            "startup": runtime.plugins.implementations("toolang_startup"),
            "active": "reader" in runtime.plugins.active_names,
            "record": runtime.plugins.record("reader").name,
            "failures": list(runtime.plugins.failures),
            "stages": [stage for stage, _hook, _plugins in runtime.plugins.chain()],
            "tools": dict(runtime.components.tools),
            "models": sorted(runtime.components.of_kind("model")),
            "servers": runtime.route_servers(),
            "routes": runtime.routes(),
            "one_shot": runtime.one_shot,
        }


def test_a_startup_hook_reads_the_plugins_and_their_registrations_through_the_view(tmp_path):
    runtime = make_runtime(tmp_path)
    reader = Reader()
    runtime.host.register(reader, "reader")
    asyncio.run(runtime.serve(asyncio.Event(), until_idle=True))
    read = reader.read
    assert "reader" in read["startup"] and read["active"] and read["record"] == "reader"
    assert read["failures"] == []
    assert "execute" in read["stages"]
    assert read["tools"] == dict(runtime.host.components.tools)
    assert read["models"] == sorted(runtime.host.components.of_kind("model"))
    assert read["servers"] == [] and read["routes"] == ([], [])
    assert read["one_shot"] is False


def test_the_plugins_reader_answers_what_the_host_knows(tmp_path):
    runtime = make_runtime(tmp_path)
    reader = runtime.plugins
    assert reader.records == runtime.host.records
    assert reader.active_names == runtime.host.active_names
    assert reader.implementations("toolang_startup") == runtime.host.hooks.implementations(
        "toolang_startup"
    )
    assert runtime.components is runtime.host.components

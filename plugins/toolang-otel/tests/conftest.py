"""Fixtures: runtimes running real agent turns with this plugin exporting in memory."""

from __future__ import annotations

import pytest
from otel_kit import Shelf, ShelfPlugin, Tools

import toolang_otel as plugin


@pytest.fixture
def agent_runtime(toolang_runtime, toolang_scripted_model):
    """``make(script, settings_toml, memory=Shelf())``: a runtime with the scripted model,
    the test tool, a memory plugin and this plugin configured by ``settings_toml``."""

    def make(
        script,
        settings='exporter = "memory"\nsample_ratio = 1\n',
        *,
        memory=None,
        extra=None,
        config="",
    ):
        model = toolang_scripted_model(script)
        shelf = memory if memory is not None else Shelf()
        text = (
            '[models]\ndefault = "scripted"\n'
            '[memory]\nplugin = "shelf"\n'
            "[runtime]\npoll_seconds = 0.05\nshutdown_grace_seconds = 0\n"
            f"{config}"
            f"[plugins.{plugin.NAME}]\n{settings}"
        )
        plugins = {
            plugin.NAME: plugin,
            "scripted": model.plugin(),
            "tools": Tools(),
            "shelf": ShelfPlugin(shelf),
        }
        plugins.update(extra or {})
        return toolang_runtime(text, plugins=plugins)

    return make

"""Fixtures: real HTTP receivers on 127.0.0.1 and runtimes running real agent turns."""

from __future__ import annotations

import socket

import pytest
from event_publisher_kit import Receiver, Tools

import toolang_hook_event_publisher as plugin


@pytest.fixture
def receiver():
    """``make(statuses)``: a started :class:`Receiver`, shut down after the test."""
    made: list[Receiver] = []

    def make(statuses=()):
        server = Receiver(statuses).__enter__()
        made.append(server)
        return server

    yield make
    for server in made:
        server.__exit__()


@pytest.fixture
def silent_url():
    """A URL whose server accepts connections (the kernel's backlog does) and never
    answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/hook"
    sock.close()


@pytest.fixture
def agent_runtime(toolang_runtime, toolang_scripted_model):
    """``make(script, settings_toml, plugins=…)``: a runtime with the scripted model,
    the test tools and this plugin configured by ``settings_toml``."""

    def make(script, settings="", *, env=None, extra=None):
        model = toolang_scripted_model(script)
        config = (
            '[models]\ndefault = "scripted"\n'
            "[runtime]\npoll_seconds = 0.05\nshutdown_grace_seconds = 0\n"
            f"[plugins.{plugin.NAME}]\n{settings}"
        )
        plugins = {plugin.NAME: plugin, "scripted": model.plugin(), "tools": Tools()}
        plugins.update(extra or {})
        return toolang_runtime(config, plugins=plugins, env=env)

    return make

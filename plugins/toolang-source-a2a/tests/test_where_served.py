"""Where the A2A routes are served follows whether a server will serve them, not
whether a server plugin is installed: the normal install has toolang-server installed
and not enabled, and there ``listen`` must open the plugin's own port. A configured A2A
that nothing serves says so at start-up and in ``toolang doctor``."""

from __future__ import annotations

from pathlib import Path

import pytest
from a2a_kit import Runtime, install_kit

import toolang_server
import toolang_source_a2a

WITH_SERVER = "source-a2a,echo-model,source-chat,server"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    install_kit(root)
    return root


def test_listen_is_served_when_the_server_plugin_is_installed_but_not_enabled(tmp_path, site):
    b = Runtime(
        tmp_path / "b",
        site,
        '[plugins.source-a2a]\nlisten = "127.0.0.1:{port}"\n',
        plugins=WITH_SERVER,
    )
    b.start()  # waits until its card answers on the listen port
    try:
        log = b.stop()
    finally:
        b.kill()
    assert "a2a.listening" in log and "a2a.not_served" not in log


def test_a_configured_a2a_that_nothing_serves_says_so_at_start_and_in_doctor(tmp_path, site):
    b = Runtime(
        tmp_path / "b",
        site,
        '[plugins.source-a2a]\ntokens = { runtime-a = "s3cret" }\n',
        plugins=WITH_SERVER,
    )
    b.start(serves=False)
    try:
        doctor = b.cli("doctor")
    finally:
        log = b.stop()
    (line,) = [line for line in log.splitlines() if "a2a.not_served" in line]
    assert "warning" in line
    assert "nothing serves A2A" in line and "[plugins.server]" in line and "listen" in line
    assert log.index("a2a.not_served") < log.index("runtime.started")  # said at start-up
    (found,) = [line for line in doctor.stdout.splitlines() if "nothing serves A2A" in line]
    assert found.split()[:2] == ["warn", "a2a"]


@pytest.mark.parametrize(
    ("config", "one_shot", "expected"),
    [
        ("[plugins.server]\nenabled = true\nport = 18080\n", False, ("server", "server")),
        (
            '[plugins.server]\nenabled = true\n[plugins.source-a2a]\nlisten = "127.0.0.1:1"\n',
            False,
            ("server", "server"),
        ),
        ('[plugins.source-a2a]\nlisten = "127.0.0.1:1"\n', False, ("listen", "")),
        ('[plugins.source-a2a]\nlisten = "127.0.0.1:1"\n', True, ("nobody", "")),
        ("[plugins.server]\nenabled = true\n", True, ("nobody", "")),
        ("", False, ("nobody", "")),
    ],
    ids=["server", "server-over-listen", "listen", "one-shot-listen", "one-shot-server", "none"],
)
def test_who_serves_the_routes_follows_the_settings_of_the_run(
    toolang_runtime, config, one_shot, expected
):
    runtime = toolang_runtime(
        config, plugins={"server": toolang_server, "source-a2a": toolang_source_a2a}
    )
    runtime.one_shot = one_shot
    from toolang_source_a2a.standalone import serving

    found = serving(runtime)
    assert (found.by, found.plugin) == expected
    if found.by == "server":
        assert found.url.startswith("http://127.0.0.1:")

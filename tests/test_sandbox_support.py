"""Whether this machine can sandbox programs, and who says so: the probe
(toolang_core.sandbox.support), `toolang doctor`'s sandbox check and the warning
`toolang run` and the console show — never a silent fallback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolang_core.config import ToolsConfig
from toolang_core.doctor import check_config, run_checks
from toolang_core.doctor.setup import check_sandbox
from toolang_core.sandbox import support
from toolang_core.sandbox.support import (
    OFF_WARNING,
    SandboxSupport,
    sandbox_support,
    sandbox_warning,
)

MISSING = SandboxSupport(f"bubblewrap (bwrap) is not installed: {support.INSTALL_HINT}")


@pytest.fixture
def probe_again():
    """Forget the probe's answer before and after the test (it is made once per
    process)."""
    sandbox_support.cache_clear()
    yield
    sandbox_support.cache_clear()


def test_a_bubblewrap_that_cannot_make_namespaces_is_no_sandbox(tmp_path, monkeypatch, probe_again):
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    found = sandbox_support()
    assert not found.available and found.bwrap == str(fake)
    assert "cannot create its namespaces here" in str(found.problem)
    assert "No permissions to create new namespace" in str(found.problem)
    assert "unprivileged_userns_clone" in str(found.problem)  # what to do about it


def test_a_bubblewrap_before_0_8_sandboxes_without_disabling_user_namespaces(
    tmp_path, monkeypatch, probe_again
):
    real = support.find_bwrap()
    if real is None:
        pytest.skip("bubblewrap is not installed")
    older = tmp_path / "bin" / "bwrap"  # 0.6 knows every option but that one
    older.parent.mkdir()
    older.write_text(
        '#!/bin/sh\nfor a; do [ "$a" = --disable-userns ] && '
        "{ echo 'bwrap: Unknown option --disable-userns' >&2; exit 1; }; done\n"
        f'exec {real} "$@"\n'
    )
    older.chmod(0o755)
    monkeypatch.setenv("PATH", f"{older.parent}{os.pathsep}{os.environ['PATH']}")
    found = sandbox_support()
    assert found.available and not found.disable_userns
    assert "programs may create user namespaces" in found.describe()


def test_no_bubblewrap_names_the_package_to_install(monkeypatch, probe_again):
    monkeypatch.setattr(support, "find_bwrap", lambda: None)
    found = sandbox_support()
    assert found.problem == MISSING.problem
    assert "apt-get install bubblewrap" in found.describe()


def doctor(tmp_path: Path, config: str) -> list[tuple[str, str]]:
    (tmp_path / "toolang.toml").write_text(config)
    findings = run_checks(tmp_path / "toolang.toml", env={}, checks=(check_config, check_sandbox))
    return [(f.status, f.summary + " " + " ".join(f.details)) for f in findings[1:]]


def test_doctor_fails_when_the_sandbox_is_required_and_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(support, "sandbox_support", lambda: MISSING)
    ((status, text),) = doctor(tmp_path, "")
    assert status == "fail"
    assert "apt-get install bubblewrap" in text


def test_doctor_warns_when_the_sandbox_is_off_even_where_there_is_one(tmp_path):
    ((status, text),) = doctor(tmp_path, '[tools]\nsandbox = "off"\n')
    assert status == "warn" and text.startswith(OFF_WARNING)


def test_the_warning_run_and_the_console_show(monkeypatch):
    assert sandbox_warning(ToolsConfig(sandbox="off")) == OFF_WARNING
    monkeypatch.setattr(support, "sandbox_support", lambda: MISSING)
    missing = sandbox_warning(ToolsConfig())
    assert missing is not None and "tools' programs are refused" in missing
    monkeypatch.setattr(support, "sandbox_support", lambda: SandboxSupport(None, "/usr/bin/bwrap"))
    assert sandbox_warning(ToolsConfig()) is None


def test_run_says_so_in_its_first_line(toolang_cli, toolang_home):
    toolang_home.write_config(
        '[tools]\nsandbox = "off"\n[runtime]\nexecutor = "echo"\npoll_seconds = 0.05\n'
    )
    ran = toolang_cli("run", "--no-sources", "--until-idle", env={"TOOLANG_LOAD_PLUGINS": ""})
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.splitlines()[0] == f"WARNING: {OFF_WARNING}"


def test_run_with_json_logs_says_so_in_a_json_line(toolang_cli, toolang_home):
    toolang_home.write_config(
        '[tools]\nsandbox = "off"\n[runtime]\nexecutor = "echo"\npoll_seconds = 0.05\n'
    )
    ran = toolang_cli(
        "--log-format",
        "json",
        "run",
        "--no-sources",
        "--until-idle",
        env={"TOOLANG_LOAD_PLUGINS": ""},
    )
    assert ran.returncode == 0, ran.stderr
    events = [json.loads(line) for line in ran.stderr.splitlines()]  # every line is JSON
    (said,) = [e for e in events if e["event"] == "runtime.sandbox_warning"]
    assert (said["level"], said["detail"]) == ("warning", OFF_WARNING)

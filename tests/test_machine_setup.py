"""tools/test-setup: README command 2 gets a fresh Debian machine ready for the suite.

Chromium, PostgreSQL and bubblewrap are installed on the machines that run these tests,
so the script's probes are pointed at an empty directory (``TOOLANG_SETUP_ROOT``), as
on a machine where nothing is installed yet; its apt-get there is a recorder, and the
script is told which user it runs as (``os.geteuid``), so both branches run whoever runs
the suite. The decisions are the real script's: what is missing, whether it can install
it, and the exact command it prints when it cannot.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "test-setup"
EVERY_PACKAGE = "python3-venv chromium postgresql bubblewrap"
RUN_AS = """import os, runpy, sys
os.geteuid = lambda: {uid}
sys.argv = {argv!r}
runpy.run_path(sys.argv[0], run_name="__main__")
"""

RECORDING_APT_GET = """#!/bin/sh
# Records each call and whether services were kept from starting, then "installs" the
# packages by creating the files the script probes for.
echo "$* | DEBIAN_FRONTEND=$DEBIAN_FRONTEND | policy=$(cat "$MACHINE/usr/sbin/policy-rc.d" \
    2>/dev/null | tail -1)" >>"$MACHINE/apt-get.log"
if [ "$1" = install ]; then
    mkdir -p "$MACHINE$STDLIB/ensurepip" "$MACHINE/usr/lib/postgresql/15/bin"
    touch "$MACHINE$STDLIB/ensurepip/__init__.py" "$MACHINE/usr/lib/postgresql/15/bin/initdb" \
        "$MACHINE/usr/bin/chromium" "$MACHINE/usr/bin/bwrap"
fi
"""


@pytest.fixture
def machine(tmp_path: Path) -> Path:
    """An empty machine that has apt-get (a recorder) and nothing else."""
    apt_get = tmp_path / "usr" / "bin" / "apt-get"
    apt_get.parent.mkdir(parents=True)
    apt_get.write_text(RECORDING_APT_GET, encoding="utf-8")
    apt_get.chmod(0o755)
    return tmp_path


def setup(machine: Path, *args: str, root: bool = True, **env: str):
    """The script on ``machine``, run as root or as someone else (uid 1000)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    clean.update(
        TOOLANG_SETUP_ROOT=str(machine),
        MACHINE=str(machine),
        STDLIB=sysconfig.get_paths()["stdlib"],
        **env,
    )
    code = RUN_AS.format(uid=0 if root else 1000, argv=[str(SCRIPT), *args])
    return subprocess.run(
        [sys.executable, "-c", code],
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_dry_run_on_a_fresh_machine_names_every_package_and_installs_nothing(machine):
    done = setup(machine, "--dry-run")
    for name in ("venv", "Chromium", "PostgreSQL", "bubblewrap"):
        assert f"{name} is missing" in done.stdout
    assert done.returncode == 0, done.stderr
    assert f"would run: apt-get update -qq && apt-get install -y {EVERY_PACKAGE}\n" in (done.stdout)
    assert not (machine / "apt-get.log").exists(), "a dry run installed something"


def test_root_installs_what_is_missing_with_apt_get_and_no_service_starts(machine):
    done = setup(machine)
    assert done.returncode == 0, done.stdout + done.stderr
    calls = (machine / "apt-get.log").read_text(encoding="utf-8").splitlines()
    assert calls == [
        "update -qq | DEBIAN_FRONTEND=noninteractive | policy=exit 101",
        f"install -y {EVERY_PACKAGE} | DEBIAN_FRONTEND=noninteractive | policy=exit 101",
    ]
    assert not (machine / "usr/sbin/policy-rc.d").exists(), "the service block was left behind"
    assert f"installed {EVERY_PACKAGE}" in done.stdout
    again = setup(machine)
    assert again.returncode == 0
    assert "everything the tests need is installed" in again.stdout


def test_someone_who_is_not_root_gets_the_exact_command_and_an_error_at_once(machine):
    done = setup(machine, root=False)
    assert done.returncode == 1
    assert "this is not root" in done.stderr
    assert f"  sudo apt-get update -qq && sudo apt-get install -y {EVERY_PACKAGE}\n" in done.stderr
    assert not (machine / "apt-get.log").exists()


def test_a_machine_without_apt_get_gets_the_package_names_and_an_error(machine):
    (machine / "usr" / "bin" / "apt-get").unlink()
    done = setup(machine)
    assert done.returncode == 1
    assert "there is no apt-get" in done.stderr
    assert "python3-venv, chromium, postgresql, bubblewrap" in done.stderr


def test_a_named_server_or_browser_replaces_its_package(machine):
    browser = machine / "my-chromium"
    browser.write_text("#!/bin/sh\n", encoding="utf-8")
    done = setup(
        machine,
        "--dry-run",
        root=False,
        TOOLANG_PG_DSN="postgresql://u@db/x",
        TOOLANG_CHROMIUM=str(browser),
    )
    assert "sudo apt-get update -qq && sudo apt-get install -y python3-venv bubblewrap\n" in (
        done.stderr
    )


def test_a_browser_variable_that_names_nothing_is_an_error(machine):
    done = setup(machine, "--dry-run", TOOLANG_CHROMIUM="/nowhere/chromium")
    assert done.returncode == 1
    assert "TOOLANG_CHROMIUM=/nowhere/chromium names no executable" in done.stderr


def test_the_readme_test_command_sets_the_machine_up_before_tox_and_ci_runs_it():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r'^TEST_COMMAND="(.+)"$', ci, re.MULTILINE)
    assert command, ".ci/run no longer names its TEST_COMMAND"
    assert command.group(1).startswith("tools/test-setup && ")
    assert f"```sh\n{command.group(1)}\n```" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert os.access(SCRIPT, os.X_OK)

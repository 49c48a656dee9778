"""bubblewrap's command line for a sandbox policy (toolang_core.sandbox.bwrap): the
namespaces and flags, what is hidden and in which order, the limits. Pure: no process
is started here (tests/test_sandbox_process.py runs real sandboxes)."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from toolang_core import SandboxError, sandbox_argv
from toolang_core.sandbox.bwrap import (
    Hidden,
    bwrap_argv,
    hidden_entries,
    process_count_argv,
    resource_limits,
)
from toolang_core.sandbox.policy import SandboxPolicy
from toolang_core.sandbox.rules import ProcessLimits
from toolang_core.sandbox.support import sandbox_support

WORK = Path("/srv/toolang/workspace/owners/m")


def build(hidden: list[Hidden], **policy: object) -> list[str]:
    chosen = SandboxPolicy(mode="required", workdir=WORK, **policy)  # type: ignore[arg-type]
    return bwrap_argv("/usr/bin/bwrap", chosen, ["sh", "-c", "true"], hidden=hidden, cwd=WORK)


def pairs(argv: list[str], flag: str) -> list[str]:
    """The arguments following each ``flag``."""
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == flag]


def test_every_namespace_is_new_and_nothing_survives_its_parent():
    argv = build([])
    for flag in (
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
    ):
        assert flag in argv, flag
    assert pairs(argv, "--cap-drop") == ["ALL"]
    assert "--share-net" not in argv


def test_the_root_is_read_only_with_a_fresh_proc_dev_and_tmp_and_the_workdir_writable():
    argv = build([])
    assert argv[argv.index("--ro-bind") : argv.index("--ro-bind") + 3] == ["--ro-bind", "/", "/"]
    assert pairs(argv, "--proc") == ["/proc"]
    assert pairs(argv, "--dev") == ["/dev"]
    assert pairs(argv, "--tmpfs") == ["/tmp"]
    assert pairs(argv, "--bind") == [str(WORK)]  # the one writable place
    assert pairs(argv, "--chdir") == [str(WORK)]
    assert argv[-4:] == ["--", "sh", "-c", "true"]


def test_a_hidden_directory_around_the_workdir_is_covered_before_it_is_mounted():
    root = Path("/srv/toolang/workspace")
    argv = build([Hidden(root, True)])
    assert argv.index("--bind") > argv.index(str(root))  # the workdir shows through
    assert pairs(argv, "--tmpfs") == ["/tmp", str(root)]
    assert pairs(argv, "--remount-ro") == [str(root)]  # nothing written into the cover


def test_hidden_paths_inside_the_workdir_or_elsewhere_are_covered_after_it():
    home = Path("/srv/toolang/.toolang")
    inside = WORK / ".secrets"
    config = Path("/srv/toolang/toolang.toml")
    argv = build([Hidden(home, True), Hidden(inside, True), Hidden(config, False)])
    bind = argv.index("--bind")
    for path in (home, inside, config):
        assert argv.index(str(path)) > bind, path
    assert ["--ro-bind", "/dev/null", str(config)] == argv[
        argv.index(str(config)) - 2 : argv.index(str(config)) + 1
    ]
    assert set(pairs(argv, "--tmpfs")) == {"/tmp", str(home), str(inside)}


def test_a_path_under_a_hidden_directory_is_not_hidden_twice_unless_the_workdir_reopens_it():
    config_dir = Path("/root/.config")
    argv = build(
        [
            Hidden(config_dir, True),
            Hidden(config_dir / "gh" / "hosts.yml", False),
            Hidden(Path("/srv/toolang/workspace"), True),
            Hidden(WORK / "owners", True),  # below the workdir: the cover above is undone
        ]
    )
    assert str(config_dir / "gh" / "hosts.yml") not in argv
    assert str(WORK / "owners") in pairs(argv, "--tmpfs")


def test_the_workdir_itself_is_never_hidden():
    argv = build([Hidden(WORK, True)])
    assert pairs(argv, "--tmpfs") == ["/tmp"]
    assert pairs(argv, "--bind") == [str(WORK)]


def test_extra_binds_come_read_only_after_the_hidden_paths():
    chosen = SandboxPolicy(mode="required", workdir=WORK)
    argv = bwrap_argv(
        "bwrap",
        chosen,
        ["true"],
        hidden=[Hidden(Path("/run"), True)],
        cwd=WORK,
        binds=[(Path("/tmp/toolang-proxy-x/proxy.sock"), "/run/toolang/proxy.sock")],
    )
    socket_at = argv.index("/run/toolang/proxy.sock")
    assert argv[socket_at - 2 : socket_at] == ["--ro-bind", "/tmp/toolang-proxy-x/proxy.sock"]
    assert argv.index("/run") < socket_at < argv.index("--remount-ro")


def test_hidden_entries_keep_what_exists_with_its_kind(tmp_path):
    directory = tmp_path / "d"
    directory.mkdir()
    file = tmp_path / "f"
    file.write_text("x")
    link = tmp_path / "l"
    link.symlink_to(directory)
    found = hidden_entries([directory, file, tmp_path / "missing", link])
    assert found == [Hidden(directory, True), Hidden(file, False), Hidden(directory, True)]


def test_per_process_limits_are_rlimits_and_zero_means_none():
    limits = ProcessLimits(cpu_seconds=5, address_space_mb=64, file_size_mb=0, max_processes=9)
    assert resource_limits(limits) == [
        (resource.RLIMIT_CPU, 5),
        (resource.RLIMIT_AS, 64 << 20),
    ]
    assert resource_limits(ProcessLimits()) == []


def test_the_process_count_is_set_by_prlimit_inside_the_user_namespace():
    assert process_count_argv(12, prlimit="/usr/bin/prlimit") == [
        "/usr/bin/prlimit",
        "--nproc=12:12",
        "--",
    ]
    assert process_count_argv(0) == []


def test_share_network_keeps_the_hosts_network_and_nothing_else():
    shared = SandboxPolicy(mode="required", workdir=WORK)
    argv = bwrap_argv("/usr/bin/bwrap", shared, ["x"], hidden=[], cwd=WORK, share_network=True)
    assert "--unshare-net" not in argv
    assert argv[:-1] == [a for a in build([]) if a != "--unshare-net"][:-3]


def test_sandbox_argv_is_a_tool_programs_file_system_without_limits(tmp_path):
    """The public door for a program its caller starts itself (the navigator's
    Chromium): hidden paths as a tool program's, ``read_only`` shown, a place inside a
    hidden one refused, bubblewrap's command line ending in the command."""
    work, shown = tmp_path / "work", tmp_path / "pages"
    work.mkdir()
    shown.mkdir()
    if not sandbox_support().available:
        with pytest.raises(SandboxError, match="bubblewrap"):
            sandbox_argv(None, ["true"], workdir=work)
        return
    argv = sandbox_argv(None, ["prog", "-x"], workdir=work, read_only=[shown], share_network=True)
    assert argv[-3:] == ["--", "prog", "-x"] and "--unshare-net" not in argv
    assert "--unshare-pid" in argv and pairs(argv, "--ro-bind").count(str(shown)) == 1
    assert pairs(argv, "--chdir") == [str(work)]
    assert "--unshare-net" in sandbox_argv(None, ["prog"], workdir=work)
    with pytest.raises(SandboxError, match="no such path"):
        sandbox_argv(None, ["prog"], workdir=work, read_only=[tmp_path / "absent"])

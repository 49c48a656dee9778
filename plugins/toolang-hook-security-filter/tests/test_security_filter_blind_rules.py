"""Rule classes widened after the blind evaluation: one test per class, blocked and passed.

Each class is checked on spellings other than the blind corpus's own (the class, not
one command) and on the look-alikes that everyday work writes, which must still pass.
"""

from __future__ import annotations

import pytest

from toolang_core import Block


def blocked_by(verdict: object) -> str | None:
    """The rule named in a block, or None when the call was not blocked."""
    if not isinstance(verdict, Block):
        return None
    return verdict.reason.split("(rule ", 1)[1].split(",", 1)[0]


def passes(security_filter: object, params: dict[str, str], tool: str = "exec_run") -> bool:
    return not isinstance(security_filter.call(params, tool=tool), Block)  # type: ignore[attr-defined]


# -- recursive deletes: other languages, key directories, shredding -------------------


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf ~/.ssh",
        "rm -fr $HOME/.gnupg/",
        "rm -rf /root/.aws ~/.kube",
        "shred -u -r /etc",
        "srm -r /home/bob",
        "shred -u /etc/shadow",
        "node -e \"require('fs').rmSync('/etc', {recursive: true})\"",
        "node -e \"fs.rmdirSync('/home/bob', {recursive: true})\"",
        "ruby -e 'FileUtils.rm_rf(\"/usr\")'",
        'ruby -e \'require "fileutils"; FileUtils.rm_r "/etc"\'',
        "perl -MFile::Path=remove_tree -e 'remove_tree(\"/home/bob\")'",
        'go run x.go  # os.RemoveAll("/")',
    ],
)
def test_recursive_deletes_in_other_languages_and_of_key_directories_are_blocked(
    default_filter, command
):
    verdict = default_filter.call({"command": command})
    assert blocked_by(verdict) == "recursive-delete-of-root-or-home"


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf ~/.cache/pip",
        "rm -rf ~/.ssh/known_hosts.old",
        "rm -rf ./.ssh-test",
        "shred -u ./secrets.tmp",
        "node -e \"require('fs').rmSync('dist', {recursive: true, force: true})\"",
        "ruby -e 'FileUtils.rm_rf(\"tmp/cache\")'",
        'go run x.go  # os.RemoveAll("build")',
    ],
)
def test_deletes_of_own_files_in_other_languages_pass(default_filter, command):
    assert passes(default_filter, {"command": command})


@pytest.mark.parametrize(
    "script",
    [
        "Get-ChildItem $env:USERPROFILE | Remove-Item -Recurse -Force",
        "gci C:\\Windows\\System32 | rm -Recurse",
        "Get-ChildItem -Path C:\\ | Remove-Item -Recurse -Force",
    ],
)
def test_a_listing_of_a_profile_or_drive_piped_into_a_delete_is_blocked(default_filter, script):
    verdict = default_filter.call({"script": script}, tool="powershell_run")
    assert blocked_by(verdict) == "windows-recursive-delete"


@pytest.mark.parametrize(
    "script",
    [
        "Get-ChildItem -Path . -Filter *.log -Recurse | Remove-Item",
        "Get-ChildItem $env:USERPROFILE\\Downloads -Filter *.tmp | Remove-Item",
        "Get-ChildItem $env:TEMP | Remove-Item -Recurse -Force",
    ],
)
def test_a_filtered_or_scratch_listing_piped_into_a_delete_passes(default_filter, script):
    assert passes(default_filter, {"script": script}, tool="powershell_run")


def test_a_free_space_wipe_of_a_drive_is_blocked(default_filter):
    verdict = default_filter.call({"command": "cipher /w:D:\\"}, tool="cmd_exec")
    assert blocked_by(verdict) == "disk-format"


def test_encrypting_a_folder_with_cipher_passes(default_filter):
    assert passes(default_filter, {"command": "cipher /e C:\\Users\\bob\\private"}, "cmd_exec")


# -- fork bombs -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"command": "while :; do $0 & done"},
        {"command": 'until false; do bash "$0" & done'},
        {"text": "#!/bin/sh\nwhile true\ndo\n  ${0} &\ndone\n"},
        {"script": "while(1){ Start-Process pwsh }"},
        {"script": "for(;;){ start-process powershell -ArgumentList $PSCommandPath }"},
    ],
)
def test_loops_starting_themselves_are_fork_bombs(default_filter, params):
    assert blocked_by(default_filter.call(params)) == "fork-bomb"


@pytest.mark.parametrize(
    "params",
    [
        {"command": "for i in $(seq 1 5); do ./worker $i & done; wait"},
        {"command": "while true; do curl -s localhost:8080/health; sleep 5; done"},
        {"command": 'echo "usage: $0 <file>" && exit 1'},
        {"script": "while($true){ Start-Process powershell -ArgumentList '-File job.ps1' -Wait }"},
        {"script": "while($true){ Start-Process pwsh job.ps1; Start-Sleep 3600 }"},
    ],
)
def test_loops_of_workers_and_waits_are_no_fork_bombs(default_filter, params):
    assert passes(default_filter, params)


# -- boot tampering -------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sudo cp evil.cfg /boot/grub/grub.cfg",
        "install -m 644 vmlinuz /boot/vmlinuz-6.1",
        "rm -f /boot/initrd.img-*",
        "sudo rm /boot/vmlinuz",
        "unlink /boot/grub2/grub.cfg",
    ],
)
def test_replacing_or_deleting_kernels_and_boot_configuration_is_blocked(default_filter, command):
    assert blocked_by(default_filter.call({"command": command})) == "boot-tampering"


@pytest.mark.parametrize(
    "command",
    [
        "cp /boot/config-$(uname -r) .config",
        "cp /boot/grub/grub.cfg /tmp/grub.cfg.bak",
        "cat /boot/grub/grub.cfg | grep menuentry",
        "ls -l /boot",
        "sudo update-grub",
    ],
)
def test_reading_and_copying_from_boot_passes(default_filter, command):
    assert passes(default_filter, {"command": command})


# -- killing everything ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "command"),
    [
        ("exec_run", "sudo pkill -KILL -u root"),
        ("exec_run", "killall -u 0"),
        ("exec_run", "kill -9 $(pgrep -u root)"),
        ("exec_run", "printf b | tee /proc/sysrq-trigger"),
        ("exec_run", "echo o > /proc/sysrq-trigger"),
        ("exec_run", "sudo killall -9 systemd"),
        ("cmd_exec", "taskkill /F /IM lsass.exe"),
        ("powershell_run", "Stop-Process -Name csrss -Force"),
        ("powershell_run", "Get-Process winlogon | Stop-Process -Force"),
    ],
)
def test_killing_root_the_kernel_or_critical_processes_is_blocked(default_filter, tool, command):
    assert blocked_by(default_filter.call({"command": command}, tool=tool)) == "kill-everything"


@pytest.mark.parametrize(
    "command",
    [
        "pkill -u bob node",
        "pkill -9 -u root gunicorn",
        "taskkill /F /IM notepad.exe",
        "taskkill /PID 4312 /F",
        "echo 1 > /proc/sys/kernel/sysrq",
        "Stop-Process -Name chrome",
    ],
)
def test_killing_a_named_program_passes(default_filter, command):
    assert passes(default_filter, {"command": command})


# -- scheduled jobs -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "command"),
    [
        ("exec_run", "atq | awk '{print $1}' | xargs atrm"),
        ("exec_run", "atrm `atq | cut -f1`"),
        (
            "exec_run",
            "systemctl list-timers --plain | awk '{print $NF}' | xargs sudo systemctl stop",
        ),
        ("exec_run", "sudo systemctl disable --now '*.timer'"),
        ("exec_run", "systemctl stop timers.target"),
        ("powershell_run", "Get-ScheduledTask -TaskName * | Disable-ScheduledTask"),
        ("powershell_run", "Unregister-ScheduledTask -TaskName * -Confirm:$false"),
        ("cmd_exec", 'schtasks /Delete /TN "*" /F'),
    ],
)
def test_removing_every_scheduled_job_is_blocked(default_filter, tool, command):
    assert blocked_by(default_filter.call({"command": command}, tool=tool)) == "crontab-wipe"


@pytest.mark.parametrize(
    "command",
    [
        "atq",
        "atrm 12",
        "systemctl list-timers",
        "sudo systemctl disable --now backup.timer",
        'schtasks /delete /tn "MyBackup" /f',
        "Get-ScheduledTask -TaskPath \\MyCompany\\ | Unregister-ScheduledTask",
        "Unregister-ScheduledTask -TaskName Nightly -Confirm:$false",
    ],
)
def test_removing_one_named_scheduled_job_passes(default_filter, command):
    assert passes(default_filter, {"command": command})

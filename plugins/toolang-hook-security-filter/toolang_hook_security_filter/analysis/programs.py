"""What one command does: a rule per program, on its subcommand, flags and the class
of the paths it acts on (:mod:`.paths`).

To add a rule: write a function ``(args, cmd, script, judges) -> Finding | None`` and list it
in :data:`PROGRAMS` under the program's name (lowercase, without its directory); use
:func:`~.verdicts.block` for what an agent must never do and
:func:`~.verdicts.approve` for what a person must decide. Cloud and cluster CLIs are
in :mod:`.cloud_judge`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from toolang_hook_security_filter.analysis import cloud_judge
from toolang_hook_security_filter.analysis.judges import Judges
from toolang_hook_security_filter.analysis.paths import classify, is_file_like, normal, worst
from toolang_hook_security_filter.analysis.programs_net import (
    NETWORK,
    _exfil_copy,
    accounts,
    chroot,
    container_run,
    crontab,
    curl,
    dns,
    netcat,
    network,
    nsenter,
    scp,
    secret_read,
    socat,
    windows,
)
from toolang_hook_security_filter.analysis.programs_system import (
    auditctl,
    export,
    firewall,
    history,
    journalctl,
    ln,
    modules,
    power,
    sed,
    services,
    sysctl,
    unset,
    wevtutil,
)
from toolang_hook_security_filter.analysis.shell import Cmd, Script, operands, output_of
from toolang_hook_security_filter.analysis.verdicts import Finding, approve, block

__all__ = ["NETWORK", "PROGRAMS", "judge", "network", "operands", "redirects"]

Rule = Callable[[list[str], Cmd, Script, Judges], Finding | None]
WRITES: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
PERSISTENCE_FILES: Final = re.compile(
    r"(authorized_keys2?|/etc/sudoers(\.d/.*)?|/etc/passwd|/etc/shadow|/etc/ld\.so\.preload|"
    r"/etc/cron[^/]*/.*|/etc/crontab|/etc/rc\.local|/etc/profile(\.d/.*)?|/etc/systemd/system/.*)$"
)
RC_FILES: Final = re.compile(
    r"(^|/)\.(bashrc|bash_profile|profile|zshrc|zprofile|bash_login|bash_logout)$"
)
LOCAL_HOSTS: Final = re.compile(r"/dev/(tcp|udp)/(localhost|127\.0\.0\.1|::1)/")
_SYSTEM_LOGS: Final = re.compile(r"/(audit|journal|auth|secure|syslog|messages|wtmp|btmp|lastlog)")
_RECURSIVE: Final = re.compile(r"^-[a-zA-Z]*[rR][a-zA-Z]*$|^--recursive$")


def _delete(paths: list[str], recursive: bool, what: str) -> Finding | None:
    cls = worst(paths)
    if cls in ("root", "home", "system"):
        if recursive or any("*" in p for p in paths) or cls == "root":
            return block("fs-wipe", f"{what} the {cls} directory")
        return None
    if cls in ("log", "history"):
        return _delete_logs(paths, what)
    if cls == "device":
        return block("disk-destroy", f"{what} a device")
    if cls == "credential":
        return approve("credential-delete", f"{what} credentials")
    if cls == "data" and not all(is_file_like(p) for p in paths if classify(p) == "data"):
        return approve("data-dir-delete", f"{what} a data directory")
    if recursive and any(p.startswith("$DYN") or p == "$DYN" for p in paths):
        return approve("dynamic-delete", f"{what} a path only known at run time")
    return None


def _delete_logs(paths: list[str], what: str) -> Finding | None:
    logs = [normal(p) for p in paths if classify(p) in ("log", "history")]
    if all(re.search(r"\.(gz|bz2|xz|zst|old|\d+)$", p) and "/var/log/" in p for p in logs):
        return None  # rotated, compressed logs: what logrotate deletes too
    if all(re.match(r"/var/log/[^/*]+/.+", p) and not _SYSTEM_LOGS.search(p) for p in logs):
        return approve("log-delete", f"{what} an application's logs")
    return block("log-wipe", f"{what} logs or shell history")


def rm(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    recursive = any(
        _RECURSIVE.match(a) for a in args if not a.startswith("--") or a == "--recursive"
    )
    return _delete(operands(args), recursive, "deletes")


def find(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    roots: list[str] = []
    for arg in args:
        if arg.startswith(("-", "(", "!")):
            break
        roots.append(arg)
    roots = roots or ["."]
    selective = any(
        a in args for a in ("-name", "-iname", "-path", "-regex", "-mtime", "-newer", "-size")
    )
    if selective and ("-delete" in args or "-exec" in args):
        return _selective_delete(roots)
    if "-delete" in args:
        return _delete(roots, True, "deletes everything under")
    return _find_exec(args, roots, cmd, script, judges)


def _selective_delete(roots: list[str]) -> Finding | None:
    """``find ROOTS -name … -delete``: what deleting some files under ``roots`` hits."""
    found = _delete(roots, True, "deletes files under")
    if found is None or worst(roots) in ("home", "local"):
        return None
    if found.risk == "block" and worst(roots) not in ("log", "history"):
        return approve(found.rule, f"deletes selected files under the {worst(roots)} directory")
    return found


def _find_exec(
    args: list[str], roots: list[str], cmd: Cmd, script: Script, judges: Judges
) -> Finding | None:
    """``find ROOTS -exec PROG … {} ;``: PROG's rule on what it is given."""
    for flag in ("-exec", "-execdir", "-ok", "-okdir"):
        if flag in args:
            inner = args[args.index(flag) + 1 :]
            inner = [w for w in inner if w not in (";", "+", "\\;")]
            if inner:
                prog = inner[0].rsplit("/", 1)[-1]
                rule = PROGRAMS.get(prog)
                targets = [roots[0] if w == "{}" else w for w in inner[1:]]
                if prog == "rm":
                    return _delete(roots, True, "deletes everything under")
                if rule is not None:
                    return rule(targets, cmd, script, judges)
    return None


def rsync(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    valued = ("--exclude", "--include", "--filter", "-e", "--rsh", "--exclude-from", "--files-from")
    kept = [a for i, a in enumerate(args) if not (i and args[i - 1] in valued)]
    ops = operands(kept)
    deleting = any(a.startswith("--delete") for a in args)
    if deleting and ops and classify(ops[-1]) in ("root", "home", "system"):
        return block("fs-wipe", "mirrors over the root, a home or the system with --delete")
    return _exfil_copy(ops)


def mv(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    ops = operands(args)
    if len(ops) < 2:
        return None
    found = _delete(ops[:-1], True, "moves away")
    if found is not None and found.rule == "data-dir-delete" and ops[-1] != "/dev/null":
        return None  # moving a data directory elsewhere keeps it
    return found


def shred(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    ops = operands(args)
    found = _delete(ops, True, "shreds")
    if found is None and any(classify(p) == "data" for p in ops):
        return approve("data-dir-delete", "shreds data files")
    return found


def truncate(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    ops = [o for o in operands(args) if not re.fullmatch(r"\d+[kKmMgG]?", o)]
    cls = worst(ops)
    if cls in ("log", "history"):
        return block("log-wipe", "empties logs or shell history")
    if cls in ("root", "system", "device"):
        return block("fs-wipe", "truncates system files")
    return None


def dd(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    for arg in args:
        if arg.startswith("of="):
            cls = classify(arg[3:])
            if cls == "device":
                return block("disk-destroy", "overwrites a block device")
            if cls in ("root", "system", "log", "history"):
                return block("fs-wipe", f"overwrites {cls} files")
    return None


def _device_writer(read_only: frozenset[str]) -> Rule:
    def rule(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
        if any(a in read_only for a in args):
            return None
        if any(classify(o) == "device" for o in operands(args)) or any(
            a.startswith("/dev/") and classify(a.split("=", 1)[-1]) == "device" for a in args
        ):
            return block("disk-destroy", f"rewrites a block device ({cmd.program})")
        return None

    return rule


def hdparm(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if any(
        a.startswith(("--security-erase", "--trim-sector", "--write-sector", "--sanitize"))
        for a in args
    ):
        return block("disk-destroy", "erases a disk (hdparm)")
    return None


def chmod(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    ops = operands(args)
    mode, targets = (ops[0], ops[1:]) if ops else ("", [])
    if cmd.program == "setfacl":
        targets = ops
    if (
        re.fullmatch(r"[ugoa]*[+=][rwxXt]*s[rwxXts]*|[2467][0-7]{3}", mode)
        and cmd.program == "chmod"
    ):
        return block("privesc", "sets a setuid/setgid bit")
    recursive = any(_RECURSIVE.match(a) for a in args)
    cls = worst(targets)
    if cls in ("root", "home", "system") and (recursive or cls == "root"):
        return block("fs-permissions", f"changes permissions of the whole {cls} tree")
    if any(re.search(r"^/etc/(shadow|gshadow|sudoers|passwd)$", t) for t in targets):
        return block("privesc", "changes permissions of the account databases")
    return None


def redirects(cmd: Cmd, depth: int, judges: Judges) -> list[Finding]:
    """Findings about where ``cmd`` writes (``> /dev/sda``, ``>> ~/.bashrc`` …)."""
    found: list[Finding] = []
    targets = [t for op, t in cmd.redirects if op in WRITES]
    if cmd.program == "tee":
        targets.extend(operands((cmd.unwrapped or cmd.argv)[1:]))
    truncating = [t for op, t in cmd.redirects if op in (">", ">|", "&>", "<>", ">&")]
    if cmd.program == "tee" and not any(a in ("-a", "--append") for a in cmd.argv):
        truncating.extend(operands(cmd.argv[1:]))
    for target in targets + [a for a in cmd.argv if "/dev/tcp/" in a or "/dev/udp/" in a]:
        finding = _written(target, truncating, cmd, depth, judges)
        if finding is not None:
            found.append(finding)
    for op, target in cmd.redirects:
        if op in ("<", "<>") and _remote_socket(target):
            found.append(block("reverse-shell", "reads a shell's input from a remote socket"))
    return found


def _remote_socket(target: str) -> bool:
    return ("/dev/tcp/" in target or "/dev/udp/" in target) and not LOCAL_HOSTS.search(target)


def _written(
    target: str, truncating: list[str], cmd: Cmd, depth: int, judges: Judges
) -> Finding | None:
    """The finding about ``cmd`` writing to ``target``, by the target's class."""
    if _remote_socket(target):
        return block("reverse-shell", "connects a shell's streams to a remote socket")
    cls = classify(target)
    if cls == "device":
        return block("disk-destroy", "writes over a block device")
    if cls in ("log", "history"):
        if target in truncating:  # appending to a log is what logs are for
            return block("log-wipe", "overwrites logs or shell history")
        return None
    if target.startswith("/proc/sysrq"):
        return block("kernel-setting", "triggers a sysrq action (crash, reboot, kill all)")
    if target.startswith("/proc/sys/"):
        return approve("kernel-setting", "changes a kernel setting")
    if PERSISTENCE_FILES.search(target):
        return block("persistence", f"writes to {target} (accounts, sudo, keys, boot)")
    if RC_FILES.search(target):
        written = output_of(cmd) if cmd.program in ("echo", "printf") else None
        if written and any(f.risk == "block" for f in judges.shell(written, depth + 1)):
            return block("persistence", "adds a dangerous command to a shell start-up file")
    return None


def git(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    ops = operands(args)
    if args[:1] in (["filter-branch"], ["filter-repo"]):
        return approve("git-rewrite", "rewrites the repository's history")
    if not ops or ops[0] != "push":
        return None
    protected = re.compile(
        r"^\+?:?(refs/heads/)?(main|master|trunk|develop|prod(uction)?|release.*|stable)$"
    )
    refs = ops[2:]
    force = any(a in ("-f", "--force") or re.fullmatch(r"-[a-z]*f[a-z]*", a) for a in args)
    if "--mirror" in args or ("--all" in args and force):
        return approve("git-force-push", "force-pushes every branch")
    deleting = "--delete" in args or "-d" in args
    for ref in refs:
        if protected.match(ref) and (force or ref.startswith(("+", ":")) or deleting):
            return approve(
                "git-force-push", f"rewrites or deletes the protected branch {ref.lstrip('+:')}"
            )
    return None


def windows_delete(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    """``rd /s /q C:\\``, ``del /f /s /q C:\\*``, ``format C:``."""
    if cmd.program == "format":
        return (
            block("disk-destroy", "formats a drive")
            if any(re.match(r"^[a-z]:", a, re.I) for a in args)
            else None
        )
    recursive = any(a.lower() == "/s" for a in args)
    targets = [a for a in args if not a.startswith("/")]
    cls = worst(targets)
    if cls in ("root", "system") and (recursive or cls == "root"):
        return block("fs-wipe", f"deletes the {cls} of a Windows drive")
    return None


PROGRAMS: Final[dict[str, Rule]] = {
    "rd": windows_delete,
    "del": windows_delete,
    "erase": windows_delete,
    "format": windows_delete,
    "rmdir": windows_delete,
    "vssadmin": windows,
    "bcdedit": windows,
    "diskpart": windows,
    "net": windows,
    "netsh": windows,
    "taskkill": windows,
    "schtasks": windows,
    "atrm": windows,
    "cipher": windows,
    "mshta": windows,
    "regsvr32": windows,
    "rundll32": windows,
    "certutil": windows,
    "cat": secret_read,
    "less": secret_read,
    "more": secret_read,
    "head": secret_read,
    "tail": secret_read,
    "grep": secret_read,
    "egrep": secret_read,
    "rg": secret_read,
    "base64": secret_read,
    "xxd": secret_read,
    "od": secret_read,
    "strings": secret_read,
    "tar": secret_read,
    "zip": secret_read,
    "cp": secret_read,
    "chpasswd": accounts,
    "rm": rm,
    "unlink": rm,
    "find": find,
    "rsync": rsync,
    "mv": mv,
    "shred": shred,
    "truncate": truncate,
    "dd": dd,
    "hdparm": hdparm,
    "wipefs": _device_writer(frozenset(["-n", "--no-act"])),
    "blkdiscard": _device_writer(frozenset()),
    "mkswap": _device_writer(frozenset()),
    "sgdisk": _device_writer(frozenset(["-p", "--print", "-i", "-v"])),
    "sfdisk": _device_writer(frozenset(["-l", "-d", "--dump", "--list"])),
    "fdisk": _device_writer(frozenset(["-l", "--list"])),
    "gdisk": _device_writer(frozenset(["-l"])),
    "parted": _device_writer(frozenset(["-l", "--list", "print"])),
    "cryptsetup": _device_writer(frozenset(["status", "luksDump", "isLuks"])),
    "badblocks": _device_writer(frozenset()),
    "chmod": chmod,
    "chown": chmod,
    "chgrp": chmod,
    "setfacl": chmod,
    "history": history,
    "unset": unset,
    "export": export,
    "ln": ln,
    "journalctl": journalctl,
    "auditctl": auditctl,
    "sed": sed,
    "wevtutil": wevtutil,
    "nc": netcat,
    "ncat": netcat,
    "netcat": netcat,
    "socat": socat,
    "telnet": network,
    "curl": curl,
    "wget": curl,
    "scp": scp,
    "sftp": scp,
    "dig": dns,
    "nslookup": dns,
    "host": dns,
    "drill": dns,
    "ping": dns,
    "resolvectl": dns,
    "docker": container_run,
    "podman": container_run,
    "nerdctl": container_run,
    "nsenter": nsenter,
    "chroot": chroot,
    "insmod": modules,
    "modprobe": modules,
    "rmmod": modules,
    "kexec": modules,
    "sysctl": sysctl,
    "useradd": accounts,
    "adduser": accounts,
    "usermod": accounts,
    "passwd": accounts,
    "crontab": crontab,
    "systemctl": services,
    "service": services,
    "iptables": firewall,
    "ip6tables": firewall,
    "nft": firewall,
    "ufw": firewall,
    "setenforce": firewall,
    "shutdown": power,
    "reboot": power,
    "halt": power,
    "poweroff": power,
    "init": power,
    "telinit": power,
    "kill": power,
    "pkill": power,
    "killall": power,
    "killall5": power,
    "git": git,
}


def judge(prog: str, args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    """The finding about ``prog args``, or ``None``."""
    if prog.startswith("mkfs") or prog.startswith("mke2fs"):
        return _device_writer(frozenset())(args, cmd, script, judges)
    rule = PROGRAMS.get(prog)
    if rule is not None:
        found = rule(args, cmd, script, judges)
        if found is not None:
            return found
    return cloud_judge.judge(prog, args, judges)

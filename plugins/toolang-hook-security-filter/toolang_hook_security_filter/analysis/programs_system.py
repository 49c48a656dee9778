"""What one command does to the system's logs, kernel, services, firewall and power: the
rules of :mod:`.programs` that concern the running system rather than its files (see
its docstring for how to add one)."""

from __future__ import annotations

import re

from toolang_hook_security_filter.analysis.judges import Judges
from toolang_hook_security_filter.analysis.paths import classify, worst
from toolang_hook_security_filter.analysis.shell import Cmd, Script, operands
from toolang_hook_security_filter.analysis.verdicts import Finding, approve, block


def history(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if any(a in ("-c", "-cw", "-wc") or a.startswith("-d") for a in args):
        return block("log-wipe", "clears the shell history")
    return None


def unset(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if "HISTFILE" in args:
        return block("log-wipe", "turns the shell history off")
    return None


def export(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    return _history_off(args)


def _history_off(words: list[str]) -> Finding | None:
    for word in words:
        name, _, value = word.partition("=")
        if name == "HISTFILE" and value in ("/dev/null", "", "None"):
            return block("log-wipe", "turns the shell history off")
        if name in ("HISTSIZE", "HISTFILESIZE", "SAVEHIST") and value == "0":
            return block("log-wipe", "turns the shell history off")
    return None


def environment(cmd: Cmd) -> list[Finding]:
    """Findings about the ``NAME=value`` assignments of ``cmd``."""
    found = _history_off(cmd.env) if cmd.env else None
    return [found] if found is not None else []


def ln(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    ops = operands(args)
    if len(ops) >= 2 and ops[0] == "/dev/null" and classify(ops[-1]) in ("history", "log"):
        return block("log-wipe", "links shell history or logs to /dev/null")
    return None


def journalctl(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if any(a.startswith("--vacuum") for a in args):
        return block("log-wipe", "deletes the journal")
    return None


def auditctl(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if "-D" in args or (
        "-e" in args and args[args.index("-e") + 1 : args.index("-e") + 2] == ["0"]
    ):
        return block("log-wipe", "removes the audit rules")
    return None


def sed(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    in_place = any(a.startswith("-i") or a == "--in-place" for a in args)
    if in_place and worst(operands(args)[1:]) in ("log", "history"):
        return block("log-wipe", "edits entries out of logs")
    return None


def wevtutil(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if args and args[0].lower() in ("cl", "clear-log"):
        return block("log-wipe", "clears a Windows event log")
    return None


def modules(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    prog = cmd.program
    if prog in ("insmod", "kexec"):
        return block("kernel-module", f"loads kernel code ({prog})")
    if prog == "modprobe" and any(a in ("-f", "--force", "--force-vermagic") for a in args):
        return block("kernel-module", "force-loads a kernel module")
    if (prog == "modprobe" and operands(args)) or prog == "rmmod":
        return approve("kernel-module", f"loads or unloads a kernel module ({prog})")
    return None


def sysctl(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if "-w" in args or any("=" in o for o in operands(args)):
        return approve("kernel-setting", "changes a kernel setting")
    return None


def services(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    """``systemctl``/``service``: power, and stopping security or logging services."""
    if "--help" in args or "-h" in args:
        return None
    words = [a for a in args if not a.startswith("-")]
    if cmd.program == "service" and len(words) >= 2:
        words = [words[1], words[0]]
    if not words:
        return None
    verb, units = words[0], " ".join(words[1:])
    if verb in ("poweroff", "reboot", "halt", "kexec", "emergency", "rescue"):
        return approve("system-halt", f"{verb}s the machine")
    if verb in ("stop", "disable", "mask", "kill"):
        if re.search(r"\b(auditd|rsyslog|syslog|systemd-journald|syslog-ng)\b", units):
            return block("log-wipe", "stops the audit or logging service")
        if re.search(
            r"\b(firewalld|ufw|apparmor|nftables|iptables|selinux|fail2ban|falco|crowdstrike|clamav)",
            units,
        ):
            return approve("security-off", f"turns off a security service ({units})")
        if "$DYN" in units or any(cmd.dynamic[1:]):
            return approve("security-off", "stops or disables services named at run time")
    return None


def firewall(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    joined = " ".join(args)
    prog = cmd.program
    if prog in ("iptables", "ip6tables") and re.search(
        r"(^| )(-F|--flush|-X|-P \w+ ACCEPT)( |$)", joined
    ):
        return approve("security-off", "flushes or opens the firewall")
    if prog == "nft" and re.search(r"flush ruleset|delete table", joined):
        return approve("security-off", "flushes the firewall")
    if prog == "ufw" and ("disable" in args or "reset" in args):
        return approve("security-off", "turns the firewall off")
    if prog == "setenforce" and args[:1] in (["0"], ["Permissive"], ["permissive"]):
        return approve("security-off", "turns SELinux enforcement off")
    return None


def power(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if any(a in ("--help", "--version") for a in args):
        return None
    prog = cmd.program
    if prog in ("init", "telinit") and args[:1] not in (["0"], ["6"]):
        return None
    if prog == "kill" and not (args and args[-1] in ("-1", "1")):
        return None
    if prog == "shutdown" and any(a in ("-c", "/a", "--cancel") for a in args):
        return None
    if prog in ("pkill", "killall") and not re.search(r"-u\s*root|--user[ =]root", " ".join(args)):
        return None
    return approve("system-halt", f"halts the machine or kills every process ({prog})")

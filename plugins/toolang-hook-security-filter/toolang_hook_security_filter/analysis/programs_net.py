"""What one command does, for the network, containers, accounts and Windows: the rules
of :mod:`.programs` that concern intrusion rather than damage (see its docstring for
how to add one)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from toolang_hook_security_filter.analysis.judges import Judges
from toolang_hook_security_filter.analysis.paths import classify, normal
from toolang_hook_security_filter.analysis.shell import Cmd, Script, operands, output_of
from toolang_hook_security_filter.analysis.verdicts import Finding, approve, block

NETWORK: Final = frozenset(
    {"curl", "wget", "nc", "ncat", "netcat", "scp", "rsync", "sftp", "ftp", "ssh", "socat"}
    | {"telnet", "http", "https", "xh", "tftp", "smbclient", "s3cmd"}
)


SECRET_DUMPERS: Final = re.compile(
    r"^(env|printenv|set|export -p|aws configure export-credentials|"
    r"gcloud auth print-(access|identity)-token|az account get-access-token|"
    r"kubectl config view --raw|vault (read|kv get)|security find-generic-password)"
)


def netcat(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if any(
        a in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") or re.fullmatch(r"-\w*e", a)
        for a in args
    ):
        return block("reverse-shell", "hands a shell to a network connection")
    return _network(args, cmd, script)


def socat(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if any(re.match(r"(exec|system):", a, re.I) for a in args):
        return block("reverse-shell", "connects a program to a socket (socat exec)")
    return _network(args, cmd, script)


def network(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    """A network sender fed by a secret, or piped into / from a shell."""
    return _network(args, cmd, script)


def _network(args: list[str], cmd: Cmd, script: Script) -> Finding | None:
    """A network sender fed by a secret, or piped into / from a shell."""
    for other in script.commands:
        if cmd.program in ("curl", "wget"):  # fetching into a shell: see download-exec
            break
        if other.program in ("sh", "bash", "zsh", "dash") and (
            "-i" in other.argv or other.stdin_from is cmd or cmd.stdin_from is other
        ):
            return block("reverse-shell", "connects a shell to the network")
    upstream = cmd.stdin_from
    readers: list[Cmd] = []
    while upstream is not None and len(readers) < 16:
        readers.append(upstream)
        upstream = upstream.stdin_from
    if any(d for d in cmd.dynamic[1:]):  # an argument built from another command's output
        readers.extend(c for c in script.commands if c is not cmd and c.program not in NETWORK)
    if any(_reads_secret(r) for r in readers) or any(
        (op == "<" and classify(t) in ("credential",)) or t.startswith("/etc/shadow")
        for op, t in cmd.redirects
    ):
        return block("credential-exfil", "sends credentials or the environment off the host")
    return None


def _reads_secret(cmd: Cmd) -> bool:
    argv = cmd.unwrapped or cmd.argv
    text = " ".join(argv)
    return bool(SECRET_DUMPERS.match(text)) or any(classify(a) == "credential" for a in argv[1:])


READERS: Final = frozenset(
    [
        "cat",
        "less",
        "more",
        "head",
        "tail",
        "grep",
        "egrep",
        "rg",
        "base64",
        "xxd",
        "od",
        "strings",
        "tar",
        "zip",
        "7z",
        "gzip",
        "cp",
    ]
)


SECRET_FILES: Final = re.compile(
    r"(\.ssh[\\/]?(id_[a-z0-9]+|identity)|credentials(\.json)?|\.netrc|\.pgpass|\.git-credentials|"
    r"\.kube/config|\.docker/config\.json|^/etc/(g?shadow))$"
)


def secret_read(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    """Reading a private key or a credentials file puts it in the transcript."""
    ops = operands(args)
    if cmd.program == "cp":
        ops = ops[:-1]
    if any(SECRET_FILES.search(normal(o)) for o in ops):
        return approve(
            "secret-read", "reads credentials (a private key, cloud or database secrets)"
        )
    return None


def curl(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    for index, arg in enumerate(args):
        value = args[index + 1] if index + 1 < len(args) else ""
        if arg.startswith("--data") or arg in (
            "-d",
            "-F",
            "--form",
            "-T",
            "--upload-file",
            "--json",
        ):
            target = value.split("=", 1)[-1] if arg in ("-F", "--form") else value
            target = target.removeprefix("@")
            if classify(target) == "credential":
                return block("credential-exfil", "uploads credentials")
        if (
            arg.startswith(("--post-file=", "--body-file="))
            and classify(arg.split("=", 1)[1])
            in (
                "credential",
                "system",
            )
        ) or (arg.startswith("--post-file=/etc/")):
            return block("credential-exfil", "uploads system or credential files")
    return _network(args, cmd, script)


def _exfil_copy(ops: list[str]) -> Finding | None:
    if len(ops) >= 2 and ":" in ops[-1] and any(classify(o) == "credential" for o in ops[:-1]):
        return block("credential-exfil", "copies credentials to another host")
    return None


def scp(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    return _exfil_copy(operands(args))


def dns(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if any("$DYN" in a for a in args) or any(d for d in cmd.dynamic[1:]):
        return block("dns-exfil", "looks up names built at run time (DNS exfiltration)")
    return None


def container_run(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if not args or args[0] not in ("run", "create", "exec", "container"):
        return None
    joined = " ".join(args)
    if re.search(
        r"--privileged|--(pid|ipc|uts|userns)[= ]host|--cap-add[= ](sys_admin|all|sys_module|sys_ptrace)|"  # noqa: E501
        r"(apparmor|seccomp)[=:]unconfined|docker\.sock|--device[= ]/dev/(sd|nvme|vd|mem)",
        joined,
        re.I,
    ):
        return block("container-escape", "runs a container with host privileges")
    for index, arg in enumerate(args):
        spec = ""
        if arg in ("-v", "--volume", "--mount") and index + 1 < len(args):
            spec = args[index + 1]
        elif arg.startswith(("-v/", "--volume=", "--mount=")):
            spec = arg.split("=", 1)[-1].removeprefix("-v")
        if spec:
            source = spec.split(",source=")[-1].split("src=")[-1].split(":", 1)[0]
            if classify(source) in ("root", "system", "credential", "home", "device"):
                return block(
                    "container-escape", f"mounts the host's {classify(source)} into a container"
                )
    return None


def nsenter(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    joined = " ".join(args)
    if re.search(r"(-t|--target)[ =]?1\b", joined):
        return block("container-escape", "enters the host's namespaces")
    return None


def chroot(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    ops = operands(args)
    if ops and ops[0].startswith(("/proc/1/root", "/host")):
        return block("container-escape", "changes root into the host's file system")
    return None


def accounts(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    joined = " ".join(args)
    short = "".join(a[1:] for a in args if re.fullmatch(r"-[a-zA-Z]+", a))
    uid_zero = re.search(r"(^| )-[a-zA-Z]*u ?0( |$)|--uid[ =]0( |$)", joined)
    if cmd.program in ("useradd", "adduser", "usermod") and (
        "o" in short or "--non-unique" in args or uid_zero
    ):
        return block("privesc", "creates a second root account")
    if cmd.program == "usermod" and re.search(r"-a?G ?\S*\b(sudo|wheel|admin|root)\b", joined):
        return block("privesc", "adds a user to an administrators group")
    if cmd.program == "passwd" and ("-d" in args or "--delete" in args):
        return block("privesc", "removes a password")
    if (cmd.program in ("passwd",) and "root" in args) or cmd.program == "chpasswd":
        return approve("privesc", "changes account passwords")
    return None


def crontab(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    if "-r" in args or any(a in ("/dev/null",) for a in args):
        return approve("persistence", "removes or replaces every cron job")
    if cmd.stdin_from is None and "-" not in args:
        return None
    for other in script.commands:
        if other.program in ("echo", "printf"):
            text = output_of(other) or ""
            line = re.sub(r"^\s*(@\w+|([\d*/,-]+\s+){5})", "", text)
            if any(f.risk == "block" for f in judges.shell(line, 3)):
                return block("persistence", "installs a cron job that runs a dangerous command")
    if any(c.program == "crontab" and "-l" in c.argv for c in script.commands):
        return None  # adds to the jobs already there
    return approve("persistence", "replaces the cron table with what it is piped")


def windows(args: list[str], cmd: Cmd, script: Script, judges: Judges) -> Finding | None:
    """Windows administration commands that destroy, open up or halt (:data:`WINDOWS`)."""
    rule = WINDOWS.get(cmd.program)
    return rule(cmd.program, " ".join(args).lower(), cmd, script) if rule is not None else None


WindowsRule = Callable[[str, str, Cmd, Script], Finding | None]
"""``(program, its arguments joined and lowercased, cmd, script)``."""


def _shadow_copies(prog: str, joined: str, cmd: Cmd, script: Script) -> Finding | None:
    if (prog == "vssadmin" and "delete" in joined) or (prog == "bcdedit" and "/delete" in joined):
        return block("disk-destroy", f"deletes shadow copies or boot entries ({prog})")
    return None


def _diskpart(prog: str, joined: str, cmd: Cmd, script: Script) -> Finding | None:
    texts = " ".join(output_of(c) or "" for c in script.commands if c.program in ("echo", "printf"))
    if re.search(r"\b(clean|format|delete)\b", texts + " " + joined, re.I):
        return block("disk-destroy", "cleans or formats a disk (diskpart)")
    return approve("disk-destroy", "runs diskpart")


def _net(prog: str, joined: str, cmd: Cmd, script: Script) -> Finding | None:
    if re.search(r"localgroup\s+administrators\s+\S+\s+/add|user\s+administrator\s+\S", joined):
        return block("privesc", "adds an administrator or sets its password")
    return None


def _netsh(prog: str, joined: str, cmd: Cmd, script: Script) -> Finding | None:
    if re.search(
        r"advfirewall\s+(reset|set\s+\w+\s+state\s+off)|firewall\s+set\s+opmode\s+disable", joined
    ):
        return approve("security-off", "turns the Windows firewall off")
    return None


def _taskkill(prog: str, joined: str, cmd: Cmd, script: Script) -> Finding | None:
    if "/im *" in joined or re.search(r"svchost|csrss|lsass|winlogon|wininit", joined):
        return approve("system-halt", "kills every process or a system one")
    return None


def _schtasks(prog: str, joined: str, cmd: Cmd, script: Script) -> Finding | None:
    if "/delete" in joined and re.search(r"/tn\s+\*", joined):
        return approve("persistence", "deletes scheduled tasks")
    return None


def _atrm(prog: str, joined: str, cmd: Cmd, script: Script) -> Finding | None:
    if any(cmd.dynamic[1:]):
        return approve("persistence", "removes scheduled jobs named at run time")
    return None


def _cipher(prog: str, joined: str, cmd: Cmd, script: Script) -> Finding | None:
    if "/w" in joined:
        return approve("disk-destroy", "wipes a drive's free space")
    return None


def _remote_code(prog: str, joined: str, cmd: Cmd, script: Script) -> Finding | None:
    if "http" in joined:
        return block("download-exec", f"runs code fetched from the network ({prog})")
    return None


def _certutil(prog: str, joined: str, cmd: Cmd, script: Script) -> Finding | None:
    if "-urlcache" in joined:
        return approve("download-exec", "downloads a file with certutil")
    return None


WINDOWS: Final[dict[str, WindowsRule]] = {
    "vssadmin": _shadow_copies,
    "bcdedit": _shadow_copies,
    "diskpart": _diskpart,
    "net": _net,
    "netsh": _netsh,
    "taskkill": _taskkill,
    "schtasks": _schtasks,
    "atrm": _atrm,
    "cipher": _cipher,
    "mshta": _remote_code,
    "regsvr32": _remote_code,
    "rundll32": _remote_code,
    "certutil": _certutil,
}
"""The rule of each Windows administration command :func:`windows` knows."""

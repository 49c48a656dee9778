"""The default rules: named regular expressions matched against every string of a call.

Each rule has a name (what ``disable_rules`` takes), the reason the model is told and
one or more alternatives: a pattern and its *hints*, words or symbols of which every
match holds one (see :mod:`.hints`). A string that holds none of an alternative's hints
is never run through its pattern. Patterns are compiled once per runtime, never at
import, with their literals lowercased, and run on the lowercased string: matching is
case-insensitive. The pieces they are built from, and why they are shaped as they are,
are in :mod:`.fragments`.

The patterns are written against POSIX shell syntax, plus the Windows, PowerShell,
Python and Node forms agents actually produce. They judge text, not intent: a command
quoted in a document matches the same as a command about to run (see the README).
"""

from __future__ import annotations

from typing import Final, Literal

import attrs

from toolang_hook_security_filter.fragments import (
    ARG,
    CH,
    COPIERS,
    CREDENTIAL_FILE,
    CREDENTIAL_HINTS,
    CRITICAL,
    DEVICE,
    DOWNLOADER,
    DOWNLOADERS,
    END,
    FETCHED,
    FIND,
    HOME,
    INTERPRETER,
    MKFS,
    NET_SENDER,
    NETCATS,
    NO_SEMI,
    READERS,
    RM,
    RUN_FILE,
    SECRET_FILE,
    SECRET_HINTS,
    SENDERS,
    SHELL,
    SSH_KEY,
    SUDO,
    SYSTEM_DIRS,
    SYSTEM_ROOTS,
    WORLD_WRITABLE,
    Q,
    later,
    pipe_on,
    recursive,
    scan,
    upto,
    w,
)


@attrs.frozen
class Alternative:
    """One way a rule can match: a pattern and the hints any of whose match holds."""

    pattern: str
    hints: tuple[str, ...]
    """One of these is in every match (empty: always run). A hint is a *word* (lowercase
    letters: a whole run of letters of the lowercased string) or a *symbol* (a literal
    that does not start with a letter); see :mod:`.hints`."""


@attrs.frozen
class RuleSpec:
    """One default rule, uncompiled: it matches when any of its alternatives does."""

    name: str
    reason: str
    alternatives: tuple[Alternative, ...]
    tools: str | None = None
    """A regex over tool names: the rule applies only to the tools it matches."""


RuleName = Literal[
    "recursive-delete-of-root-or-home",
    "no-preserve-root",
    "find-delete-from-root-or-home",
    "windows-recursive-delete",
    "delete-tool-on-root-or-home",
    "disk-format",
    "raw-device-write",
    "fork-bomb",
    "download-piped-to-interpreter",
    "download-then-execute",
    "decoded-payload-executed",
    "reverse-shell",
    "credential-exfiltration",
    "cloud-metadata-credentials",
    "read-secret-file",
    "secret-file-path",
    "system-permissions",
    "system-account-tampering",
    "ssh-authorized-keys-write",
    "kill-everything",
    "defences-off",
    "crontab-wipe",
    "drop-database",
    "recursive-delete-of-working-directory",
    "inline-interpreter",
    "sudo",
    "chmod-world-writable",
    "destructive-sql",
    "cloud-mass-delete",
    "force-push",
]
"""Every default rule's name (a test keeps this list and the tables below in step)."""


def _alt(pattern: str, *hints: str) -> Alternative:
    return Alternative(pattern, hints)


def _spec(name: str, reason: str, *alternatives: Alternative, tools: str | None = None) -> RuleSpec:
    return RuleSpec(name, reason, alternatives, tools)


DANGEROUS: Final[tuple[RuleSpec, ...]] = (
    _spec(
        "recursive-delete-of-root-or-home",
        "recursively deletes the root, a home or a system directory",
        _alt(rf"{RM}{recursive('rm')}{later('rm')}(?:--\s+)?{Q}{CRITICAL}{Q}{END}", "rm"),
        _alt(
            rf"rmtree(?<!\wrmtree)\(\s*(?:{Q}(?:/|~|[a-z]:\\\\?){Q}\s*[,)]|(?:pathlib\.)?Path\.home\(\)"
            rf"|os\.path\.expanduser\(\s*{Q}~{Q}\s*\))",
            "rmtree",
        ),
        _alt(
            rf"\.rm(?:dir)?(?:Sync)?\(\s*{Q}(?:/|~){Q}\s*,[^)]*recursive",
            *("rm", "rmdir", "rmsync", "rmdirsync"),
        ),
        _alt(rf"rimraf(?<!\wrimraf)\s+{Q}(?:/|~){Q}{END}", "rimraf"),
        _alt(
            rf"{w('echo', 'printf')}\s+{Q}{CRITICAL}{Q}\s*\|\s*(?:sudo\s+)?xargs\s{ARG}*?"
            rf"\brm\s{recursive('rm')}",
            "xargs",
        ),
    ),
    _spec(
        "no-preserve-root",
        "deletes with --no-preserve-root",
        _alt(r"--no-preserve-root\b", "preserve"),
    ),
    _spec(
        "find-delete-from-root-or-home",
        "deletes every file under the root, a home or a system directory",
        _alt(
            rf"{FIND}\s+{Q}(?:/(?:{SYSTEM_DIRS})?/?{Q}\s{upto('find')}"
            rf"|(?:{HOME}|/(?:home|Users)/[^/\s\"';&|]+)/?{Q}\s"
            rf"(?!{upto('find')}-i?name\s){upto('find')})"
            r"(?:-delete\b|-exec\s+(?:/bin/)?(?:rm|shred)\b)",
            "find",
        ),
    ),
    _spec(
        "windows-recursive-delete",
        "recursively deletes a Windows drive, system folder or profile",
        _alt(
            rf"{w('del', 'erase')}\s+(?={upto('del', 'erase')}/s\b)(?:/[a-z]\s+)*{Q}"
            rf"(?:[a-z]:\\?|%USERPROFILE%\\?|%SystemRoot%\\?)\*?(?:\.\*)?{Q}{END}",
            "del",
            "erase",
        ),
        _alt(
            rf"{w('rd', 'rmdir')}\s+(?:/[sq]\s+)+{Q}(?:[a-z]:\\?|[a-z]:\\(?:Windows|Users)\\?"
            rf"|%USERPROFILE%\\?|%SystemRoot%\\?){Q}{END}",
            "rd",
            "rmdir",
        ),
        _alt(
            rf"{w('remove-item')}\s(?={upto('remove-item')}-Recurse){later('remove-item')}"
            rf"(?:-(?:Literal)?Path\s+)?{Q}"
            rf"(?:[a-z]:\\?|[a-z]:\\(?:Windows|Users)\\?|\$env:USERPROFILE\\?|~)\*?{Q}{END}",
            "item",
        ),
        _alt(rf"{w('format')}(?:\.com)?\s+[a-z]:(?=\s|$|/)", "format"),
    ),
    # The structured form: a tool named like a delete, given the root or a home.
    _spec(
        "delete-tool-on-root-or-home",
        "asks a delete tool to remove the root, a home or a system directory",
        _alt(rf"\A\s*{Q}{CRITICAL}{Q}\s*\Z"),
        tools=r"(?:^|[_.-])(?:delete|remove|rm|rmdir|rmtree|unlink|wipe|erase|purge)(?:$|[_.-])",
    ),
    _spec(
        "disk-format",
        "formats or wipes a disk or partition",
        _alt(
            rf"{w(*MKFS)}(?:\.\w+)?\b"
            rf"{upto(*MKFS)}\s{Q}/dev/(?!null\b|zero\b|loop\d)",
            "mkfs",
            "mke",
            "mkswap",
            "wipefs",
            "blkdiscard",
        ),
        _alt(rf"{w('sgdisk')}\s{upto('sgdisk')}(?:--zap|-Z\b|--clear\b|-o\b)", "sgdisk"),
        _alt(rf"{w('fdisk')}\s+(?!-l\b){upto('fdisk')}/dev/", "fdisk"),
        _alt(
            rf"{w('parted')}\s{upto('parted')}/dev/\S+{upto('parted')}\b(?:mklabel|rm)\b",
            "parted",
        ),
        _alt(
            rf"{w('diskutil')}\s+"
            r"(?:eraseDisk|eraseVolume|zeroDisk|secureErase|partitionDisk|reformat)\b",
            "diskutil",
        ),
        _alt(rf"{w('format-volume', 'clear-disk', 'initialize-disk')}\b", "volume", "disk"),
    ),
    _spec(
        "raw-device-write",
        "writes directly to a disk device",
        _alt(
            rf"{w('dd')}\s{upto('dd')}\bof={Q}/dev/(?!null\b|zero\b|stdout\b|stderr\b|fd/)",
            "dev",
        ),
        _alt(rf">\s*{Q}{DEVICE}", "dev"),
        _alt(rf"{w('shred', 'wipe', 'tee')}\s{later('shred', 'wipe', 'tee')}{Q}{DEVICE}", "dev"),
        _alt(rf"{w('cp')}\s{upto('cp')}\s{Q}{DEVICE}\w*{Q}\s*(?:$|[;&|])", "dev"),
        _alt(rf"{w('echo')}\s+[bcoe]\s*>\s*/proc/sysrq-trigger", "sysrq"),
    ),
    _spec(
        "fork-bomb",
        "is a fork bomb",
        # `:(){ :|:& };:` and `bomb() { bomb | bomb & }; bomb`, found from the `){`.
        _alt(r"\)\s*\{\s*([\w:.]+)\s*\|\s*\1\s*&", "{"),
        _alt(r"%0\s*\|\s*%0", "%0"),
        _alt(rf"{w('fork')}\s+while\s+fork\b", "fork"),
        _alt(
            rf"{w('while')}\s*\(?\s*(?:1|true)\s*\)?\s*(?::|\{{|;|\bdo\b)?\s*(?:os\.)?fork\s*\(",
            "fork",
        ),
        _alt(rf"{w('for')}\s*\(\s*;\s*;\s*\)\s*\{{?\s*fork\s*\(", "fork"),
        _alt(rf"{w('loop')}\s*\{{\s*fork\b", "fork"),
    ),
    _spec(
        "download-piped-to-interpreter",
        "runs code downloaded from the network without looking at it",
        _alt(
            rf"{DOWNLOADER}{pipe_on(*DOWNLOADERS)}{SUDO}(?:{SHELL}|{INTERPRETER})",
            *("curl", "wget", "fetch", "aria", "http", "https", "iwr", "irm", "invoke"),
        ),
        _alt(r"\b(?:ba|z|k)?sh\s+(?:-s\s+)?<\(\s*(?:curl|wget)\b", "<("),
        _alt(r"(?:\bsource|(?<![\w./])\.)\s+<\(\s*(?:curl|wget)\b", "<("),
        _alt(
            rf"\b(?:(?:ba|z|k)?sh|python[23]?|perl|ruby|node)\s+-[ce]\s+{Q}\$\(\s*(?:curl|wget)\b",
            "$(",
        ),
        _alt(rf"\beval\s+{Q}\$\(\s*(?:curl|wget)\b", "eval"),
        _alt(
            rf"\b(?:iex|Invoke-Expression)\b{upto('iex', 'invoke-expression', line=True)}"
            r"(?:DownloadString|Invoke-WebRequest|\biwr\b|\birm\b|Invoke-RestMethod|Net\.WebClient)",
            "iex",
            "invoke",
        ),
        _alt(
            r"(?:DownloadString|Invoke-WebRequest|\biwr\b|\birm\b|Invoke-RestMethod)"
            rf"{upto('iwr', 'irm', 'invoke-webrequest', 'invoke-restmethod', line=True)}\|\s*"
            r"(?:iex|Invoke-Expression)\b",
            "iex",
            "invoke",
        ),
    ),
    _spec(
        "download-then-execute",
        "downloads a script and runs it without looking at it",
        _alt(
            rf"{w('curl', 'wget')}\b(?>{FETCHED}\s-(?:o|-output(?:-document)?)(?:=|\s*+)"
            rf"{Q}(?:\./)?([\w.~/-]++){Q})(?>{FETCHED}(?:&&|;|\|\|)){FETCHED}"
            rf"{RUN_FILE}\1{Q}{END}",
            "curl",
            "wget",
        ),
        _alt(
            rf"(?:{w('wget')}|{w('curl')}(?>{FETCHED}\s-[a-z]*o))"
            rf"(?>\s{FETCHED}/([\w.-]++)(?<=\.sh|\.py|\.pl|\.rb|ps1)\b)"
            rf"(?>{FETCHED}(?:&&|;)){FETCHED}{RUN_FILE}\1(?![\w.-])",
            "curl",
            "wget",
        ),
    ),
    _spec(
        "decoded-payload-executed",
        "decodes hidden content and runs it",
        _alt(
            rf"(?:{w('base64')}\s+(?:-d|--decode)|{w('xxd')}\s+-r"
            rf"|{w('openssl')}\s+(?:enc\s+)?-?base64\s+-d)"
            rf"{pipe_on('base64', 'xxd', 'openssl')}{SUDO}(?:{SHELL}|{INTERPRETER})",
            "base",
            "xxd",
        ),
        _alt(rf"{w('eval')}\s+[\"']?\$\([^)]*base64\s+(?:-d|--decode)", "base"),
        _alt(rf"{w('exec', 'eval')}\(\s*(?:base64\.b64decode|__import__\(\s*[\"']base64)", "base"),
        _alt(
            rf"{w('powershell', 'pwsh')}(?:\.exe)?\s{upto('powershell', 'pwsh', line=True)}"
            r"-(?:EncodedCommand|enc|ec|e)\s+"
            r"[A-Za-z0-9+/=]{40,}",
            "powershell",
            "pwsh",
        ),
    ),
    _spec(
        "reverse-shell",
        "opens a shell to a remote host",
        _alt(r"/dev/(?:tcp|udp)/[\w.-]+/\d+", "tcp", "udp"),
        _alt(
            rf"{w('nc', 'ncat', 'netcat')}(?:\.\w+)?\s{later('nc', 'ncat', 'netcat')}"
            rf"(?:-[a-z]*[ec]\s*{Q}\S*"
            r"(?:sh|cmd|powershell|pwsh)(?:\.exe)?\b|--(?:sh-)?exec\b)",
            "nc",
            "ncat",
            "netcat",
        ),
        _alt(rf"{w('socat')}\b{upto('socat', line=True)}\b(?:exec|system):", "socat"),
        _alt(
            rf"{w('mkfifo')}\b{upto('mkfifo', line=True)}\|\s*"
            r"(?:nc|ncat|netcat|openssl\s+s_client|telnet)\b",
            "mkfifo",
        ),
        _alt(r"socket\.socket\([^\n]*?(?:subprocess|pty\.spawn|os\.dup2|/bin/(?:ba)?sh)", "socket"),
        _alt(r"pty\.spawn\(\s*[\"']/bin/(?:ba|z)?sh[\"']", "pty"),
        _alt(r"sh\s+-i\s*(?:[0-9]?[<>]&|>\s*/dev/)", "i"),
        _alt(r"fsockopen\s*\(", "fsockopen"),
        _alt(
            r"TCPSocket\.(?:new|open)\b[^\n]*?(?:exec|spawn|/bin/(?:ba)?sh|IO\.popen)", "tcpsocket"
        ),
        _alt(r"Net\.Sockets\.TCPClient\b", "tcpclient"),
        _alt(r"exec\s*\(?\s*[\"']/bin/(?:ba)?sh\s+-i", "exec"),
        _alt(
            rf"{w('openssl')}\s+s_client\b{upto('openssl', line=True)}\|\s*(?:/bin/)?(?:ba)?sh\b",
            "client",
        ),
    ),
    _spec(
        "credential-exfiltration",
        "sends credentials, keys or the environment over the network",
        _alt(rf"{SECRET_FILE}[^\n;|]{{0,400}}\|[^\n;]{{0,400}}?{NET_SENDER}", *SECRET_HINTS),
        _alt(
            rf"{w(*SENDERS)}\b{scan(NO_SEMI, *SENDERS)}"
            r"(?:\s-d|--data(?:-binary|-raw|-urlencode)?|\s-F|--form|\s-T|--upload-file|--post-file)"
            rf"(?:=|\s*){Q}(?:[\w-]+=)?@?{Q}[^\s\"']*?(?:{SECRET_FILE}|/etc/passwd\b)",
            *SECRET_HINTS,
            "passwd",
        ),
        _alt(
            rf"{w(*COPIERS)}\s{upto(*COPIERS)}(?<!exclude[=\s])(?<!exclude[=\s][\"'])"
            rf"{SECRET_FILE}{upto(*COPIERS)}\s[\w.@-]+:",
            *SECRET_HINTS,
        ),
        _alt(
            rf"{w(*NETCATS)}\s{upto(*NETCATS)}<\s*{Q}[^\s\"']*?{SECRET_FILE}",
            *SECRET_HINTS,
        ),
        _alt(
            rf"(?:{w('env', 'printenv', 'set')}|{w('export')}\s+-p)\s*\|[^\n;]{{0,400}}?"
            rf"{NET_SENDER}",
            "env",
            "printenv",
            "set",
            "export",
        ),
        _alt(
            rf"{w('curl', 'wget')}\b{scan(NO_SEMI, 'curl', 'wget')}\$\(\s*"
            rf"(?:env|printenv|(?:cat|base64)\s[^)]*?{SECRET_FILE})",
            "$(",
        ),
    ),
    _spec(
        "cloud-metadata-credentials",
        "fetches cloud instance credentials from the metadata service",
        _alt(
            r"(?:169\.254\.169\.254|metadata\.google\.internal|\[?fd00:ec2::254\]?)"
            r"[^\s\"']*?(?:security-credentials|/token\b|identity|/credentials)",
            "169.254.169.254",
            "metadata",
            "ec",
        ),
    ),
    _spec(
        "read-secret-file",
        "reads password hashes, private keys or credential files into the conversation",
        _alt(
            w(*READERS) + rf"\s{upto(*READERS)}{CREDENTIAL_FILE}",
            *CREDENTIAL_HINTS,
        ),
    ),
    _spec(
        "secret-file-path",
        "names a private key, a credential file, the password hashes or SSH's authorized keys",
        _alt(
            rf"\A\s*{Q}(?:{HOME}|/home/[^/\s]+|/Users/[^/\s]+|/root)?/?"
            rf"(?:{SSH_KEY}|\.ssh/authorized_keys2?|\.aws/credentials|\.netrc|\.git-credentials"
            rf"|\.docker/config\.json|\.pgpass|\.gnupg/\S*|etc/g?shadow|etc/sudoers(?:\.d/\S*)?)"
            rf"{Q}\s*\Z",
            *("ssh", "aws", "netrc", "credentials", "docker", "pgpass", "gnupg"),
            *("shadow", "gshadow", "sudoers"),
        ),
    ),
    _spec(
        "system-permissions",
        "opens up or takes over the root or a system directory, or makes a shell setuid",
        _alt(
            rf"{w('chmod', 'chown', 'chgrp')}\s{recursive(*CH)}{later(*CH)}"
            rf"{Q}{SYSTEM_ROOTS}{Q}{END}",
            "chmod",
            "chown",
            "chgrp",
        ),
        _alt(
            rf"{w('chmod')}\s+(?:-\S+\s+)*{WORLD_WRITABLE}\s+"
            rf"{Q}(?:{SYSTEM_ROOTS}|/etc/(?:passwd|g?shadow|sudoers|group)){Q}{END}",
            "chmod",
        ),
        _alt(
            rf"{w('chmod')}\s+(?:-\S+\s+)*(?:[0-7]?[0-7]{{2}}[1-7]|[ao]\+\S*r\S*)\s+{Q}/etc/g?shadow"
            rf"{Q}{END}",
            "chmod",
        ),
        _alt(
            rf"{w('chmod')}\s+(?:-\S+\s+)*(?:u\+s|\+s|[2467][0-7]{{3}})\s+"
            r"(?:/usr)?(?:/local)?/s?bin/(?:ba|z|da)?sh\b",
            "chmod",
        ),
        _alt(
            rf"{w('icacls')}\s+[a-z]:\\?\s{upto('icacls', line=True)}/grant\s+Everyone:\(?F",
            "icacls",
        ),
    ),
    _spec(
        "system-account-tampering",
        "changes system accounts, password hashes or sudo rights",
        _alt(
            rf"(?:>>?|{w('tee')}\s+(?:-a\s+|--append\s+)?){Q}\s*{Q}"
            r"/etc/(?:passwd|shadow|gshadow|group|sudoers(?:\.d/\S*)?)\b",
            "etc",
        ),
        _alt(rf">(?<![>\d&]>)\s*{Q}/etc/(?:hosts|fstab|resolv\.conf)\b", "etc"),
        _alt(
            rf"(?:{w('mv', 'cp')}|{w('ln')}\s+-s\S*)\s{upto('mv', 'cp', 'ln')}\s"
            rf"{Q}/etc/(?:passwd|shadow|sudoers){Q}{END}",
            "etc",
        ),
        _alt(rf"{w('sed')}\s+-i{upto('sed')}\s/etc/(?:passwd|shadow|sudoers)\b", "etc"),
        _alt(rf"{w('nopasswd')}\b", "nopasswd"),
        _alt(
            rf"{w('useradd', 'usermod')}\b{upto('useradd', 'usermod')}\s(?:-u|--uid)\s*0\b",
            "useradd",
            "usermod",
        ),
        _alt(rf"{w('passwd')}\s+-d\s+root\b", "passwd"),
        _alt(rf"{w('root')}:[^\s:'\"]+[^\n|]*+\|\s*(?:sudo\s+)?chpasswd\b", "chpasswd"),
    ),
    _spec(
        "ssh-authorized-keys-write",
        "adds a key to SSH's authorized keys (a way back in)",
        _alt(
            rf"(?:>>?|{w('tee')}\s+(?:-a\s+|--append\s+)?)\s*{Q}[^\s\"';&|]*\.ssh/authorized_keys",
            "authorized",
        ),
        _alt(
            rf"{w('cp', 'mv', 'cat')}\s{upto('cp', 'mv', 'cat')}\s"
            rf"{Q}[^\s\"';&|]*\.ssh/authorized_keys2?{Q}{END}",
            "authorized",
        ),
    ),
    _spec(
        "kill-everything",
        "kills every process or shuts the machine down",
        _alt(
            rf"{w('kill')}\s+(?:-(?:9|KILL|SIGKILL|TERM|15)\s+|-s\s+\w+\s+)?-1(?=\s*(?:$|[;&|)]))",
            "kill",
        ),
        _alt(rf"{w('kill')}\s+-(?:9|KILL|SIGKILL)\s+1(?=\s*(?:$|[;&|)]))", "kill"),
        _alt(
            r"(?:^|[;&|({\n`]|\bsudo|\bexec|\b(?:ba)?sh\s+-c\s+[\"']?)\s*(?:/usr)?(?:/s?bin/)?"
            r"(?:shutdown|poweroff|halt|reboot)(?:\.exe)?"
            r"(?=\s*(?:$|[;&|\"'`)\n]|-{1,2}\w|now\b|\+\d|\d{1,2}:\d\d|/[srpt]\b))",
            "shutdown",
            "poweroff",
            "halt",
            "reboot",
        ),
        _alt(rf"{w('init', 'telinit')}\s+[06]\b", "init", "telinit"),
        _alt(rf"{w('systemctl')}\s+(?:poweroff|reboot|halt|kexec)\b", "systemctl"),
        _alt(rf"{w('stop-computer', 'restart-computer', 'killall5')}\b", "computer", "killall"),
    ),
    _spec(
        "defences-off",
        "turns off the firewall, SELinux, audit or the virus scanner",
        _alt(rf"{w('iptables')}\s+(?:-t\s+\w+\s+)?(?:-F|--flush)\b", "iptables"),
        _alt(rf"{w('nft')}\s+flush\s+ruleset\b", "nft"),
        _alt(rf"{w('ufw')}\s+disable\b", "ufw"),
        _alt(rf"{w('setenforce')}\s+0\b", "setenforce"),
        _alt(
            rf"{w('systemctl')}\s+(?:stop|disable|mask)\s+(?:--now\s+)?"
            r"(?:firewalld|ufw|apparmor|auditd|fail2ban|nftables)\b",
            "systemctl",
        ),
        _alt(
            rf"{w('set-mppreference')}\b{upto('set-mppreference', line=True)}"
            r"-Disable\w*\s+\$?true",
            "mppreference",
        ),
        _alt(rf"{w('netsh')}\s+advfirewall\s+set\s+\w+\s+state\s+off\b", "netsh"),
    ),
    _spec(
        "crontab-wipe",
        "removes every scheduled job of the user",
        _alt(rf"{w('crontab')}\s+(?:-u\s+\S+\s+)?-r\b", "crontab"),
    ),
    _spec(
        "drop-database",
        "drops a whole database or schema",
        _alt(rf"{w('drop')}\s+(?:database|schema)\b", "drop"),
        _alt(rf"{w('dropdb')}\s", "dropdb"),
    ),
)
"""Rules whose match blocks the call."""

OBSERVED: Final[tuple[RuleSpec, ...]] = (
    _spec(
        "recursive-delete-of-working-directory",
        "recursively deletes everything in the working directory",
        _alt(
            rf"{RM}{recursive('rm')}{later('rm')}(?:--\s+)?{Q}(?:\.|\./|\./\*|\*|\.\*){Q}{END}",
            "rm",
        ),
        _alt(rf"{FIND}\s+{Q}\.?/?{Q}\s+-delete\b", "find"),
    ),
    _spec(
        "inline-interpreter",
        "runs inline interpreter code (often used to hide intent)",
        _alt(
            w("python", "python2", "python3", "perl", "ruby", "node", "php") + r"\s+-[ce]\s",
            *("python", "perl", "ruby", "node", "php"),
        ),
    ),
    _spec("sudo", "asks for elevated privileges", _alt(rf"{w('sudo')}\s", "sudo")),
    _spec(
        "chmod-world-writable",
        "makes files writable by everyone",
        _alt(rf"{w('chmod')}\s+(?:-\S+\s+)*{WORLD_WRITABLE}\s", "chmod"),
    ),
    _spec(
        "destructive-sql",
        "drops or empties a table, or deletes every row",
        _alt(rf"{w('drop')}\s+table\b", "drop"),
        _alt(rf"{w('truncate')}\s+(?:table\s+)?\w", "truncate"),
        _alt(rf"{w('delete')}\s+from\s+[\w.\"`]+\s*(?:;|$)", "delete"),
    ),
    _spec(
        "cloud-mass-delete",
        "deletes cloud resources in bulk",
        _alt(rf"{w('terraform')}\s+destroy\b", "terraform"),
        _alt(
            rf"{w('kubectl')}\s+delete\b{upto('kubectl')}(?:--all\b|\bnamespaces?\b|\bns\b)",
            "kubectl",
        ),
        _alt(
            rf"{w('aws')}\s+s3\s+(?:rm\b{upto('aws')}--recursive|rb\b{upto('aws')}--force)",
            "aws",
        ),
        _alt(rf"{w('gcloud')}\s+projects\s+delete\b", "gcloud"),
        _alt(rf"{w('gsutil')}\s+(?:-m\s+)?rm\s+-r\b", "gsutil"),
    ),
    _spec(
        "force-push",
        "rewrites the history of a remote branch",
        _alt(
            rf"{w('git')}\s+push\b{upto('git')}\s(?:--force\b|-f\b|--force-with-lease\b|\+\w)",
            "push",
        ),
    ),
)
"""Rules whose match lets the call through with a recorded warning."""

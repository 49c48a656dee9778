"""Pieces the default rules are built from: command words, paths, pipelines, scans.

Two habits keep the rules fast. Command words come first in a pattern, with the word
boundary checked *behind* them (:func:`w`), so ``re`` can jump to the places worth
trying. And a scan from a command to what it needs stops at the next occurrence of that
command (:func:`scan`), so input that repeats a command thousands of times cannot make a
search quadratic.
"""

from __future__ import annotations

import re


def w(*words: str, before: str = r"\w") -> str:
    """Any of ``words``, not preceded by a ``before`` character — literal first."""
    escaped = [re.escape(word) for word in words]
    return "(?:" + "|".join(f"{w}(?<!{before}{w})" for w in escaped) + ")"


ARG = r"[^;&|\n]"  # a character inside one simple command
FIND = w("find", before=r"[\w.-]")
Q = r"[\"']?"  # an optional quote around an argument
END = r"(?=[\s;&|)`\"']|$)"  # where a path argument ends
RM = r"rm(?<![\w.-]rm)(?<!\bgit\srm)\s"  # `rm` as a command (`git rm` only untracks)


def scan(char: str, *words: str) -> str:
    """Lazily, characters matching ``char`` short of the next of ``words`` run as a
    command (followed by a space: ``https://`` in a URL is no ``https`` command).

    Scanning from a command to what it needs only up to the next occurrence of that
    command keeps the search linear however often the command repeats.
    """
    stop = "|".join(re.escape(word) for word in words)
    return rf"(?:(?!(?<![\w.-])(?:{stop})\s){char})*?"


def upto(*words: str, line: bool = False) -> str:
    """The rest of one command (``line``: of one line), short of the next of ``words``."""
    return scan(r"[^\n]" if line else ARG, *words)


def later(*words: str) -> str:
    """After the other arguments of the command (one of ``words``), if any."""
    return rf"(?:{upto(*words)}\s)?"


def recursive(*words: str) -> str:
    """The command (one of ``words``) has -r, -R or --recursive among its arguments."""
    return rf"(?={later(*words)}-(?:[a-z]*r|-recursive\b))"


def pipe_on(*words: str) -> str:
    """Later stages of the same pipeline (``2>&1`` included), short of the next of ``words``."""
    return scan(r"(?:[^;&\n]|&(?=[\d>]))", *words) + r"\|\s*"


HOME = r"(?:~[\w.-]*|\$HOME|\$\{HOME(?::[?-][^}]*)?\}|%USERPROFILE%|\$env:USERPROFILE)"
SYSTEM_DIRS = (
    r"bin|boot|dev|etc|lib|lib32|lib64|opt|proc|root|sbin|srv|sys|usr|var|home|Users"
    r"|System|Library|Applications|mnt|media|snap"
)
# System directories whose every child is the system's too (`/usr/lib`, `/etc/cron.d`,
# `/var/lib`), bar scratch space; under the others (`/opt/app`, `/srv/site`, `/mnt/usb`)
# a child is someone's own.
DEEP_SYSTEM_DIRS = r"bin|boot|etc|lib|lib32|lib64|libx32|sbin|usr|var|System|Library"
SCRATCH = r"(?:tmp|temp|cache|caches)(?![\w.+-])"
# A Windows drive, its system folders, one level below `Windows` and `Users` (System32,
# a profile) bar Temp, and the variables naming them.
WIN_CRITICAL = (
    r"(?:(?:[a-z]:|%SystemDrive%)(?:\\(?:(?:Windows|Users)(?:\\(?!temp\b)[^\\\s\"';&|*]+)?"
    r"|Program\sFiles(?:\s\(x86\))?|ProgramData))?"
    r"|(?:%USERPROFILE%|%SystemRoot%|%windir%|\$env:(?:USERPROFILE|SystemRoot|windir))"
    r"(?:\\(?!temp\b)[^\\\s\"';&|*]+)?)"
)
# The root, a system directory or one of its children, a home (or `..`), a Windows
# system folder, optionally followed by / or /* or /.
CRITICAL = (
    rf"(?:/(?:{SYSTEM_DIRS})?|/(?:{DEEP_SYSTEM_DIRS})/(?!{SCRATCH})[\w.+-]+"
    rf"|/(?:home|Users)/[^/\s\"';&|]+|{HOME}{Q}|\.\.|{WIN_CRITICAL})"
    r"[\\/]?\.?\*?"
)
SYSTEM_ROOTS = rf"(?:/(?:{SYSTEM_DIRS})?|[a-z]:)[\\/]?\*?"  # no homes: see system-permissions
WORLD_WRITABLE = r"(?:[0-7]?[0-7]{2}[2367]|[ao]\+\S*w\S*|ugo\+\S*w\S*|\+w)"
DEVICE = (
    r"/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|md\d|dm-\d|mapper/)"
)
DOWNLOADERS = (
    *("curl", "wget", "fetch", "aria2c", "http", "https", "iwr", "irm"),
    *("invoke-webrequest", "invoke-restmethod"),
)
PS_DOWNLOADERS = ("invoke-webrequest", "iwr", "invoke-restmethod", "irm", "start-bitstransfer")
DOWNLOADER = w(*DOWNLOADERS, before=r"[\w.-]") + r"(?=\s)"
SUDO = r"(?:sudo(?:\s+-\S+)*\s+)?(?:env\s+(?:\w+=\S*\s+)*)?"
SHELL = r"(?:/usr)?(?:/bin/)?(?:ba|z|da|k|c|tc|fi|a)?sh\b(?![.-])(?!\s+-c\b)"
# An interpreter that runs what it reads on stdin: no script, no -c/-e/-m program of its
# own (`curl … | python3 -m json.tool` only formats data).
INTERPRETER = (
    r"(?:(?:(?:/usr)?(?:/bin/)?(?:python[23]?(?:\.\d+)?|perl|ruby|node|php|pwsh|powershell)\b"
    r"(?:\s+-(?![cmeEnpr]\b|-)\w+)*(?:\s+-)?(?=\s*(?:$|[;&|)\n]))"
    r")|\biex\b|\bInvoke-Expression\b)"
)
NO_SEMI = r"[^\n;]"  # a character up to the end of the command list
MKFS = ("mkfs", "mke2fs", "mkswap", "wipefs", "blkdiscard")
COPIERS = ("scp", "rsync", "sftp")
SENDERS = ("curl", "http", "https", "wget")
NETCATS = ("nc", "ncat", "netcat", "telnet")
READERS = (
    *("cat", "less", "more", "head", "tail", "cp", "mv", "base64", "xxd", "od", "strings"),
    *("type", "get-content", "gc", "nl", "tac", "awk", "sed", "grep", "bat", "view", "vi"),
    *("vim", "nano"),
)
FETCHED = upto("curl", "wget", line=True)  # what follows one download, short of the next
CH = ("chmod", "chown", "chgrp")
# Running a file: through a shell or interpreter, sourcing it, or as ./file.
RUN_FILE = (
    r"(?:(?:\b(?:ba|z|da|k)?sh|\bpython[23]?|\bperl|\bruby|\bnode|\bpwsh|\bsource"
    rf"|(?:^|[;&|(\n])\s*\.)\s+(?:-\S+\s+)*{Q}(?:\./)?|{Q}\./)"
)
# Running a file by its path, as a command of its own: `/tmp/p`, `sudo ./p`, `p.exe`,
# `start p.exe`, `Start-Process $env:TEMP\p.exe`, `& .\p.ps1`, `cmd /c p.bat`.
EXECUTABLE = (
    r"(?=[^\s\"';&|]*[/\\]|[^\s\"';&|]*\.(?:exe|bat|cmd|com|scr|msi|ps1|vbs|js|hta|sh|py|pl|rb"
    r"|bin|run|appimage)(?![\w.]))"
)
RUN_DIRECT = (
    r"(?<=[;&|(\n])\s*(?:sudo\s+)?"
    r"(?:start(?:-process)?\s+(?:-filepath\s+)?(?:\"\"\s+)?|&\s*|invoke-item\s+"
    r"|cmd(?:\.exe)?\s+/c\s+|rundll32(?:\.exe)?\s+|msiexec(?:\.exe)?\s+/\w+\s+"
    r"|(?:powershell|pwsh)(?:\.exe)?\s+(?:-\S+\s+){0,4}?(?:-file\s+)?)?"
    rf"{Q}(?:\.[\\/])?{EXECUTABLE}"
)
QUOTED_FILE = rf"{Q}(?:\.[\\/])?([\w.~/\\:$%-]++){Q}"  # a file a download is saved to: group 1


def then_runs(*words: str) -> str:
    """After a download saved to the file in group 1 (see :data:`QUOTED_FILE`): a later
    command, on any later line, runs that file — short of the next of ``words``."""
    rest = scan(r"[\s\S]", *words)
    return (
        rf"(?>{rest}(?:&&|&|;|\|\||\n)){rest}(?:{RUN_FILE}|{RUN_DIRECT})\1{Q}"
        r"(?=[\s;&|)`\"']|$)"
    )


NET_SENDER = r"(?<![\w.-])(?:curl|wget|nc|ncat|netcat|socat|ssh|telnet|openssl)(?![\w.-])"
SSH_KEY = r"\.ssh[/\\](?:id_(?![\w*]*\.pub\b)[\w.*-]+|[\w.-]*_(?:rsa|dsa|ecdsa|ed25519)(?![\w.-]))"
CREDENTIAL_FILE = (
    rf"(?:{SSH_KEY}|\.aws[/\\]credentials|\.netrc\b|\.git-credentials|\.docker/config\.json"
    r"|\.kube/config\b|/etc/g?shadow\b|\.gnupg/(?:private-keys|secring)|\.pgpass\b"
    r"|\.npmrc\b|\.pypirc\b|\.config/gcloud/\S*credentials|\.azure/accessTokens)"
)
SECRET_FILE = rf"(?:{CREDENTIAL_FILE}|\.env(?![\w.-]))"  # sending a .env out is a leak too
CREDENTIAL_HINTS = (
    *("ssh", "aws", "netrc", "credentials", "docker", "kube", "shadow", "gshadow", "gnupg"),
    "pgpass",
    *("npmrc", "pypirc", "gcloud", "azure", "accesstokens"),
)
SECRET_HINTS = (*CREDENTIAL_HINTS, "env")
# A directory of keys or credentials as a whole (`tar czf - ~/.ssh`, `scp -r ~/.aws h:`).
SECRET_DIR = (
    rf"(?:{HOME}|/root|/home/[^/\s\"']+)?[/\\]?\.(?:ssh|aws|gnupg|kube|docker|azure|password-store"
    r"|config[/\\]gcloud)[/\\]?(?=[\s\"';&|)]|$)"
)

# A key directory as a whole, globbed or not (`for f in ~/.ssh/*`).
SECRET_DIR_GLOB = r"\.(?:ssh|aws|gnupg|kube|docker|azure|password-store)[/\\]?\*?(?=[\s\"';&|)]|$)"
# The key directories of a home (`~/.ssh`, `/root/.gnupg`), which a recursive delete
# must not take away; `.docker` and `.cache` hold nothing that cannot be fetched again.
HOME_KEY_DIR = (
    rf"(?:{HOME}|/root|/(?:home|Users)/[^/\s\"';&|]+)[/\\]"
    r"\.(?:ssh|gnupg|aws|kube|azure|password-store|config[/\\]gcloud)[/\\]?\*?"
)
# A browser's store of saved passwords, and the key that unlocks it: Chromium's
# `Login Data` / `Web Data` / `Local State` (PowerShell escapes the space with a backtick,
# a shell with a backslash), Firefox's `logins.json` and `key4.db`, macOS's keychain.
BROWSER_SECRET = (
    r"(?:(?:chrome|chromium|edge|brave|opera|vivaldi|yandex)[^\n;|]{0,80}?[\\/]\s*"
    r"(?:login|web|local)[`\\]?\s?(?:data|state)\b"
    r"|(?:firefox|mozilla)[^\n;|]{0,80}?[\\/](?:logins\.json|key[34]\.db)\b"
    r"|\blogin\.keychain(?:-db)?\b)"
)
BROWSER_HINTS = (
    *("chrome", "chromium", "edge", "brave", "opera", "vivaldi", "yandex", "firefox"),
    *("mozilla", "keychain"),
)
# Programs that fetch a file from the network (`busybox wget` included: the word is found
# after the wrapper).
FETCHERS = (
    *("curl", "wget", "tftp", "ftp", "ftpget", "aria2c", "fetch", "lwp-download", "iwr"),
    *("invoke-webrequest", "certutil", "bitsadmin", "scp"),
)
# A mode that lets the owner run the file (`+x`, `u+rx`, `755`).
EXEC_MODE = r"(?:[ugoa]*\+[rwst]*x[rwxst]*|0?[1357][0-7]{2})"
# Processes a Windows machine cannot run without.
WINDOWS_CRITICAL_PROCESSES = r"(?:svchost|csrss|wininit|winlogon|lsass|smss|services)"
# Functions that run the string they are given, in Python, Node, PHP and Perl.
CODE_RUNNERS = (
    *("system", "popen", "exec", "eval", "execsync", "spawn", "spawnsync", "getoutput"),
    *("check_output", "check_call", "call", "run", "shell_exec", "passthru"),
)
# Code decoding base64 text: Python, Node (`atob`, `Buffer.from(…, 'base64')`).
CODE_DECODE = (
    r"(?:(?:[\w.]+\.)?(?:b64decode|decodebytes|decodestring|standard_b64decode)\(|atob\("
    r"|buffer\.from\([^)]*base64)"
)
DECODE_HINTS = ("decode", "decodebytes", "decodestring", "atob", "base")


CODE_DELETERS = (
    *("remove", "unlink", "unlinksync", "rmsync", "writefile", "writefilesync"),
    *("appendfilesync", "truncate"),
)


def code_writes(path: str) -> str:
    """Code that overwrites or deletes the file ``path`` (a regex): Python's ``open(…,
    'w')``, ``os.remove``, ``Path(…).write_text``, Node's ``fs.writeFileSync`` …

    Found from the call's ``(``, the function's name checked behind it, so `re` jumps
    from one ``(`` to the next.
    """
    deleters = "|".join(f"(?<={name}\\()" for name in CODE_DELETERS)
    return (
        rf"\((?:(?<=open\()\s*{Q}{path}{Q}\s*,\s*(?:mode\s*=\s*)?{Q}[rabxt]*[wa+]"
        rf"|(?:{deleters})\s*{Q}{path}"
        rf"|(?<=path\()\s*{Q}{path}{Q}\s*\)\.(?:write_text|write_bytes|unlink)\b)"
    )

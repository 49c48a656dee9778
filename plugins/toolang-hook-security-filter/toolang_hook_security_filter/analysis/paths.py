"""The class of a path a command acts on: what deleting or writing it would hit.

Rules speak of classes, not spellings: ``/``, ``/*`` and ``//`` are all ``root``;
``~``, ``$HOME/`` and ``/home/*`` are ``home``; ``/var/lib/postgresql/14/main`` is
``data``. Relative paths, ``/tmp`` and caches are ``local``: what agents clean every day.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final, Literal

PathClass = Literal[
    "root", "home", "system", "data", "device", "log", "history", "credential", "local"
]

SYSTEM: Final = frozenset(
    [
        "etc",
        "usr",
        "bin",
        "sbin",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "boot",
        "var",
        "opt",
        "sys",
        "proc",
        "dev",
        "run",
        "snap",
        "root",
    ]
)
DATA: Final = ("/var/lib/", "/srv/", "/data/", "/mnt/", "/media/", "/opt/", "/var/www/")
DATA_HOME_DIRS: Final = re.compile(r"^/home/[^/]+/(repositories|data|backups?)(/|$)")
DEVICE: Final = re.compile(
    r"^/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|dm-\d|md\d|mapper/|"
    r"loop\d|sr\d|root|mem$|kmem$|port$)"
)
HISTORY: Final = re.compile(r"(^|/)\.(bash|zsh|sh|python|mysql|psql|node_repl|lesshst)_?history$")
CREDENTIAL: Final = re.compile(
    r"(^|/)(\.ssh/(id_[a-z0-9]+|identity)$|\.ssh/?$|\.aws(/|$)|\.kube/config|\.docker/config\.json|"
    r"\.netrc$|\.gnupg(/|$)|\.pgpass$|\.git-credentials$|\.config/gcloud|\.azure(/|$)|\.env$|"
    r"\.npmrc$|\.pypirc$|credentials(\.json)?$)|^/etc/(shadow|gshadow|sudoers)|"
    r"\.aws[\\/]?credentials|\.ssh[\\/]?id_[a-z0-9]+$"
)
WINDOWS_ROOT: Final = re.compile(r"^[a-z]:[\\/]?(\*|\*\.\*)?$", re.I)
# The separators are optional: a POSIX shell parser eats the backslashes of C:\Windows.
WINDOWS_SYSTEM: Final = re.compile(
    r"^[a-z]:[\\/]?(windows|program ?files( \(x86\))?|users)([\\/]?system32)?[\\/]?\*?(\.\*)?$",
    re.I,
)
WINDOWS_HOME: Final = re.compile(
    r"^(%userprofile%|\$env:userprofile|%homepath%|[a-z]:[\\/]users[\\/][^\\/]+)[\\/]?\*?$", re.I
)
LOCAL_UNDER_SYSTEM: Final = ("/usr/local", "/var/lib/apt/lists", "/var/cache", "/opt/homebrew")
_FILE_LIKE: Final = re.compile(r"\.[a-z0-9]{1,5}(\.\d+)?$", re.I)


def normal(path: str) -> str:
    """``path`` with ``$HOME``, repeated and trailing slashes and ``.`` steps folded."""
    path = path.strip()
    if path.startswith(("$HOME", "${HOME}")):
        path = "~" + path.split("}", 1)[-1] if path.startswith("${") else "~" + path[5:]
    if path.startswith("~") and not path.startswith("~/") and path != "~":
        path = "/home/" + path[1:]  # ~user
    if path.startswith("/") or path.startswith("~"):
        folded = posixpath.normpath(path)
        return "/" if folded in ("//", "/.") else folded
    return path


def classify(path: str) -> PathClass:
    """The class of ``path`` (see the module docstring)."""
    if not path or path.startswith("-"):
        return "local"
    if WINDOWS_HOME.match(path):
        return "home"
    p = normal(path)
    if not p.startswith(("/", "~")) and not re.match(r"^[a-z]:", p, re.I):
        return "history" if HISTORY.search(p) else "credential" if CREDENTIAL.search(p) else "local"
    if p.startswith(LOCAL_UNDER_SYSTEM):
        return "local"
    if WINDOWS_ROOT.match(p):
        return "root"
    if WINDOWS_SYSTEM.match(p):
        return "system"
    bare = p.rstrip("*").rstrip("/") or "/"
    if bare in ("/", "/.", "/.*"):
        return "root"
    if HISTORY.search(p):
        return "history"
    if CREDENTIAL.search(p):
        return "credential"
    if p.startswith("~") or p.startswith("/home/") or p == "/home" or p.startswith("/root"):
        return _in_homes(p, bare)
    return _in_system(p, bare)


def _in_homes(p: str, bare: str) -> PathClass:
    """The class of a path under ``~``, ``/home`` or ``/root`` (normalised: ``p``; without
    a trailing glob or slash: ``bare``)."""
    if bare in ("~", "/home", "/root") or re.fullmatch(r"/home/[^/]+", bare):
        return "home"
    if DATA_HOME_DIRS.match(p):
        return "data"
    return "local"


def _in_system(p: str, bare: str) -> PathClass:
    """The class of an absolute path outside the homes."""
    if p.startswith("/dev/"):
        return "device" if DEVICE.match(p) else "local"
    if p.startswith("/var/log"):
        return "log"
    if p.startswith(("/tmp", "/var/tmp", "/var/cache")):
        return "local"
    if p.startswith(DATA) or bare in {d.rstrip("/") for d in DATA}:
        if bare in ("/opt", "/mnt", "/media", "/srv", "/data", "/var/lib", "/var/www"):
            return "system" if bare in ("/opt", "/var/lib") else "data"
        return "data"
    top = bare.split("/")[1] if bare.startswith("/") else ""
    if top in SYSTEM:
        # /etc itself or a glob under it, /usr/bin …: the system. A deeper single file
        # is left to the rules that care about files.
        depth = bare.count("/")
        if depth <= 2 or p.endswith("*"):
            return "system"
        return "local"
    return "local"


def is_file_like(path: str) -> bool:
    """Whether ``path`` names a single file by its look (an extension, no glob)."""
    return "*" not in path and bool(_FILE_LIKE.search(path))


RANK: Final = {"root": 0, "home": 1, "system": 2, "device": 3, "data": 4, "log": 5}


def worst(paths: list[str]) -> PathClass:
    """The most serious class among ``paths`` (``local`` when there are none)."""
    classes = [classify(p) for p in paths]
    serious = [c for c in classes if c != "local"]
    return min(serious, key=lambda c: RANK.get(c, 9)) if serious else "local"

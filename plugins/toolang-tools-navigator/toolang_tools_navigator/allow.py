"""The allow-list: which URLs a page may load anything from.

Checked in code on every request the browser makes (Playwright's request routing, see
:mod:`.browser`), on every URL a tool is asked to open, and on every page a navigation
lands on — so neither a redirect nor a link click nor a script leaves the list.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from urllib.parse import unquote, urlsplit

import attrs

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def _is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@attrs.frozen
class AllowList:
    """``hosts`` as configured (``loopback``, names, ``*.domain``); ``files_dir`` the
    directory ``file://`` URLs may point into (``None``: no file URL)."""

    hosts: tuple[str, ...]
    files_dir: Path | None = None

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be loaded, or ``None`` when it may."""
        if url in ("about:blank", "about:srcdoc"):
            return None
        try:
            parts = urlsplit(url)
        except ValueError:
            return f"{url!r} is not a URL"
        scheme = parts.scheme.lower()
        if scheme == "file":
            return self._file_refusal(url, unquote(parts.path))
        if scheme not in ("http", "https", "ws", "wss"):
            return f"{url!r}: scheme {scheme or 'none'!r} is not allowed (http, https, file)"
        host = (parts.hostname or "").lower().rstrip(".")
        if not host:
            return f"{url!r} names no host"
        if self.allows_host(host):
            return None
        return (
            f"host {host!r} is outside the navigator's allow-list "
            f"([plugins.tools-navigator] allow_hosts = {list(self.hosts)})"
        )

    def allows_host(self, host: str) -> bool:
        for configured in self.hosts:
            entry = configured.lower()
            if entry == "loopback":
                if _is_loopback(host):
                    return True
            elif entry.startswith("*."):
                if host.endswith(entry[1:]):
                    return True
            elif host == entry.strip("[]") or host.strip("[]") == entry.strip("[]"):
                return True
        return False

    def _file_refusal(self, url: str, path: str) -> str | None:
        if self.files_dir is None:
            return (
                f"{url!r}: file URLs are refused (set [plugins.tools-navigator] files_dir "
                "to the directory pages may come from)"
            )
        root = self.files_dir.resolve()
        target = Path(path).resolve()
        if target != root and root not in target.parents:
            return f"{url!r} is outside [plugins.tools-navigator] files_dir ({root})"
        return None

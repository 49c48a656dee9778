"""A throwaway PostgreSQL server for tests and benchmarks: ``initdb`` + ``pg_ctl``.

Used when ``TOOLANG_PG_DSN`` names no server. The cluster lives in a temporary
directory, listens on a free port on 127.0.0.1 only, trusts local connections, and is
deleted when stopped. ``initdb`` refuses to run as root, so as root the server runs as
the ``postgres`` user (which Debian's ``postgresql`` package creates).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

ENV_DSN = "TOOLANG_PG_DSN"
ENV_BINDIR = "TOOLANG_PG_BINDIR"
INSTALL_HINT = (
    "install PostgreSQL (Debian: `apt-get install -y postgresql`) or set "
    f"{ENV_DSN} to a server the tests may create schemas in"
)


class ClusterError(RuntimeError):
    """The throwaway server could not be created or started."""


def find_bindir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl`` (``$TOOLANG_PG_BINDIR``, Debian's
    ``/usr/lib/postgresql/<version>/bin`` with the newest version, or ``$PATH``)."""
    if os.environ.get(ENV_BINDIR):
        return Path(os.environ[ENV_BINDIR])
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: [int(n) for n in re.findall(r"\d+", p.parent.parent.name)] or [0],
    )
    if debian:
        return debian[-1].parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ThrowawayCluster:
    """``with ThrowawayCluster() as dsn:`` — a private server for the body of the block.

    ``durable=False`` (tests) turns fsync off: a crash of the machine loses the cluster,
    which is deleted anyway. Benchmarks pass ``durable=True`` to measure real commits.
    """

    def __init__(self, *, durable: bool = False, user: str = "toolang") -> None:
        self.durable = durable
        self.user = user
        self.bindir = find_bindir()
        self.root: Path | None = None
        self.port = 0
        self._run_as: str | None = None

    @property
    def dsn(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/postgres"

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> str:
        if self.bindir is None or not (self.bindir / "initdb").exists():
            raise ClusterError(f"PostgreSQL's initdb was not found; {INSTALL_HINT}")
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                raise ClusterError(
                    "initdb refuses to run as root and there is no 'postgres' user to run "
                    f"it as; {INSTALL_HINT}"
                ) from None
            self._run_as = "postgres"
        self.root = Path(tempfile.mkdtemp(prefix="toolang-pg-"))
        if self._run_as:
            shutil.chown(self.root, user=self._run_as)
        data = self.root / "data"
        self._run("initdb", "-D", str(data), "-U", self.user, "-A", "trust", "-E", "UTF8",
                  "--no-locale", "--no-sync")  # fmt: skip
        last_error = ""
        for _ in range(3):  # another process may take the free port before the server does
            self.port = free_port()
            self._configure(data)
            try:
                self._run("pg_ctl", "-D", str(data), "-l", str(self.root / "server.log"),
                          "-w", "-t", "60", "start")  # fmt: skip
            except ClusterError as exc:
                last_error = str(exc)
                continue
            return self.dsn
        self.stop()
        raise ClusterError(f"the throwaway PostgreSQL server did not start: {last_error}")

    def _configure(self, data: Path) -> None:
        settings = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(self.port),
            "unix_socket_directories": f"'{self.root}'",
            "max_connections": "200",
            "shared_buffers": "64MB",
        }
        if not self.durable:
            settings.update(fsync="off", synchronous_commit="off", full_page_writes="off")
        with (data / "postgresql.auto.conf").open("a", encoding="utf-8") as conf:
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())

    def _run(self, tool: str, *args: str) -> None:
        assert self.bindir is not None
        command = [str(self.bindir / tool), *args]
        if self._run_as:
            command = ["runuser", "-u", self._run_as, "--", *command]
        done = subprocess.run(
            command, capture_output=True, text=True, check=False, cwd=self.root, timeout=120
        )
        if done.returncode != 0:
            log = self.root / "server.log" if self.root else None
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise ClusterError(f"{tool} failed ({done.returncode}): {done.stderr.strip()} {tail}")

    def stop(self) -> None:
        if self.root is None:
            return
        data = self.root / "data"
        if (data / "postmaster.pid").exists():
            with contextlib.suppress(ClusterError, subprocess.TimeoutExpired):
                self._run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

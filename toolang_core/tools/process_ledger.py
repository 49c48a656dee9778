"""Programs tools are running, written down where the next start of the runtime finds them.

A tool's program (:func:`~toolang_core.tools.process.run_tool_process`) runs in its own
process group. Cancellation and shutdown stop that group; a runtime that is killed
(SIGKILL, a crash, the OOM killer) cannot. Two things keep such a program from running
on, orphaned, performing the effect of a call that is now *in doubt*:

* on Linux the program's first process gets ``PR_SET_PDEATHSIG = SIGKILL``
  (:func:`toolang_core.sandbox.deathsig.die_with_runtime`): the kernel kills it when
  the runtime's thread that started it ends — the event loop's thread, which outlives
  every call it awaits. The setting is not inherited by the processes it starts, so
  it does not stop a whole group;
* the **ledger**: while the program runs, a file ``<home>/tool-processes/<runtime
  pid>-<group id>.json`` (file names made of numbers only) holds the group's identity —
  its leader's pid and start time (``/proc/<pid>/stat``), the machine and its boot — with
  the runtime's own identity and the call's marker. The next start, before it recovers
  any turn, kills (``SIGKILL``) every group whose runtime is gone and whose identity
  still matches (:func:`stop_orphaned`): never a pid that was reused, never the group of
  a runtime still alive. The call's in-doubt trace then says its program was killed.

Without ``/proc`` (not Linux) nothing can be verified, so nothing is killed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs
import structlog

if TYPE_CHECKING:
    from toolang_core.store.protocol import ExecutionStore

log = structlog.get_logger("toolang.tools")

LEDGER_DIR: Final = "tool-processes"
STOPPED_KIND: Final = "toolang.tool_process.stopped"
"""Store records (key ``<turn id>:<call id>``) of programs the start-up sweep killed;
the in-doubt decision about the call reads its record into the trace, then drops it."""
_BOOT_ID: Final = Path("/proc/sys/kernel/random/boot_id")

Outcome = Literal["killed", "gone"]


@attrs.frozen
class ProcessIdentity:
    """A process as it cannot be confused with a later one: its pid and when it started
    (clock ticks after boot, field 22 of ``/proc/<pid>/stat``)."""

    pid: int
    start_ticks: int

    @classmethod
    def of(cls, pid: int) -> ProcessIdentity | None:
        """The identity of the running (or not yet reaped) process ``pid``; ``None`` when
        there is none or ``/proc`` cannot tell."""
        fields = _stat_fields(pid)
        if fields is None:
            return None
        try:
            return cls(pid, int(fields[19]))
        except (IndexError, ValueError):
            return None


@attrs.frozen
class LedgerEntry:
    """One program a tool runs: its process group (led by ``group``), the runtime that
    started it (``owner``), the machine and its boot, and the call's marker."""

    group: ProcessIdentity
    owner: ProcessIdentity
    host: str
    boot_id: str
    marker: str

    @property
    def call_key(self) -> str | None:
        """``<turn id>:<call id>`` of the call (``None`` for a tool called by hand)."""
        return self.marker if ":" in self.marker else None


@attrs.frozen
class Stopped:
    """What the start-up sweep did about one program left by a runtime that died."""

    entry: LedgerEntry
    outcome: Outcome
    members: int = 0


def ledger_dir(home: Path) -> Path:
    return home / LEDGER_DIR


def note_started(home: Path | None, pid: int, marker: str) -> Path | None:
    """Write down the group ``pid`` leads (a tool's program just started); return the
    entry's file for :func:`note_ended`. ``None`` (nothing written) without a home, off
    Linux, or when the program is already gone; a write that fails is logged, never
    raised — the program runs either way."""
    if home is None:
        return None
    group, owner, boot = ProcessIdentity.of(pid), _self(), _boot_id()
    if group is None or owner is None or boot is None:
        return None
    entry = LedgerEntry(
        group=group, owner=owner, host=socket.gethostname(), boot_id=boot, marker=marker
    )
    path = ledger_dir(home) / f"{owner.pid}-{group.pid}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps(attrs.asdict(entry)), encoding="utf-8")
        partial.replace(path)
    except OSError as exc:
        log.warning("tool.process_not_recorded", path=str(path), error=str(exc))
        return None
    return path


def note_ended(path: Path | None) -> None:
    """The program is stopped and reaped: drop its entry."""
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def stop_orphaned(home: Path) -> list[Stopped]:
    """Kill the tool programs runtimes that died left running (see the module docstring);
    drop their entries and return what was found. Entries of a runtime still running
    are left alone; an entry that cannot be read is dropped with a warning, never acted
    on."""
    stopped = []
    host = socket.gethostname()
    for path, entry in _entries(ledger_dir(home)):
        if entry is not None and (entry.host != host or _alive(entry.owner)):
            continue  # another machine's (a shared home), or a runtime still running
        if entry is not None and entry.boot_id == _boot_id():
            outcome, members = _stop_group(entry)
            stopped.append(Stopped(entry, outcome, members))
        note_ended(path)
    return stopped


def sweep(home: Path, store: ExecutionStore, *, now: float) -> list[Stopped]:
    """At start-up, before any turn is recovered: :func:`stop_orphaned`, each program
    found logged (``tool.process_orphaned``), and each one killed noted in the store
    for its call's in-doubt trace (:func:`take_note`). Never raises: a start is not
    stopped by its cleanup."""
    try:
        stopped = stop_orphaned(home)
    except Exception as exc:  # e.g. an unreadable home: the next start tries again
        log.warning("tool.process_sweep_failed", home=str(home), error=str(exc))
        return []
    try:  # the process-count cgroups of sandboxes whose runtime died (root only)
        from toolang_core.sandbox import cgroup

        cgroup.sweep()
    except Exception as exc:
        log.warning("tool.sandbox_cgroup_sweep_failed", error=str(exc))
    for found in stopped:
        entry = found.entry
        log.warning(
            "tool.process_orphaned",
            call=entry.marker,
            pgid=entry.group.pid,
            outcome=found.outcome,
            processes=found.members,
            dead_runtime_pid=entry.owner.pid,
        )
        if found.outcome == "killed" and entry.call_key is not None:
            note = {"pgid": entry.group.pid, "processes": found.members, "at": now}
            try:
                store.put_record(STOPPED_KIND, entry.call_key, note, now=now)
            except Exception as exc:  # the log above still says it
                log.warning("tool.process_note_failed", call=entry.marker, error=str(exc))
    return stopped


def take_note(store: ExecutionStore, turn_id: str, call_id: str) -> str | None:
    """For the in-doubt trace of a call: what the start-up sweep did about its program
    (``None``: nothing), read once — the note is dropped as it is taken."""
    key = f"{turn_id}:{call_id}"
    record = store.get_record(STOPPED_KIND, key)
    if record is None:
        return None
    store.delete_record(STOPPED_KIND, key)
    return (
        f"its program (process group {record.data.get('pgid')}) was still running when "
        "the runtime started again, and was killed then"
    )


def _entries(directory: Path) -> Iterator[tuple[Path, LedgerEntry | None]]:
    try:
        paths = sorted(directory.glob("*.json"))
    except OSError:
        return
    for path in paths:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            entry = LedgerEntry(
                group=_identity(raw["group"]),
                owner=_identity(raw["owner"]),
                host=str(raw["host"]),
                boot_id=str(raw["boot_id"]),
                marker=str(raw["marker"]),
            )
        except FileNotFoundError:
            continue  # its program ended meanwhile
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("tool.process_entry_unreadable", path=str(path), error=str(exc))
            yield path, None
            continue
        yield path, entry


def _identity(raw: Any) -> ProcessIdentity:
    """A written identity, checked: a pid of 0 or 1 or below would signal our own group,
    init or everything (``killpg``), so it is refused like any other bad value."""
    pid, start = raw["pid"], raw["start_ticks"]
    if type(pid) is not int or type(start) is not int or pid <= 1 or start < 0:
        raise ValueError(f"not a process identity: {raw!r}")
    return ProcessIdentity(pid, start)


def _stop_group(entry: LedgerEntry) -> tuple[Outcome, int]:
    """Kill the group when it is still the one written down: its leader runs with the
    same start time, or — the leader gone — members carrying the call's marker remain
    (a group id stays taken while the group has members, so they are its own)."""
    pgid = entry.group.pid
    leader = ProcessIdentity.of(pgid)
    if leader is not None and leader != entry.group:
        return "gone", 0  # the pid was reused: not ours
    running = _alive(entry.group)  # not a zombie nobody reaped yet
    members = _members(pgid, entry.marker)
    if not running and not members:
        return "gone", 0
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    return "killed", len(members) + running


def _members(pgid: int, marker: str) -> list[int]:
    """Processes of group ``pgid`` other than its leader started with ``marker``."""
    from toolang_core.tools.process import TOOL_CALL_ENV

    wanted = f"{TOOL_CALL_ENV}={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == pgid:
            continue
        fields = _stat_fields(int(name))
        if fields is None or len(fields) < 3 or fields[2] != str(pgid) or fields[0] == "Z":
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if wanted in environ:
            found.append(int(name))
    return found


def _alive(process: ProcessIdentity) -> bool:
    """Whether ``process`` still runs (a zombie waiting for its parent does not)."""
    fields = _stat_fields(process.pid)
    if not fields or fields[0] == "Z":
        return False
    return ProcessIdentity.of(process.pid) == process


def _self() -> ProcessIdentity | None:
    return _identity_of_self(os.getpid())  # a forked child is another process


@functools.cache
def _identity_of_self(pid: int) -> ProcessIdentity | None:
    return ProcessIdentity.of(pid)


def _boot_id() -> str | None:
    try:
        return _BOOT_ID.read_text(encoding="ascii").strip() or None
    except OSError:
        return None


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name: state, ppid, pgrp, session, …"""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()

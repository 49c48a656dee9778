"""A cached ``toolang plugins`` listing, so listing the plugins does not import them all.

The listing (each plugin's record and what it provides) is made by importing every
plugin and calling every registration hook. It only changes when what is installed,
configured or written in a plugin changes, so it is cached under a key made of exactly
that: the key of the command listing (:mod:`toolang_core.cli.command_index`: toolang's
version, the interpreter, the ``toolang`` entry points with their distributions'
versions, the plugin environment variables, the configuration files' bytes), the
name and modification time of every distribution's metadata folder on ``sys.path``
(installing, removing, upgrading or reinstalling any distribution — a plugin's
dependency too — adds, removes or rewrites one), and the size and modification time of
every source file of toolang and of each plugin's top-level package (an edited plugin,
or one installed in editable mode, changes no metadata).

Only a clean load is cached: when a plugin failed, was refused, or warned, nothing is
written, and every ``toolang plugins`` makes the listing afresh — so a broken plugin is
reported, and logged, each time, as it is now. A cache that cannot be read or written
is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from toolang_core.cli import command_index

Row = dict[str, Any]
"""One plugin as ``toolang plugins`` prints it (``PluginRecord.to_json`` and
``provides``)."""


def listing_key(version: str, config_path: Path | None, env: Mapping[str, str]) -> str:
    """What the plugin listing depends on, hashed (see the module docstring)."""
    digest = hashlib.sha256(command_index.listing_key(version, config_path, env).encode())

    def add(*parts: object) -> None:
        digest.update(repr(parts).encode())

    for entry in sys.path:  # its distributions, not its name: sys.path[0] is the script's
        add(*_distributions(entry or os.curdir))
    modules = {"toolang_core"}
    modules.update(ep.value.split(":")[0].split(".")[0] for ep in entry_points(group="toolang"))
    for module in sorted(modules):
        add(module)
        for path in _source_files(module):
            add(path, _stamp(path))
    return digest.hexdigest()[:32]


def _distributions(folder: str) -> list[tuple[str, tuple[int, int] | None]]:
    """Each distribution's metadata folder in ``folder``, stamped: installing, removing,
    upgrading or reinstalling a distribution adds, removes or rewrites one."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith((".dist-info", ".egg-info")))
    except OSError:  # missing, or a zip archive: the archive's own stamp, if any
        return [(os.path.basename(folder), _stamp(folder))] if os.path.isfile(folder) else []
    return [(name, _stamp(os.path.join(folder, name))) for name in names]


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _source_files(module: str) -> Iterator[str]:
    """The files of top-level ``module`` (found, not imported), in a stable order.

    Folders are not stamped: Python writes ``__pycache__`` into them."""
    try:
        spec = find_spec(module)
    except Exception:  # loading the plugin will say what is wrong (and not be cached)
        return
    if spec is None:
        return
    if spec.submodule_search_locations is None:
        if spec.origin:
            yield spec.origin
        return
    for location in sorted(spec.submodule_search_locations):
        for root, folders, files in os.walk(location):
            folders[:] = sorted(f for f in folders if f != "__pycache__")
            yield from (os.path.join(root, name) for name in sorted(files))


def read_listing(env: Mapping[str, str], key: str) -> list[Row] | None:
    try:
        data = json.loads((command_index.cache_dir(env) / f"plugins-{key}.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
        return None
    return data


def write_listing(env: Mapping[str, str], key: str, rows: list[Row]) -> None:
    directory = command_index.cache_dir(env)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("plugins-*.json"):  # one listing per key is enough
            stale.unlink(missing_ok=True)
        temporary = directory / f".plugins-{key}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(rows))
        temporary.replace(directory / f"plugins-{key}.json")
    except OSError:
        return
